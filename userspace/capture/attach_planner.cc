// Attaching the probe sources to the processes a capture follows.
#include "capture/attach_planner.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/unique_fd.h"
#include "capture/discovery/library_resolver.h"
#include "capture/discovery/proc_maps.h"

namespace xtrace {
namespace {

std::string_view BaseName(std::string_view path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

AttachPlanner::AttachPlanner(std::vector<std::unique_ptr<ProbeSource>> sources,
                             ProcessWatcher* watcher, LinkReaper& reaper, Settings settings,
                             Say say)
    : sources_(std::move(sources)),
      watcher_(watcher),
      reaper_(reaper),
      attachments_(reaper),
      settings_(settings),
      say_(std::move(say)) {}

AttachPlanner::~AttachPlanner() {
  attachments_.Clear();
  reaper_.WaitIdle();
  sources_.clear();
}

bool AttachPlanner::CountsAsAttached(const ProbeSource& source) const {
  if (source.needs_library()) return true;
  for (const auto& s : sources_)
    if (s->needs_library()) return false;
  return true;
}

void AttachPlanner::CoverWithoutLibrary(uint32_t pid, Attached& out) {
  for (size_t i = 0; i < sources_.size(); ++i) {
    const ProbeSource& source = *sources_[i];
    if (source.needs_library()) continue;
    if (covered_.insert({i, pid}).second)
      say_("tracing the " + std::string(source.name()) + " of pid " + std::to_string(pid));
    if (CountsAsAttached(source)) out.any = true;
  }
}

void AttachPlanner::Use(size_t i, const MappedLibrary& lib, uint32_t pid, Attached& out) {
  ProbeSource* source = sources_[i].get();
  const auto attach = [source](const MappedLibrary& l, int p) {
    return source->AttachToLibrary(l, p);
  };
  // Only where per process is the capture's choice, not the source's own need.
  const bool may_fall_back = settings_.per_file_if_refused && !source->attaches_per_process();
  bool per_process = PerProcess(*source) && !(may_fall_back && per_file_after_refusal_.count(IdOf(lib)));
  std::string error;
  auto outcome = attachments_.Use(i, lib, pid, per_process, attach, &error);
  if (outcome == LibraryAttachments::Outcome::kFailed && !error.empty() && per_process &&
      may_fall_back) {
    std::string shared_error;
    const auto shared = attachments_.Use(i, lib, pid, false, attach, &shared_error);
    if (shared != LibraryAttachments::Outcome::kFailed) {
      per_file_after_refusal_.insert(IdOf(lib));
      const std::string line = "per-process probes refused on " + lib.path + " (" + error +
                               "): probing it for every process that maps it, as "
                               "--probes-per-file does";
      say_(line);
      if (notes_.empty()) notes_.push_back(line);  // one line in the summary
      per_process = false;
      outcome = shared;
      error.clear();
    }
  }
  // A source that found nothing to probe for this process fails without an error.
  if (outcome == LibraryAttachments::Outcome::kFailed && !error.empty())
    say_("pid " + std::to_string(pid) + ": " + error);
  if (outcome == LibraryAttachments::Outcome::kAttached && !per_process && settings_.verbose)
    say_("probing " + lib.path + " for every process that maps it");
  if (!attachments_.HasLinks(i, pid)) return;
  out.any = true;
  if (out.via.empty() && !source->says_where_attached() && source->NamesAttachment(lib))
    out.via = lib.path;
}

void AttachPlanner::PinHostLibraries(uint32_t self_pid, bool host_copies) {
  if (watcher_ && settings_.watch_library_loads) {
    auto own = FindMappedLibraries(self_pid, "");
    for (const MappedLibrary& f : own.ok() ? *own : std::vector<MappedLibrary>{}) {
      if (!ProcessWatcher::IsDynamicLinker(BaseName(f.path))) continue;
      auto lib = LibraryAtPath(f.path);
      if (!lib) continue;
      std::string error;
      attachments_.Use(
          linker_owner(), *lib, LibraryAttachments::kCapturePid, false,
          [this](const MappedLibrary& l, int pid) { return watcher_->HookDynamicLinker(l, pid); },
          &error);
    }
  }
  if (!host_copies) return;
  for (size_t i = 0; i < sources_.size(); ++i) {
    const std::string_view soname = sources_[i]->host_soname();
    if (soname.empty()) continue;
    auto lib = ResolveLibraryForExec(std::string(soname));
    if (!lib) continue;
    std::string error;
    ProbeSource* source = sources_[i].get();
    attachments_.Use(
        i, *lib, LibraryAttachments::kCapturePid, false,
        [source](const MappedLibrary& l, int pid) { return source->AttachToLibrary(l, pid); },
        &error);
  }
}

AttachPlanner::Attached AttachPlanner::BeforeExec(uint32_t pid) {
  Attached out;
  for (size_t i = 0; i < sources_.size(); ++i)
    for (const MappedLibrary& lib : sources_[i]->LibrariesBeforeExec(pid)) Use(i, lib, pid, out);
  CoverWithoutLibrary(pid, out);
  return out;
}

std::optional<AttachPlanner::Attached> AttachPlanner::Scan(uint32_t pid, bool given) {
  return ScanOnce(pid, given, true);
}

std::optional<AttachPlanner::Attached> AttachPlanner::ScanOnce(uint32_t pid, bool given,
                                                               bool again_if_hooked) {
  auto files = FindMappedLibraries(pid, "");
  if (!files.ok()) return std::nullopt;
  Attached out;
  bool hooked_linker = false;
  std::vector<size_t> probing;
  for (MappedLibrary f : *files) {
    const bool linker =
        watcher_ && settings_.watch_library_loads && ProcessWatcher::IsDynamicLinker(BaseName(f.path));
    probing.clear();
    for (size_t i = 0; i < sources_.size(); ++i)
      if (sources_[i]->ProbesLibrary(f)) probing.push_back(i);
    if (!linker && probing.empty()) continue;
    // Hold the file while probes are attached to it: the process may exit meanwhile, taking
    // /proc/PID with it. The file is the one the process maps, reached through the process
    // (a chrooted process's maps name a path of the host's tree, a container's a path of its
    // own). Files are keyed by what was opened, as uprobes are and as libraries resolved for
    // `record` are (on overlay filesystems the maps' device differs).
    UniqueFd held = OpenMappedFile(pid, f);
    struct stat st {};
    if (!held.valid() || fstat(held.get(), &st) != 0) continue;  // gone already
    f.inode = st.st_ino;
    f.dev_major = major(st.st_dev);
    f.dev_minor = minor(st.st_dev);
    f.host_path = "/proc/self/fd/" + std::to_string(held.get());
    if (linker) {
      std::string error;
      const auto outcome = attachments_.Use(
          linker_owner(), f, pid, false,
          [this](const MappedLibrary& lib, int p) { return watcher_->HookDynamicLinker(lib, p); },
          &error);
      if (outcome == LibraryAttachments::Outcome::kAttached) hooked_linker = true;
      if (outcome == LibraryAttachments::Outcome::kFailed)
        say_("cannot watch " + f.path + " for library loads (" + error +
             "); processes using it are seen only as they start");
    }
    for (size_t i : probing) Use(i, f, pid, out);
  }
  // A source that needs no library already covers every process in scope with its
  // tracepoints; it hears of given targets only, not of every process discovery finds.
  if (given) CoverWithoutLibrary(pid, out);
  // A library loaded between this scan and the new hook would go unseen: look once more.
  if (hooked_linker && again_if_hooked) {
    auto again = ScanOnce(pid, given, false);
    if (again) {
      out.any = out.any || again->any;
      if (out.via.empty()) out.via = again->via;
    }
  }
  if (again_if_hooked)
    for (const auto& source : sources_) source->ProcessScanned(pid, PerProcess(*source));
  return out;
}

void AttachPlanner::ReleaseLibraries(uint32_t pid, uint64_t now_ns) {
  attachments_.Release(pid, now_ns);
}

void AttachPlanner::ProcessGone(uint32_t pid, uint64_t now_ns) {
  attachments_.Release(pid, now_ns);
  for (size_t i = 0; i < sources_.size(); ++i) {
    sources_[i]->OnProcessExit(pid);
    covered_.erase({i, pid});
  }
}

void AttachPlanner::ProcessExeced(uint32_t pid, uint64_t exec_ns) {
  for (const auto& source : sources_) source->OnProcessExec(pid, exec_ns);
}

void AttachPlanner::ProcessFoundRunning(uint32_t pid) {
  for (const auto& source : sources_) source->FoundRunning(pid);
}

std::string AttachPlanner::WaitsFor() const {
  std::string what;
  for (const auto& source : sources_) {
    if (!source->needs_library() || source->waits_for().empty()) continue;
    if (!what.empty()) what += " or ";
    what += source->waits_for();
  }
  return what;
}

size_t AttachPlanner::link_count() const {
  size_t n = attachments_.link_count() + reaper_.pending();
  for (const auto& source : sources_) n += source->link_count();
  return n;
}

}  // namespace xtrace
