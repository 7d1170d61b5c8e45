// Named sets of shapes (`--shapes NAME`), for the GEMMs real workloads run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/harness.hpp"

namespace gemmlab::bench {

struct ShapeSet {
  std::string_view name;
  std::string_view description;
  std::vector<Shape> shapes;
};

// Every named set, in the order help texts list them.
const std::vector<ShapeSet>& shape_sets();
// The set called `name`; nullptr for an unknown name.
const ShapeSet* find_shape_set(std::string_view name);

}  // namespace gemmlab::bench
