// Turning command-line text into a bench selection; every error names the bad token.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace gemmlab::cli {

// A usage error: the CLI prints it in one line and exits with 2.
struct UsageError {
  std::string message;
};

std::vector<bench::Shape> parse_sizes(const std::string& text);  // "512,1024" -> n x n x n
std::vector<bench::Shape> parse_mnk(const std::string& text);    // "1000x513x77,64x64x1"
std::vector<std::string> parse_names(const std::string& text);   // "a,b"
void parse_trans(const std::string& text, Op& op_a, Op& op_b);   // "NN" | "NT" | "TN" | "TT"

}  // namespace gemmlab::cli
