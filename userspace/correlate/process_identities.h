// Who each process and thread in the log is, as the log said it: a process introduced once,
// when the log first needs it, and again at every exec after that, with the exec's time, so
// the log names a process by what it is now and still says who it was before (`env A=1
// python3 ...` is `env`, then `python3`); a thread named when first seen and again when
// renamed. The one keeper of what the log said: the correlator asks it whether a thread is
// known and how it is named, and a new log file starts with what it says (Written) to read
// on its own. Each process name written is told to the inspector (ProcessInspector::Named),
// which the capture's process table, the one owner of who a process is, keeps.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

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

  // The process ended: its threads go with it, and a later process with its pid is
  // introduced afresh.
  void Forget(uint32_t pid);
  bool Known(uint32_t pid) const { return known_.count(pid) != 0; }

  // A record of thread `tid` of `pid` was read: true if the thread is new.
  bool SeeThread(uint32_t pid, uint32_t tid);
  // Names the thread (written if it is new or the name differs from the last one); true if
  // the thread is new. `by_program`: the program named it (__itt_thread_set_name), a name the
  // kernel's comm does not take back.
  bool NameThread(uint32_t pid, uint32_t tid, StringId name, bool by_program = false);
  // Whether the program named the thread itself.
  bool NamedByProgram(uint32_t pid, uint32_t tid) const;

  // What a file written from now on starts with to read on its own: every process the log
  // knows, each with every identity written since its introduction, oldest first (by pid),
  // then every thread's last name written (by pid and tid).
  std::vector<Event> Written() const;

 private:
  struct Identity {
    std::vector<ProcessInfo> written;  // since its introduction, oldest first; never empty
    uint64_t as_of_ns;                 // the last was read (or exec'd into) at this time
    const ProcessInfo& info() const { return written.back(); }
  };
  struct Thread {
    StringId name = kEmptyString;  // as last written
    bool written = false;          // a name was written
    bool by_program = false;
  };
  static uint64_t ThreadKey(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }
  ProcessInfo FromDetails(uint32_t pid, const ProcessDetails& details) const;

  StringTable& strings_;
  EventSink& sink_;
  ProcessInspector& inspector_;
  Clock now_;
  std::unordered_map<uint32_t, Identity> known_;
  std::unordered_map<uint64_t, Thread> threads_;  // ThreadKey
};

}  // namespace xtrace
