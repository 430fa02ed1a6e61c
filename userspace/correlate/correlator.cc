// Correlation of decoded records into events (kernel naming, process/thread introduction).
#include "correlate/correlator.h"

#include <algorithm>
#include <cstdio>

#include "correlate/host_api_calls.h"
#include "correlate/api_call_builder.h"
#include "model/ze_api.h"

namespace xtrace {

Correlator::Correlator(StringTable& strings, EventSink& sink, ProcessInspector& inspector,
                       ProcessIdentities::Clock now)
    : strings_(strings),
      sink_(sink),
      identities_(strings, sink, inspector, std::move(now)),
      itt_(strings, sink, [this](uint32_t pid, uint32_t tid, std::string_view name) {
        if (identities_.NameThread(pid, tid, strings_.Intern(name), /*by_program=*/true))
          ++stats_.threads;
      }),
      drm_(strings, sink, inspector),
      ze_(strings, sink) {}

void Correlator::NoteProcess(uint32_t pid, std::string_view fallback_comm) {
  if (identities_.Introduce(pid, fallback_comm)) ++stats_.processes;
}

void Correlator::ProcessEnded(uint32_t pid, uint64_t ts_ns) {
  last_thread_seen_ = ~uint64_t{0};
  itt_.CloseProcess(pid, ts_ns);
  identities_.Forget(pid);  // and its threads
  if (python_) python_->ForgetProcess(pid);
}

void Correlator::SeeThread(uint32_t pid, uint32_t tid) {
  const uint64_t key = (uint64_t{pid} << 32) | tid;
  if (key == last_thread_seen_) return;
  NoteProcess(pid);
  if (identities_.SeeThread(pid, tid)) ++stats_.threads;
  last_thread_seen_ = key;
}

void Correlator::OnThreadName(const DecodedThreadName& r) {
  NoteProcess(r.hdr.pid, r.process_comm);
  // A name the program gave with __itt_thread_set_name outranks the kernel's comm (cut at 15
  // bytes, often the process's own name): a comm read later must not take it back, whichever
  // source reports first.
  if (identities_.NamedByProgram(r.hdr.pid, r.hdr.tid)) {
    SeeThread(r.hdr.pid, r.hdr.tid);
    return;
  }
  if (identities_.NameThread(r.hdr.pid, r.hdr.tid, strings_.Intern(r.comm))) ++stats_.threads;
}

void Correlator::OnRecord(const DecodedRecord& record) {
  ++stats_.records;
  std::visit(
      [this](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, DecodedThreadName>) {
          OnThreadName(r);
        } else {
          SeeThread(r.hdr.pid, r.hdr.tid);
          if constexpr (std::is_same_v<T, DecodedKernelCreate>) OnKernelCreate(r);
          if constexpr (std::is_same_v<T, DecodedLaunchKernel>) OnLaunchKernel(r);
          if constexpr (std::is_same_v<T, DecodedIttName>) itt_.OnName(r);
          if constexpr (std::is_same_v<T, DecodedIttEvent>) itt_.OnEvent(r);
          if constexpr (std::is_same_v<T, DecodedIttState>) itt_.OnState(r);
          if constexpr (std::is_same_v<T, DecodedDrmIoctl>) drm_.OnIoctl(r);
          if constexpr (std::is_same_v<T, DecodedDrmFence>) OnDrmFence(r);
          if constexpr (std::is_same_v<T, DecodedZeCall>) OnApiCall(BuildApiCall(r), nullptr);
          if constexpr (std::is_same_v<T, DecodedZeExecute>) OnApiCall(BuildApiCall(r), &r);
          if constexpr (std::is_same_v<T, DecodedCallUnfinished>) OnCallUnfinished(r);
          if constexpr (std::is_same_v<T, DecodedPyStack>) OnPyStack(r);
        }
      },
      record);
  const xt_record_header& hdr = HeaderOf(record);
  if (IsHostApiCall(hdr.type)) drm_.OnHostCall(hdr, HostApiCallName(record));
  drm_.AdvanceTo(hdr.end_ns);
}

void Correlator::OnPyStack(const DecodedPyStack& r) {
  if (!python_ || r.shared) return;  // not made whole (RecordRouter does): no frames at all
  std::vector<std::pair<uint64_t, uint64_t>> frames;
  frames.reserve(r.frames);
  for (uint32_t i = 0; i < r.frames; ++i) {
    const xt_py_frame f = r.frame(i);
    frames.emplace_back(f.code, f.instr);
  }
  auto resolved = python_->Resolve(r.hdr.pid, frames);
  if (!resolved || resolved->empty()) return;
  PythonStack e;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.start_ns = r.hdr.start_ns;
  e.end_ns = r.hdr.end_ns;
  e.frames = std::move(*resolved);
  e.truncated = (r.hdr.flags & XT_FLAG_TRUNCATED) != 0;
  sink_.OnEvent(e);
}

void Correlator::OnDrmFence(const DecodedDrmFence& r) {
  drm_.OnFence(r);
  // The signal bounds the end of the device work the submitting Level Zero call handed over.
  if (drm_.MadeBySubmission(r))
    ze_.OnSubmissionFence(r.hdr.pid, r.hdr.tid, r.ioctl_start_ns, r.hdr.end_ns);
}

