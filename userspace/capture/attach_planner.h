// Where each probe source's probes go, and attaching them: for a process's memory map, for
// the held command before it execs, and for the whole capture (the dynamic linker hook, the
// host's copy of the Level Zero loader). It owns the sources and the library links and says
// which processes the probes cover; who those processes are is the process table's concern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "capture/discovery/library_attachments.h"
#include "capture/bpf/link_reaper.h"
#include "capture/sources/probe_source.h"
#include "capture/discovery/process_watcher.h"

namespace xtrace {

class AttachPlanner {
 public:
  struct Settings {
    // The dynamic linker is hooked so library loads are seen: the capture discovers
    // processes (--system, --comm, --cgroup, children) or holds them at library loads.
    bool watch_library_loads = false;
    // Library probes per process and file; otherwise once per file for every process (see
    // docs/design-notes.md, "Probes per process").
    bool per_process_links = true;
    // A file whose per-process probes the kernel refuses is probed once for every process
    // that maps it instead (said once, and kept as a note for the summary).
    bool per_file_if_refused = false;
    bool verbose = false;
  };
  using Say = std::function<void(const std::string&)>;

  // `watcher` (may be null: no linker hook) and `reaper` outlive the planner.
  AttachPlanner(std::vector<std::unique_ptr<ProbeSource>> sources, ProcessWatcher* watcher,
                LinkReaper& reaper, Settings settings, Say say);
  // Links before the programs they run: every link is destroyed before the sources go.
  ~AttachPlanner();
  AttachPlanner(const AttachPlanner&) = delete;
  AttachPlanner& operator=(const AttachPlanner&) = delete;

  // What attaching found for one process.
  struct Attached {
    bool any = false;  // a probe now covers it (see CountsAsAttached)
    std::string via;   // the library to name in "attached to pid N (...)"; empty when the
                       // source said so itself, or none was attached
  };

  // Probes for the whole capture: the linker xtrace itself uses (`self_pid` maps it) when it
  // discovers processes, and with `host_copies` each source's host library for every process.
  void PinHostLibraries(uint32_t self_pid, bool host_copies);

  // The held command `pid` is about to exec: attach where its libraries will be.
  Attached BeforeExec(uint32_t pid);

  // Reads the memory map of `pid` and attaches what is new; `given` (a target named by the
  // user) also hears from sources that need no library. nullopt when the map is unreadable
  // (the process is gone).
  std::optional<Attached> Scan(uint32_t pid, bool given);

  // `pid` no longer uses its libraries (gone, detached, or its pid now names another process).
  void ReleaseLibraries(uint32_t pid, uint64_t now_ns);
  // `pid` is gone or detached: its libraries are released and every source forgets it.
  void ProcessGone(uint32_t pid, uint64_t now_ns);
  // `pid` replaced its image at `exec_ns`: every source forgets what it kept about its memory.
  void ProcessExeced(uint32_t pid, uint64_t exec_ns);
  // `pid` was running before the capture found it: every source is told
  // (ProbeSource::FoundRunning).
  void ProcessFoundRunning(uint32_t pid);
  // One turn of the capture's loop: destroys the links of shared files nobody has used for
  // `idle_grace_ns`, and gives every source its turn (ProbeSource::Tick).
  void Tick(uint64_t now_ns, uint64_t idle_grace_ns) {
    attachments_.ExpireIdle(now_ns, idle_grace_ns);
    for (const auto& source : sources_) source->Tick(now_ns, idle_grace_ns);
  }

  // "Level Zero (libze_loader.so*) or ..." — what a target must load to be traced.
  std::string WaitsFor() const;
  // Links held: the library links (also those being destroyed) and the sources' own.
  size_t link_count() const;
  bool per_process_links() const { return settings_.per_process_links; }
  // What the summary should repeat: a file probed per file because per-process probes were
  // refused.
  const std::vector<std::string>& notes() const { return notes_; }
  // The sources, in the order they loaded (owned here), for the capture's record routing.
  std::vector<ProbeSource*> sources() const {
    std::vector<ProbeSource*> all;
    for (const auto& source : sources_) all.push_back(source.get());
    return all;
  }

 private:
  // The pseudo-owner of the dynamic linker hooks in attachments_ (sources are 0..n-1).
  size_t linker_owner() const { return sources_.size(); }
  bool PerProcess(const ProbeSource& source) const {
    return settings_.per_process_links || source.attaches_per_process();
  }
  // A file (device, inode) probed per file after per-process probes were refused.
  using FileId = std::tuple<uint32_t, uint32_t, uint64_t>;
  static FileId IdOf(const MappedLibrary& lib) { return {lib.dev_major, lib.dev_minor, lib.inode}; }
  // Attaches source `i` to `lib` for `pid` and notes what came of it in `out`.
  void Use(size_t i, const MappedLibrary& lib, uint32_t pid, Attached& out);
  // Sources that need no library cover every target from the start: said once per target.
  void CoverWithoutLibrary(uint32_t pid, Attached& out);
  // Whether `source` having a probe in a process counts as "attached" for messages and the
  // exit status: sources that need a library do; one that needs nothing (DRM) does only when
  // it is all there is (--drm-only), or every target would be "attached" at once.
  bool CountsAsAttached(const ProbeSource& source) const;
  std::optional<Attached> ScanOnce(uint32_t pid, bool given, bool again_if_hooked);

  std::vector<std::unique_ptr<ProbeSource>> sources_;
  ProcessWatcher* watcher_;
  LinkReaper& reaper_;
  LibraryAttachments attachments_;
  Settings settings_;
  Say say_;
  std::set<std::pair<size_t, uint32_t>> covered_;  // (source, pid) said to be covered
  std::set<FileId> per_file_after_refusal_;
  std::vector<std::string> notes_;
};

}  // namespace xtrace
