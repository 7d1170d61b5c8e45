#!/usr/bin/env bash
# Session 16, call 11: single blocks against clusters of two over sizes (where does each win?).
# Two interleaved bench rounds, cuBLAS anchor.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/k; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2; do
  for c in 1 2; do
    for dt in tf32 bf16; do
      GEMMLAB_WGMMA_CLUSTER=$c timeout 150 $G bench --backend cuda --dtype $dt --variants wgmma_ws_$dt,cublas_$dt --trans NN --no-verify --sizes 2048,3072,5120,6144 --format json --output $O/$dt-c$c-$round.json 2>>$O/bench.log; summ $O/$dt-c$c-$round.json "$dt cluster $c round $round"
    done
  done
done
cd $OUT && tar czf k.tgz k && rm -rf k
