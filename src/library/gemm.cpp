// The library entry point and the registry lookup, shared by both backends.
#include "gemmlab/gemm.hpp"

#include <fmt/format.h>

#include "cpu/scale.hpp"
#include "cuda/backend.hpp"
#include "gemmlab/availability.hpp"
#include "library/choose.hpp"

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

Status resolve_variant(const Context& context, const GemmProblem& problem, const GemmOptions& options,
                       Variant& out) {
  // auto asks the device what runs on it.
  if (context.backend() == Backend::Cuda) GEMMLAB_TRY(cuda::make_current(context.device()));
  if (options.variant == kAutoVariant) {
    if (!options.config.empty())
      return {StatusCode::InvalidValue,
              fmt::format("config '{}' names a configuration of one rung; variant 'auto' chooses its own (name a "
                          "rung to fix its configuration)",
                          options.config)};
    return choose_auto(context.backend(), problem, out);
  }
  const Variant* variant = find_variant(context.backend(), options.variant);
  if (!variant)
    return {StatusCode::NotFound, fmt::format("no {} variant named '{}' (gemmlab list shows them)",
                                              to_string(context.backend()), options.variant)};
  return configure(*variant, options.config, out);
}

Status gemm(Context& context, const GemmProblem& problem, const GemmOptions& options) {
  Variant variant;
  GEMMLAB_TRY(resolve_variant(context, problem, options, variant));
  return gemm(context, problem, variant);
}

Status gemm(Context& context, const GemmProblem& problem, const Variant& variant) {
  if (variant.backend != context.backend())
    return {StatusCode::InvalidValue, fmt::format("{} is a {} variant; this context runs on the {} backend",
                                                  variant.name, to_string(variant.backend),
                                                  to_string(context.backend()))};
  GEMMLAB_TRY(validate(problem));
  if (problem.m == 0 || problem.n == 0) return Status::ok();
  RunContext& resources = context.resources();
  // The context's device, whatever this thread used last: its kernels, workspaces and
  // handles all belong to it.
  if (variant.backend == Backend::Cuda) GEMMLAB_TRY(cuda::make_current(resources.device()));
  // Before anything reaches the device: a kernel built for an architecture without its
  // instructions has an empty body (src/cuda/arch/target.cuh), so it must never launch.
  GEMMLAB_TRY(check_runs_here(variant));
  GEMMLAB_TRY(variant.can_implement(problem));
  if (is_scale_only(problem))
    return variant.backend == Backend::Cpu ? cpu::scale_c(problem) : cuda::scale_c(problem, resources.stream());
  if (variant.prepare) GEMMLAB_TRY(variant.prepare(problem, resources));
  return variant.run(problem, resources);
}

}  // namespace gemmlab
