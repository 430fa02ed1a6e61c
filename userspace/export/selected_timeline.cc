// SelectedTimeline (selected_timeline.h): an input per log maps ids and times, the timeline
// keeps what the selection asks for.
#include "export/selected_timeline.h"

#include "export/ze_export.h"

namespace xtrace {
namespace {

uint64_t Shift(uint64_t ts_ns, int64_t offset_ns) {
  return ts_ns + static_cast<uint64_t>(offset_ns);  // modulo 2^64, as the log's times
}

}  // namespace

// One log's view: ids and times mapped, then handed to the timeline.
class SelectedTimeline::Input final : public TraceWriter {
 public:
  Input(SelectedTimeline& timeline, TimelineInput input, uint32_t index)
      : t_(timeline), in_(std::move(input)), index_(index) {}

  uint32_t Pid(uint32_t pid) const {
    if (in_.host_index == 0) return pid;
    if (pid >= kDevicePidBase) return pid + in_.host_index * kDevicesPerHost;
    return (in_.host_index << kHostShift) | pid;
  }
  uint32_t Tid(uint32_t pid, uint32_t tid) const {
    if (pid >= kDevicePidBase) return (in_.capture_index << kCaptureShift) | tid;
    if (in_.host_index == 0 || tid >= kFirstSyntheticTid) return tid;
    return (in_.host_index << kHostShift) | tid;
  }

  void Clocks(const ClockAnchor&) override {}  // the trace's clock is the first log's

  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args) override {
    ProcessEntry& p = t_.processes_[Pid(pid)];
    p.name = name;
    if (in_.label_host) p.name += " [" + in_.host + "]";
    if (Pid(pid) != pid && pid < kFirstSyntheticPid) p.name += " (pid " + std::to_string(pid) + ")";
    p.args.clear();
    for (const TraceArg& a : args) {
      if (a.kind == TraceArg::Kind::kString) p.args.push_back({std::string(a.key), std::string(a.string_value)});
    }
    if (in_.label_host) p.args.push_back({"host", in_.host});
    if (Pid(pid) != pid && pid < kFirstSyntheticPid) p.args.push_back({"pid", std::to_string(pid)});
    p.named = true;
    if (t_.active_.count(Pid(pid))) t_.WriteProcessName(Pid(pid), p);
  }

  void ProcessSortIndex(uint32_t pid, int64_t index) override {
    ProcessEntry& p = t_.processes_[Pid(pid)];
    p.sort_index = index;
    if (t_.active_.count(Pid(pid))) t_.WriteProcessName(Pid(pid), p);
  }

  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override {
    ThreadEntry& th = t_.threads_[{Pid(pid), Tid(pid, tid)}];
    th.name = name;
    if (Tid(pid, tid) != tid) th.name += " (tid " + std::to_string(tid) + ")";
    if (t_.active_.count(Pid(pid))) t_.WriteThreadName(Pid(pid), Tid(pid, tid), th);
  }

  void Complete(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) override {
    const uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (!KeepSpan(name, ts, dur_ns)) return;
    NoteKept(pid, tid, ts, dur_ns);
    t_.Activate(Pid(pid));
    t_.out_.Complete(name, category, Pid(pid), Tid(pid, tid), ts, dur_ns, Correlated(pid, args));
  }

  void Complete(RecurringName name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) override {
    const uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (!KeepSpan(name.text, ts, dur_ns)) return;
    NoteKept(pid, tid, ts, dur_ns);
    t_.Activate(Pid(pid));
    // Keys are string ids of this log's table: another log's id may name another text.
    name.key = (uint64_t{index_} << 32) | (name.key & 0xffffffffu);
    t_.out_.Complete(name, category, Pid(pid), Tid(pid, tid), ts, dur_ns, Correlated(pid, args));
  }

