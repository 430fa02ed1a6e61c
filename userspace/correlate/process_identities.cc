// Process introduction, exec tracking and thread names for the log; see process_identities.h.
#include "correlate/process_identities.h"

#include <time.h>

#include <algorithm>

#include "correlate/process_rank.h"

namespace xtrace {

uint64_t ProcessIdentities::MonotonicNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

ProcessIdentities::ProcessIdentities(StringTable& strings, EventSink& sink,
                                     ProcessInspector& inspector, Clock now)
    : strings_(strings), sink_(sink), inspector_(inspector), now_(std::move(now)) {}

ProcessInfo ProcessIdentities::FromDetails(uint32_t pid, const ProcessDetails& details) const {
  ProcessInfo info;
  info.pid = pid;
  info.ns_pid = details.ns_pid ? details.ns_pid : pid;
  info.comm = strings_.Intern(details.comm);
  info.command_line = strings_.Intern(details.command_line);
  info.cgroup = strings_.Intern(details.cgroup_path);
  info.container_id = strings_.Intern(details.container_id);
  // Read here, once per identity the log gives, not by the inspector, which discovery asks
  // about every process on the machine. An exec may change it (`env RANK=1 ...`).
  const DistributedIdentity identity = ReadDistributedIdentity(pid);
  info.rank = identity.rank.value_or(-1);
  info.world_size = identity.world_size.value_or(-1);
  return info;
}

bool ProcessIdentities::Introduce(uint32_t pid, std::string_view fallback_comm) {
  if (known_.count(pid)) return false;
  const uint64_t as_of = now_();
  ProcessInfo info;
  info.pid = pid;
  info.ns_pid = pid;
  info.comm = strings_.Intern(fallback_comm);
  if (auto details = inspector_.Process(pid)) info = FromDetails(pid, *details);
  known_.emplace(pid, Identity{{info}, as_of});
  sink_.OnEvent(info);
  inspector_.Named(pid, strings_.Get(info.comm));
  return true;
}

bool ProcessIdentities::Execed(uint32_t pid, uint64_t ts_ns, const ProcessDetails& identity,
                               bool introduce) {
  auto it = known_.find(pid);
  if (it == known_.end()) {
    if (!introduce) return false;
    // Introduced by the record, not /proc: later exec records come after it in order. The
    // record carries no cgroup path; exec keeps the cgroup, so /proc's is the one.
    ProcessDetails details = identity;
    if (details.cgroup_path.empty()) {
      if (auto live = inspector_.Process(pid)) {
        details.cgroup_path = live->cgroup_path;
        details.container_id = live->container_id;
      }
    }
    const ProcessInfo info = FromDetails(pid, details);
    known_.emplace(pid, Identity{{info}, ts_ns});
    sink_.OnEvent(info);
    inspector_.Named(pid, strings_.Get(info.comm));
    return true;
  }
  Identity& known = it->second;
  if (ts_ns < known.as_of_ns) return false;
  ProcessInfo info = FromDetails(pid, identity);
  if (info.comm == known.info().comm && info.command_line == known.info().command_line) return false;
  // An exec keeps the process's cgroup; the record does not carry its path.
  if (identity.cgroup_path.empty()) {
    info.cgroup = known.info().cgroup;
    info.container_id = known.info().container_id;
  }
  info.exec_ns = ts_ns;
  known.written.push_back(info);
  known.as_of_ns = ts_ns;
  sink_.OnEvent(info);
  inspector_.Named(pid, strings_.Get(info.comm));
  return false;
}

void ProcessIdentities::Forget(uint32_t pid) {
  known_.erase(pid);
  std::erase_if(threads_, [pid](const auto& kv) { return (kv.first >> 32) == pid; });
}

bool ProcessIdentities::SeeThread(uint32_t pid, uint32_t tid) {
  return threads_.try_emplace(ThreadKey(pid, tid)).second;
}

bool ProcessIdentities::NameThread(uint32_t pid, uint32_t tid, StringId name, bool by_program) {
  auto [it, added] = threads_.try_emplace(ThreadKey(pid, tid));
  Thread& thread = it->second;
  thread.by_program = thread.by_program || by_program;
  if (!added && thread.name == name) return false;  // already known under this name
  thread.name = name;
  thread.written = true;
  sink_.OnEvent(ThreadInfo{pid, tid, name});
  return added;
}

bool ProcessIdentities::NamedByProgram(uint32_t pid, uint32_t tid) const {
  auto it = threads_.find(ThreadKey(pid, tid));
  return it != threads_.end() && it->second.by_program;
}

std::vector<Event> ProcessIdentities::Written() const {
  std::vector<uint32_t> pids;
  for (const auto& [pid, identity] : known_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  std::vector<uint64_t> threads;
  for (const auto& [key, thread] : threads_)
    if (thread.written) threads.push_back(key);
  std::sort(threads.begin(), threads.end());
  std::vector<Event> out;
  for (uint32_t pid : pids)
    for (const ProcessInfo& info : known_.at(pid).written) out.emplace_back(info);
  for (uint64_t key : threads)
    out.emplace_back(ThreadInfo{static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key),
                                threads_.at(key).name});
  return out;
}

}  // namespace xtrace
