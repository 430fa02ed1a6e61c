// Sorting a log's events into report sections (report_aggregator.h).
#include "report/report_aggregator.h"

#include <algorithm>
#include <cstdio>

#include "model/ze_api.h"
#include "model/ze_api_views.h"
#include "xtrace/records.h"

namespace xtrace::report {
namespace {

// Bounds of the per-thread windows that pair ranges with the device operations appended
// inside them and nest ranges: a range with more unfinished children than this, or a device
// operation logged further than this from its range, is counted approximately.
constexpr size_t kOpenRangesPerThread = 4096;
constexpr size_t kRecentPerThread = 1024;

// A device value that means "host side" for GroupBy kDevice.
constexpr uint32_t kHostSide = UINT32_MAX - 1;

std::string_view LaunchName(uint8_t kind) { return ZeLaunchSymbol(kind); }

std::string Padded(const char* prefix, uint64_t n) {
  char text[48];
  std::snprintf(text, sizeof(text), "%s%010llu", prefix, static_cast<unsigned long long>(n));
  return text;
}

template <typename T>
void PushBounded(std::vector<T>* ring, size_t* next, size_t bound, T value) {
  if (ring->size() < bound) {
    ring->push_back(value);
  } else {
    (*ring)[*next] = value;
    *next = (*next + 1) % bound;
  }
}

}  // namespace

struct ReportAggregator::ThreadState {
  std::string section;  // the thread's section key, for its share of traced time
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;
  // Ended task ranges not yet claimed by an enclosing one: (start, end), in end order.
  std::vector<std::pair<uint64_t, uint64_t>> open_children;
  struct RecentRange {
    uint64_t start_ns, end_ns;
    RangeRow* row;
  };
  std::vector<RecentRange> recent_ranges;
  size_t next_range = 0;
  struct RecentOp {
    uint64_t append_ns, device_ns;
  };
  std::vector<RecentOp> recent_ops;
  size_t next_op = 0;
};

ReportAggregator::ReportAggregator(AggregateOptions options, std::string log_section)
    : options_(std::move(options)), log_section_(std::move(log_section)) {}

ReportAggregator::~ReportAggregator() = default;

bool InSelection(const AggregateOptions& options, uint32_t pid, uint64_t start_ns,
                 const std::map<uint32_t, LoggedProcess>& processes) {
  if (!options.pids.empty() && !options.pids.count(pid)) return false;
  if (!options.ranks.empty()) {
    auto process = processes.find(pid);
    if (!options.ranks.count(process == processes.end() ? -1 : process->second.rank)) return false;
  }
  if (options.from_ns && start_ns < *options.from_ns) return false;
  if (options.to_ns && start_ns >= *options.to_ns) return false;
  return true;
}

bool ReportAggregator::Selected(uint32_t pid, uint64_t start_ns) const {
  return InSelection(options_, pid, start_ns, processes_);
}

std::string ReportAggregator::SectionKey(uint32_t pid, uint32_t tid, uint32_t device) const {
  switch (options_.by) {
    case GroupBy::kNone:
      return "";
    case GroupBy::kProcess:
      return Padded("p", pid);
    case GroupBy::kThread:
      return Padded("p", pid) + Padded("t", tid);
    case GroupBy::kDevice:
      if (device == kHostSide) return "host";
      return device == kUnknownDevice ? "device?" : Padded("d", device);
    case GroupBy::kRank: {
      // A node's log holds several ranks: each process's events go to its own rank's section.
      const std::string& rank = RankOf(pid);
      return rank.empty() ? log_section_ : rank;
    }
    case GroupBy::kHost:
      return log_section_;
  }
  return "";
}

SectionStats& ReportAggregator::Section(uint32_t pid, uint32_t tid, uint32_t device) {
  if (options_.by == GroupBy::kNone) {
    if (!whole_) whole_ = &sections_[""];
    return *whole_;
  }
  return sections_[SectionKey(pid, tid, device)];
}

std::string ReportAggregator::Label(const std::string& key) const {
  auto number = [&](size_t at, size_t len) { return std::stoull(key.substr(at, len)); };
  switch (options_.by) {
    case GroupBy::kProcess:
    case GroupBy::kThread: {
      const uint32_t pid = static_cast<uint32_t>(number(1, 10));
      std::string label = "pid " + std::to_string(pid);
      auto process = processes_.find(pid);
      if (process != processes_.end() && !process->second.name.empty())
        label += " (" + process->second.name + ")";
      if (options_.by == GroupBy::kThread) label += " tid " + std::to_string(number(12, 10));
      return label;
    }
    case GroupBy::kDevice:
      if (key == "host" || key == "device?") return key == "host" ? "host calls" : "device unknown";
      return "device " + std::to_string(number(1, 10));
    default:
      return key;
  }
}

ReportAggregator::ThreadState& ReportAggregator::Thread(uint32_t pid, uint32_t tid) {
  auto& slot = threads_[(uint64_t{pid} << 32) | tid];
  if (!slot) {
    slot = std::make_unique<ThreadState>();
    slot->section = SectionKey(pid, tid, kHostSide);
  }
  return *slot;
}

void ReportAggregator::ForgetRows() {
  device_op_rows_.clear();
  kernel_totals_.clear();
  host_call_rows_.clear();
  rank_totals_of_pid_.clear();
}

ReportAggregator::RankTotals& ReportAggregator::RankTotalsOf(uint32_t pid) {
  RankTotals*& totals = rank_totals_of_pid_[pid];
  if (!totals) totals = &rank_totals_[RankOf(pid)];
  return *totals;
}

void ReportAggregator::AddHostCall(uint32_t pid, uint32_t tid, std::string_view name,
                                   uint64_t start_ns, uint64_t end_ns, int32_t result) {
  SectionStats& section = Section(pid, tid, kHostSide);
  const RowKey key{&section, reinterpret_cast<uintptr_t>(name.data())};
  auto cached = host_call_rows_.find(key);
  auto it = cached != host_call_rows_.end() && cached->second->first == name
                ? cached->second
                : section.host_calls.end();
  if (it == section.host_calls.end()) {
    it = section.host_calls.find(name);
    if (it == section.host_calls.end()) it = section.host_calls.emplace(std::string(name), HostCallRow{}).first;
    host_call_rows_[key] = it;
  }
  HostCallRow& row = it->second;
  // The time xtrace held the thread inside the call (asking the process about objects made
  // before the attach) is not the call's: kept, it passed for the program's slowest call by
  // far (an 80 ms launch that took microseconds). The call still counts, once, with the time
  // it spent on its own: its span less the holds in it. Dropping the call would lose a call
  // the program made; a row of its own would split one function in two. (The trace keeps
  // the whole span, the hold drawn inside it.)
  row.time.Add(activity_.holds().Unheld(pid, tid, start_ns, end_ns));
  if (result != 0) {
    ++row.failed;
    std::string_view result_name = ZeResultName(result);
    ++row.failures[result_name.empty() ? "ze_result " + std::to_string(result) : std::string(result_name)];
  }
  ThreadState& thread = Thread(pid, tid);
  thread.first_ns = std::min(thread.first_ns, start_ns);
  thread.last_ns = std::max(thread.last_ns, end_ns);
  activity_.Add(pid, tid, &it->first, start_ns, end_ns);
}

void ReportAggregator::AddRange(const IttTask& task, const StringTable& strings) {
  if (task.begin_missing) return;  // no name and no length: nothing to count
  SectionStats& section = Section(task.pid, task.tid, kHostSide);
  std::pair<std::string, std::string> key{std::string(strings.Get(task.domain)),
                                          std::string(strings.Get(task.name))};
  auto [it, added] = section.ranges.try_emplace(key);
  RangeRow& row = it->second;
  if (added) row.label = key.first + "/" + key.second;
  // Less the time xtrace held the thread in it, as for host calls.
  const HeldTime& holds = activity_.holds();
  const uint64_t duration = holds.Unheld(task.pid, task.tid, task.start_ns, task.end_ns);
  row.total.Add(duration);
  RankTotalsOf(task.pid).range_ns[row.label] += duration;
  ThreadState& thread = Thread(task.pid, task.tid);
  uint64_t children_ns = 0;
  if (task.kind == IttTaskKind::kTask) {
    // Tasks nest on their thread and arrive when they end, so the ended tasks that started
    // inside this one and are not yet claimed are its direct children.
    auto& open = thread.open_children;
    while (!open.empty() && open.back().first >= task.start_ns && open.back().second <= task.end_ns) {
      children_ns += holds.Unheld(task.pid, task.tid, open.back().first, open.back().second);
      open.pop_back();
    }
    if (open.size() >= kOpenRangesPerThread) open.erase(open.begin());
    open.emplace_back(task.start_ns, task.end_ns);
  }
  row.self_ns += duration > children_ns ? duration - children_ns : 0;
  // Device operations appended inside it that were logged before it ended.
  for (const auto& op : thread.recent_ops) {
    if (op.append_ns >= task.start_ns && op.append_ns < task.end_ns) row.device_ns += op.device_ns;
  }
  PushBounded(&thread.recent_ranges, &thread.next_range, kRecentPerThread,
              ThreadState::RecentRange{task.start_ns, task.end_ns, &row});
  activity_.Add(task.pid, task.tid, &row.label, task.start_ns, task.end_ns);
}

void ReportAggregator::AddDeviceOp(const DeviceOp& op, const StringTable& strings) {
  SectionStats& section = Section(op.pid, op.append_tid, op.device);
  const std::string_view name = strings.Get(op.name);
  DeviceOpRow*& cached = device_op_rows_[RowKey{&section, op.name}];
  if (!cached) {
    auto it = section.device_ops.find(name);
    if (it == section.device_ops.end()) it = section.device_ops.emplace(std::string(name), DeviceOpRow{}).first;
    cached = &it->second;
  }
  DeviceOpRow& row = *cached;
  row.kind = op.kind;
  const uint64_t duration = op.end_ns > op.start_ns ? op.end_ns - op.start_ns : 0;
  if (op.measured) {
    row.measured.Add(duration);
    if (op.kind == DeviceOpKind::kKernel) {
      RankTotals& totals = RankTotalsOf(op.pid);
      uint64_t*& total = kernel_totals_[RowKey{&totals, op.name}];
      if (!total) total = &totals.kernel_ns[std::string(name)];
      *total += duration;
    }
    row.measured_bytes += op.bytes;
    if (op.append_ns && op.submit_ns >= op.append_ns) row.append_to_submit.Add(op.submit_ns - op.append_ns);
    if (op.submit_ns && op.start_ns >= op.submit_ns) row.submit_to_start.Add(op.start_ns - op.submit_ns);
  } else {
    row.estimated.Add(duration);
    row.estimated_bytes += op.bytes;
  }
  auto [engine, added] = section.engines.try_emplace(EngineKey{op.pid, op.device, op.queue}, options_.top_gaps);
  if (added) {
    if (auto known = engine_identities_.find({op.pid, op.queue}); known != engine_identities_.end())
      engine->second.identity = known->second;
    EngineIdentity& identity = engine->second.identity;
    identity.device = op.device;
    if (auto groups = queue_group_flags_.find(op.device);
        identity.described && groups != queue_group_flags_.end() && identity.ordinal < groups->second.size())
      identity.group_flags = groups->second[identity.ordinal];
  }
  engine->second.idle.Add(op, &activity_);
  if (!op.measured || op.append_ns == 0) return;
  // Ranges of the appending thread that already ended around the append.
  ThreadState& thread = Thread(op.pid, op.append_tid);
  for (const auto& r : thread.recent_ranges) {
    if (op.append_ns >= r.start_ns && op.append_ns < r.end_ns) r.row->device_ns += duration;
  }
  PushBounded(&thread.recent_ops, &thread.next_op, kRecentPerThread,
              ThreadState::RecentOp{op.append_ns, duration});
}

void ReportAggregator::Add(const Event& event, const StringTable& strings) {
  // Whatever the selection: a selected call may sit around it.
  activity_.holds().Note(event);
  if (const auto* call = std::get_if<ApiCall>(&event)) {
    if (call->result == 0) NoteListUse(*call);
    // A learned object is xtrace's question, not a call the process made.
    if (call->learned || !Selected(call->pid, call->start_ns)) return;
    const ZeApiInfo* api = FindZeApi(call->fn);
    const std::string unknown = api ? std::string() : "ze function " + std::to_string(call->fn);
    AddHostCall(call->pid, call->tid, api ? std::string_view(api->symbol) : std::string_view(unknown),
                call->start_ns, call->end_ns, call->result);
  } else if (const auto* launch = std::get_if<KernelLaunch>(&event)) {
    if (!Selected(launch->pid, launch->start_ns)) return;
    AddHostCall(launch->pid, launch->tid, LaunchName(launch->launch_kind), launch->start_ns,
                launch->end_ns, launch->result);
  } else if (const auto* create = std::get_if<KernelCreate>(&event)) {
    // A learned kernel is xtrace's question, not a call the process made.
    if (create->learned || !Selected(create->pid, create->start_ns)) return;
    AddHostCall(create->pid, create->tid, "zeKernelCreate", create->start_ns, create->end_ns,
                create->result);
  } else if (const auto* unfinished = std::get_if<UnfinishedCall>(&event)) {
    // A row of its own: its time runs to the thread's end, not to a return, and it has no
    // result; mixed into the function's row it would skew the average and hide the fact.
    if (!Selected(unfinished->pid, unfinished->start_ns)) return;
    AddHostCall(unfinished->pid, unfinished->tid,
                std::string(strings.Get(unfinished->function)) + " (unfinished)",
                unfinished->start_ns, unfinished->end_ns, 0);
  } else if (const auto* task = std::get_if<IttTask>(&event)) {
    if (!Selected(task->pid, task->start_ns)) return;
    AddRange(*task, strings);
  } else if (const auto* op = std::get_if<DeviceOp>(&event)) {
    if (!Selected(op->pid, op->start_ns)) return;
    AddDeviceOp(*op, strings);
  } else if (const auto* stack = std::get_if<PythonStack>(&event)) {
    // Kept whatever the selection, as engine identities are: a gap names the line of the
    // call that ended it, which may lie just before the window.
    if (const PythonFrame* user = InnermostUserFrame(*stack, strings, DefaultPythonSkips()))
      activity_.AddPythonLine(stack->pid, stack->tid, &*python_lines_.insert(PythonFrameName(*user, strings)).first,
                              stack->start_ns);
  } else if (const auto* device = std::get_if<DeviceInfo>(&event)) {
    if (!device->queue_group_flags.empty()) queue_group_flags_[device->device] = device->queue_group_flags;
  } else if (const auto* queue = std::get_if<DeviceQueue>(&event)) {
    engine_identities_[{queue->pid, queue->handle}] = EngineIdentity::Of(*queue);
  } else if (const auto* process = std::get_if<ProcessInfo>(&event)) {
    processes_[process->pid] = LoggedProcess::Of(*process, strings);
    if (process->rank >= 0) {
      process_ranks_[process->pid] = "rank " + std::to_string(process->rank);
      rank_totals_of_pid_.erase(process->pid);  // its events count under its rank from now on
    }
  }
}

const std::string& ReportAggregator::RankOf(uint32_t pid) const {
  static const std::string kUnranked;
  auto it = process_ranks_.find(pid);
  return it == process_ranks_.end() ? kUnranked : it->second;
}

void ReportAggregator::NameUnrankedTotals(const std::string& label) {
  ForgetRows();
  auto it = rank_totals_.find("");
  if (it == rank_totals_.end()) return;
  RankTotals unranked = std::move(it->second);
  rank_totals_.erase(it);
  RankTotals& named = rank_totals_[label];
  for (const auto& [name, ns] : unranked.kernel_ns) named.kernel_ns[name] += ns;
  for (const auto& [name, ns] : unranked.range_ns) named.range_ns[name] += ns;
}

void ReportAggregator::NameUnrankedSection(const std::string& label) {
  if (label == log_section_) return;
  auto it = sections_.find(log_section_);
  if (it == sections_.end()) return;
  ForgetRows();
  SectionStats unranked = std::move(it->second);
  sections_.erase(it);
  sections_[label].Merge(unranked);
}

void ReportAggregator::Finish() {
  for (auto& [id, thread] : threads_) {
    if (thread->last_ns > thread->first_ns) {
      // Without xtrace's holds, as the calls' times are: their shares stay of the program's time.
      sections_[thread->section].thread_time_ns +=
          activity_.holds().Unheld(static_cast<uint32_t>(id >> 32), static_cast<uint32_t>(id),
                                   thread->first_ns, thread->last_ns);
    }
  }
  for (auto& [key, section] : sections_) {
    for (auto& [engine_key, engine] : section.engines) engine.idle.Finish(&activity_);
  }
}

void ReportAggregator::NoteListUse(const ApiCall& call) {
  constexpr uint16_t kExecute = XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS;
  constexpr uint16_t kAppendLists = XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP;
  uint64_t executed = 0;
  switch (call.fn) {
    case XT_ZE_COMMAND_LIST_CREATE:
      // A learned list (made before the attach) was not recorded here.
      if (!call.learned) lists_recorded_.insert({call.pid, call.arg[kZeArgSlot<XT_ZE_COMMAND_LIST_CREATE, "command_list">]});
      return;
    case XT_ZE_COMMAND_LIST_RESET:
      lists_recorded_.insert({call.pid, call.arg[kZeArgSlot<XT_ZE_COMMAND_LIST_RESET, "command_list">]});
      return;
    case XT_ZE_COMMAND_LIST_DESTROY:
      lists_recorded_.erase({call.pid, call.arg[kZeArgSlot<XT_ZE_COMMAND_LIST_DESTROY, "command_list">]});
      return;
    case kExecute:
      executed = call.arg[kZeArgSlot<kExecute, "command_list">];
      break;
    case kAppendLists:
      executed = call.arg[kZeArgSlot<kAppendLists, "first_command_list">];
      break;
    default:
      return;
  }
  if (executed && !lists_recorded_.count({call.pid, executed})) ++executions_recorded_before_;
}

}  // namespace xtrace::report
