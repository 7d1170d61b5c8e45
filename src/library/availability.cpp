// Where a variant runs (gemmlab/availability.hpp). The architecture lists come from CMake
// (CMakeLists.txt defines them for this file only, with commas for semicolons).
#include "gemmlab/availability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gemmlab/registry.hpp"

#ifdef GEMMLAB_HAVE_CUDA
#include "cuda/runtime/device.hpp"
#endif

#ifndef GEMMLAB_CUDA_ARCHITECTURES
#define GEMMLAB_CUDA_ARCHITECTURES ""
#endif
#ifndef GEMMLAB_HOPPER_ARCHITECTURES
#define GEMMLAB_HOPPER_ARCHITECTURES ""
#endif

namespace gemmlab {
namespace {

std::string sm(int cc) { return fmt::format("sm_{}", cc); }

// "90a" -> 90; 0 when it is not a number with an optional letter.
int arch_number(std::string_view text) {
  int n = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) n = 10 * n + (text[i] - '0');
  return i == 0 ? 0 : n;
}

// Whether code of `t` can run on a GPU of compute capability `cc` (loaded_target's rules).
bool sass_runs(const ArchTarget& t, int cc) {
  if (!t.sass) return false;
  if (t.arch_specific) return t.arch == cc;
  return t.arch / 10 == cc / 10 && t.arch <= cc;
}
bool ptx_runs(const ArchTarget& t, int cc) {
  if (!t.ptx) return false;
  if (t.arch_specific) return t.arch == cc;
  return t.arch <= cc;
}

// The build's lists, parsed once (they are fixed when it is compiled). An unparsable list,
// as "all", is left empty: the launch's own error is the check then.
std::vector<ArchTarget> parse_or_empty(std::string_view list) {
  std::vector<ArchTarget> out;
  if (!parse_architectures(list, out)) out.clear();
  return out;
}
const std::vector<ArchTarget>& general_build() {
  static const std::vector<ArchTarget> build = parse_or_empty(GEMMLAB_CUDA_ARCHITECTURES);
  return build;
}
const std::vector<ArchTarget>& hopper_build() {
  static const std::vector<ArchTarget> build = parse_or_empty(GEMMLAB_HOPPER_ARCHITECTURES);
  return build;
}

std::string features_of(const Variant& v) { return v.arch_features.empty() ? v.name : v.arch_features; }

}  // namespace

Status parse_architectures(std::string_view list, std::vector<ArchTarget>& out) {
  out.clear();
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(";,", start), list.size());
    std::string_view entry = list.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    ArchTarget t;
    t.text = std::string(entry);
    std::string_view rest = entry;
    if (rest.ends_with("-real")) {
      t.ptx = false;
      rest.remove_suffix(5);
    } else if (rest.ends_with("-virtual")) {
      t.sass = false;
      rest.remove_suffix(8);
    }
    t.arch = arch_number(rest);
    const std::size_t digits = std::to_string(t.arch).size();
    if (t.arch < 10 || rest.size() > digits + 1 || (rest.size() == digits + 1 && rest.back() != 'a' && rest.back() != 'f'))
      return {StatusCode::InvalidValue,
              fmt::format("'{}' is not a CUDA architecture (86, 90a, 80-real or 90-virtual)", entry)};
    // (A family target, 100f, runs on its major version: for this check, as portable code.)
    t.arch_specific = rest.size() == digits + 1 && rest.back() == 'a';
    out.push_back(std::move(t));
  }
  return Status::ok();
}

std::optional<ArchTarget> loaded_target(std::span<const ArchTarget> build, int cc) {
  const ArchTarget* best = nullptr;
  for (const ArchTarget& t : build)
    if (sass_runs(t, cc) && (!best || t.arch > best->arch || (t.arch == best->arch && t.arch_specific))) best = &t;
  if (best) {
    ArchTarget loaded = *best;
    loaded.ptx = false;
    return loaded;
  }
  for (const ArchTarget& t : build)
    if (ptx_runs(t, cc) && (!best || t.arch > best->arch || (t.arch == best->arch && t.arch_specific))) best = &t;
  if (!best) return std::nullopt;
  ArchTarget loaded = *best;
  loaded.sass = false;
  return loaded;
}

std::string unavailable_reason(const Variant& v, int cc, std::span<const ArchTarget> build) {
  if (v.backend != Backend::Cuda) return {};
  if (cc <= 0) return "no CUDA device";
  std::string list;
  for (const ArchTarget& t : build) list += (list.empty() ? "" : ";") + t.text;
  if (!v.arch_specific.empty()) {
    const int needed = arch_number(v.arch_specific);
    if (cc != needed)
      return fmt::format("needs sm_{}: {} (this GPU is {})", v.arch_specific, features_of(v), sm(cc));
    if (v.anchor) return {};
    const std::optional<ArchTarget> loaded = loaded_target(build, cc);
    if (!loaded || !loaded->arch_specific)
      return fmt::format("this build has no sm_{} code ({}): add {} to CMAKE_CUDA_ARCHITECTURES (built for {})",
                         v.arch_specific, features_of(v), v.arch_specific, list.empty() ? "none" : list);
    return {};
  }
  if (cc < v.min_compute_capability)
    return fmt::format("needs {} or newer: {} (this GPU is {})", sm(v.min_compute_capability), features_of(v), sm(cc));
  if (v.anchor) return {};
  const std::optional<ArchTarget> loaded = loaded_target(build, cc);
  if (!loaded)
    return fmt::format("this build has no code for {} (built for {}): add {} to CMAKE_CUDA_ARCHITECTURES", sm(cc),
                       list.empty() ? "none" : list, cc);
  if (loaded->arch < v.min_compute_capability)
    return fmt::format("this build runs compute_{} PTX on this {}, without {} (needs {}): add {} to "
                       "CMAKE_CUDA_ARCHITECTURES",
                       loaded->arch, sm(cc), features_of(v), sm(v.min_compute_capability), cc);
  return {};
}

std::string unavailable_here(const Variant& v) {
  if (v.backend != Backend::Cuda) return {};
  if (!cuda_built()) return "this build has no CUDA backend";
  int cc = 0;
#ifdef GEMMLAB_HAVE_CUDA
  cc = cuda::device_compute_capability();
#endif
  if (cc <= 0) return "no CUDA device";
  // An arch-specific rung's kernels are compiled for the list's 90a entries only (the
  // Hopper target), or, where it has none, with the rest, to nothing.
  const std::vector<ArchTarget>& build =
      v.arch_specific.empty() || hopper_build().empty() ? general_build() : hopper_build();
  if (build.empty() && v.arch_specific.empty()) {
    // An unparsable list ("all"): only the device's capability is checked here.
    Variant portable = v;
    portable.anchor = true;
    return unavailable_reason(portable, cc, build);
  }
  return unavailable_reason(v, cc, build);
}

Status check_runs_here(const Variant& v) {
  std::string why = unavailable_here(v);
  if (why.empty()) return Status::ok();
  return {StatusCode::ArchMismatch, fmt::format("{} cannot run here: {}", v.name, why)};
}

std::string_view cuda_architectures() { return GEMMLAB_CUDA_ARCHITECTURES; }
std::string_view hopper_architectures() { return GEMMLAB_HOPPER_ARCHITECTURES; }

}  // namespace gemmlab
