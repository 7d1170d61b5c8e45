// Naming a rung's kernel for gemmlab explain (Variant::kernel_info): the kernel's host
// symbol, which cudaFuncGetAttributes and the occupancy API take, and its launch shape.
#pragma once

#include <string>
#include <utility>

#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

// "name<16, 0, N, T>" from the leading template arguments and the transposition flags a
// kernel was instantiated for.
inline std::string kernel_name(const std::string& name, bool trans_a, bool trans_b,
                               const std::string& leading_args = "") {
  return name + "<" + leading_args + (trans_a ? "T, " : "N, ") + (trans_b ? "T>" : "N>");
}

template <class Kernel>
Status describe_kernel(KernelInfo& out, Kernel* kernel, std::string name, int threads_per_block,
                       int dynamic_smem_bytes = 0) {
  out.function = reinterpret_cast<const void*>(kernel);
  out.name = std::move(name);
  out.threads_per_block = threads_per_block;
  out.dynamic_smem_bytes = dynamic_smem_bytes;
  return Status::ok();
}

}  // namespace gemmlab::cuda
