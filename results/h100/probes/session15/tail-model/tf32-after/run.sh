#!/usr/bin/env bash
# Session 15: tf32 NN at 6144^3, where the 32-step rule now takes the tail (52 steps saved):
# whole rounds against the tail, three interleaved rounds, cuBLAS TF32 as the anchor.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/g; mkdir -p $O build-device
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
  for tail in rounds auto; do
    GEMMLAB_WGMMA_TAIL=$tail timeout 100 $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32,cublas_tf32 --no-verify --mnk 6144x6144x6144,4096x16384x4096 --format json --output $O/tf32-$tail-$round.json 2>>$O/bench.log; summ $O/tf32-$tail-$round.json $tail-$round
  done
done
cd $OUT && tar czf g.tgz g && rm -rf g
