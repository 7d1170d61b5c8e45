// The group's NCCL state (group.hpp): communicators, the symmetric window, and the group's
// lifetime as the library sees it (cuda/distributed.hpp).
#include "cuda/nccl/group.hpp"

#include <fmt/format.h>

#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "cuda/nccl/nccl_check.hpp"

namespace gemmlab::cuda {
namespace distributed {

Status make_communicator(DeviceGroupState& s, const std::vector<int>& members, int ctas,
                         DeviceGroupState::Communicator*& out) {
  for (DeviceGroupState::Communicator& c : s.communicators)
    if (c.members == members && c.ctas == ctas) {
      out = &c;
      return Status::ok();
    }
  disable_nvls();
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id));
  DeviceGroupState::Communicator c;
  c.members = members;
  c.ctas = ctas;
  c.comms.assign(members.size(), nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (ctas > 0) {
    config.minCTAs = 1;
    config.maxCTAs = ctas;
  }
#if GEMMLAB_NCCL_COPY_ENGINES
  if (ctas == kZeroCtas) config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
#endif
  config.commName = "gemmlab";
  NCCL_CHECK(ncclGroupStart());
  Status failed = Status::ok();
  for (std::size_t r = 0; r < members.size() && failed; ++r) {
    failed = make_current(s.devices[static_cast<std::size_t>(members[r])]);
    if (failed)
      failed = nccl_status(ncclCommInitRankConfig(&c.comms[r], static_cast<int>(members.size()), id, static_cast<int>(r),
                                                  &config),
                           "ncclCommInitRankConfig", __FILE__, __LINE__);
  }
  const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (communicator creation)", __FILE__, __LINE__);
  if (!failed || !ended) {
    for (ncclComm_t comm : c.comms)
      if (comm) ncclCommAbort(comm);
    const Status& why = !failed ? failed : ended;
    std::string gpus;
    for (int m : members) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", s.devices[static_cast<std::size_t>(m)]);
    return {why.code(), fmt::format("making the NCCL communicator of GPUs {}: {}", gpus, why.message())};
  }
  s.communicators.push_back(std::move(c));
  out = &s.communicators.back();
  return Status::ok();
}

Status make_window(DeviceGroupState& s, const DeviceGroupState::Communicator& comm, std::uint64_t bytes) {
#if GEMMLAB_NCCL_COPY_ENGINES
  if (s.window.bytes >= bytes && s.window.comms == comm.comms) return Status::ok();
  s.release_window();
  const std::size_t gpus = comm.comms.size();
  s.window.buffers.assign(gpus, nullptr);
  s.window.windows.assign(gpus, nullptr);
  s.window.comms = comm.comms;
  for (std::size_t g = 0; g < gpus; ++g) {
    GEMMLAB_TRY(make_current(s.devices[g]));
    if (const Status st = nccl_status(ncclMemAlloc(&s.window.buffers[g], bytes), "ncclMemAlloc", __FILE__, __LINE__);
        !st) {
      s.release_window();
      return {StatusCode::AllocFailed,
              fmt::format("panel buffers of {} bytes on GPU {}: {}", bytes, s.devices[g], st.message())};
    }
  }
  NCCL_CHECK(ncclGroupStart());
  Status registered = Status::ok();
  for (std::size_t g = 0; g < gpus && registered; ++g) {
    registered = make_current(s.devices[g]);
    if (registered)
      registered = nccl_status(ncclCommWindowRegister(comm.comms[g], s.window.buffers[g], bytes, &s.window.windows[g],
                                                      NCCL_WIN_COLL_SYMMETRIC),
                               "ncclCommWindowRegister", __FILE__, __LINE__);
  }
  const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (window registration)", __FILE__, __LINE__);
  if (!registered || !ended) {
    s.window.windows.assign(gpus, nullptr);  // none to deregister
    s.release_window();
    return !registered ? registered : ended;
  }
  s.window.bytes = bytes;
  return Status::ok();
#else
  (void)s, (void)comm, (void)bytes;
  return {StatusCode::NotSupported, "NCCL's copy-engine collectives need NCCL 2.28 or later"};
#endif
}

}  // namespace distributed

bool nccl_copy_engines() { return GEMMLAB_NCCL_COPY_ENGINES != 0; }

Status make_group_state(const std::vector<int>& devices, double timeout_seconds, DeviceGroupState*& out) {
  auto* s = new DeviceGroupState;
  s->devices = devices;
  s->timeout_seconds = timeout_seconds;
  out = s;
  return Status::ok();
}

void destroy_group_state(DeviceGroupState* state) { delete state; }

}  // namespace gemmlab::cuda
