// What the library's distributed GEMM (gemmlab/distributed.hpp) and the memory lab's NVLink
// level need from the CUDA backend, without NCCL or CUDA types. Defined in src/cuda/nccl/ and
// src/cuda/runtime/ (or src/cuda/no_nccl/ in a build without NCCL, src/cuda/no_cuda.cpp
// without CUDA), so nothing above includes nccl.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gemmlab/distributed.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

// Whether this build has NCCL; its version ("2.28.9") as the loaded library reports it.
bool nccl_built();
std::string nccl_library_version();
// Whether this build's NCCL has copy-engine collectives (2.28 and later): the copy-engine
// transport and the slice schedule need them.
bool nccl_copy_engines();

// The group's communicators, streams, events and panel buffers, made lazily; destroyed (or
// aborted, after a failed call) by destroy_group_state.
Status make_group_state(const std::vector<int>& devices, double timeout_seconds, DeviceGroupState*& out);
void destroy_group_state(DeviceGroupState* state);

// Runs `plan` (already checked against `problem` by the library) with every GPU's panel
// products by `variant` on its context's stream, the panels' transfers on streams of the
// group's own, as options.transport and broadcast_ctas say. Returns once every GPU's block of
// C is complete; fills `run`'s timings, bytes and transport.
Status run_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                       const DistributedPlan& plan, const DistributedOptions& options, DistributedRun& run);

// Device memory on `device` for DistributedBuffers, and blocking 2-D copies between any two
// of host and device memory (cudaMemcpy2D; pitches and width in bytes).
Status allocate_on_device(int device, std::uint64_t bytes, void*& out);
void free_on_device(int device, void* data);
Status copy_2d(int device, void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
               std::size_t height);
// Waits for `stream` (a context's) on `device`.
Status synchronize_stream(int device, Stream stream);
// Bytes free on `device` (cudaMemGetInfo).
Status free_device_bytes(int device, std::uint64_t& out);

// Whether device `from` can access `to`'s memory (cudaDeviceCanAccessPeer).
Status can_access_peer(int from, int to, bool& out);

// The NVLink level, for the model and the memory lab, between the first two of `devices`
// (bytes per second; 0 where not measured): copy-engine copies (cudaMemcpyPeerAsync) one way
// and both ways at once (each direction's rate), and NCCL's broadcast and all-gather over all
// of `devices` as bus bandwidth (nccl-tests' convention: algorithm bandwidth x (P - 1) / P),
// medians of `reps` transfers of `bytes`. NCCL's figures are 0 in a build without it.
struct PeerLinkRates {
  std::size_t bytes = 0;
  int gpus = 0;
  double copy = 0, copy_both = 0;
  double broadcast_bus = 0, all_gather_bus = 0;
  double broadcast_algorithm = 0;  // bytes of the buffer over the broadcast's time
};
Status measure_peer_link(const std::vector<int>& devices, std::size_t bytes, int reps, PeerLinkRates& out);

}  // namespace gemmlab::cuda
