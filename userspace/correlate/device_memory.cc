// Allocation tracking; see device_memory.h.
#include "correlate/device_memory.h"

#include <algorithm>

#include "correlate/event_sink.h"
#include "model/ze_api_views.h"
#include "xtrace/records.h"

namespace xtrace {

void DeviceMemoryTracker::OnCall(const ApiCall& call) {
  if (call.result != 0) return;
  switch (call.fn) {
    case XT_ZE_MEM_ALLOC_DEVICE: {
      const ZeCall<XT_ZE_MEM_ALLOC_DEVICE> c(call);
      Allocated(c.pid(), c.end_ns(), c.Get<"ptr">(),
                {c.Get<"size">(), Kind::kDevice, devices_.IndexOf(c.pid(), c.Get<"device">())});
      return;
    }
    case XT_ZE_MEM_ALLOC_SHARED: {
      const ZeCall<XT_ZE_MEM_ALLOC_SHARED> c(call);
      // A shared allocation without a device (hDevice null) may migrate anywhere.
      const uint64_t device = c.Get<"device">();
      Allocated(c.pid(), c.end_ns(), c.Get<"ptr">(),
                {c.Get<"size">(), Kind::kShared,
                 device ? devices_.IndexOf(c.pid(), device) : kUnknownDevice});
      return;
    }
    case XT_ZE_MEM_ALLOC_HOST: {
      const ZeCall<XT_ZE_MEM_ALLOC_HOST> c(call);
      Allocated(c.pid(), c.end_ns(), c.Get<"ptr">(), {c.Get<"size">(), Kind::kHost, kUnknownDevice});
      return;
    }
    case XT_ZE_MEM_FREE: {
      const ZeCall<XT_ZE_MEM_FREE> c(call);
      const uint64_t ptr = c.Get<"ptr">();
      if (!Freed(c.pid(), c.end_ns(), ptr) && ptr) ++unknown_frees_;
      return;
    }
    default:
      return;
  }
}

uint64_t& DeviceMemoryTracker::TotalOf(uint32_t pid, const Allocation& a) {
  Totals& t = a.kind == Kind::kHost ? per_process_[pid] : per_device_[a.device];
  return a.kind == Kind::kDevice ? t.device_bytes : a.kind == Kind::kShared ? t.shared_bytes : t.host_bytes;
}

void DeviceMemoryTracker::Allocated(uint32_t pid, uint64_t time_ns, uint64_t ptr, const Allocation& a) {
  if (!ptr) return;
  // An address handed out again was freed before the capture saw it: the old entry goes.
  Freed(pid, time_ns, ptr);
  allocations_[{pid, ptr}] = a;
  TotalOf(pid, a) += a.size;
  Report(time_ns, pid, a);
}

bool DeviceMemoryTracker::Freed(uint32_t pid, uint64_t time_ns, uint64_t ptr) {
  auto it = allocations_.find({pid, ptr});
  if (it == allocations_.end()) return false;
  const Allocation freed = it->second;
  allocations_.erase(it);
  uint64_t& total = TotalOf(pid, freed);
  total -= std::min(total, freed.size);
  Report(time_ns, pid, freed);
  return true;
}

void DeviceMemoryTracker::Report(uint64_t time_ns, uint32_t pid, const Allocation& a) {
  MemoryUsage u;
  u.time_ns = time_ns;
  if (a.kind == Kind::kHost) {
    const Totals& t = per_process_[pid];
    u.pid = pid;
    u.device = kUnknownDevice;
    u.host_bytes = t.host_bytes;
  } else {
    const Totals& t = per_device_[a.device];
    u.device = a.device;
    u.device_bytes = t.device_bytes;
    u.shared_bytes = t.shared_bytes;
  }
  sink_.OnEvent(u);
}

}  // namespace xtrace
