#!/usr/bin/env bash
# Session 17: 3xTF32's promoted pass: halves (default), eighths with A from registers
# ("registers"), quarters, and no promotion at all ("none", a probe: the ceiling), two
# interleaved rounds at 4096^3 and 8192^3 with cuBLAS SGEMM as the anchor; then the 3xTF32
# GPU tests.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/a; mkdir -p $O build-device
for b in gemmlab gemmlab_gpu_tests; do xz -dc scratch/bin/$b.xz > build-device/$b; done; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f} e{x.get("verification",{}).get("rel_frobenius",0):.2e}' + ('' if x.get("verification",{}).get("passed") else ' FAILED') for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2; do
  for p in halves registers quarters none; do
    GEMMLAB_3XTF32_PROMOTE=$p timeout 120 $G bench --backend cuda --dtype f32 --variants wgmma_3xtf32,cublas_sgemm --sizes 4096,8192 --format json --output $O/3x-$p-$round.json 2>>$O/bench.log; summ $O/3x-$p-$round.json "3xTF32 $p round $round"
  done
done
for p in halves registers; do GEMMLAB_3XTF32_PROMOTE=$p $G explain wgmma_3xtf32 --backend cuda --dtype f32 --mnk 8192x8192x8192 --no-verify 2>&1 | grep -h wgmma_ws_kernel | cut -c1-200; done
timeout 300 build-device/gemmlab_gpu_tests --gtest_filter='*ThreeTf32*:*NoLocalMemory*:*FormIsNamed*' > $O/gpu-tests.txt 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $O/gpu-tests.txt | head
cd $OUT && tar czf a.tgz a && rm -rf a
