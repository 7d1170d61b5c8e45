// The library entry point and the registry lookup, shared by both backends.
#include "gemmlab/gemm.hpp"

#include <fmt/format.h>

#include "cpu/scale.hpp"
#include "gemmlab/availability.hpp"
#include "cuda/backend.hpp"

namespace gemmlab {

namespace cpu {
const std::vector<Variant>& registry();
}

std::span<const Variant> variants(Backend backend) {
  return backend == Backend::Cpu ? std::span<const Variant>(cpu::registry())
                                 : std::span<const Variant>(cuda::registry());
}

const Variant* find_variant(Backend backend, std::string_view name) {
  for (const Variant& v : variants(backend))
    if (v.name == name) return &v;
  return nullptr;
}

Status configure(const Variant& variant, std::string_view name, Variant& out) {
  if (name.empty()) {
    out = variant;
    return Status::ok();
  }
  std::string valid;
  for (const NamedConfig& c : variant.configs) valid += (valid.empty() ? "" : ", ") + c.name;
  if (!variant.configure)
    return {StatusCode::InvalidValue,
            fmt::format("{} has no named configurations (it runs one form), so --config {} cannot apply",
                        variant.name, name)};
  const Status s = variant.configure(name, out);
  if (s.is_ok()) return s;
  return {StatusCode::InvalidValue,
          fmt::format("{} has no configuration '{}': {} (valid: {})", variant.name, name, s.message(), valid)};
}

bool cuda_built() {
#ifdef GEMMLAB_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_device_present() { return cuda::device_present(); }

Status gemm(const GemmProblem& problem, const Variant& variant, Stream stream) {
  GEMMLAB_TRY(validate(problem));
  if (problem.m == 0 || problem.n == 0) return Status::ok();
  // Before anything reaches the device: a kernel built for an architecture without its
  // instructions has an empty body (src/cuda/arch/target.cuh), so it must never launch.
  GEMMLAB_TRY(check_runs_here(variant));
  GEMMLAB_TRY(variant.can_implement(problem));
  if (is_scale_only(problem))
    return variant.backend == Backend::Cpu ? cpu::scale_c(problem) : cuda::scale_c(problem, stream);
  if (variant.prepare) GEMMLAB_TRY(variant.prepare(problem));
  return variant.run(problem, stream);
}

Status gemm(const GemmProblem& problem, Backend backend, std::string_view name, Stream stream) {
  const Variant* variant = find_variant(backend, name);
  if (!variant)
    return {StatusCode::NotFound,
            fmt::format("no {} variant named '{}' (gemmlab list shows them)", to_string(backend), name)};
  return gemm(problem, *variant, stream);
}

}  // namespace gemmlab