  void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                 uint64_t id, uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) override {
    const uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (!KeepSpan(name, ts, dur_ns)) return;
    t_.Activate(Pid(pid));
    t_.out_.AsyncSpan(name, category, Pid(pid), Tid(pid, tid), id + (uint64_t{index_} << 40), ts,
                      dur_ns, args);
  }

  void Instant(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
               uint64_t ts_ns, InstantScope scope, std::span<const TraceArg> args) override {
    const uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (!t_.InWindow(ts) || !t_.NameSelected(name)) {
      ++t_.spans_dropped_;
      return;
    }
    ++t_.spans_kept_;
    if (scope != InstantScope::kGlobal) t_.Activate(Pid(pid));
    t_.out_.Instant(name, category, Pid(pid), Tid(pid, tid), ts, scope, args);
  }

  void Flow(FlowPhase phase, std::string_view name, std::string_view category, uint32_t pid,
            uint32_t tid, uint64_t ts_ns, uint64_t id) override {
    uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (phase == FlowPhase::kStart) {
      pending_[id] = PendingFlow{std::string(name), std::string(category), Pid(pid), Tid(pid, tid), ts};
      return;
    }
    auto start = pending_.find(id);
    if (start == pending_.end()) {
      ++t_.flows_dropped_;
      return;
    }
    PendingFlow s = std::move(start->second);
    pending_.erase(start);
    if (t_.sel_.name) {
      ++t_.flows_dropped_;
      return;
    }
    if (s.category == kLaunchFlow && t_.kept_calls_.Contains(id) && KeptDeviceSpanAround(pid, tid, ts)) {
      // A launch arrow whose call and device work both reach into the window: kept, or the
      // work would keep a correlation with no arrow (Kineto's readers expect one). An end
      // before the window moves to its start, still inside its slice, which reaches past it.
      s.ts_ns = std::max(s.ts_ns, t_.sel_.from_ns);
      ts = std::max(ts, t_.sel_.from_ns);
    } else if (!t_.InWindow(s.ts_ns) || !t_.InWindow(ts)) {
      ++t_.flows_dropped_;
      return;
    }
    // Kineto's launch arrows keep their id: it is the correlation id on both ends' slices,
    // and each log numbers those in a range of its own. Other flows are renumbered above them.
    const uint64_t new_id = s.category == kLaunchFlow ? id : t_.next_flow_id_++;
    t_.out_.Flow(FlowPhase::kStart, s.name, s.category, s.pid, s.tid, s.ts_ns, new_id);
    t_.out_.Flow(FlowPhase::kEnd, name, category, Pid(pid), Tid(pid, tid), ts, new_id);
  }

  void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
               std::span<const TraceArg> series) override {
    const uint64_t ts = Shift(ts_ns, in_.offset_ns);
    if (ts >= t_.sel_.to_ns) return;
    if (ts < t_.sel_.from_ns) {
      CarriedCounter& c = t_.carried_[{Pid(pid), std::string(name)}];
      if (!c.series.empty() && c.ts_ns > ts) return;
      c.ts_ns = ts;
      c.series.clear();
      for (const TraceArg& a : series) c.series.emplace_back(std::string(a.key), a);
      return;
    }
    t_.Activate(Pid(pid));
    t_.out_.Counter(name, Pid(pid), ts, series);
  }

  Status Finish(std::span<const TraceArg>) override { return Status::Ok(); }
  bool writes_regular_file() const override { return t_.out_.writes_regular_file(); }
  uint64_t events_written() const override { return t_.out_.events_written(); }
  uint64_t bytes_written() const override { return t_.out_.bytes_written(); }
  uint64_t trace_bytes() const override { return t_.out_.trace_bytes(); }

 private:
  // A kept span's args: a host call's correlation is noted; device work whose call was not
  // kept gets correlation 0.
  std::span<const TraceArg> Correlated(uint32_t pid, std::span<const TraceArg> args) {
    if (!t_.selecting()) return args;
    for (size_t i = 0; i < args.size(); ++i) {
      const TraceArg& a = args[i];
      if (a.key != "correlation" || a.kind != TraceArg::Kind::kUint || a.uint_value == 0) continue;
      if (pid < kDevicePidBase) {
        t_.kept_calls_.Insert(a.uint_value);
        return args;
      }
      if (t_.kept_calls_.Contains(a.uint_value)) return args;
      orphan_args_.assign(args.begin(), args.end());
      orphan_args_[i] = TraceArg::Uint(a.key, 0);
      return orphan_args_;
    }
    return args;
  }

  // The last span kept on each device track: a launch arrow's end is written right after the
  // device work it ends in (ze_export.cc), so this is the slice that arrow binds to.
  void NoteKept(uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur) {
    if (pid >= kDevicePidBase && t_.selecting()) last_device_span_[{pid, tid}] = {ts, dur};
  }
  bool KeptDeviceSpanAround(uint32_t pid, uint32_t tid, uint64_t ts) const {
    auto it = last_device_span_.find({pid, tid});
    return it != last_device_span_.end() && ts >= it->second.first &&
           ts - it->second.first <= it->second.second;
  }

  bool KeepSpan(std::string_view name, uint64_t ts, uint64_t dur) {
    if (!t_.SpanInWindow(ts, dur) || !t_.NameSelected(name)) {
      ++t_.spans_dropped_;
      return false;
    }
    ++t_.spans_kept_;
    return true;
  }

  SelectedTimeline& t_;
  TimelineInput in_;
  uint32_t index_;
  std::unordered_map<uint64_t, PendingFlow> pending_;  // flow starts waiting for their end
  std::vector<TraceArg> orphan_args_;  // reused: the args of device work whose call was left out
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> last_device_span_;
};

