#!/usr/bin/env bash
# Two builds of gemmlab on one GPU, timed in alternating rounds, so that a change can be
# judged by each rung's ratio to the same-run anchor on the same board:
#
#   scripts/side-by-side.sh OLD_GEMMLAB NEW_GEMMLAB OUTDIR
#
# Each round runs every job with both binaries, the old one first in odd rounds and the new
# one first in even rounds (so that neither always meets the warmer GPU); each run verifies
# against the float64 reference and times the anchor beside the rungs. OUTDIR receives one
# JSON per job, build and round (old-bf16-1.json ...) and side-by-side.json, which
# scripts/side_by_side.py makes from them. Environment: ROUNDS (default 2), JOBS (a subset
# of the job names below).
set -uo pipefail
old=$1
new=$2
out=$3
rounds=${ROUNDS:-2}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

# job name | dtype | variants (the anchor last) | shapes | more bench options
jobs=(
  "f32|f32|pipelined,wgmma_3xtf32,cublas_sgemm|4096x4096x4096,8192x8192x8192,4095x4095x4095,1000x1000x1000"
  "bf16|bf16|wgmma_ws_bf16,cublas_bf16|4096x4096x4096,8192x8192x8192,4095x4095x4095,1000x1000x1000"
  "f16|f16|wgmma_ws_f16,cublas_f16|4096x4096x4096,8192x8192x8192,4095x4095x4095,1000x1000x1000"
  "tf32|tf32|wgmma_ws_tf32,cublas_tf32|4096x4096x4096,8192x8192x8192,4095x4095x4095,1000x1000x1000"
  "bf16-beta1|bf16|wgmma_ws_bf16,cublas_bf16|4096x4096x4096,8192x8192x8192,11008x16384x2816|--beta 1"
)

for round in $(seq 1 "$rounds"); do
  for job in "${jobs[@]}"; do
    IFS='|' read -r name dtype variants shapes options <<<"$job"
    [[ -n ${JOBS:-} && " $JOBS " != *" $name "* ]] && continue
    order="old new"
    ((round % 2 == 0)) && order="new old"
    for build in $order; do
      bin=$old
      [[ $build == new ]] && bin=$new
      start=$(date +%s)
      "$bin" bench --backend cuda --dtype "$dtype" --variants "$variants" --mnk "$shapes" ${options:-} --format json \
        --output "$out/$build-$name-$round.json" 2>>"$out/side-by-side.log"
      echo "round $round $name $build rc=$? in $(($(date +%s) - start)) s"
    done
  done
done
python3 "$here/side_by_side.py" "$out" "$out/side-by-side.json"
