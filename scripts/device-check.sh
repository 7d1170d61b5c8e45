#!/usr/bin/env bash
# The batch for a GPU machine: build with CUDA, run the GPU tests, compute-sanitizer on
# every rung, and the ladder benchmark. Logs and JSON go to OUTDIR; a summary prints last.
#
#   scripts/device-check.sh [OUTDIR]          (default: device-out)
#
# Environment: BUILD_DIR (default build-device; an existing build is reused),
# SIZES (benchmark sizes, default "4096,8192"), SWEEP (also sweep 128..8192 and odd sizes: 1),
# DTYPES (the --dtype runs for the sanitizer and the benchmark, default "f32"; e.g. "f32 tf32 bf16 f16"),
# SANITIZER_DTYPES (the sanitizer's alone, default DTYPES), SANITIZER_MNK (its shapes, run with
# ld padded by 1, default 67x45x33,35x37x19), SANITIZER_ALIGNED_MNK (shapes run with ld = the
# row length, every pitch 16-byte aligned so that no operand is copied first: default
# 136x264x40), SANITIZER_CONFIGS (more sanitizer runs, one per word DTYPE:VARIANT:CONFIG,
# e.g. bf16:wgmma_ws_bf16:stream_k; each runs with the dtype's every transposition and shape),
# SKIP_TESTS=1, SKIP_SANITIZER=1, SKIP_BENCH=1 to leave a step out.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-device-out}
build=${BUILD_DIR:-build-device}
sizes=${SIZES:-4096,8192}
dtypes=${DTYPES:-f32}
sanitizer_dtypes=${SANITIZER_DTYPES:-$dtypes}
mkdir -p "$out"
summary=()
note() { summary+=("$1"); echo "== $1"; }

# ---- build -------------------------------------------------------------------
start=$(date +%s)
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEMMLAB_CUDA=ON \
         ${GEMMLAB_COMMIT:+-DGEMMLAB_COMMIT_OVERRIDE=$GEMMLAB_COMMIT} >"$out/configure.log" 2>&1 &&
       cmake --build "$build" -j "$(nproc)" --target gemmlab gemmlab_gpu_tests >"$out/build.log" 2>&1; }; then
  note "build FAILED after $(($(date +%s) - start)) s (see build.log)"
  tail -30 "$out/build.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi
note "build ok in $(($(date +%s) - start)) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv >"$out/nvidia-smi.csv" 2>&1 || true
"$build/gemmlab" list --backend cuda >"$out/list.txt" 2>&1

# ---- GPU tests ---------------------------------------------------------------
if [[ -z ${SKIP_TESTS:-} ]]; then
  start=$(date +%s)
  ctest --test-dir "$build" -L gpu --output-on-failure >"$out/gpu-tests.log" 2>&1
  rc=$?
  note "gpu tests rc=$rc in $(($(date +%s) - start)) s: $(grep -E 'tests passed|tests failed' "$out/gpu-tests.log" | tail -1)"
fi

# ---- compute-sanitizer: every rung, a small odd size, all transpositions ----
if [[ -z ${SKIP_SANITIZER:-} ]]; then
  for tool in memcheck racecheck synccheck; do
    start=$(date +%s)
    status=ok
    runs=0
    # The default forms of every rung of each dtype, then each named configuration asked for.
    for form in $(for d in $sanitizer_dtypes; do echo "$d::"; done) ${SANITIZER_CONFIGS:-}; do
      IFS=: read -r dtype variant config <<<"$form"
      for trans in NN TN NT TT; do
        for shapes in "1 ${SANITIZER_MNK:-67x45x33,35x37x19}" "0 ${SANITIZER_ALIGNED_MNK:-136x264x40}"; do
          compute-sanitizer --tool "$tool" --error-exitcode 99 \
            "$build/gemmlab" verify --backend cuda --dtype "$dtype" ${variant:+--variants "$variant"} \
            ${config:+--config "$config"} --mnk "${shapes#* }" --trans "$trans" --beta 0.5 --pad "${shapes%% *}" \
            >>"$out/sanitizer-$tool.log" 2>&1 || status="FAILED ($form $trans pad ${shapes%% *})"
          runs=$((runs + 1))
        done
      done
    done
    note "compute-sanitizer $tool: $status ($(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$out/sanitizer-$tool.log") of $runs runs clean) in $(($(date +%s) - start)) s"
  done
fi

# ---- benchmark ---------------------------------------------------------------
if [[ -z ${SKIP_BENCH:-} ]]; then
  for dtype in $dtypes; do
    # ladder.json for f32 (as before), ladder-<dtype>.json for the tensor-core dtypes.
    json="$out/ladder.json"
    [[ $dtype != f32 ]] && json="$out/ladder-$dtype.json"
    start=$(date +%s)
    "$build/gemmlab" bench --backend cuda --dtype "$dtype" --sizes "$sizes" --format json --output "$json" \
      2>>"$out/bench.log"
    note "bench $dtype rc=$? in $(($(date +%s) - start)) s"
    if [[ -n ${SWEEP:-} ]]; then
      sweep="$out/sweep.json"
      [[ $dtype != f32 ]] && sweep="$out/sweep-$dtype.json"
      "$build/gemmlab" bench --backend cuda --dtype "$dtype" --sizes 128,256,512,1024,2048,1000,4095 --format json \
        --output "$sweep" 2>>"$out/bench.log"
      note "sweep $dtype rc=$?"
    fi
  done
fi

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
for json in "$out"/ladder*.json; do
  [[ -f $json ]] || continue
  python3 - "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print(doc["device"].get("gpu"), "sm clock now", doc["device"].get("sm_clock_now_mhz"), "MHz, commit", doc["build"]["commit"],
      "dtype", doc["settings"].get("dtype", "f32"))
for r in doc["results"]:
    rate = r.get("gflops", 0) / 1e3
    ratio = r.get("ratio_to_anchor")
    v = r.get("verification", {})
    print(f'{r["m"]:>5} {r["variant"]:<15} {rate:8.2f} TFLOP/s  x{ratio if ratio is None else round(ratio, 3)}  '
          f'{"ok" if v.get("passed") else "FAIL"} err {v.get("rel_frobenius", float("nan")):.1e} {r["status"]} {r["message"][:60]}')
PY
done
