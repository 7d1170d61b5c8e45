#!/usr/bin/env bash
# Checks what gemmlab's build needs by running it, and asks apt (Debian/Ubuntu) only for what
# is really missing. Tools installed another way (CMake or matplotlib through pip, a compiler
# from a module) count as present, so a machine that has everything installs nothing and
# needs no network.
#
#   scripts/install-deps.sh           check, then install what is missing
#   scripts/install-deps.sh --check   check and report only; exit 1 if something is missing
#
# The checks: CMake at least the version CMakeLists.txt asks for, Ninja, a C++ compiler that
# builds a small C++20 program (the one CMake will pick: $CXX, else c++, g++, clang++),
# GoogleTest, CLI11, nlohmann-json and fmt (a small program compiled and linked against each),
# OpenBLAS (loaded at run time as the program loads it), and a python3 with matplotlib for the
# plots (any python3 found: the plot scripts run under one that has it). For the Python package
# (python/), the python3 first on PATH (the one CMake finds): its Python.h, and nanobind and
# scikit-build-core to build it, pytest, NumPy, pandas and pyarrow (which pandas loads where it
# is installed) to test it, each imported and its version checked against a minimum; what is
# missing comes from PyPI through pip at the versions pinned below (apt has no nanobind), the
# rest through apt. Where the CUDA toolkit is, NCCL (for the distributed GEMM): found beside
# the toolkit, in the system or as pip's nvidia-nccl-cu13, else installed from PyPI (pinned).
set -euo pipefail

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

missing_needs=()     # what is missing, for people
missing_packages=()  # the Debian/Ubuntu package that provides each
found() { printf 'install-deps: found   %-14s %s\n' "$1" "$2"; }
missing() {
  printf 'install-deps: MISSING %-14s %s (package %s)\n' "$1" "$2" "$3"
  missing_needs+=("$1")
  missing_packages+=("$3")
}

