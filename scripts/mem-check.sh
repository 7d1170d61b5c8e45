#!/usr/bin/env bash
# The memory lab's batch for a GPU machine: build with CUDA (an existing build is reused),
# then gemmlab device, gemmlab mem, gemmlab explain for a few rungs, and the gpu tests of
# the memory lab (ctest -R Mem). JSON and logs go to OUTDIR; a short summary prints last.
#
#   scripts/mem-check.sh [OUTDIR]          (default: mem-out)
#
# Environment: BUILD_DIR (default build-device), MNK (explain's shape, default
# 4096x4096x4096), RUNGS (default "naive coalesced smem_tiled_16 smem_tiled_32 smem_padded
# reg_2d warptile pipelined cublas_sgemm"), SKIP_TESTS=1 to leave the tests out.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-mem-out}
build=${BUILD_DIR:-build-device}
mnk=${MNK:-4096x4096x4096}
rungs=${RUNGS:-naive coalesced smem_tiled_16 smem_tiled_32 smem_padded reg_2d warptile pipelined cublas_sgemm}
mkdir -p "$out"
summary=()
note() { summary+=("$1"); echo "== $1"; }
t0=$(date +%s)

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

# ---- device: facts and ceilings ------------------------------------------------
start=$(date +%s)
timeout 180 "$build/gemmlab" device --format json >"$out/device.json" 2>"$out/device.log"
note "device rc=$? in $(($(date +%s) - start)) s"
timeout 180 "$build/gemmlab" device >"$out/device.txt" 2>>"$out/device.log"

# ---- mem: every experiment ---------------------------------------------------------
start=$(date +%s)
timeout 300 "$build/gemmlab" mem --format json --output "$out/mem.json" 2>"$out/mem.log"
note "mem rc=$? in $(($(date +%s) - start)) s"

# ---- explain: the model next to the measurement --------------------------------------
start=$(date +%s)
list=$(echo "$rungs" | tr ' ' ',')
timeout 300 "$build/gemmlab" explain "$list" --backend cuda --mnk "$mnk" --format json \
  --output "$out/explain.json" 2>"$out/explain.log"
rc=$?
timeout 300 "$build/gemmlab" explain "$list" --backend cuda --mnk "$mnk" --no-verify \
  --output "$out/explain.txt" 2>>"$out/explain.log"
note "explain rc=$rc in $(($(date +%s) - start)) s"

# ---- gpu tests of the memory lab ------------------------------------------------------
if [[ -z ${SKIP_TESTS:-} ]]; then
  start=$(date +%s)
  ctest --test-dir "$build" -L gpu -R Mem --output-on-failure >"$out/mem-tests.log" 2>&1
  rc=$?
  note "mem gpu tests rc=$rc in $(($(date +%s) - start)) s: $(grep -E 'tests passed|tests failed' "$out/mem-tests.log" | tail -1)"
fi

echo
echo "==== summary ($(($(date +%s) - t0)) s) ===="
printf '%s\n' "${summary[@]}"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception as e:
        print(f"{name}: unreadable ({e})")
        return None
d = load("device.json")
if d:
    dev, c = d["device"], d["ceilings"]
    print(f'{dev["name"]} cc {dev["compute_capability"]}, {dev["sm_count"]} SMs, L2 {dev["l2_bytes"] >> 20} MiB, '
          f'theoretical {dev["theoretical_bandwidth_gbs"]:.0f} GB/s, commit {d["build"]["commit"]}')
    print(f'  memcpy D2D {c.get("memcpy_d2d_gbs", 0):.0f} GB/s | best copy kernel {c.get("copy_kernel_gbs", 0):.0f} '
          f'({c.get("copy_kernel")}) | read {c.get("read_gbs", 0):.0f} GB/s '
          f'({100 * c.get("read_gbs", 0) / max(dev["theoretical_bandwidth_gbs"], 1):.1f}%) | '
          f'FMA {c.get("fma_gflops", 0) / 1e3:.1f} TFLOP/s | SGEMM {c.get("sgemm_gflops", 0) / 1e3:.1f} TFLOP/s')
    bad = [r["name"] for r in c["rows"] if not r["passed"]]
    print("  ceiling checks:", "all ok" if not bad else "FAILED " + ", ".join(bad))
m = load("mem.json")
if m:
    rows = m["results"]
    print(f'mem: {len(rows)} rows, {sum(1 for r in rows if r["checked"] and not r["passed"])} failed checks')
    by = {}
    for r in rows:
        by.setdefault(r["experiment"], []).append(r)
    for name, rs in by.items():
        lo = min(rs, key=lambda r: r["gbs"]); hi = max(rs, key=lambda r: r["gbs"])
        print(f'  {name:<11} {len(rs):>3} rows  best {hi["variant"]} {hi["param_name"]}={hi["param"]} {hi["gbs"]:.0f} GB/s '
              f'({hi["ratio_to_copy"]:.2f}x copy)  worst {lo["variant"]} {lo["param_name"]}={lo["param"]} {lo["gbs"]:.1f} GB/s')
    for r in rows:
        if "target" in r:
            print(f'  target {r["target"]:<28} {r["variant"]} x{r["param"]}: {r["gbs"]:.0f} GB/s, '
                  f'{r["ratio_to_copy"]:.3f}x copy, {r["pct_of_theoretical"]:.1f}% peak: {"met" if r["target_met"] else "not met"}')
e = load("explain.json")
if e:
    for r in e["results"]:
        x = r.get("explain", {})
        occ = x.get("occupancy", {})
        k = x.get("kernel", {})
        print(f'  explain {r["variant"]:<14} {r.get("gflops", 0) / 1e3:6.2f} TFLOP/s  CGMA {x.get("model", {}).get("cgma", 0):6.1f}  '
              f'{100 * x.get("fraction_of_bound", 0):5.1f}% of roofline  '
              + (f'{k.get("registers_per_thread")} regs, {occ.get("blocks_per_sm")} blocks/SM by {occ.get("limiter")} '
                 f'(API {occ.get("api_blocks_per_sm")}, {"agrees" if occ.get("api_agrees") else "DISAGREES"})'
                 if k.get("available") else f'kernel n/a: {k.get("why", "")[:50]}'))
PY
