// ReportAggregator: consumes the events of one log, in log order, and sorts them into
// sections (one per value of --by) of per-name statistics. Streaming: it keeps rows per
// distinct name and engine plus bounded per-thread windows, never the events themselves.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/event.h"
#include "model/event_selection.h"
#include "model/string_table.h"
#include "report/section_stats.h"

namespace xtrace::report {

enum class GroupBy { kNone, kProcess, kThread, kDevice, kRank, kHost };

// What to count. Times are CLOCK_MONOTONIC ns (absolute).
struct AggregateOptions {
  GroupBy by = GroupBy::kNone;
  std::optional<uint64_t> from_ns;  // only events that start at or after
  std::optional<uint64_t> to_ns;    // only events that start before
  std::set<uint32_t> pids;          // only these processes (empty: all)
  std::set<int32_t> ranks;          // only processes of these ranks (empty: all)
  size_t top_gaps = 5;              // largest gaps kept per engine
};

// Whether an event of `pid` that starts at `start_ns` is in the selection of `options`: its
// processes, their ranks (from `processes`, the log's ProcessInfo so far; a process not named
// yet has none), and its window by start. The rank is looked up only when ranks are selected.
bool InSelection(const AggregateOptions& options, uint32_t pid, uint64_t start_ns,
                 const std::map<uint32_t, LoggedProcess>& processes);

class ReportAggregator {
 public:
  // `section_label` names the section of every event with GroupBy kRank and kHost (the
  // log's rank or host).
  ReportAggregator(AggregateOptions options, std::string log_section);
  ~ReportAggregator();

  // `strings` is the table the event's ids refer to (the reader's).
  void Add(const Event& event, const StringTable& strings);
  // Ends the log: flushes the engines' reorder windows and per-thread spans.
  void Finish();

  // With --by rank, each process's events are in its rank's section from its ProcessInfo on;
  // those of processes without a rank (or before it was known) are in the log's section,
  // which this names `label` (the log's rank, once known), merged into that rank's section.
  // The rank totals do the same (NameUnrankedTotals). Call after Finish.
  void NameUnrankedSection(const std::string& label);

  // Each kernel's measured device time and each range's total time per rank of the traced
  // processes ("rank 3", from ProcessInfo.rank; "" for a process without one): what the
  // report's spread across ranks compares. A log of one node holds several ranks.
  struct RankTotals {
    std::map<std::string, uint64_t> kernel_ns;  // by kernel name
    std::map<std::string, uint64_t> range_ns;   // by "domain/name"
  };
  const std::map<std::string, RankTotals>& rank_totals() const { return rank_totals_; }
  // Counts the totals of processes without a rank under `label` (the log's own name).
  void NameUnrankedTotals(const std::string& label);

  // Executions of regular command lists that were neither created nor reset in the log (so
  // recorded before the attach): what they ran is unknown, and they yield no operations. The
  // log keeps the first list of each execution: that one decides.
  uint64_t executions_recorded_before() const { return executions_recorded_before_; }

  // The times xtrace held traced threads (hold records, or learned creations in older logs),
  // whatever the selection: left out of the calls', ranges' and threads' times and of the
  // engines' idle causes.
  const HeldTime& holds() const { return activity_.holds(); }

  // Every traced process the log named (ProcessInfo), whatever the selection: what a
  // selection that kept nothing could have kept.
  const std::map<uint32_t, LoggedProcess>& processes() const { return processes_; }

  // Sections by key; labels() says what each key is called (e.g. "pid 42 (python3)").
  const std::map<std::string, SectionStats>& sections() const { return sections_; }
  std::string Label(const std::string& key) const;

 private:
  struct ThreadState;
  std::string SectionKey(uint32_t pid, uint32_t tid, uint32_t device) const;
  SectionStats& Section(uint32_t pid, uint32_t tid, uint32_t device);
  bool Selected(uint32_t pid, uint64_t start_ns) const;
  void AddHostCall(uint32_t pid, uint32_t tid, std::string_view name, uint64_t start_ns,
                   uint64_t end_ns, int32_t result);
  void AddRange(const IttTask& task, const StringTable& strings);
  void AddDeviceOp(const DeviceOp& op, const StringTable& strings);
  ThreadState& Thread(uint32_t pid, uint32_t tid);
  const std::string& RankOf(uint32_t pid) const;  // "" when it has none

  AggregateOptions options_;
  std::string log_section_;
  std::map<std::string, SectionStats> sections_;
  SectionStats* whole_ = nullptr;  // the one section without --by (map nodes do not move)
  std::map<uint32_t, LoggedProcess> processes_;
  // Each engine's identity from its DeviceQueue, by (pid, handle): it precedes the engine's
  // operations in the log, and is kept whatever the selection (it is no event in time).
  std::map<std::pair<uint32_t, uint64_t>, EngineIdentity> engine_identities_;
  std::unordered_map<uint32_t, std::string> process_ranks_;  // "rank 3"
  std::map<std::string, RankTotals> rank_totals_;
  std::set<std::string> python_lines_;  // the Python lines gaps may name (stable addresses)
  // Each device's queue groups' flags by ordinal (DeviceInfo), for the engines' types.
  std::map<uint32_t, std::vector<uint32_t>> queue_group_flags_;
  std::set<std::pair<uint32_t, uint64_t>> lists_recorded_;  // (pid, list) created or reset here
  uint64_t executions_recorded_before_ = 0;
  void NoteListUse(const ApiCall& call);
  std::unordered_map<uint64_t, std::unique_ptr<ThreadState>> threads_;
  RecentHostActivity activity_;

  // Rows found by what names them in the log, so that the maps keyed by name (compared by
  // text; kernel names run to a thousand characters) are searched once per name, not once per
  // event. Keys: (the section or totals the row is in, the name's string id or the address of
  // its text). Map nodes do not move, so the pointers hold until RenameSections or
  // NameUnrankedTotals move rows: both clear these.
  struct RowKey {
    const void* where;
    uint64_t name;
    bool operator==(const RowKey&) const = default;
  };
  struct RowKeyHash {
    size_t operator()(const RowKey& k) const {
      return std::hash<uint64_t>{}(reinterpret_cast<uintptr_t>(k.where) * 0x9e3779b97f4a7c15ull ^ k.name);
    }
  };
  std::unordered_map<RowKey, DeviceOpRow*, RowKeyHash> device_op_rows_;
  std::unordered_map<RowKey, uint64_t*, RowKeyHash> kernel_totals_;
  // Host calls by the address of their name's text (a static name, the usual case), checked
  // against the row's name: a name of a passing string may share an address with another.
  std::unordered_map<RowKey, std::map<std::string, HostCallRow, std::less<>>::iterator, RowKeyHash>
      host_call_rows_;
  // Each pid's rank totals (cleared when a process says its rank).
  std::unordered_map<uint32_t, RankTotals*> rank_totals_of_pid_;
  RankTotals& RankTotalsOf(uint32_t pid);
  void ForgetRows();
};

}  // namespace xtrace::report
