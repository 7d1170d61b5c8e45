// gemmlab device: every fact query_device reads, the peaks computed from them, and the
// ceilings measured now; --all lists every visible device. Also the --device flag that
// every GPU command shares.
#include <fmt/format.h>

#include <cstdio>

#include "bench/lab_report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cuda/lab.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {

// The largest ordinal the flag takes; the real bound, the device count, is checked when the
// device is chosen, where it can be named.
constexpr int kMaxDeviceOrdinal = 1023;

CLI::Option* add_device_option(CLI::App& command, std::optional<int>& device) {
  return command
      .add_option_function<int>(
          "--device", [&device](const int& v) { device = v; },
          "CUDA device ordinal among the visible ones (default 0; CUDA_VISIBLE_DEVICES decides which are "
          "visible; gemmlab device --all lists them)")
      ->check(CLI::Range(0, kMaxDeviceOrdinal));
}

void check_device_applies(const std::optional<int>& device, Backend backend) {
  if (device && backend != Backend::Cuda)
    throw UsageError{fmt::format("--device {} chooses a GPU; the {} backend has none to choose (drop --device, "
                                 "or use --backend cuda)",
                                 *device, to_string(backend))};
}

Backend pick_backend(const std::string& text, const std::optional<int>& device) {
  if (text == "auto") return cuda_device_present() || device ? Backend::Cuda : Backend::Cpu;
  const auto parsed = parse_backend(text);
  if (!parsed) throw UsageError{fmt::format("--backend '{}' must be cpu, cuda or auto", text)};
  return *parsed;
}

std::string device_error_text(const Status& s, const std::optional<int>& device) {
  // select_device's words ("device 7 does not exist: ..."), not another flag's InvalidValue.
  const bool about_device = s.message().rfind(fmt::format("device {} ", device.value_or(-1)), 0) == 0;
  if (s.code() == StatusCode::InvalidValue && device && about_device)
    return "--" + s.message();  // "--device 7 does not exist: 1 CUDA device is visible (ordinal 0)"
  return s.describe();
}

namespace {

int list_devices(const DeviceArgs& args, OutputFile& out) {
  std::vector<cuda::DeviceFacts> all;
  if (Status s = cuda::query_all_devices(all); !s) {
    fmt::print(stderr, "gemmlab device --all: {}\n", s.describe());
    return kExitFailure;
  }
  if (args.format == "json")
    fmt::print(out.stream(), "{}\n", bench::devices_json(all).dump(2));
  else
    fmt::print(out.stream(), "{}", bench::format_devices_table(all));
  return out.commit_or_report() ? kExitOk : kExitFailure;
}

}  // namespace

int run_device(const DeviceArgs& args) {
  OutputFile out;  // written whole, as bench's
  if (!out.open_or_report(args.output)) return kExitFailure;
  if (args.all) return list_devices(args, out);
  cuda::DeviceFacts facts;
  cuda::Ceilings ceilings;
  cuda::CeilingOptions options;
  options.device = args.device.value_or(0);
  if (cuda_device_present()) fmt::print(stderr, "measuring ceilings (copy, read, FMA, cuBLAS SGEMM): a few seconds\n");
  if (Status s = cuda::measure_ceilings(options, facts, ceilings); !s) {
    fmt::print(stderr, "gemmlab device: {}\n", device_error_text(s, args.device));
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  if (args.format == "json")
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
