// gemmlab list: every registered variant with its technique and configuration; with
// --configs, the named configurations each rung can run (bench --config NAME).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {

int run_list(const std::string& backend, const std::string& format, bool with_configs) {
  std::vector<Backend> backends;
  if (backend != "cuda") backends.push_back(Backend::Cpu);
  if (backend != "cpu") backends.push_back(Backend::Cuda);
  nlohmann::json doc = nlohmann::json::array();
  std::string table;
  for (Backend b : backends) {
    const auto list = variants(b);
    if (b == Backend::Cuda && !cuda_built())
      table += "cuda: not in this build (configure with nvcc present or -DGEMMLAB_CUDA=ON)\n";
    else if (b == Backend::Cuda && !cuda_device_present())
      table += "cuda: built, but no CUDA device is present on this machine\n";
    if (list.empty()) continue;
    table += fmt::format("{:>4} {:<6} {:<22} {:<6} {:<6} {:<62} {}\n", "rung", "backend", "variant", "input",
                         "math", "technique", "config");
    for (const Variant& v : list) {
      table += fmt::format("{:>4} {:<6} {:<22} {:<6} {:<6} {:<62} {}\n",
                           v.rung > 0 ? fmt::format("{:02d}", v.rung) : "-", to_string(v.backend), v.name,
                           to_string(v.input), to_string(v.compute),
                           v.technique, v.config.to_string());
      nlohmann::json configs = nlohmann::json::array();
      for (const NamedConfig& c : v.configs) {
        configs.push_back({{"name", c.name}, {"description", c.description}});
        if (with_configs)
          table += fmt::format("{:<11}   {:<20} {}{}\n", "", c.name, c.description,
                               c.name == v.config_name ? " (default)" : "");
      }
      doc.push_back({{"backend", to_string(v.backend)},
                     {"name", v.name},
                     {"rung", v.rung},
                     {"input", to_string(v.input)},
                     {"compute", to_string(v.compute)},
                     {"output", to_string(v.output)},
                     {"technique", v.technique},
                     {"config", v.config.to_string()},
                     {"configurations", configs},
                     {"anchor", v.anchor},
                     {"threads", v.threads}});
    }
    table += '\n';
  }
  if (format == "json")
    fmt::print("{}\n", doc.dump(2));
  else
    fmt::print("{}", table);
  return kExitOk;
}

}  // namespace gemmlab::cli
