// The registered rungs of each backend: one explicit table per backend.
#pragma once

#include <span>
#include <string_view>

#include "gemmlab/variant.hpp"

namespace gemmlab {

// The rungs of a backend, in ladder order (empty for CUDA in a build without it).
std::span<const Variant> variants(Backend backend);

// nullptr when the backend has no variant of that name.
const Variant* find_variant(Backend backend, std::string_view name);

// `out` becomes `variant` bound to its configuration `name`; an empty name keeps the
// default. InvalidValue names the rung and lists its configurations when it has no such one.
Status configure(const Variant& variant, std::string_view name, Variant& out);

// True when this build has the CUDA backend and a CUDA device is present.
bool cuda_built();
bool cuda_device_present();

}  // namespace gemmlab
