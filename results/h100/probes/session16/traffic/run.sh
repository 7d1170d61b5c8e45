#!/usr/bin/env bash
# Session 16, call 5: DRAM and L2 traffic, ours (committed code) against cuBLAS, tf32 NN and
# bf16 at 4096 x 4096 x K (K = 4096, 16384), locked clock: is cuBLAS's 1.6-2.3 % lower slope
# per k in tf32 its tile order (fewer DRAM reads), or the SM?
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/e; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab-old.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
M=sm__cycles_elapsed.max,sm__cycles_active.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
run() {  # name regex dtype variant mnk
  GEMMLAB_WGMMA_TAIL=rounds timeout 150 ncu --kernel-name "regex:$2" --launch-skip 2 --launch-count 1 --metrics "$M" \
    $G bench --backend cuda --dtype $3 --variants $4 --trans NN --mnk $5 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$1.txt 2>&1
  echo "$1: $(grep -E '^ +(dram__|lts__|sm__|l1tex__)' $O/ncu-$1.txt | awk '{print $1"="$NF}' | sed 's/sm__cycles_//; s/.sum//; s/lts__t_sector_//' | tr '\n' ' ')"
}
for k in 4096 16384; do
  run ours-tf32-$k wgmma_ws_kernel tf32 wgmma_ws_tf32 4096x4096x$k
  run cublas-tf32-$k 'sm90_xmma|nvjet' tf32 cublas_tf32 4096x4096x$k
  run ours-bf16-$k wgmma_ws_kernel bf16 wgmma_ws_bf16 4096x4096x$k
  run cublas-bf16-$k 'sm90_xmma|nvjet' bf16 cublas_bf16 4096x4096x$k
done
cd $OUT && tar czf e.tgz e && rm -rf e
