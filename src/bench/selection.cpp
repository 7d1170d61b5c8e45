// Which rungs a run takes: select_variants() (harness.hpp) from --variants, --dtype and
// --config, with auto as a placeholder the harness resolves per shape.
#include <fmt/format.h>

#include "bench/harness.hpp"
#include "core/traffic.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {

Status select_variants(const Options& o, Backend backend, std::vector<Variant>& selected) {
  selected.clear();
  const std::optional<Precision> precision = precision_for(o.dtype);
  if (!precision)
    return {StatusCode::InvalidValue,
            fmt::format("--dtype {}: no rung computes in {} (f32, tf32, bf16 or f16)", to_string(o.dtype),
                        to_string(o.dtype))};
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
              fmt::format("--dtype {}: the {} backend has no {} variant (gemmlab list shows each variant's types)",
                          to_string(o.dtype), to_string(backend), to_string(o.dtype))};
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
      return {StatusCode::InvalidValue,
              fmt::format("variant '{}' computes {} ({} inputs, {} math), not --dtype {}{}", name,
                          its ? to_string(*its) : "another precision", to_string(v->input),
                          to_string(v->compute), to_string(o.dtype),
                          its ? fmt::format(" (run it with --dtype {})", to_string(*its)) : "")};
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
