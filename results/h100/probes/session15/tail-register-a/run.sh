#!/usr/bin/env bash
# Session 15: the stream-K tail for tf32 with A in registers (row-major NN runs C^T), and the
# fix-up adding into the accumulators. GPU tests; benches tail (auto) vs rounds, interleaved;
# compute-sanitizer on the forced tail.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/c; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; xz -dc scratch/bin/gemmlab_gpu_tests.xz > build-device/gemmlab_gpu_tests; chmod +x build-device/*
G=build-device/gemmlab
nvidia-smi --query-gpu=name,serial,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv > $O/nvidia-smi.csv 2>&1
t0=$(date +%s)
timeout 150 build-device/gemmlab_gpu_tests > $O/gpu-tests.txt 2>&1; echo "gpu tests rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $O/gpu-tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" $O/gpu-tests.txt | head -5
summ() { python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2] + ': ' + '; '.join(f'{x["m"]} {x["variant"]} {x.get("gflops",0)/1e3:.1f}' + (f' x{x["ratio_to_anchor"]:.3f}' if x.get("ratio_to_anchor") else '') + ('' if x.get("verification",{}).get("passed") else ' FAILED') for x in r["results"]))
PY
}
for round in 1 2; do
  for tail in auto rounds; do
    GEMMLAB_WGMMA_TAIL=$tail timeout 100 $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32,cublas_tf32 --sizes 4096,8192 --format json --output $O/tf32-nn-$tail-$round.json 2>>$O/bench.log; summ $O/tf32-nn-$tail-$round.json tf32-nn-$tail-$round
  done
done
timeout 100 $G bench --backend cuda --dtype bf16 --variants wgmma_ws_bf16,cublas_bf16 --sizes 4096,8192 --format json --output $O/bf16.json 2>>$O/bench.log; summ $O/bf16.json bf16
GEMMLAB_WGMMA_TAIL=stream_k timeout 100 $G bench --backend cuda --dtype tf32 --variants wgmma_ws_tf32,cublas_tf32 --sizes 4096 --format json --output $O/tf32-nn-forced-4096.json 2>>$O/bench.log; summ $O/tf32-nn-forced-4096.json tf32-nn-forced
$G explain wgmma_ws_tf32 --backend cuda --dtype tf32 --mnk 8192x8192x8192,4096x4096x4096 --no-verify > $O/explain-tf32.txt 2>&1; grep -E "wgmma_ws_kernel" $O/explain-tf32.txt | cut -c1-180
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s); runs=0; bad=0
  for dt in "tf32 NN 33000x1100x300" "tf32 TT 1100x33000x300" "bf16 NN 1100x33000x300"; do
    set -- $dt
    GEMMLAB_WGMMA_TAIL=stream_k timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $G bench --backend cuda --dtype $1 --variants wgmma_ws_$1 --mnk $3 --trans $2 --beta 0.5 --reps 1 --warmup 0 --min-time 0 >> $O/san-$tool.log 2>&1
    rc=$?; runs=$((runs+1)); [ $rc -ne 0 ] && { bad=$((bad+1)); echo "FAILED: $tool $* rc=$rc" >> $O/san-$tool.log; }
  done
  echo "$tool: $((runs-bad)) of $runs clean in $(( $(date +%s) - t0 )) s" | tee $O/san-$tool-summary.txt
done
cd $OUT && tar czf c.tgz c && rm -rf c
