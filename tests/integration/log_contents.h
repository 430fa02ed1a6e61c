// What an event log holds, grouped for integration tests: launches per process (in the same
// "<tid>\t<name>\t<x>,<y>,<z>" form as the workloads' launch logs), process identities, and
// whether the log is complete.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/event.h"
#include "model/log_header.h"

namespace xtrace::testing {

struct ProcessIdentity {
  uint32_t ns_pid = 0;
  std::string comm, command_line, cgroup, container_id;
};

// An ITT task with its domain and name resolved.
struct NamedIttTask {
  IttTask task;
  std::string domain, name;
  bool balanced() const { return !task.unfinished && !task.begin_missing && !task.closed_by_outer; }
};

struct LogContents {
  bool readable = false;
  std::string error;  // why not, when !readable
  bool complete = false;
  LogHeader header;  // where and when the capture started
  std::map<uint32_t, std::vector<std::string>> launches;          // pid -> "<tid>\t<name>\t<x>,<y>,<z>"
  std::map<uint32_t, std::vector<std::string>> launches_no_tid;   // pid -> "<name>\t<x>,<y>,<z>"
  std::map<uint32_t, ProcessIdentity> processes;                  // pid -> its last ProcessInfo
  std::map<uint32_t, std::vector<ProcessIdentity>> identities;    // pid -> every ProcessInfo, in order
  std::map<uint32_t, std::vector<uint16_t>> api_calls;            // pid -> enum xt_ze_fn of each ApiCall
  std::map<uint32_t, uint64_t> events_by_pid;                     // every event that names a process
  std::map<uint32_t, std::vector<std::string>> itt_labels;  // pid -> "<domain>\t<name>"
  std::vector<NamedIttTask> itt_tasks;                      // every task, in log order
  std::optional<LogSummary> summary;
  uint64_t events = 0;
};

LogContents ReadLogContents(const std::string& path);

// The lines of a workload's launch log, sorted; with strip_tid, without their first field.
std::vector<std::string> ReadLaunchLog(const std::string& path, bool strip_tid = false);
std::vector<std::string> Sorted(std::vector<std::string> v);

// The process whose parent is `parent_pid` (the first found), waiting up to `timeout_ms`.
uint32_t FindChildPid(uint32_t parent_pid, int timeout_ms = 10000);

// Number of open file descriptors of `pid`.
size_t CountOpenFds(uint32_t pid);
// The same once transient ones are gone (a /proc file read for a moment, a client's connection
// not yet seen hung up): extra descriptors only ever add, so the least of a few counts 100 ms
// apart is the settled one. A leak stays in all.
size_t SettledFdCount(uint32_t pid);

}  // namespace xtrace::testing
