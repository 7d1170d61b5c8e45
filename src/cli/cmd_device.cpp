// gemmlab device: every fact query_device reads, and the ceilings measured now.
#include <fmt/format.h>

#include <cstdio>

#include "bench/lab_report.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cuda/lab.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {

int run_device(const std::string& format, const std::string& output) {
  OutputFile out;  // written whole, as bench's
  if (!out.open_or_report(output)) return kExitFailure;
  cuda::DeviceFacts facts;
  cuda::Ceilings ceilings;
  if (cuda_device_present()) fmt::print(stderr, "measuring ceilings (copy, read, FMA, cuBLAS SGEMM): a few seconds\n");
  if (Status s = cuda::measure_ceilings(cuda::CeilingOptions{}, facts, ceilings); !s) {
    fmt::print(stderr, "gemmlab device: {}\n", s.describe());
    return kExitFailure;
  }
  if (format == "json")
    fmt::print(out.stream(), "{}\n", bench::device_json(facts, ceilings).dump(2));
  else
    fmt::print(out.stream(), "{}", bench::format_device_table(facts, ceilings));
  if (!out.commit_or_report()) return kExitFailure;
  if (!ceilings.passed()) {
    fmt::print(stderr, "gemmlab device: a ceiling measurement moved data that did not arrive intact\n");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