# version_at_least HAVE WANT: dotted versions compared field by field.
version_at_least() {
  local IFS=.
  local -a have=($1) want=($2)
  local i
  for ((i = 0; i < ${#want[@]}; i++)); do
    local h="${have[i]:-0}" w="${want[i]:-0}"
    h="${h%%[!0-9]*}" w="${w%%[!0-9]*}"
    ((10#${h:-0} > 10#${w:-0})) && return 0
    ((10#${h:-0} < 10#${w:-0})) && return 1
  done
  return 0
}

# ---- CMake ------------------------------------------------------------------------
cmake_min="$(sed -n 's/^[[:space:]]*cmake_minimum_required[[:space:]]*([[:space:]]*VERSION[[:space:]]*\([0-9.]*\).*/\1/p' \
  "$root/CMakeLists.txt" | head -n 1)"
cmake_min="${cmake_min:-3.24}"
if cmake_version="$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p')" &&
   [[ -n "$cmake_version" ]]; then
  if version_at_least "$cmake_version" "$cmake_min"; then
    found cmake "$cmake_version at $(command -v cmake) (need >= $cmake_min)"
  else
    missing cmake "$cmake_version at $(command -v cmake) is older than $cmake_min" cmake
  fi
else
  missing cmake "no working cmake on PATH (need >= $cmake_min)" cmake
fi

# ---- Ninja ------------------------------------------------------------------------
if ninja_version="$(ninja --version 2>/dev/null)" && [[ -n "$ninja_version" ]]; then
  found ninja "$ninja_version at $(command -v ninja)"
else
  missing ninja "no working ninja on PATH" ninja-build
fi

# ---- a C++20 compiler ---------------------------------------------------------------
cat >"$work/cxx20.cpp" <<'EOF'
#include <bit>
#include <concepts>
#include <span>
template <std::integral T> constexpr T twice(T x) { return x * 2; }
int main() {
  int a[2] = {1, 2};
  std::span<int> s(a);
  return twice(s.size()) == 4 && std::has_single_bit(4u) ? 0 : 1;
}
EOF
cxx=""
if [[ -n "${CXX:-}" ]]; then
  candidates=("$CXX")
else
  candidates=(c++ g++ clang++)
fi
for c in "${candidates[@]}"; do
  if command -v "$c" >/dev/null 2>&1 &&
     "$c" -std=c++20 "$work/cxx20.cpp" -o "$work/cxx20" >/dev/null 2>&1 && "$work/cxx20"; then
    cxx="$c"
    break
  fi
done
if [[ -n "$cxx" ]]; then
  found "C++20" "$cxx ($("$cxx" --version 2>/dev/null | head -n 1))"
else
  missing "C++20" "none of ${candidates[*]} compiles a C++20 program" g++
fi

# ---- libraries: a small program compiled and linked against each ---------------------
# try_library NAME PACKAGE SOURCE [LINK FLAGS...]
try_library() {
  local name="$1" package="$2" source="$3"
  shift 3
  if [[ -z "$cxx" ]]; then
    missing "$name" "not checked: no C++20 compiler" "$package"
    return
  fi
  printf '%s\n' "$source" >"$work/$name.cpp"
  if "$cxx" -std=c++20 "$work/$name.cpp" -o "$work/$name" "$@" >"$work/$name.log" 2>&1 &&
     "$work/$name" >>"$work/$name.log" 2>&1; then
    found "$name" "a test program builds and runs"
  else
    missing "$name" "a test program does not build: $(head -n 1 "$work/$name.log")" "$package"
  fi
}
try_library fmt libfmt-dev '#include <fmt/format.h>
int main() { return fmt::format("{}", 42) == "42" ? 0 : 1; }' -lfmt
try_library nlohmann-json nlohmann-json3-dev '#include <nlohmann/json.hpp>
int main() { return nlohmann::json::parse("[1]").size() == 1 ? 0 : 1; }'
try_library CLI11 libcli11-dev '#include <CLI/CLI.hpp>
int main() { CLI::App app{"x"}; return 0; }'
try_library GoogleTest libgtest-dev '#include <gtest/gtest.h>
TEST(X, Y) { EXPECT_EQ(1, 1); }
int main(int argc, char** argv) { testing::InitGoogleTest(&argc, argv); return RUN_ALL_TESTS(); }' -lgtest -pthread
# The program loads OpenBLAS at run time under these names (src/cpu/ladder/openblas.cpp).
try_library OpenBLAS libopenblas-dev '#include <dlfcn.h>
int main() { return dlopen("libopenblas.so.0", RTLD_NOW) || dlopen("libopenblas.so", RTLD_NOW) ? 0 : 1; }' -ldl

# ---- python3 with matplotlib ----------------------------------------------------------
python_found=""
for p in "$(command -v python3 2>/dev/null || true)" /usr/bin/python3 /usr/local/bin/python3; do
  [[ -n "$p" && -x "$p" ]] || continue
  if version="$("$p" -c 'import matplotlib; print(matplotlib.__version__)' 2>/dev/null)"; then
    python_found="$p (matplotlib $version)"
    break
  fi
done
if [[ -n "$python_found" ]]; then
  found matplotlib "$python_found"
else
  missing matplotlib "no python3 here imports matplotlib (for the plots)" python3-matplotlib
fi

# ---- the Python package: Python.h (apt), then its build and test modules (pip) --------------------
# name, import name, minimum accepted, version pip installs when it is missing or older.
python_modules=(
  "nanobind nanobind 2.0 3.1.0"
  "scikit-build-core scikit_build_core 0.10 1.1.2"
  "pytest pytest 7.0 9.2.0"
  "numpy numpy 1.22 2.4.6"
  "pandas pandas 1.5 3.1.1"
  "pyarrow pyarrow 10.0 26.0.1"
)
missing_pip=()  # name==version for pip
py="$(command -v python3 2>/dev/null || true)"
if [[ -z "$py" ]]; then
  missing Python.h "no python3 on PATH (for the Python package)" python3-dev
elif "$py" -c 'import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)' 2>/dev/null; then
  found Python.h "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h ($py)"
else
  missing Python.h "$py has no Python.h (to build the extension)" python3-dev
fi
if [[ -n "$py" ]]; then
  for entry in "${python_modules[@]}"; do
    read -r name module minimum pin <<<"$entry"
    if version="$("$py" -c "import $module; print($module.__version__)" 2>/dev/null)" && [[ -n "$version" ]]; then
      if version_at_least "$version" "$minimum"; then
        found "$name" "$version for $py (need >= $minimum)"
        continue
      fi
      printf 'install-deps: MISSING %-14s %s is older than %s (pip %s==%s)\n' "$name" "$version" "$minimum" "$name" "$pin"
    else
      printf 'install-deps: MISSING %-14s not importable by %s (pip %s==%s)\n' "$name" "$py" "$name" "$pin"
    fi
    missing_needs+=("$name")
    missing_pip+=("$name==$pin")
  done
fi

# ---- NCCL, where the CUDA toolkit is: the distributed GEMM (optional in the build) ------------
# Looked for where cmake/nccl.cmake looks: the toolkit's folders, the system's, the Python
# package; missing, it comes from PyPI (nvidia-nccl-cu13, the release the GPU machines run).
nccl_pin="nvidia-nccl-cu13==2.28.9"
if nvcc_path="$(command -v nvcc 2>/dev/null)" && [[ -s "$nvcc_path" ]]; then
  toolkit="$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")"
  nccl_header=""
  for d in "${NCCL_ROOT:-/nonexistent}/include" "$toolkit/include" /usr/include /usr/local/include; do
    if [[ -f "$d/nccl.h" ]]; then nccl_header="$d/nccl.h"; break; fi
  done
  if [[ -z "$nccl_header" && -n "$py" ]]; then
    nccl_header="$("$py" -c 'import nvidia.nccl as m, os; p = os.path.join(list(m.__path__)[0], "include", "nccl.h"); print(p if os.path.exists(p) else "")' 2>/dev/null || true)"
  fi
  if [[ -n "$nccl_header" ]]; then
    found NCCL "$nccl_header ($(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$nccl_header" | paste -sd.))"
  elif [[ -n "$py" ]]; then
    printf 'install-deps: MISSING %-14s no nccl.h beside %s or the system (pip %s)\n' NCCL "$toolkit" "$nccl_pin"
    missing_needs+=(NCCL)
    missing_pip+=("$nccl_pin")
  fi
fi

# ---- install what is missing ----------------------------------------------------------------
if ((${#missing_packages[@]} == 0 && ${#missing_pip[@]} == 0)); then
  echo "install-deps: everything the build needs is present; nothing to install"
  exit 0
fi
# One package may provide several needs.
packages=()
if ((${#missing_packages[@]})); then mapfile -t packages < <(printf '%s\n' "${missing_packages[@]}" | sort -u); fi
if ((check_only)); then
  echo "install-deps: missing ${missing_needs[*]} (apt packages: ${packages[*]:-none}; pip: ${missing_pip[*]:-none})" >&2
  exit 1
fi
if ((${#packages[@]})); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: missing ${missing_needs[*]}; this is not a Debian/Ubuntu machine (no apt-get): install them" \
         "and run this again" >&2
    exit 1
  fi
  echo "install-deps: missing ${missing_needs[*]}: installing ${packages[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  if ! "${sudo_cmd[@]}" apt-get update -qq ||
     ! "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"; then
    echo "install-deps: apt-get could not install ${packages[*]} (no network or no such package?);" \
         "install ${missing_needs[*]} another way and run this again" >&2
    exit 1
  fi
  echo "install-deps: installed ${packages[*]}"
fi
if ((${#missing_pip[@]})); then
  pip_cmd=("$py" -m pip install --disable-pip-version-check -q)
  # A distribution's own Python (PEP 668) takes packages for the user alone, beside its own.
  if "$py" -c 'import os, sys, sysconfig
sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)' 2>/dev/null; then
    pip_cmd+=(--user --break-system-packages)
  fi
  echo "install-deps: installing ${missing_pip[*]} for $py with pip"
  if ! "${pip_cmd[@]}" "${missing_pip[@]}"; then
    echo "install-deps: pip could not install ${missing_pip[*]} (no network, or no pip for $py?);" \
         "install them another way and run this again" >&2
    exit 1
  fi
  echo "install-deps: installed ${missing_pip[*]}"
fi
echo "install-deps: checking again"
# A package can install and still not meet a need (a distribution's CMake older than the minimum).
exec "$0" --check
