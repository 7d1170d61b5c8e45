#!/usr/bin/env bash
# Session 16, call 9: tf32 NN K-loop cycles per k with and without clusters (locked clock),
# 4096 x 4096 x {4096, 16384}, whole rounds: does the cluster's coupling (each stage waits
# for both blocks' consumers and both producers) cost the 1.5 % per k against cuBLAS?
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/i; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
M=sm__cycles_active.max,sm__cycles_elapsed.max,launch__grid_size,launch__cluster_dim_x
for c in 2 1; do for k in 4096 16384; do for dt in tf32 bf16; do
  GEMMLAB_WGMMA_CLUSTER=$c GEMMLAB_WGMMA_TAIL=rounds timeout 150 ncu --kernel-name regex:wgmma_ws_kernel --launch-skip 2 --launch-count 1 --metrics $M \
    $G bench --backend cuda --dtype $dt --variants wgmma_ws_$dt --trans NN --mnk 4096x4096x$k --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$dt-c$c-$k.txt 2>&1
  echo "$dt cluster $c K=$k: $(grep -E '^ +(sm__|launch__)' $O/ncu-$dt-c$c-$k.txt | awk '{print $1"="$NF}' | tr '\n' ' ')"
done; done; done
cd $OUT && tar czf i.tgz i && rm -rf i
