#include "cli/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

namespace gemmlab::cli {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

// Dimensions up to 2^31 - 1 elements per side: larger ones do not fit any GPU here anyway,
// and every vendor library takes 32-bit dimensions.
constexpr std::int64_t kMaxDimension = std::numeric_limits<std::int32_t>::max();

std::int64_t parse_dimension(const std::string& token, const std::string& context) {
  std::int64_t value = -1;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc() || ptr != token.data() + token.size())
    throw UsageError{fmt::format("'{}' in '{}' is not a whole number", token, context)};
  if (value < 0) throw UsageError{fmt::format("'{}' in '{}' is negative", token, context)};
  if (value > kMaxDimension)
    throw UsageError{fmt::format("'{}' in '{}' exceeds {}", token, context, kMaxDimension)};
  return value;
}

}  // namespace

std::vector<bench::Shape> parse_sizes(const std::string& text) {
  if (text.empty()) throw UsageError{"--sizes '' is empty: give square sizes such as 512,1024"};
  std::vector<bench::Shape> shapes;
  for (const std::string& token : split(text, ',')) {
    const std::int64_t n = parse_dimension(token, text);
    for (const bench::Shape& s : shapes)
      if (s.m == n) throw UsageError{fmt::format("--sizes '{}' names {} twice", text, n)};
    shapes.push_back({n, n, n});
  }
  return shapes;
}

std::vector<bench::Shape> parse_mnk(const std::string& text) {
  if (text.empty()) throw UsageError{"--mnk '' is empty: give shapes MxNxK such as 1000x513x77"};
  std::vector<bench::Shape> shapes;
  for (const std::string& token : split(text, ',')) {
    const auto parts = split(token, 'x');
    if (parts.size() != 3)
      throw UsageError{fmt::format("'{}' in --mnk is not MxNxK (e.g. 1000x513x77)", token)};
    const bench::Shape shape{parse_dimension(parts[0], token), parse_dimension(parts[1], token),
                             parse_dimension(parts[2], token)};
    for (const bench::Shape& s : shapes)
      if (s.m == shape.m && s.n == shape.n && s.k == shape.k)
        throw UsageError{fmt::format("--mnk '{}' names {} twice", text, token)};
    shapes.push_back(shape);
  }
  return shapes;
}

std::vector<std::string> parse_names(const std::string& text, const std::string& flag) {
  if (text.empty()) throw UsageError{fmt::format("{} '' is empty: give one or more names, comma-separated", flag)};
  std::vector<std::string> names;
  for (const std::string& token : split(text, ',')) {
    if (token.empty()) throw UsageError{fmt::format("{}: empty name in '{}'", flag, text)};
    for (const std::string& seen : names)
      if (seen == token) throw UsageError{fmt::format("{} names '{}' twice", flag, token)};
    names.push_back(token);
  }
  return names;
}

double parse_scalar(const std::string& flag, const std::string& text) {
  const auto bad = [&](const char* why) {
    return UsageError{fmt::format("{} '{}' {}: give a finite number of magnitude at most {:.4g} (it scales "
                                  "float32 results)",
                                  flag, text, why, kMaxScalar)};
  };
  // strtod, not from_chars: it reads hexadecimal floats too, and "nan"/"inf" so they are named.
  const char* begin = text.c_str();
  char* end = nullptr;
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) throw bad("is not a number");
  const double value = std::strtod(begin, &end);
  if (end != begin + text.size()) throw bad("is not a number");
  if (!std::isfinite(value)) throw bad("is not finite");
  if (std::fabs(value) > kMaxScalar) throw bad("is out of range");
  return value;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError{fmt::format("--seed '{}' is not a whole number from 0 to {}", text,
                                 std::numeric_limits<std::uint64_t>::max())};
  return value;
}

