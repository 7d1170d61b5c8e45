// The named shape sets. `llm`: the linear layers of an 8B-parameter transformer of the
// Llama 3 shape (hidden 4096, 32 query heads and 8 key/value heads of 128, MLP 14336) at
// 1, 16, 128, 512 and 4096 tokens: M = tokens, (N, K) = (4096, 4096) for the query and
// output projections, (1024, 4096) for the key and value ones, (14336, 4096) for the MLP's
// gate and up, (4096, 14336) for its down. A framework stores the weight N x K and computes
// x W^T, so these run as NT (`--trans NT`).
#include "bench/shape_sets.hpp"

namespace gemmlab::bench {
namespace {

std::vector<Shape> llm_shapes() {
  constexpr std::int64_t kTokens[] = {1, 16, 128, 512, 4096};
  constexpr std::int64_t kHidden = 4096, kKeyValue = 1024, kMlp = 14336;
  const Shape projections[] = {{0, kHidden, kHidden}, {0, kKeyValue, kHidden}, {0, kMlp, kHidden}, {0, kHidden, kMlp}};
  std::vector<Shape> shapes;
  for (std::int64_t m : kTokens)
    for (Shape s : projections) {
      s.m = m;
      shapes.push_back(s);
    }
  return shapes;
}

}  // namespace

const std::vector<ShapeSet>& shape_sets() {
  static const std::vector<ShapeSet> sets = {
      {"llm",
       "the linear layers of an 8B transformer (Llama 3 shape) at 1-4096 tokens: M = 1, 16, 128, 512, 4096 by "
       "(N, K) = (4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336); run with --trans NT",
       llm_shapes()},
      {"squares", "256, 1000, 2048, 4096 and 8192 cubed", {{256, 256, 256}, {1000, 1000, 1000}, {2048, 2048, 2048},
                                                           {4096, 4096, 4096}, {8192, 8192, 8192}}},
  };
  return sets;
}

const ShapeSet* find_shape_set(std::string_view name) {
  for (const ShapeSet& s : shape_sets())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace gemmlab::bench
