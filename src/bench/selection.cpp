// Which rungs a run takes: select_variants() (harness.hpp) from --variants, --dtype,
// --out-dtype and --config, with auto as a placeholder the harness resolves per shape.
#include <fmt/format.h>

#include "bench/harness.hpp"
#include "core/traffic.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {

namespace {

// "--dtype bf16", and " --out-dtype bf16" after it where C is not float32.
std::string flags_text(DType dtype, DType output) {
  std::string text = fmt::format("--dtype {}", to_string(dtype));
  if (output != DType::F32) text += fmt::format(" --out-dtype {}", to_string(output));
  return text;
}

}  // namespace

Status check_dtypes(DType dtype, DType out_dtype) {
  if (!precision_for(dtype))
    return {StatusCode::InvalidValue, fmt::format("--dtype {}: no rung computes in {} ({})", to_string(dtype),
                                                  to_string(dtype), dtype_names_text())};
  if (output_allowed(dtype, out_dtype)) return Status::ok();
  if (is_fp8(out_dtype))
    return {StatusCode::InvalidValue, fmt::format("--out-dtype {}: {}", to_string(out_dtype), kFp8OutputRefusal)};
  if (out_dtype == DType::BF16 || out_dtype == DType::F16)
    return {StatusCode::InvalidValue,
            fmt::format("--out-dtype {0} goes with --dtype {0}, e4m3 or e5m2 only (C is f32, the 2-byte input type, "
                        "or a 2-byte type beside FP8 inputs), not --dtype {1}",
                        to_string(out_dtype), to_string(dtype))};
  return {StatusCode::InvalidValue,
          fmt::format("--out-dtype {}: C is stored in f32, or in bf16 or f16 beside inputs of that type or FP8 inputs",
                      to_string(out_dtype))};
}

Status select_variants(const Options& o, Backend backend, std::vector<Variant>& selected) {
  selected.clear();
  GEMMLAB_TRY(check_dtypes(o.dtype, o.out_dtype));
  const std::optional<Precision> precision = precision_for(o.dtype, o.out_dtype);
  if (o.variants.empty()) {
    if (!o.config.empty())
      return {StatusCode::InvalidValue,
              fmt::format("--config {} needs --variants naming the rungs it configures (gemmlab list --configs "
                          "shows each rung's configurations)",
                          o.config)};
    for (const Variant& v : variants(backend))
      if (v.precision() == *precision) selected.push_back(v);
    if (selected.empty() && !variants(backend).empty())
      return {StatusCode::InvalidValue,
              o.out_dtype == DType::F32
                  ? fmt::format("--dtype {}: the {} backend has no {} variant (gemmlab list shows each variant's "
                                "types)",
                                to_string(o.dtype), to_string(backend), to_string(o.dtype))
                  : fmt::format("{}: the {} backend has no variant of {} inputs with {} C (gemmlab list shows each "
                                "variant's types)",
                                flags_text(o.dtype, o.out_dtype), to_string(backend), to_string(o.dtype),
                                to_string(o.out_dtype))};
    return Status::ok();
  }
  for (std::size_t i = 0; i < o.variants.size(); ++i) {
    const std::string& name = o.variants[i];
    for (std::size_t j = 0; j < i; ++j)
      if (o.variants[j] == name)
        return {StatusCode::InvalidValue, fmt::format("--variants names '{}' twice", name)};
    if (name == kAutoVariant) {
      if (!o.config.empty())
        return {StatusCode::InvalidValue,
                fmt::format("--config {} cannot apply to auto, which chooses each rung's configuration itself "
                            "(name the rungs --config configures)",
                            o.config)};
      // Chosen per shape in run_shape(); here only its types, so that the run takes it.
      Variant placeholder;
      placeholder.name = name;
      placeholder.backend = backend;
      placeholder.input = precision->input;
      placeholder.compute = precision->compute;
      placeholder.output = precision->output;
      placeholder.technique = "the rung the library chooses for each problem";
      placeholder.model = minimum_traffic;
      selected.push_back(std::move(placeholder));
      continue;
    }
    const Variant* v = find_variant(backend, name);
    if (!v)
      return {StatusCode::InvalidValue,
              fmt::format("no {} variant named '{}' (gemmlab list shows them)", to_string(backend), name)};
    if (v->precision() != *precision) {
      const std::optional<DType> its = dtype_name(v->precision());
      const std::string types = fmt::format("{} inputs, {} math, {} C", to_string(v->input), to_string(v->compute),
                                            to_string(v->output));
      const std::string run_it = its ? fmt::format(" (run it with {})", flags_text(*its, v->output)) : "";
      if (its == o.dtype)  // the same inputs and math: C differs
        return {StatusCode::InvalidValue,
                fmt::format("variant '{}' stores C in {} ({}), not in {}{}", name, to_string(v->output), types,
                            to_string(o.out_dtype), run_it)};
      return {StatusCode::InvalidValue,
              fmt::format("variant '{}' computes {} ({}), not {}{}", name,
                          its ? to_string(*its) : "another precision", types, flags_text(o.dtype, o.out_dtype),
                          run_it)};
    }
    // Named, it must run: one this GPU or this build cannot run is a usage error saying why.
    // (Without any device, the executor says so.)
    if (v->backend == Backend::Cuda && cuda_device_present())
      if (const std::string not_here = unavailable_here(*v); !not_here.empty())
        return {StatusCode::InvalidValue,
                fmt::format("variant '{}' cannot run here: {} (gemmlab list shows what runs)", name, not_here)};
    Variant configured;
    // The anchor runs as the vendor ships it; every other named rung takes the configuration.
    GEMMLAB_TRY(configure(*v, v->anchor ? std::string_view{} : std::string_view{o.config}, configured));
    selected.push_back(std::move(configured));
  }
  return Status::ok();
}

}  // namespace gemmlab::bench
