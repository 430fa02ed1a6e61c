// The capture's process table.
#include "capture/discovery/process_table.h"

namespace xtrace {

ProcessTable::ProcessTable() : live_(procfs_), read_stat_(&ReadProcStat) {}

ProcessTable::ProcessTable(ProcessInspector& live, StatReader read_stat)
    : live_(live), read_stat_(std::move(read_stat)) {}

uint64_t ProcessTable::StartTicks(uint32_t pid) const {
  const std::optional<ProcStat> stat = read_stat_(pid);
  return stat ? stat->start_ticks : 0;
}

ProcessTable::Tracked ProcessTable::Track(uint32_t pid, bool given) {
  auto [it, added] = processes_.try_emplace(pid);
  TrackedProcess& t = it->second;
  if (!added && !t.gone) {
    t.given = t.given || given;
    return {t, false, false};
  }
  t = TrackedProcess();
  t.pid = pid;
  t.given = given;
  t.start_ticks = StartTicks(pid);
  return {t, true, !added};
}

void ProcessTable::SawStart(uint32_t pid, ProcessDetails identity, uint64_t cgroup_id) {
  TrackedProcess* t = Find(pid);
  if (!t) return;
  t->seen_cgroup_id = cgroup_id;
  if (!t->identities.empty()) {
    const ProcessDetails& last = t->identities.back();
    if (last.comm == identity.comm && last.command_line == identity.command_line &&
        last.ns_pid == identity.ns_pid && last.cgroup_path == identity.cgroup_path)
      return;
  }
  t->identities.push_back(std::move(identity));
}

bool ProcessTable::Recycled(const TrackedProcess& t) const {
  return StartTicks(t.pid) != t.start_ticks;
}

bool ProcessTable::Ended(const TrackedProcess& t) const {
  const std::optional<ProcStat> stat = read_stat_(t.pid);
  return !stat || !stat->alive() || (t.start_ticks && stat->start_ticks != t.start_ticks);
}

void ProcessTable::MarkGone(uint32_t pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  it->second.gone = true;
  it->second.rescan = false;
  if (!it->second.given) processes_.erase(it);
}

TrackedProcess* ProcessTable::Find(uint32_t pid) {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second;
}

const TrackedProcess* ProcessTable::Find(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second;
}

std::vector<uint32_t> ProcessTable::Select(
    const std::function<bool(const TrackedProcess&)>& select) const {
  std::vector<uint32_t> pids;
  for (const auto& [pid, t] : processes_)
    if (select(t)) pids.push_back(pid);
  return pids;
}

uint32_t ProcessTable::live_count() const {
  uint32_t n = 0;
  for (const auto& [pid, t] : processes_) n += t.gone ? 0 : 1;
  return n;
}

std::string ProcessTable::NameOf(uint32_t pid) const {
  if (auto it = named_.find(pid); it != named_.end() && !it->second.empty()) return it->second;
  const TrackedProcess* t = Find(pid);
  return t && !t->identities.empty() ? t->identities.back().comm : std::string();
}

std::optional<ProcessDetails> ProcessTable::Process(uint32_t pid) {
  if (auto live = live_.Process(pid)) return live;
  const TrackedProcess* t = Find(pid);
  if (t && !t->identities.empty()) return t->identities.back();
  return std::nullopt;
}

}  // namespace xtrace
