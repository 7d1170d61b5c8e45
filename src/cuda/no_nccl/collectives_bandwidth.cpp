// The NVLink level in a build without NCCL: the collectives are not measured. measure_peer_link
// leaves their figures at 0 and the memory lab marks their rows skipped; nothing fails. Compiles
// without CUDA too (no CUDA header here).
#include "cuda/nccl/collectives_bandwidth.hpp"

namespace gemmlab::cuda::nvlink {

Status measure_collectives(const std::vector<int>& devices, const std::vector<std::size_t>& sizes, int,
                           std::vector<CollectiveMeasurements>& out) {
  out.assign(sizes.size(), CollectiveMeasurements{});
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out[i].gpus = static_cast<int>(devices.size());
    out[i].bytes = sizes[i];  // measured stays false
  }
  return Status::ok();
}

}  // namespace gemmlab::cuda::nvlink
