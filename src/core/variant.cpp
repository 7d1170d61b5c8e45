#include <fmt/format.h>

#include "gemmlab/variant.hpp"

namespace gemmlab {

std::int64_t Config::get(std::string_view key, std::int64_t fallback) const {
  for (const auto& [name, value] : params)
    if (name == key) return value;
  return fallback;
}

std::string Config::to_string() const {
  std::string text;
  for (const auto& [name, value] : params) {
    if (!text.empty()) text += ' ';
    text += fmt::format("{}={}", name, value);
  }
  return text.empty() ? "-" : text;
}

}  // namespace gemmlab
