// The CPU anchor: OpenBLAS's sgemm through its CBLAS interface.
#include "cpu/ladder/openblas.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "core/traffic.hpp"
#include "cpu/machine/cpu_features.hpp"
#include "cpu/ladder/rungs.hpp"
#include "cpu/thread_pool.hpp"

namespace gemmlab::cpu {
namespace {

// CBLAS enumerators (cblas.h); the library is not linked, so they are restated here.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
using SetThreadsFn = void (*)(int);
using GetNameFn = char* (*)();

struct OpenBlas {
  OpenBlasInfo info;
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
};

OpenBlas load() {
  OpenBlas lib;
  // Respect a coretype the user chose; otherwise pick the kernel family for this CPU.
  bool set_here = false;
  if (const char* user = std::getenv("OPENBLAS_CORETYPE")) {
    lib.info.coretype = user;
  } else {
    const std::string_view chosen = openblas_coretype_for(cpu_features());
    if (!chosen.empty()) {
      lib.info.coretype = std::string(chosen);
      set_here = setenv("OPENBLAS_CORETYPE", lib.info.coretype.c_str(), 0) == 0;
    }
  }
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      lib.info.library = name;
      lib.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
      lib.set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
      auto corename = reinterpret_cast<GetNameFn>(dlsym(handle, "openblas_get_corename"));
      auto config = reinterpret_cast<GetNameFn>(dlsym(handle, "openblas_get_config"));
      if (corename) lib.info.corename = corename();
      if (config) lib.info.config = config();
      break;
    }
  }
  // OpenBLAS reads the variable while it initialises, inside dlopen; ours is taken back then,
  // so the environment is as the user left it for the rest of the process (another OpenBLAS
  // loaded later, such as NumPy's or SciPy's, and child processes).
  if (set_here) unsetenv("OPENBLAS_CORETYPE");
  if (lib.info.library.empty()) {
    const char* err = dlerror();
    lib.info.error = fmt::format("OpenBLAS not found ({}); install libopenblas-dev",
                                 err ? err : "dlopen failed");
  } else if (!lib.sgemm || !lib.set_threads) {
    lib.info.error = lib.info.library + " lacks cblas_sgemm or openblas_set_num_threads";
  }
  lib.info.loaded = lib.info.error.empty();
  return lib;
}

std::atomic<const OpenBlas*> loaded_library{nullptr};  // set once library() has loaded

const OpenBlas& library() {
  static const OpenBlas lib = load();
  loaded_library.store(&lib, std::memory_order_release);
  return lib;
}

constexpr std::int64_t kBlasIntMax = std::numeric_limits<int>::max();

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_f32_host(p, "openblas_sgemm"));
  if (!library().info.loaded) return {StatusCode::NotSupported, library().info.error};
  for (auto [value, name] : {std::pair{p.m, "m"}, {p.n, "n"}, {p.k, "k"}, {p.a.ld, "lda"},
                             {p.b.ld, "ldb"}, {p.c.ld, "ldc"}})
    if (value > kBlasIntMax)
      return {StatusCode::NotSupported,
              fmt::format("openblas_sgemm: {} ({}) exceeds OpenBLAS's 32-bit integers", name, value)};
  return Status::ok();
}

Status run(const GemmProblem& p, int threads) {
  const OpenBlas& lib = library();
  const RowMajorGemm g = canonicalize(p);
  // "All cores" means the cores this process may run on, as for the threaded rung. The
  // count is set only when it changes: the call sits inside the timed repetition.
  const int wanted = threads > 0 ? threads : usable_cores();
  static std::atomic<int> current{0};
  if (current.exchange(wanted) != wanted) lib.set_threads(wanted);
  lib.sgemm(kCblasRowMajor, g.trans_a ? kCblasTrans : kCblasNoTrans,
            g.trans_b ? kCblasTrans : kCblasNoTrans, static_cast<int>(g.m), static_cast<int>(g.n),
            static_cast<int>(g.k), static_cast<float>(g.alpha), static_cast<const float*>(g.a),
            static_cast<int>(g.lda), static_cast<const float*>(g.b), static_cast<int>(g.ldb),
            static_cast<float>(g.beta), static_cast<float*>(g.c), static_cast<int>(g.ldc));
  return Status::ok();
}

}  // namespace

const OpenBlasInfo& openblas_info() { return library().info; }

const OpenBlasInfo* openblas_info_if_loaded() {
  const OpenBlas* lib = loaded_library.load(std::memory_order_acquire);
  return lib ? &lib->info : nullptr;
}

Variant openblas_variant(int threads) {
  Variant v;
  v.name = threads == 1 ? "openblas_sgemm_1t" : "openblas_sgemm";
  v.backend = Backend::Cpu;
  v.technique = threads == 1 ? "OpenBLAS sgemm on one thread (anchor)"
                             : "OpenBLAS sgemm on all cores (anchor)";
  v.anchor = true;
  v.threads = threads;
  v.can_implement = can_implement;
  v.run = [threads](const GemmProblem& p, RunContext&) { return run(p, threads); };
  // Packed panels: each input read about once per cache block; the minimum is the honest
  // model for a library whose blocking we do not see.
  v.model = minimum_traffic;
  return v;
}

}  // namespace gemmlab::cpu
