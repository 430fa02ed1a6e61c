// Loading the Level Zero BPF programs and attaching them to loader libraries.
#include "capture/ze_source.h"

#include <bpf/libbpf.h>

#include <cerrno>

#include "capture/library_resolver.h"
#include "ze_probes.skel.h"

namespace xtrace {
namespace {

constexpr std::string_view kLoaderPrefix = "libze_loader.so";
constexpr const char* kLoaderSoname = "libze_loader.so.1";

// One probed entry point: its symbol and the programs on its entry and return.
// (The skeleton's program table is an anonymous struct, hence accessors, not member pointers.)
struct ProbeSpec {
  const char* symbol;
  bpf_program* (*entry)(const ze_probes*);
  bpf_program* (*ret)(const ze_probes*);
};

constexpr ProbeSpec kProbes[] = {
    {"zeKernelCreate", [](const ze_probes* s) { return s->progs.ze_kernel_create_entry; },
     [](const ze_probes* s) { return s->progs.ze_kernel_create_return; }},
    {"zeCommandListAppendLaunchKernel",
     [](const ze_probes* s) { return s->progs.ze_append_launch_kernel_entry; },
     [](const ze_probes* s) { return s->progs.ze_append_launch_kernel_return; }},
};

}  // namespace

void ZeSource::SkeletonDeleter::operator()(::ze_probes* skel) const { ze_probes__destroy(skel); }

ZeSource::~ZeSource() {
  processes_.clear();  // links before the programs they refer to
  skel_.reset();
}

Result<std::unique_ptr<ProbeSource>> ZeSource::Load(const SourceContext& ctx) {
  std::unique_ptr<ZeSource> self(new ZeSource(ctx));
  self->skel_.reset(ze_probes__open());
  if (!self->skel_) return Status::Error("opening Level Zero BPF object: " + BpfErrorText(errno));
  auto* skel = self->skel_.get();
  // Probes attach per process, but the filter also keeps out processes that share a probed
  // inode with a target, and lets capture stop for a process without detaching.
  skel->rodata->filter_by_pid = 1;
  skel->rodata->wakeup_bytes = ctx.maps.wakeup_bytes();
  if (Status st = ctx.maps.Share(skel->obj); !st.ok()) return st;
  if (int err = ze_probes__load(skel))
    return Status::Error("loading Level Zero BPF programs: " + BpfErrorText(err));
  return std::unique_ptr<ProbeSource>(std::move(self));
}

bool ZeSource::AttachLibrary(uint32_t pid, const MappedLibrary& lib) {
  Process& proc = processes_[pid];
  for (const auto& f : proc.files)
    if (f.SameFile(lib)) return !proc.links.empty();
  proc.files.push_back(lib);  // handled once, attached or not: no retry every scan

  size_t attached = 0;
  std::string first_error;
  for (const ProbeSpec& spec : kProbes) {
    auto entry = AttachUprobe(spec.entry(skel_.get()), static_cast<int>(pid), lib.host_path,
                              spec.symbol, false);
    auto ret = entry.ok() ? AttachUprobe(spec.ret(skel_.get()), static_cast<int>(pid),
                                         lib.host_path, spec.symbol, true)
                          : Result<BpfLink>(entry.status());
    if (!entry.ok() || !ret.ok()) {
      const Status& why = entry.ok() ? ret.status() : entry.status();
      if (first_error.empty()) first_error = why.message();
      ctx_.say("pid " + std::to_string(pid) + ": " + lib.path + ": cannot probe " + why.message() +
               "; that call is not traced");
      continue;
    }
    proc.links.push_back(std::move(*entry));
    proc.links.push_back(std::move(*ret));
    ++attached;
  }
  if (attached == 0) {
    ctx_.say("pid " + std::to_string(pid) + ": no Level Zero probe could be attached to " +
             lib.path + " (" + first_error + ")");
    return !proc.links.empty();
  }
  ctx_.say("attached to pid " + std::to_string(pid) + " (" + lib.path + ")");
  return true;
}

bool ZeSource::BeforeExec(uint32_t pid) {
  auto lib = ResolveLibraryForExec(kLoaderSoname);
  if (!lib) {
    ctx_.say(std::string("no ") + kLoaderSoname +
             " found on the library path; watching the command for one it loads itself");
    return false;
  }
  return AttachLibrary(pid, *lib);
}

bool ZeSource::OnProcessMaps(uint32_t pid, const std::vector<MappedLibrary>& files) {
  bool any = false;
  for (const auto& f : files) {
    const std::string_view base = std::string_view(f.path).substr(f.path.rfind('/') + 1);
    if (base.rfind(kLoaderPrefix, 0) == 0) any = AttachLibrary(pid, f) || any;
  }
  auto it = processes_.find(pid);
  return any || (it != processes_.end() && !it->second.links.empty());
}

void ZeSource::OnProcessExit(uint32_t pid) { processes_.erase(pid); }

size_t ZeSource::link_count() const {
  size_t n = 0;
  for (const auto& [pid, p] : processes_) n += p.links.size();
  return n;
}

}  // namespace xtrace
