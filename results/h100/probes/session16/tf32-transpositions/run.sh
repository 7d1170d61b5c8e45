#!/usr/bin/env bash
# Session 16: tf32 at 4096^3 in every transposition with the default forms, and NT (the one
# left below 1.0x) with each epilogue the kernel has; two interleaved rounds, cuBLAS anchor.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/t; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' + ('' if x.get("verification",{}).get("passed") else ' FAILED') for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2; do
  for t in NN NT TN TT; do
    timeout 100 $G bench --backend cuda --dtype tf32 --trans $t --variants wgmma_ws_tf32,cublas_tf32 --sizes 4096 --format json --output $O/tf32-$t-$round.json 2>>$O/bench.log; summ $O/tf32-$t-$round.json "tf32 $t round $round"
  done
  for ep in bulk warps; do
    GEMMLAB_WGMMA_EPILOGUE=$ep timeout 100 $G bench --backend cuda --dtype tf32 --trans NT --variants wgmma_ws_tf32,cublas_tf32 --sizes 4096 --format json --output $O/tf32-NT-$ep-$round.json 2>>$O/bench.log; summ $O/tf32-NT-$ep-$round.json "tf32 NT epilogue $ep round $round"
  done
done
$G explain wgmma_ws_tf32 --backend cuda --dtype tf32 --trans NT --mnk 4096x4096x4096 --no-verify > $O/explain-nt.txt 2>&1
for ep in tma bulk warps; do GEMMLAB_WGMMA_EPILOGUE=$ep $G explain wgmma_ws_tf32 --backend cuda --dtype tf32 --trans NT --mnk 4096x4096x4096 --no-verify 2>&1 | grep -h wgmma_ws_kernel | cut -c1-150; done
cd $OUT && tar czf t.tgz t && rm -rf t
