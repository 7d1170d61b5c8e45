#!/usr/bin/env bash
# Session 16, call 12: single blocks against clusters of two where the stream-K tail is not
# taken off the square power-of-two sizes: odd sizes (warp-stored C), large shapes at the
# power cap, and 3xTF32. Two interleaved bench rounds, cuBLAS anchors.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/l; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]}x{x["n"]}x{x["k"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
S=4095x4095x4095,1000x1000x1000,8192x8192x4095,16384x4096x4096,8192x8192x2048
for round in 1 2; do
  for c in 1 2; do
    for dt in tf32 bf16; do
      GEMMLAB_WGMMA_CLUSTER=$c timeout 200 $G bench --backend cuda --dtype $dt --variants wgmma_ws_$dt,cublas_$dt --trans NN --no-verify --mnk $S --format json --output $O/$dt-c$c-$round.json 2>>$O/bench.log; summ $O/$dt-c$c-$round.json "$dt c$c r$round"
    done
    GEMMLAB_WGMMA_CLUSTER=$c timeout 200 $G bench --backend cuda --dtype f32 --variants wgmma_3xtf32,cublas_sgemm --no-verify --sizes 4096,8192 --format json --output $O/3x-c$c-$round.json 2>>$O/bench.log; summ $O/3x-c$c-$round.json "3xtf32 c$c r$round"
  done
done
cd $OUT && tar czf l.tgz l && rm -rf l
