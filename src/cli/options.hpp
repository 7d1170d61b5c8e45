// Turning command-line text into a bench selection; every error names the flag, the bad token
// and what would be valid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/distributed.hpp"
#include "bench/harness.hpp"

namespace gemmlab::cli {

// A usage error: the CLI prints it in one line and exits with 2.
struct UsageError {
  std::string message;
};

// Lists: empty text, an empty item or an item named twice is a UsageError naming `flag`.
std::vector<bench::Shape> parse_sizes(const std::string& text);  // "512,1024" -> n x n x n
std::vector<bench::Shape> parse_mnk(const std::string& text);    // "1000x513x77,64x64x1"
std::vector<std::string> parse_names(const std::string& text, const std::string& flag = "--variants");  // "a,b"
void parse_trans(const std::string& text, Op& op_a, Op& op_b);   // "NN" | "NT" | "TN" | "TT"

// The largest magnitude --alpha and --beta take: they scale float32 results, so anything
// above FLT_MAX overflows every element.
inline constexpr double kMaxScalar = 3.4028234663852886e38;
// --alpha / --beta: a finite decimal number of magnitude at most kMaxScalar.
double parse_scalar(const std::string& flag, const std::string& text);
// --seed: a whole number in [0, 2^64 - 1] (0 is a seed like any other).
std::uint64_t parse_seed(const std::string& text);

// --device-memory-limit: a number of bytes, whole or with a fraction, and an optional unit:
// K, M, G, T (or KiB, MiB, GiB, TiB) in powers of 1024, KB, MB, GB, TB in powers of 1000, B
// for bytes; case does not matter: "8G", "512M", "1.5GiB", "80GB", "4096". At least 1 byte.
std::uint64_t parse_byte_size(const std::string& flag, const std::string& text);

// bench --gpus N | --devices LIST (the distributed job, bench/distributed.hpp) and the flags that
// go with it, as typed: run_bench checks them, so each error names its flag.
struct DistributedArgs {
  std::optional<std::string> gpus;            // --gpus N: the first N visible GPUs
  std::optional<std::string> devices;         // --devices 0,1: these GPUs
  std::optional<std::string> decompositions;  // --decompositions rows,summa
  std::optional<std::string> placement;       // --placement device,host
  std::optional<int> broadcast_ctas;          // --broadcast-ctas N
  std::optional<std::string> transport;       // --panel-transport copy-engines|broadcasts
  std::optional<std::string> cut;             // --cut k-panels|slices|stripe
  std::optional<std::int64_t> panel_width;    // --panel-width N
  // false (explain --distributed): the distributed runs and their models alone, no anchors.
  bool anchors = true;
  bool requested() const { return gpus.has_value() || devices.has_value(); }
  // "--gpus 2" or "--devices 0,1", for messages.
  std::string flag() const;
};

// --gpus: a whole number of GPUs from 1 to 1024.
int parse_gpu_count(const std::string& text);
// --devices: CUDA ordinals from 0 to 1023, comma-separated, none named twice.
std::vector<int> parse_device_list(const std::string& text);
// --decompositions: rows, summa (gemmlab/distribution.hpp), comma-separated.
std::vector<Decomposition> parse_decompositions(const std::string& text);
// --placement: device, host (bench/distributed.hpp), comma-separated.
std::vector<bench::Placement> parse_placements(const std::string& text);

// The command line as a shell would take it back: arguments with spaces or quotes quoted.
std::string quote_command_line(const std::vector<std::string>& argv);

}  // namespace gemmlab::cli
