#!/usr/bin/env bash
# Session 15: the tail model (stream_k::tail_pays) off the square shapes, controlled: whole
# rounds against the tail forced, three interleaved rounds, cuBLAS bf16 as the anchor in each
# process (its ratio takes out clock and power drift).
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/e; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]}x{x["n"]}x{x["k"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2 3; do
  for tail in rounds stream_k; do
    GEMMLAB_WGMMA_TAIL=$tail timeout 100 $G bench --backend cuda --dtype bf16 --variants wgmma_ws_bf16,cublas_bf16 --no-verify --mnk 6144x6144x6144,8192x8192x2048,4096x16384x4096,16384x4096x4096 --format json --output $O/model-$tail-$round.json 2>>$O/bench.log; summ $O/model-$tail-$round.json $tail-$round
  done
done
cd $OUT && tar czf e.tgz e && rm -rf e
