// A device group's NCCL state (DeviceGroupState, gemmlab/distributed.hpp): its communicators,
// per-GPU comm streams, events and panel buffers, and the copy-engine transport's symmetric
// window; made lazily, destroyed (or aborted, after a failed call) with the group. Included
// by src/cuda/nccl/ only.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/runtime/buffer.hpp"
#include "gemmlab/status.hpp"

// NCCL's copy-engine collectives: its zero-CTA policy with buffers in symmetric windows.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define GEMMLAB_NCCL_COPY_ENGINES 1
#else
#define GEMMLAB_NCCL_COPY_ENGINES 0
#endif

namespace gemmlab {

// A communicator's `ctas` for NCCL's zero-CTA policy (the copy-engine transport).
inline constexpr int kZeroCtas = -1;

// What a group keeps between calls.
struct DeviceGroupState {
  std::vector<int> devices;
  double timeout_seconds = 0;
  // After a call that timed out or failed inside NCCL the communicators were aborted: every
  // later call refuses, naming why (a new group starts afresh).
  std::string broken;

  // The GPUs `members` (ranks of the group) share, one ncclComm_t per member, in order,
  // made for broadcasts of at most `ctas` blocks (0: NCCL's choice).
  struct Communicator {
    std::vector<int> members;
    int ctas = 0;
    std::vector<ncclComm_t> comms;
  };
  std::vector<Communicator> communicators;

  struct Rank {
    cuda::StreamOwner comm;
    cuda::DeviceMemory buffer;  // receive buffers, then send buffers (layout in Buffers below)
    std::vector<cuda::EventOwner> sync, timing;  // pools, grown as a call needs
  };
  std::vector<Rank> ranks;

  // The copy-engine transport's receive buffers: one ncclMemAlloc buffer per GPU (rank order),
  // registered as a symmetric window of the zero-CTA communicator `comms` of every GPU.
  struct Window {
    std::vector<void*> buffers;
#if GEMMLAB_NCCL_COPY_ENGINES
    std::vector<ncclWindow_t> windows;
#endif
    std::vector<ncclComm_t> comms;
    std::uint64_t bytes = 0;
  };
  Window window;

  void release_window() {
#if GEMMLAB_NCCL_COPY_ENGINES
    if (broken.empty() && !window.windows.empty()) {
      ncclGroupStart();
      for (std::size_t r = 0; r < window.windows.size(); ++r)
        if (window.windows[r]) {
          cudaSetDevice(devices[r]);
          ncclCommWindowDeregister(window.comms[r], window.windows[r]);
        }
      ncclGroupEnd();
    }
    for (std::size_t r = 0; r < window.buffers.size(); ++r)
      if (window.buffers[r]) {
        cudaSetDevice(devices[r]);
        ncclMemFree(window.buffers[r]);
      }
#endif
    window = Window{};
  }

  // Windows are deregistered before their communicators go; after a failure the communicators
  // are aborted first (nothing waits on them) and the buffers freed after.
  ~DeviceGroupState() {
    if (broken.empty()) release_window();
    for (Communicator& c : communicators)
      for (ncclComm_t comm : c.comms)
        if (comm) {
          if (broken.empty()) ncclCommDestroy(comm);
          else ncclCommAbort(comm);
        }
    release_window();
  }
};

namespace cuda::distributed {

// The communicator of the group's GPUs `members` (ranks, in order), made once: for
// broadcasts of at most `ctas` blocks (0: NCCL's choice), or NCCL's zero-CTA policy
// (kZeroCtas).
Status make_communicator(DeviceGroupState& s, const std::vector<int>& members, int ctas,
                         DeviceGroupState::Communicator*& out);

// The copy-engine transport's receive buffers, `bytes` on every GPU, registered as a symmetric
// window of the zero-CTA communicator `comm` (every GPU, rank order); kept while large enough.
Status make_window(DeviceGroupState& s, const DeviceGroupState::Communicator& comm, std::uint64_t bytes);

}  // namespace cuda::distributed
}  // namespace gemmlab
