// gemmlab list: every registered variant with its types, technique and configuration; with
// --configs, the named configurations each rung can run (bench --config NAME). With a CUDA
// device, whether each CUDA rung runs on it and, where not, why (what it needs of the GPU
// against this GPU and the architectures this build carries code for).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/distributed.hpp"
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
      table += fmt::format("cuda: built for {}, but no CUDA device is present on this machine\n",
                           cuda_architectures());
    if (list.empty()) continue;
    // "runs here" only where it can be known: the CPU, or a CUDA device.
    const bool here_known = b == Backend::Cpu || cuda_device_present();
    // C: how the rung stores C (--out-dtype), f32 but for the rungs that keep it in the input type.
    table += fmt::format("{:>4} {:<6} {:<22} {:<6} {:<6} {:<5} {}{:<62} {}\n", "rung", "backend", "variant", "input",
                         "math", "C", here_known ? "runs here " : "", "technique", "config");
    for (const Variant& v : list) {
      const std::string why_not = here_known ? unavailable_here(v) : std::string();
      table += fmt::format("{:>4} {:<6} {:<22} {:<6} {:<6} {:<5} {}{:<62} {}\n",
                           v.rung > 0 ? fmt::format("{:02d}", v.rung) : "-", to_string(v.backend), v.name,
                           to_string(v.input), to_string(v.compute), to_string(v.output),
                           here_known ? fmt::format("{:<10}", why_not.empty() ? "yes" : "no") : "", v.technique,
                           v.config.to_string());
      if (!why_not.empty()) table += fmt::format("{:>11}   runs here: no, {}\n", "", why_not);
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
                     {"threads", v.threads},
                     {"min_compute_capability", v.min_compute_capability},
                     {"arch_specific", v.arch_specific},
                     {"arch_features", v.arch_features}});
      // Known on the CPU and with a CUDA device; absent otherwise.
      if (here_known) {
        doc.back()["runs_here"] = why_not.empty();
        if (!why_not.empty()) doc.back()["not_here_because"] = why_not;
      }
    }
    table += '\n';
  }
  // The distributed forms are not rungs: they run the rungs above on several GPUs.
  if (backend != "cpu" && cuda_built()) {
    std::string why;
    table += distributed_available(&why)
                 ? fmt::format("distributed (bench --gpus N): device operands over NCCL {} (decompositions rows, "
                               "summa) and host operands, every GPU's products by the rungs above\n",
                               nccl_version())
                 : fmt::format("distributed (bench --gpus N): host operands only; device operands absent: {}\n", why);
  }
  if (format == "json")
    fmt::print("{}\n", doc.dump(2));
  else
    fmt::print("{}", table);
  return kExitOk;
}

}  // namespace gemmlab::cli
