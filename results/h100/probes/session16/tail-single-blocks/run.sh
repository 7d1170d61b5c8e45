#!/usr/bin/env bash
# Session 16: why does the stream-K tail in single blocks lose (tf32 NT 8192^3 0.94x against
# 1.01x in clusters)? Locked clock: cycles, DRAM and L2 traffic, local memory, whole rounds
# against the tail, single blocks against clusters.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/q; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
M=sm__cycles_elapsed.max,sm__cycles_active.max,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,launch__grid_size,launch__cluster_dim_x,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum
for c in 1 2; do for t in rounds stream_k; do
  GEMMLAB_WGMMA_CLUSTER=$c GEMMLAB_WGMMA_TAIL=$t timeout 150 ncu --kernel-name regex:wgmma_ws_kernel --launch-skip 2 --launch-count 1 --metrics $M \
    $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32 --trans NT --sizes 8192 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-c$c-$t.txt 2>&1
  echo "cluster $c $t: $(grep -E '^ +(sm__|dram__|lts__|launch__|l1tex__)' $O/ncu-c$c-$t.txt | awk '{print $1"="$NF}' | sed 's/sm__cycles_//; s/.sum//' | tr '\n' ' ')"
done; done
$G explain wgmma_ws_tf32 --backend cuda --dtype tf32 --trans NT --mnk 8192x8192x8192 --no-verify > $O/explain-default.txt 2>&1
GEMMLAB_WGMMA_CLUSTER=1 GEMMLAB_WGMMA_TAIL=stream_k $G explain wgmma_ws_tf32 --backend cuda --dtype tf32 --trans NT --mnk 8192x8192x8192 --no-verify > $O/explain-c1-tail.txt 2>&1
grep -h wgmma_ws_kernel $O/explain-*.txt | cut -c1-200
cd $OUT && tar czf q.tgz q && rm -rf q
