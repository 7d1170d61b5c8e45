// What the distribution's plans share (distribution.cpp: the panels of K;
// distribution_gathers.cpp: the schedules that gather one operand whole in K): the nominal
// figures, the checks of a plan's inputs, the balanced cut, and one GPU's figures folded into
// the model. Included by src/core/distribution*.cpp only.
#pragma once

#include <cstdint>
#include <vector>

#include "gemmlab/distribution.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::distribution_parts {

// Where the rates give no SM count: an H100's.
inline constexpr int kNominalMultiprocessors = 132;
// Where the rates give no DRAM rate: an H100 SXM's measured copy rate.
inline constexpr double kNominalDeviceBytesPerSecond = 3.0e12;
// Panel widths the choice tries are multiples of this (the in-core rungs' K blocks divide it)
// and the longest run of K with one owner (wider panels change nothing).
inline constexpr std::int64_t kPanelWidthAlign = 256;
// Each panel costs a broadcast launch and a kernel launch (tens of microseconds): a schedule of
// more panels than this is a mistaken kb, refused rather than listed.
inline constexpr std::int64_t kMaxPanels = std::int64_t{1} << 20;

// For a >= 0, b >= 1, without overflow for any b.
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
// block_range() for counts of parts past int (a run of K cut into panels).
Range balanced_part(std::int64_t extent, std::int64_t parts, std::int64_t index);

Status check_gpus(int gpus);
Status check_extents(std::int64_t m, std::int64_t n);
Status check_shape(const DistributedShape& s);
Status check_grid(const ProcessGrid& grid, std::int64_t m, std::int64_t n);
Status check_rates(const DistributedRates& r, const ProcessGrid& grid);
// Panels must tile [0, k) in order, each rooted on the grid.
Status check_panels(const std::vector<Panel>& panels, std::int64_t k, const ProcessGrid& grid);

// One GPU's figures, folded into the model's: each the largest over the GPUs, the bytes also
// summed.
struct GpuFigures {
  double flops = 0, received = 0, compute = 0, comm = 0, fill = 0, wait = 0, end = 0;
};
void fold(DistributedModel& m, const GpuFigures& g);

}  // namespace gemmlab::distribution_parts
