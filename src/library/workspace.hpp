// What a rung keeps on the device for one problem, as an upper bound: the memory plan counts
// it before a run, the out-of-core schedule before it sizes its tiles.
#pragma once

#include <cstdint>

#include "gemmlab/variant.hpp"

namespace gemmlab {

// The device workspace rung `v` keeps for an m x n x k product (0 for one that keeps none):
// op(A) and op(B) copied K-major or padded by its prepare(), each side padded by up to a tile
// of 64 and held in 4-byte elements (a staged layout's unit, whatever the input type), two
// parts of each for a split rung (float32 data on the tensor cores: 3xTF32), with what the
// rung holds whatever the problem (the Hopper rungs' stream-K partials); the pitched rung's
// cudaMallocPitch rows. Not for auto (the bench takes the largest of its candidates).
std::uint64_t workspace_bound(const Variant& v, std::int64_t m, std::int64_t n, std::int64_t k);
// The same for one problem: the rung's own count where it keeps one (Variant::workspace_bytes:
// the Hopper rungs, whose copies depend on alignments and layouts the sizes do not tell),
// else the bound above.
std::uint64_t workspace_bound(const Variant& v, const GemmProblem& p);

}  // namespace gemmlab
