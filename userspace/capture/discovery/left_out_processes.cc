// Saying which processes a capture of one user's processes left out, and as whose.
#include "capture/discovery/left_out_processes.h"

#include "capture/discovery/process_owner.h"

namespace xtrace {

void LeftOutProcesses::Add(uint32_t pid, const std::string& comm, uid_t as_uid) {
  left_out_[pid] = Entry{comm, as_uid};
}

std::string LeftOutProcesses::Note(uid_t owner) const {
  if (left_out_.empty()) return "";
  std::string note = std::to_string(left_out_.size()) +
                     (left_out_.size() == 1 ? " process" : " processes") +
                     " left out as another user's: ";
  size_t named = 0;
  for (const auto& [pid, e] : left_out_) {
    if (named == kNamed) {
      note += ", and " + std::to_string(left_out_.size() - kNamed) + " more";
      break;
    }
    note += (named ? ", pid " : "pid ") + std::to_string(pid) +
            (e.comm.empty() ? "" : " (" + e.comm + ")") + " runs as " + DescribeUser(e.as_uid);
    ++named;
  }
  return note + "; this capture covers the processes of " + DescribeUser(owner) + " alone";
}

}  // namespace xtrace