std::uint64_t parse_byte_size(const std::string& flag, const std::string& text) {
  const auto bad = [&](const char* why) {
    return UsageError{fmt::format("{} '{}' {}: give bytes, or a number with K, M, G or T (powers of 1024: 8G, "
                                  "512M, 1.5GiB) or KB, MB, GB, TB (powers of 1000)",
                                  flag, text, why)};
  };
  // The number: digits with at most one point, nothing else (no sign, exponent or space).
  const std::size_t digits_end = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, digits_end);
  const std::string unit = digits_end == std::string::npos ? "" : text.substr(digits_end);
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1)
    throw bad("is not a size");
  std::string upper;
  for (const char ch : unit) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  constexpr std::string_view kPrefixes = "KMGT";
  double scale = 1;
  if (!upper.empty() && upper != "B") {
    const std::size_t power = kPrefixes.find(upper[0]);
    const std::string rest = upper.substr(1);
    if (power == std::string_view::npos || (rest != "" && rest != "I" && rest != "IB" && rest != "B"))
      throw bad("has an unknown unit");
    scale = std::pow(rest == "B" ? 1000.0 : 1024.0, static_cast<double>(power + 1));
  }
  const double value = std::strtod(number.c_str(), nullptr) * scale;
  // 2^63 bytes: far above any memory, and safe in every integer type the plan uses.
  constexpr double kMaxBytes = 9.223372036854775807e18;
  if (!(value < kMaxBytes)) throw bad("is too large");
  if (value < 1) throw bad("is below one byte");
  return static_cast<std::uint64_t>(value);
}

std::string quote_command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_=.,/:+@%^") == std::string::npos;
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (const char ch : arg) {
      if (ch == '\'') line += "'\\''";
      else line += ch;
    }
    line += '\'';
  }
  return line;
}

std::string DistributedArgs::flag() const {
  if (gpus) return "--gpus " + *gpus;
  if (devices) return "--devices " + *devices;
  return "--gpus";
}

namespace {

// The largest GPU count and ordinal the flags take; the real bound, the visible devices, is
// checked when the GPUs are chosen, where it can be named.
constexpr int kMaxDeviceOrdinal = 1023;

// A whole number in [low, high], or nullopt.
std::optional<int> whole_number(const std::string& token, int low, int high) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc() || ptr != token.data() + token.size() || value < low || value > high)
    return std::nullopt;
  return value;
}

}  // namespace

int parse_gpu_count(const std::string& text) {
  const std::optional<int> count = whole_number(text, 1, kMaxDeviceOrdinal + 1);
  if (!count)
    throw UsageError{fmt::format("--gpus '{}': give how many GPUs, a whole number from 1 to {} (the first N visible "
                                 "ones; --devices names them)",
                                 text, kMaxDeviceOrdinal + 1)};
  return *count;
}

std::vector<int> parse_device_list(const std::string& text) {
  std::vector<int> devices;
  for (const std::string& token : parse_names(text, "--devices")) {
    const std::optional<int> ordinal = whole_number(token, 0, kMaxDeviceOrdinal);
    if (!ordinal)
      throw UsageError{fmt::format("--devices '{}': '{}' is not a CUDA device ordinal (a whole number from 0 to {}; "
                                   "gemmlab device --all lists them)",
                                   text, token, kMaxDeviceOrdinal)};
    for (const int seen : devices)
      if (seen == *ordinal) throw UsageError{fmt::format("--devices '{}' names device {} twice", text, seen)};
    devices.push_back(*ordinal);
  }
  return devices;
}

std::vector<Decomposition> parse_decompositions(const std::string& text) {
  std::vector<Decomposition> out;
  for (const std::string& name : parse_names(text, "--decompositions")) {
    const std::optional<Decomposition> d = parse_decomposition(name);
    if (!d)
      throw UsageError{fmt::format("--decompositions: '{}' is not a decomposition (rows: row blocks of A and C, B "
                                   "broadcast in panels; summa: a 2-D grid)",
                                   name)};
    out.push_back(*d);
  }
  return out;
}

std::vector<bench::Placement> parse_placements(const std::string& text) {
  std::vector<bench::Placement> out;
  for (const std::string& name : parse_names(text, "--placement")) {
    const std::optional<bench::Placement> p = bench::parse_placement(name);
    if (!p)
      throw UsageError{fmt::format("--placement: '{}' is not a placement (device: operands already cut over the "
                                   "GPUs; host: whole in host memory)",
                                   name)};
    out.push_back(*p);
  }
  return out;
}

void parse_trans(const std::string& text, Op& op_a, Op& op_b) {
  const auto a = text.size() == 2 ? parse_op(text[0]) : std::nullopt;
  const auto b = text.size() == 2 ? parse_op(text[1]) : std::nullopt;
  if (!a || !b) throw UsageError{fmt::format("--trans '{}' must be one of NN, NT, TN, TT", text)};
  op_a = *a;
  op_b = *b;
}

}  // namespace gemmlab::cli
