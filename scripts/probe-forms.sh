#!/usr/bin/env bash
# Times forms of the rungs against their anchors in one run: one `gemmlab bench` per line
# of the plan on standard input, each with its own environment (the knobs the rungs read,
# e.g. GEMMLAB_WGMMA_OPERANDS, GEMMLAB_WGMMA_CLUSTER, GEMMLAB_PIPELINED_CONFIG). JSON per
# line goes to OUTDIR, one summary line per form prints as it finishes.
#
#   scripts/probe-forms.sh OUTDIR <<'PLAN'
#   # tag          dtype variants                   trans sizes      environment...
#   tf32-nn-copy   tf32  wgmma_ws_tf32,cublas_tf32  NN    4096,8192  GEMMLAB_WGMMA_OPERANDS=copy
#   tf32-nn-load   tf32  wgmma_ws_tf32,cublas_tf32  NN    4096,8192  GEMMLAB_WGMMA_OPERANDS=cp_async
#   PLAN
#
# Environment: BUILD_DIR (default build-device; built with the GPU binaries if missing),
# BACKEND (default cuda), MNK=1 (the sizes column holds --mnk shapes, MxNxK,...).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/probe-forms.sh OUTDIR < plan}
build=${BUILD_DIR:-build-device}
mkdir -p "$out"
if [[ ! -x "$build/gemmlab" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEMMLAB_CUDA=ON \
    ${GEMMLAB_COMMIT:+-DGEMMLAB_COMMIT_OVERRIDE=$GEMMLAB_COMMIT} >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target gemmlab >"$out/build.log" 2>&1 ||
    { echo "build FAILED (see $out/build.log)"; tail -20 "$out/build.log"; exit 1; }
fi
size_flag=--sizes
[[ -n ${MNK:-} ]] && size_flag=--mnk
status=0
while read -r tag dtype variants trans sizes rest; do
  [[ -z ${tag:-} || $tag == \#* ]] && continue
  # shellcheck disable=SC2086  # the environment column splits into VAR=value words
  if ! env $rest "$build/gemmlab" bench --backend "${BACKEND:-cuda}" --format json --dtype "$dtype" --variants "$variants" \
      --trans "$trans" "$size_flag" "$sizes" --output "$out/$tag.json" 2>>"$out/$tag.log"; then
    echo "$tag: bench FAILED (see $tag.log)"
    status=1
    continue
  fi
  python3 - "$out/$tag.json" "$tag" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
cells = []
for r in report["results"]:
    ok = r["verification"]["passed"] if r.get("verification") else True
    ratio = r.get("ratio_to_anchor")
    cells.append(f'{r["m"]}x{r["n"]}x{r["k"]} {r["variant"]} {r.get("gflops", 0) / 1e3:.1f} TFLOP/s'
                 + (f' (x{ratio:.3f})' if ratio else '') + ('' if ok else ' FAILED'))
print(f'{sys.argv[2]}: ' + '; '.join(cells))
PY
done
exit $status
