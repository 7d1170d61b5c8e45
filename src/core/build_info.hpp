// What a result was built from: every result file records it.
#pragma once

#include <string>

namespace gemmlab {

struct BuildInfo {
  std::string commit;        // git commit, "-dirty" when the tree had changes
  std::string build_type;    // Release, Debug ...
  std::string cxx_compiler;
  std::string cuda_compiler; // empty in a build without CUDA
  std::string cuda_architectures;
  std::string version;
};
BuildInfo build_info();

}  // namespace gemmlab
