// xtrace's holds as slices; see hold_slices.h.
#include "export/hold_slices.h"

#include <variant>

#include "model/ze_api.h"

namespace xtrace {
namespace {

// What one hold's slice names of what it learned, at most: a hold of eight threads' first
// launches learns dozens of objects, and an argument of a few lines is read, one of pages not.
constexpr size_t kMaxObjectsNamed = 32;

}  // namespace

std::string_view HoldSliceWriter::CauseName(HoldCause cause) {
  switch (cause) {
    case HoldCause::kAttachQueries:
      return "attach queries";
    case HoldCause::kExec:
      return "exec";
    case HoldCause::kLibraryLoad:
      return "library load";
    case HoldCause::kTableGetter:
      return "table getter";
    case HoldCause::kLevelZeroInit:
      return "zeInit";
    case HoldCause::kUnknown:
      break;
  }
  return "unknown";
}

void HoldSliceWriter::Write(const XtraceHold& e) {
  args_.clear();
  scratch_.clear();
  const std::string_view cause = CauseName(e.cause);
  args_.push_back(TraceArg::String("cause", cause));
  if (e.cause == HoldCause::kAttachQueries) {
    args_.push_back(TraceArg::Uint("learned", e.learned));
    args_.push_back(TraceArg::Uint("failed", e.failed));
  }
  if (auto it = learned_.find({e.pid, e.tid, e.start_ns, e.end_ns}); it != learned_.end()) {
    std::string& named = scratch_.emplace_back();
    size_t n = 0;
    for (const Event& learned : it->second) {
      if (n++ == kMaxObjectsNamed) {
        named += ", and " + std::to_string(it->second.size() - kMaxObjectsNamed) + " more";
        break;
      }
      if (!named.empty()) named += ", ";
      if (const auto* k = std::get_if<KernelCreate>(&learned)) {
        named += "kernel " + std::string(strings_.Get(k->name));
      } else if (const auto* call = std::get_if<ApiCall>(&learned)) {
        const ZeApiInfo* api = FindZeApi(call->fn);
        named += api ? std::string(api->symbol) : "ze function " + std::to_string(call->fn);
      }
    }
    args_.push_back(TraceArg::String("learned_objects", named));
    learned_.erase(it);
  }
  if (e.whole_process()) {
    args_.push_back(TraceArg::Bool("whole_process", true));
  } else if (e.process_end_ns > e.start_ns) {
    // The rest of the process stood still until the held thread was seized.
    args_.push_back(TraceArg::Uint("process_held_ns", e.process_end_ns - e.start_ns));
  }
  // A whole-process hold is drawn on the track of the thread whose call took it (the exec, the
  // dlopen, the table getter): that call sits around it there, and every other thread of the
  // process stood still as well (the whole_process argument says so) without a call of its
  // own to explain the gap; a slice on each thread's track would need threads the log may not
  // have named yet, and would draw one stop many times.
  out_.Complete(scratch_.emplace_back("xtrace: held (" + std::string(cause) + ")"), "xtrace", e.pid,
                e.tid ? e.tid : e.pid, e.start_ns, e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0,
                args_);
}

void HoldSliceWriter::Finish(ZeTraceExporter& ze) {
  for (const auto& [key, events] : learned_)
    for (const Event& e : events) {
      if (const auto* k = std::get_if<KernelCreate>(&e)) ze.Write(*k);
      else if (const auto* call = std::get_if<ApiCall>(&e)) ze.Write(*call);
    }
  learned_.clear();
}

}  // namespace xtrace