void Correlator::OnKernelCreate(const DecodedKernelCreate& r) {
  // Made while the process's collection was paused: not an event to show, but the name of
  // the kernels it launches once resumed.
  if (r.hdr.flags & XT_FLAG_PAUSED) {
    if (r.result == 0 && r.kernel != 0) {
      kernel_names_[{r.hdr.pid, r.kernel}] = strings_.Intern(r.name);
      ++stats_.kernel_names_kept_paused;
    }
    return;
  }
  ++stats_.kernel_creates;
  KernelCreate e;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.start_ns = r.hdr.start_ns;
  e.end_ns = r.hdr.end_ns;
  e.module = r.module;
  e.kernel = r.kernel;
  e.name = strings_.Intern(r.name);
  e.result = r.result;
  e.name_truncated = (r.hdr.flags & XT_FLAG_TRUNCATED) != 0;
  if (r.result != 0) ++stats_.failed_calls;
  // A handle names the kernel from its creation on; a later create reusing the same handle
  // (after a destroy) renames it.
  if (r.result == 0 && r.kernel != 0) {
    kernel_names_[{r.hdr.pid, r.kernel}] = e.name;
    stats_.peak_kernel_handles = std::max<uint64_t>(stats_.peak_kernel_handles, kernel_names_.size());
  }
  sink_.OnEvent(e);
}

void Correlator::LearnKernel(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns,
                             uint64_t kernel, std::string_view name, bool truncated) {
  SeeThread(pid, tid);
  ++stats_.kernels_learned;
  KernelCreate e;
  e.pid = pid;
  e.tid = tid;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.kernel = kernel;
  e.name = strings_.Intern(name);
  e.name_truncated = truncated;
  e.learned = true;
  kernel_names_[{pid, kernel}] = e.name;
  stats_.peak_kernel_handles = std::max<uint64_t>(stats_.peak_kernel_handles, kernel_names_.size());
  sink_.OnEvent(e);
}

void Correlator::OnLaunchKernel(const DecodedLaunchKernel& r) {
  ++stats_.launches;
  KernelLaunch e;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.start_ns = r.hdr.start_ns;
  e.end_ns = r.hdr.end_ns;
  e.command_list = r.command_list;
  e.kernel = r.kernel;
  e.signal_event = r.signal_event;
  for (int i = 0; i < 3; ++i) e.group_count[i] = r.group_count[i];
  e.num_wait_events = r.num_wait_events;
  e.result = r.result;
  e.group_count_unreadable = (r.hdr.flags & XT_FLAG_ARG_UNREADABLE) != 0;
  e.launch_kind = static_cast<uint8_t>(r.kind);
  if (r.result != 0) ++stats_.failed_calls;
  const PidHandle key{r.hdr.pid, r.kernel};
  if (auto it = kernel_names_.find(key); it != kernel_names_.end()) {
    e.kernel_name = it->second;
    e.name_known = true;
  } else {
    char name[32];
    std::snprintf(name, sizeof(name), "kernel@0x%llx", static_cast<unsigned long long>(r.kernel));
    e.kernel_name = strings_.Intern(name);
    ++stats_.launches_unnamed;
    if (unnamed_kernels_.insert(key).second) ++stats_.kernels_unnamed;
  }
  sink_.OnEvent(e);
  ze_.OnLaunch(e);
}

}  // namespace xtrace

namespace xtrace {

void Correlator::LearnCall(const ApiCall& call) {
  SeeThread(call.pid, call.tid);
  ++stats_.objects_learned;
  sink_.OnEvent(call);
  ze_.OnCall(call, nullptr);
}

void Correlator::NoteHold(const XtraceHold& hold) {
  if (hold.whole_process() && !identities_.Known(hold.pid)) return;
  SeeThread(hold.pid, hold.tid);
  sink_.OnEvent(hold);
}

void Correlator::OnApiCall(const ApiCall& call, const DecodedZeExecute* execute) {
  ++stats_.api_calls;
  // NOT_READY answers a query or a sync with a timeout: a state, not a failure.
  if (call.result != 0 && call.result != kZeResultNotReady) ++stats_.failed_calls;
  // A destroyed kernel's handle may come back for another kernel: forget the name.
  if (call.fn == XT_ZE_KERNEL_DESTROY && call.result == 0) {
    kernel_names_.erase({call.pid, call.arg[0]});
    unnamed_kernels_.erase({call.pid, call.arg[0]});
  }
  sink_.OnEvent(call);
  ze_.OnCall(call, execute);
}

// Only the entry is known: the call shows from it to the thread's exit, and nothing it would
// have returned (a handle, a completion) is inferred from it.
void Correlator::OnCallUnfinished(const DecodedCallUnfinished& r) {
  std::string_view name;
  if (r.fn == XT_ZE_PAIR_KERNEL_CREATE) name = "zeKernelCreate";
  else if (r.fn == XT_ZE_PAIR_APPEND_LAUNCH_KERNEL) name = "zeCommandListAppendLaunchKernel";
  else if (const ZeApiInfo* api = FindZeApi(static_cast<uint16_t>(r.fn))) name = api->symbol;
  if (name.empty()) return;  // the decoder lets no other id through
  ++(r.capture_ended ? stats_.calls_at_stop : stats_.unfinished_calls);
  UnfinishedCall e;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.start_ns = r.hdr.start_ns;
  e.end_ns = r.hdr.end_ns;
  e.function = strings_.Intern(name);
  e.signal = r.capture_ended ? 0 : r.exit_code & 0x7f;  // wait(2)'s WTERMSIG; 0 for an exit
  e.capture_ended = r.capture_ended;
  sink_.OnEvent(e);
}

}  // namespace xtrace
