#!/usr/bin/env bash
# Session 16, call 7: warp states of ours (tf32 NN, whole rounds) and cuBLAS's tf32 kernel at
# 4096 x 4096 x 16384 (K loop dominated), with launch statistics: where does our K loop lose
# the 1.5 % per k that cuBLAS does not?
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/g; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
run() {  # name regex dtype variant
  GEMMLAB_WGMMA_TAIL=rounds timeout 250 ncu --kernel-name "regex:$2" --launch-skip 2 --launch-count 1 \
    --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --section SourceCounters \
    --metrics sm__cycles_active.max,smsp__pcsamp_sample_count \
    $G bench --backend cuda --dtype $3 --variants $4 --trans NN --mnk 4096x4096x16384 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$1.txt 2>&1
  echo "$1: $(grep -E 'Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Shared Memory Configuration Size|Dynamic Shared|Registers Per' $O/ncu-$1.txt | sed 's/  */ /g' | tr '\n' ';' | cut -c1-900)"
}
run ours wgmma_ws_kernel tf32 wgmma_ws_tf32
run cublas 'sm90_xmma|nvjet' tf32 cublas_tf32
cd $OUT && tar czf g.tgz g && rm -rf g
