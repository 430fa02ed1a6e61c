// xtrace's own holds (model/event.h XtraceHold) as slices: one per hold, on the held thread's
// track, named by why it was taken ("xtrace: held (attach queries)"), with what it learned,
// how many objects that was and how many queries failed as its arguments. What a query hold
// learned comes before its hold record, as creations marked `learned` with the hold's span:
// they are kept until that record and named in its slice rather than drawn one slice each
// (five objects learned in one hold were five identical slices stacked). A log written before
// hold records has none to claim them: at the end of the trace they are drawn as before, one
// slice each (ZeTraceExporter).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "export/trace_writer.h"
#include "export/ze_export.h"
#include "model/event.h"

namespace xtrace {

class HoldSliceWriter {
 public:
  HoldSliceWriter(const StringTable& strings, TraceWriter& out) : strings_(strings), out_(out) {}

  // A learned creation: kept for its hold's slice.
  void Learned(const KernelCreate& e) { learned_[KeyOf(e)].emplace_back(e); }
  void Learned(const ApiCall& e) { learned_[KeyOf(e)].emplace_back(e); }
  // The hold's slice, with the learned creations of its span.
  void Write(const XtraceHold& e);
  // The end of the trace: learned creations no hold claimed (an older log) drawn by `ze`.
  void Finish(ZeTraceExporter& ze);

  // "attach queries", "exec", ...: what a hold's slice says of why it was taken.
  static std::string_view CauseName(HoldCause cause);

 private:
  // The hold a learned creation stands for: its thread and span.
  using Key = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t>;
  template <typename E>
  static Key KeyOf(const E& e) {
    return {e.pid, e.tid, e.start_ns, e.end_ns};
  }

  const StringTable& strings_;
  TraceWriter& out_;
  std::map<Key, std::vector<Event>> learned_;
  std::vector<TraceArg> args_;
  std::deque<std::string> scratch_;
};

}  // namespace xtrace
