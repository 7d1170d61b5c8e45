#!/usr/bin/env bash
# Session 16, call 8: warp states of ours (tf32 NN, whole rounds) and cuBLAS's tf32 kernel at
# 4096 x 4096 x 16384 (K loop dominated), with launch statistics: where does our K loop lose
# the 1.5 % per k that cuBLAS does not?
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/h; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
run() {  # name regex dtype variant
  GEMMLAB_WGMMA_TAIL=rounds timeout 250 ncu --kernel-name "regex:$2" --launch-skip 2 --launch-count 1 \
    --metrics sm__cycles_active.max,smsp__average_warp_latency_per_inst_issued,smsp__average_warp_latency_issue_stalled_gmma,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_wait,smsp__average_warp_latency_issue_stalled_sleeping,smsp__average_warp_latency_issue_stalled_branch_resolving,smsp__average_warp_latency_issue_stalled_short_scoreboard,smsp__average_warp_latency_issue_stalled_membar,smsp__average_warp_latency_issue_stalled_dispatch_stall,smsp__average_warp_latency_issue_stalled_math_pipe_throttle,smsp__average_warp_latency_issue_stalled_mio_throttle,smsp__average_warp_latency_issue_stalled_lg_throttle,smsp__average_warp_latency_issue_stalled_no_instruction,smsp__average_warp_latency_issue_stalled_selected,smsp__average_warp_latency_issue_stalled_not_selected,smsp__average_warp_latency_issue_stalled_misc \
    $G bench --backend cuda --dtype $3 --variants $4 --trans NN --mnk 4096x4096x16384 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$1.txt 2>&1
  echo "$1: $(grep -E '^ +(sm__|smsp__)' $O/ncu-$1.txt | awk '{print $1"="$NF}' | sed 's/smsp__average_warp_latency_issue_stalled_//' | tr '\n' ' ')"
}
run ours wgmma_ws_kernel tf32 wgmma_ws_tf32
run cublas 'sm90_xmma|nvjet' tf32 cublas_tf32
cd $OUT && tar czf h.tgz h && rm -rf h
