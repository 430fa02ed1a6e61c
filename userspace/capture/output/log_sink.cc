// The capture's log sink: identity replay on rotation and the per-file tallies.
#include "capture/output/log_sink.h"

#include <variant>

#include "capture/output/drop_windows.h"

namespace xtrace {

void LogSink::OnEvent(const Event& event) {
  if (const auto* p = std::get_if<ProcessInfo>(&event)) {
    // A pid that exited and now names another process: the old one's threads go at once,
    // and the new one is not forgotten with the old at the next rotation.
    if (gone_.erase(p->pid)) Forget(p->pid);
    // Each file repeats who a process was before its execs too, in order.
    std::vector<ProcessInfo>& identities = processes_[p->pid];
    if (!p->exec_ns) identities.clear();
    identities.push_back(*p);
  }
  if (const auto* t = std::get_if<ThreadInfo>(&event))
    threads_[(uint64_t{t->pid} << 32) | t->tid] = *t;
  if (const auto* d = std::get_if<RecordsDropped>(&event)) {
    file_dropped_.level_zero += d->level_zero;
    file_dropped_.itt += d->itt;
    file_dropped_.drm += d->drm;
    file_dropped_.other += d->other;
  }
  if (tap_) tap_->Add(event, writer_.strings());
  writer_.Append(event);
  ++events_;
  ++file_events_;
}

void LogSink::CountRecord(uint32_t pid, std::string_view family) {
  file_tally_.Add(pid, family);
  total_tally_.Add(pid, family);
}

void LogSink::Forget(uint32_t pid) {
  processes_.erase(pid);
  std::erase_if(threads_, [pid](const auto& kv) { return kv.second.pid == pid; });
}

void LogSink::BeginFile(uint64_t dropped_total, const std::map<uint32_t, uint64_t>& drops_total) {
  file_tally_ = RecordTally();
  file_dropped_ = RecordsDropped();
  file_dropped_base_ = dropped_total;
  file_drops_base_ = drops_total;
  for (uint32_t pid : gone_) Forget(pid);
  gone_.clear();
  file_events_ = threads_.size();
  for (const auto& [pid, identities] : processes_) {
    for (const ProcessInfo& info : identities) writer_.Append(info);
    file_events_ += identities.size();
  }
  for (const auto& [key, info] : threads_) writer_.Append(info);
}

std::map<uint32_t, uint64_t> LogSink::FileDropsByPid(
    const std::map<uint32_t, uint64_t>& drops_total) const {
  std::map<uint32_t, uint64_t> file_drops;
  for (const auto& [pid, n] : drops_total) {
    auto base = file_drops_base_.find(pid);
    file_drops[pid] = n - (base == file_drops_base_.end() ? 0 : base->second);
  }
  return file_drops;
}

std::vector<std::pair<std::string, uint64_t>> LogSink::FileDroppedBySource() const {
  return DroppedBySource(file_dropped_);
}

}  // namespace xtrace
