// gemmlab: the GEMM ladder, verified and measured. Parses the command line and dispatches.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/options.hpp"

int main(int argc, char** argv) {
  using namespace gemmlab::cli;
  CLI::App app{"gemmlab: a GEMM ladder through the GPU memory hierarchy, verified against a "
               "float64 reference and measured against cuBLAS / OpenBLAS"};
  app.require_subcommand(1);

  std::string list_backend = "all", list_format = "table";
  CLI::App* list = app.add_subcommand("list", "List the registered variants of each backend");
  list->add_option("--backend", list_backend, "cpu, cuda or all")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  list->add_option("--format", list_format, "table or json")->check(CLI::IsMember({"table", "json"}));

  SelectionArgs bench_args;
  CLI::App* bench = app.add_subcommand(
      "bench", "Verify and time the ladder against the anchor (cuBLAS or OpenBLAS)");
  add_selection_options(*bench, bench_args, true);

  SelectionArgs verify_args;
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every selected variant against the float64 reference (no timing)");
  add_selection_options(*verify, verify_args, false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "gemmlab: {}\n", e.what());
    return kExitUsage;
  }

  try {
    if (*list) return run_list(list_backend, list_format);
    if (*bench) return run_bench(bench_args, false);
    if (*verify) return run_bench(verify_args, true);
  } catch (const UsageError& e) {
    fmt::print(stderr, "gemmlab: {}\n", e.message);
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gemmlab: {}\n", e.what());
    return kExitFailure;
  }
  return kExitUsage;
}
