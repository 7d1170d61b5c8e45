#include "cli/options.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>

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
  std::vector<bench::Shape> shapes;
  for (const std::string& token : split(text, ',')) {
    const std::int64_t n = parse_dimension(token, text);
    shapes.push_back({n, n, n});
  }
  return shapes;
}

std::vector<bench::Shape> parse_mnk(const std::string& text) {
  std::vector<bench::Shape> shapes;
  for (const std::string& token : split(text, ',')) {
    const auto parts = split(token, 'x');
    if (parts.size() != 3)
      throw UsageError{fmt::format("'{}' in --mnk is not MxNxK (e.g. 1000x513x77)", token)};
    shapes.push_back({parse_dimension(parts[0], token), parse_dimension(parts[1], token),
                      parse_dimension(parts[2], token)});
  }
  return shapes;
}

std::vector<std::string> parse_names(const std::string& text) {
  std::vector<std::string> names;
  for (const std::string& token : split(text, ',')) {
    if (token.empty()) throw UsageError{fmt::format("empty variant name in '{}'", text)};
    names.push_back(token);
  }
  return names;
}

void parse_trans(const std::string& text, Op& op_a, Op& op_b) {
  const auto a = text.size() == 2 ? parse_op(text[0]) : std::nullopt;
  const auto b = text.size() == 2 ? parse_op(text[1]) : std::nullopt;
  if (!a || !b) throw UsageError{fmt::format("--trans '{}' must be one of NN, NT, TN, TT", text)};
  op_a = *a;
  op_b = *b;
}

}  // namespace gemmlab::cli
