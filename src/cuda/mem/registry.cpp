// The memory lab, in order. Adding an experiment: one file and one line here.
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda::mem {

const std::vector<Experiment>& registry() {
  static const std::vector<Experiment> table = {
      coalescing_experiment(),
      aos_soa_experiment(),
      alignment_experiment(),
      pitch_experiment(),
      transpose_experiment(),
      constant_experiment(),
      transfer_experiment(),
      nvlink_experiment(),
  };
  return table;
}

}  // namespace gemmlab::cuda::mem

namespace gemmlab::cuda {

std::vector<MemExperimentInfo> mem_experiments() {
  std::vector<MemExperimentInfo> out;
  for (const mem::Experiment& e : mem::registry()) out.push_back({e.name, e.title, e.shows});
  return out;
}

}  // namespace gemmlab::cuda
