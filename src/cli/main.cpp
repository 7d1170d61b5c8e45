// gemmlab: the GEMM ladder, verified and measured. Parses the command line and dispatches.
#include <fmt/format.h>

#include <string>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"

int main(int argc, char** argv) {
  using namespace gemmlab::cli;
  install_output_signal_handlers();  // Ctrl-C or SIGTERM leaves an existing --output as it was
  const std::string command_line = quote_command_line(std::vector<std::string>(argv, argv + argc));
  CLI::App app{"gemmlab: a GEMM ladder through the GPU memory hierarchy, verified against a "
               "float64 reference and measured against cuBLAS / OpenBLAS"};
  app.require_subcommand(1);

  std::string list_backend = "all", list_format = "table";
  CLI::App* list = app.add_subcommand("list", "List the registered variants of each backend");
  list->add_option("--backend", list_backend, "cpu, cuda or all")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  list->add_option("--format", list_format, "table or json")->check(CLI::IsMember({"table", "json"}));
  bool list_configs = false;
  list->add_flag("--configs", list_configs, "Also list each rung's named configurations (bench --config NAME)");

  SelectionArgs bench_args;
  bench_args.command_line = command_line;
  CLI::App* bench = app.add_subcommand(
      "bench", "Verify and time the ladder against the anchor (cuBLAS or OpenBLAS)");
  add_selection_options(*bench, bench_args, true);

  SelectionArgs verify_args;
  verify_args.command_line = command_line;
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every selected variant against the float64 reference (no timing)");
  add_selection_options(*verify, verify_args, false);

  ExplainArgs explain_args;
  explain_args.command_line = command_line;
  CLI::App* explain = app.add_subcommand(
      "explain", "A rung's model (flops, CGMA, traffic, roofline, occupancy) next to its measurement");
  add_explain_options(*explain, explain_args);

  DeviceArgs device_args;
  CLI::App* device = app.add_subcommand(
      "device", "Device facts, peaks computed from them and measured ceilings (copy, read, FMA, SGEMM)");
  CLI::Option* device_all =
      device->add_flag("--all", device_args.all, "List every visible GPU (facts and peaks, nothing measured)");
  add_device_option(*device, device_args.device)->excludes(device_all);
  device->add_option("--format", device_args.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  device->add_option("--output", device_args.output, "Write the report to this file instead of stdout (written whole)");

  MemArgs mem_args;
  CLI::App* mem = app.add_subcommand("mem", "The memory lab: verified bandwidth sweeps against the copy ceiling");
  add_device_option(*mem, mem_args.device);
  mem->add_option_function<std::string>(
      "--experiments", [&mem_args](const std::string& v) { mem_args.experiments = v; },
      "Comma-separated experiment names (default: all)");
  mem->add_option("--format", mem_args.format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  mem->add_option("--output", mem_args.output, "Write the report to this file instead of stdout (written whole)");
  mem->add_option("--reps", mem_args.reps, "Timed repetitions per row")->check(CLI::Range(1, 100000));
  mem->add_option("--warmup", mem_args.warmup, "Untimed repetitions per row")->check(CLI::Range(0, 1000));
  mem->add_flag("--list", mem_args.list, "List the experiments and exit");

  CompareArgs compare_args;
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare two bench JSON runs: per rung and size, the change in time and in ratio to the anchor, "
                 "with a verdict that allows for noise; exit 1 on a regression");
  add_compare_options(*compare, compare_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A word where a command belongs: name it, rather than CLI11's "subcommand required".
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({}))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      fmt::print(stderr, "gemmlab: unknown command '{}' (commands: {})\n", argv[1], names);
      return kExitUsage;
    }
    std::string message = e.what();
    // CLI11 says "--sizes: At Most 1 required but received 2" for a flag given twice.
    if (const auto at = message.find(": At Most 1 required but received"); at != std::string::npos)
      message = message.substr(0, at) + " is given more than once (give it once)";
    fmt::print(stderr, "gemmlab: {}\n", message);
    return kExitUsage;
  }

  try {
    if (*list) return run_list(list_backend, list_format, list_configs);
    if (*bench) return run_bench(bench_args, false);
    if (*verify) return run_bench(verify_args, true);
    if (*explain) return run_explain(explain_args);
    if (*device) return run_device(device_args);
    if (*mem) return run_mem(mem_args);
    if (*compare) return run_compare(compare_args);
  } catch (const UsageError& e) {
    fmt::print(stderr, "gemmlab: {}\n", e.message);
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gemmlab: {}\n", e.what());
    return kExitFailure;
  }
  return kExitUsage;
}