SelectedTimeline::SelectedTimeline(TraceWriter& out, TimelineSelection selection)
    : out_(out), sel_(selection) {}

SelectedTimeline::~SelectedTimeline() = default;

TraceWriter& SelectedTimeline::AddInput(const TimelineInput& input) {
  inputs_.push_back(std::make_unique<Input>(*this, input, static_cast<uint32_t>(inputs_.size())));
  return *inputs_.back();
}

bool SelectedTimeline::NameSelected(std::string_view name) {
  if (!sel_.name) return true;
  auto [it, added] = name_matches_.try_emplace(std::string(name), false);
  if (added) it->second = std::regex_search(it->first, *sel_.name);
  return it->second;
}

void SelectedTimeline::WriteProcessName(uint32_t pid, ProcessEntry& p) {
  if (p.named && p.name != p.written) {
    std::vector<TraceArg> args;
    for (const StoredArg& a : p.args) args.push_back(TraceArg::String(a.key, a.value));
    out_.ProcessName(pid, p.name, args);
    p.written = p.name;
  }
  if (p.sort_index && p.sort_index != p.written_sort_index) {
    out_.ProcessSortIndex(pid, *p.sort_index);
    p.written_sort_index = p.sort_index;
  }
}

void SelectedTimeline::WriteThreadName(uint32_t pid, uint32_t tid, ThreadEntry& t) {
  if (t.name == t.written) return;
  out_.ThreadName(pid, tid, t.name);
  t.written = t.name;
}

void SelectedTimeline::Activate(uint32_t pid) {
  if (!active_.insert(pid).second) return;
  if (auto p = processes_.find(pid); p != processes_.end()) WriteProcessName(pid, p->second);
  for (auto t = threads_.lower_bound({pid, 0}); t != threads_.end() && t->first.first == pid; ++t)
    WriteThreadName(pid, t->first.second, t->second);
}

Status SelectedTimeline::Finish(std::span<const TraceArg> other_data) {
  for (auto& [key, counter] : carried_) {
    std::vector<TraceArg> series;
    for (auto& [owned_key, arg] : counter.series) {
      TraceArg a = arg;
      a.key = owned_key;
      series.push_back(a);
    }
    Activate(key.first);
    out_.Counter(key.second, key.first, sel_.from_ns, series);
  }
  return out_.Finish(other_data);
}

}  // namespace xtrace
