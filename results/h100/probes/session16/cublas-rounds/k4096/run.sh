#!/usr/bin/env bash
# Session 16, call 2: the same counters at K = 4096 (rounds and the forced tail), and active.min.
# K loop run at the tensor cores' peak per clock? Locked clock (ncu), M x 4096 x 16384 for
# M = 3840 (480 tiles), 4096 (512), 4224 (528): rounds give equal cycles, balancing gives
# cycles in proportion to tiles. Also the tensor pipe's active cycles, ours against cuBLAS.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/b; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/gemmlab
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
ncu --query-metrics --chip gh100 > $O/metrics.txt 2>&1
EXTRA=$(grep -oE '^(sm__pipe_tensor_op_gmma_cycles_active|sm__pipe_tensor_op_hmma_cycles_active|sm__inst_executed_pipe_tensor_op_gmma|sm__cycles_active|smsp__cycles_active)\b' $O/metrics.txt | sort -u | sed 's/$/.avg,/;' | tr -d '\n')
EXTRA2=$(grep -oE '^(sm__pipe_tensor_op_gmma_cycles_active|sm__cycles_active)\b' $O/metrics.txt | sort -u | sed 's/$/.max,/;p;s/.max,/.min,/' | tr -d '\n')
M="gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,${EXTRA}${EXTRA2%,}"
echo "metrics: $M" > $O/used.txt
run() {  # name regex dtype variant trans mnk
  timeout 150 ncu --kernel-name "regex:$2" --launch-skip 2 --launch-count 1 --metrics "$M" \
    $G bench --backend cuda --dtype $3 --variants $4 --trans $5 --mnk $6 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/ncu-$1.txt 2>&1
  echo "$1: $(grep -E '^ +(gpu__|sm__|smsp__)' $O/ncu-$1.txt | awk '{print $1"="$NF}' | tr '\n' ' ')"
}
run cublas-tf32 'sm90_xmma|nvjet' tf32 cublas_tf32 NN 4096x4096x4096
run cublas-bf16 'sm90_xmma|nvjet' bf16 cublas_bf16 NN 4096x4096x4096
for t in "tf32 NN" "tf32 NT" "bf16 NN"; do
  set -- $t
  GEMMLAB_WGMMA_TAIL=rounds run ours-$1-$2-rounds wgmma_ws_kernel $1 wgmma_ws_$1 $2 4096x4096x4096
  GEMMLAB_WGMMA_TAIL=stream_k run ours-$1-$2-tail wgmma_ws_kernel $1 wgmma_ws_$1 $2 4096x4096x4096
done
cd $OUT && tar czf b.tgz b && rm -rf b
