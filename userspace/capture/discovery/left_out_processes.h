// The processes a capture of one user's processes (--user, as the daemon sets it for a user)
// left out although its scope took them in, because they run as somebody else: a job's
// process another user owns, a child that exec'd another user's set-user-ID program. Kept
// here to be said: in the capture's summary and in the log's notes, pid by pid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace xtrace {

class LeftOutProcesses {
 public:
  // `pid`, named `comm`, is in the scope but runs as `as_uid` (the first of its real,
  // effective and saved uid that is not the owner's). Said once per pid: the latest word wins.
  void Add(uint32_t pid, const std::string& comm, uid_t as_uid);
  // It is the owner's after all (it gave the other uid up) and is captured from now on.
  void Remove(uint32_t pid) { left_out_.erase(pid); }
  bool Contains(uint32_t pid) const { return left_out_.count(pid) != 0; }
  size_t size() const { return left_out_.size(); }

  // "2 processes left out as another user's: pid 1234 (setuid-workload) runs as bob (uid
  // 1002), pid 1240 (x) runs as uid 1003; this capture covers the processes of alice (uid
  // 1000) alone", at most kNamed pids named; "" when none.
  std::string Note(uid_t owner) const;

  static constexpr size_t kNamed = 8;

 private:
  struct Entry {
    std::string comm;
    uid_t as_uid = 0;
  };
  std::map<uint32_t, Entry> left_out_;
};

}  // namespace xtrace
