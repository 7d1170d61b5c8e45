#!/usr/bin/env bash
# Session 16, call 6: tile groups of 16 tile rows (kGroupM 8 -> 16), so that a round of 64
# clusters covers 16 x 8 tiles instead of 8 x 16 (4096 instead of 5120 operand rows per round
# at 4096^2: DRAM reads -20 % predicted). Locked-clock DRAM bytes and cycles, then three
# interleaved bench rounds against the committed build, cuBLAS as the anchor.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/f; mkdir -p $O build-device
for b in gemmlab gemmlab-old gemmlab_gpu_tests; do xz -dc scratch/bin/$b.xz > build-device/$b; done; chmod +x build-device/*
N=build-device/gemmlab; OLD=build-device/gemmlab-old
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
timeout 300 build-device/gemmlab_gpu_tests --gtest_filter='Wgmma.*' > $O/gpu-tests.txt 2>&1
echo "tests: $(grep -E '^\[  (PASSED|FAILED)' $O/gpu-tests.txt | tr '\n' ' ')"
M=sm__cycles_elapsed.max,sm__cycles_active.max,dram__bytes_read.sum,lts__t_sectors_op_read.sum
for dt in tf32 bf16; do for s in 4096 8192; do for bin in new old; do G=$N; [ $bin = old ] && G=$OLD
  timeout 150 ncu --kernel-name regex:wgmma_ws_kernel --launch-skip 2 --launch-count 1 --metrics $M \
    $G bench --backend cuda --dtype $dt --variants wgmma_ws_$dt --trans NN --sizes $s --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$bin-$dt-$s.txt 2>&1
  echo "ncu $bin $dt $s: $(grep -E '^ +(dram__|lts__|sm__)' $O/ncu-$bin-$dt-$s.txt | awk '{print $1"="$NF}' | sed 's/sm__cycles_//; s/.sum//' | tr '\n' ' ')"
done; done; done
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x.get("gflops",0)/1e3:.1f} x{x.get("ratio_to_anchor",0):.3f}' for x in r["results"] if x["variant"].startswith("wgmma")))
PY
}
for round in 1 2 3; do
  for bin in new old; do G=$N; [ $bin = old ] && G=$OLD
    for dt in tf32 bf16; do
      timeout 100 $G bench --backend cuda --dtype $dt --variants wgmma_ws_$dt,cublas_$dt --trans NN --no-verify --sizes 4096,8192 --format json --output $O/$dt-$bin-$round.json 2>>$O/bench.log; summ $O/$dt-$bin-$round.json "$dt $bin-$round"
    done
  done
done
cd $OUT && tar czf f.tgz f && rm -rf f
