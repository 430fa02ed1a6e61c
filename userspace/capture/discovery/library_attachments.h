// Which probe links are attached to which library files, and which traced processes use them:
// links are attached the first time a traced process is found mapping a file, shared by every
// later one, and destroyed once the last of them has been gone for a grace period, so a
// capture that sees thousands of short-lived processes holds links only for the files in use
// (and a file used by one short process after another stays probed in between, which matters
// because a process that maps an already-probed file is traced from its first call).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "capture/bpf/bpf_link.h"
#include "capture/bpf/link_reaper.h"
#include "capture/discovery/proc_maps.h"

namespace xtrace {

class LibraryAttachments {
 public:
  // Links taken off are handed to `reaper` (which outlives this object) to destroy.
  explicit LibraryAttachments(LinkReaper& reaper) : reaper_(reaper) {}
  ~LibraryAttachments() { Clear(); }

  // Attaches probes to `lib` for process `pid`, or for every process that maps it (pid -1).
  using AttachFn = std::function<Result<std::vector<ProbeLink>>(const MappedLibrary& lib, int pid)>;

  // Pseudo-process that holds files attached for the whole capture (see Pin).
  static constexpr uint32_t kCapturePid = 0;

  enum class Outcome {
    kShared,     // the file was already attached (or already failed): nothing new
    kAttached,   // links were attached now
    kFailed,     // attaching failed now; `error` says why (not retried while the file is in use)
  };

  // Notes that process `pid` maps `lib`, as seen by probe owner `owner` (a source index).
  // With per_process, links are attached for `pid` alone; otherwise once per file, for every
  // process that maps it.
  Outcome Use(size_t owner, const MappedLibrary& lib, uint32_t pid, bool per_process,
              const AttachFn& attach, std::string* error);

  // Whether `pid` uses a file of `owner` that has links.
  bool HasLinks(size_t owner, uint32_t pid) const;

  // `pid` is gone: it no longer uses any file. A per-process file loses its links now; a
  // shared one once nobody has used it for the grace period (see ExpireIdle).
  void Release(uint32_t pid, uint64_t now_ns);

  // Destroys the links of shared files nobody has used since `now_ns - grace_ns`.
  void ExpireIdle(uint64_t now_ns, uint64_t grace_ns);

  // Takes every link off.
  void Clear();

  size_t link_count() const;
  size_t file_count() const { return files_.size(); }

 private:
  // (owner, device major, device minor, inode, process or -1)
  using Key = std::tuple<size_t, uint32_t, uint32_t, uint64_t, int64_t>;
  struct Attachment {
    std::string path;
    std::vector<ProbeLink> links;  // empty if attaching failed
    std::set<uint32_t> users;
    uint64_t idle_since_ns = 0;  // when the last user left (users empty)
  };

  void Drop(std::map<Key, Attachment>::iterator file);

  LinkReaper& reaper_;
  std::map<Key, Attachment> files_;
  std::map<uint32_t, std::set<Key>> by_pid_;
};

}  // namespace xtrace
