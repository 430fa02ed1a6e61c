// The capture's log sink: the identities at the top of each rotated file, the per-file tallies.
#include "capture/output/log_sink.h"

#include <variant>

#include "model/drop_remedy.h"

namespace xtrace {

void LogSink::OnEvent(const Event& event) {
  if (const auto* d = std::get_if<RecordsDropped>(&event)) file_dropped_.AddCounts(*d);
  if (tap_) tap_->Add(event, writer_.strings());
  writer_.Append(event);
  ++events_;
  ++file_events_;
}

void LogSink::OnIttTask(const IttTask& task) {
  if (tap_) tap_->AddIttTask(task, writer_.strings());
  writer_.Append(task);
  ++events_;
  ++file_events_;
}

void LogSink::CountRecord(uint32_t pid, std::string_view family) {
  // Families are a few letters: compared here, not by a call to memcmp per record.
  bool same = last_.file && last_.pid == pid && last_.family->size() == family.size();
  for (size_t i = 0; same && i < family.size(); ++i) same = (*last_.family)[i] == family[i];
  if (same) {
    ++*last_.file;
    ++*last_.total;
    return;
  }
  auto& file = *file_tally_.records[pid].try_emplace(std::string(family)).first;
  auto& total = *total_tally_.records[pid].try_emplace(std::string(family)).first;
  last_ = {pid, &file.first, &++file.second, &++total.second};
}

void LogSink::BeginFile(uint64_t dropped_total, const std::map<uint32_t, uint64_t>& drops_total,
                        const std::vector<Event>& identities) {
  file_tally_ = RecordTally();
  last_ = {};
  file_dropped_ = RecordsDropped();
  file_dropped_base_ = dropped_total;
  file_drops_base_ = drops_total;
  for (const Event& identity : identities) writer_.Append(identity);
  file_events_ = identities.size();
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
