#!/usr/bin/env bash
# Session 16, call 4: one wgmma per commit group for A in registers (tf32 NN, TT), against the
# committed stage-by-stage loop: GPU tests of the tf32 kernels, locked-clock cycles, and three
# interleaved bench rounds with cuBLAS TF32 as the anchor.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/d; mkdir -p $O build-device
for b in gemmlab gemmlab-old gemmlab_gpu_tests; do xz -dc scratch/bin/$b.xz > build-device/$b; done; chmod +x build-device/*
N=build-device/gemmlab; OLD=build-device/gemmlab-old
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
timeout 240 build-device/gemmlab_gpu_tests --gtest_filter='Wgmma.Tf32*:Wgmma.StreamK*:Wgmma.KernelsUseNoLocalMemory:Wgmma.EveryKernelForm:Wgmma.ThreeTf32EveryShape*' > $O/gpu-tests.txt 2>&1
echo "tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu-tests.txt | tr '\n' ' ')"
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.max
for bin in new old; do G=$N; [ $bin = old ] && G=$OLD
  for k in 4096 16384; do
    GEMMLAB_WGMMA_TAIL=rounds timeout 150 ncu --kernel-name regex:wgmma_ws_kernel --launch-skip 2 --launch-count 1 --metrics $M \
      $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32 --trans NN --mnk 4096x4096x$k --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$bin-$k.txt 2>&1
    echo "ncu $bin K=$k: $(grep -E '^ +(gpu__|sm__)' $O/ncu-$bin-$k.txt | awk '{print $1"="$NF}' | tr '\n' ' ')"
  done
done
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x["trans"] if "trans" in x else ""} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2 3; do
  for bin in new old; do G=$N; [ $bin = old ] && G=$OLD
    timeout 100 $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32,cublas_tf32 --trans NN --no-verify --sizes 4096,8192 --format json --output $O/tf32-$bin-$round.json 2>>$O/bench.log; summ $O/tf32-$bin-$round.json "$bin-$round"
  done
done
cd $OUT && tar czf d.tgz d && rm -rf d
