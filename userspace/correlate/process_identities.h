// Who each process in the log is: introduced once, when the log first needs it, and again at
// every exec after that, with the exec's time, so the log names a process by what it is now
// and still says who it was before (`env A=1 python3 ...` is `env`, then `python3`). Each
// name written is told to the inspector (ProcessInspector::Named), which the capture's process
// table, the one owner of who a process is, keeps.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "correlate/event_sink.h"
#include "correlate/process_inspector.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class ProcessIdentities {
 public:
  // CLOCK_MONOTONIC now, the clock of record times: an introduction read from /proc at this
  // moment already reflects every exec before it.
  using Clock = std::function<uint64_t()>;
  static uint64_t MonotonicNow();

  ProcessIdentities(StringTable& strings, EventSink& sink, ProcessInspector& inspector,
                    Clock now = &MonotonicNow);

  // Introduces `pid` (read from the inspector now; `fallback_comm` names it if it is gone)
  // unless the log knows it already. True if it was new.
  bool Introduce(uint32_t pid, std::string_view fallback_comm = {});

  // `pid`'s exec record: it became `identity` at `ts_ns`. A process the log knows gets a
  // ProcessInfo saying so, unless its introduction came later than the exec (and so already
  // names what it exec'd into) or it is still that identity. One the log does not know yet
  // is introduced as `identity` when `introduce` (a process followed for its own sake, whose
  // exec records come in order from its first), else left to its first record or attach.
  // True if it was newly introduced.
  bool Execed(uint32_t pid, uint64_t ts_ns, const ProcessDetails& identity, bool introduce);

  // The process ended: a later process with its pid is introduced afresh.
  void Forget(uint32_t pid) { known_.erase(pid); }
  bool Known(uint32_t pid) const { return known_.count(pid) != 0; }

 private:
  struct Identity {
    ProcessInfo info;     // as last written
    uint64_t as_of_ns;    // the identity was read (or exec'd into) at this time
  };
  ProcessInfo FromDetails(uint32_t pid, const ProcessDetails& details) const;

  StringTable& strings_;
  EventSink& sink_;
  ProcessInspector& inspector_;
  Clock now_;
  std::unordered_map<uint32_t, Identity> known_;
};

}  // namespace xtrace
