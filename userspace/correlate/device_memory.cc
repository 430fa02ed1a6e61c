// Allocation tracking; see device_memory.h.
#include "correlate/device_memory.h"

#include <algorithm>

#include "correlate/event_sink.h"
#include "xtrace/records.h"

namespace xtrace {

void DeviceMemoryTracker::OnCall(const ApiCall& call) {
  if (call.result != 0) return;
  Allocation a{};
  switch (call.fn) {
    case XT_ZE_MEM_ALLOC_DEVICE:
      a = {call.arg[2], Kind::kDevice, devices_.IndexOf(call.pid, call.arg[1])};
      break;
    case XT_ZE_MEM_ALLOC_SHARED:
      // A shared allocation without a device (hDevice null) may migrate anywhere.
      a = {call.arg[2], Kind::kShared,
           call.arg[1] ? devices_.IndexOf(call.pid, call.arg[1]) : kUnknownDevice};
      break;
    case XT_ZE_MEM_ALLOC_HOST:
      a = {call.arg[2], Kind::kHost, kUnknownDevice};
      break;
    case XT_ZE_MEM_FREE: {
      auto it = allocations_.find({call.pid, call.arg[1]});
      if (it == allocations_.end()) {
        if (call.arg[1]) ++unknown_frees_;
        return;
      }
      Allocation freed = it->second;
      allocations_.erase(it);
      Totals& t = freed.kind == Kind::kHost ? per_process_[call.pid] : per_device_[freed.device];
      uint64_t& total = freed.kind == Kind::kDevice   ? t.device_bytes
                        : freed.kind == Kind::kShared ? t.shared_bytes
                                                      : t.host_bytes;
      total -= std::min(total, freed.size);
      Report(call.end_ns, call.pid, freed);
      return;
    }
    default:
      return;
  }
  const uint64_t ptr = call.arg[5];
  if (!ptr) return;
  // An address handed out again was freed before the capture saw it: replace the old entry.
  if (auto old = allocations_.find({call.pid, ptr}); old != allocations_.end()) {
    ApiCall free_call = call;
    free_call.fn = XT_ZE_MEM_FREE;
    free_call.arg[1] = ptr;
    OnCall(free_call);
  }
  allocations_[{call.pid, ptr}] = a;
  Totals& t = a.kind == Kind::kHost ? per_process_[call.pid] : per_device_[a.device];
  (a.kind == Kind::kDevice ? t.device_bytes : a.kind == Kind::kShared ? t.shared_bytes : t.host_bytes) += a.size;
  Report(call.end_ns, call.pid, a);
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
