// Loading the ITT BPF programs and attaching them to the collector and to PyTorch.
#include "capture/sources/itt_source.h"

#include "base/read_file.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <array>
#include <cerrno>
#include <cstdlib>

#include "capture/capture_options.h"
#include "capture/discovery/elf_symbols.h"
#include "capture/sources/itt_domains.h"
#include "capture/sources/itt_summary.h"
#include "capture/discovery/library_resolver.h"
#include "capture/sources/tsc_clock.h"
#include "correlate/correlator.h"
#include "python/python_frames.h"
#include "itt_probes.skel.h"

namespace xtrace {
namespace {

constexpr std::string_view kCollectorPrefix = "libxtrace_itt.so";
constexpr const char* kCollectorVariable = "INTEL_LIBITTNOTIFY64";

// torch::profiler::itt_range_push(const char*), itt_range_pop(), itt_mark(const char*).
constexpr const char* kTorchPush = "_ZN5torch8profiler14itt_range_pushEPKc";
constexpr const char* kTorchPop = "_ZN5torch8profiler13itt_range_popEv";
constexpr const char* kTorchMark = "_ZN5torch8profiler8itt_markEPKc";

std::string_view BaseName(std::string_view path) { return path.substr(path.rfind('/') + 1); }

// Only shared objects can export PyTorch's functions; data files, fonts and the like that a
// process maps are never opened.
bool MayBeSharedObject(std::string_view path) {
  return BaseName(path).find(".so") != std::string_view::npos;
}

// A variable of /proc/PID/environ (the environment the process started with, which is what
// the ITT static part reads), or nullopt.
std::optional<std::string> EnvironmentOf(uint32_t pid, std::string_view variable) {
  const std::optional<std::string> environ =
      ReadWholeFile("/proc/" + std::to_string(pid) + "/environ");
  if (!environ) return std::nullopt;
  const std::string& text = *environ;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\0', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view entry(text.data() + pos, end - pos);
    if (entry.size() > variable.size() && entry.substr(0, variable.size()) == variable &&
        entry[variable.size()] == '=')
      return std::string(entry.substr(variable.size() + 1));
    pos = end + 1;
  }
  return std::nullopt;
}

}  // namespace

bool IsIttCollectorPath(std::string_view path) {
  return BaseName(path).rfind(kCollectorPrefix, 0) == 0;
}

void IttSource::SkeletonDeleter::operator()(::itt_probes* skel) const { itt_probes__destroy(skel); }

// The capture destroys every link it got from AttachToLibrary before it destroys sources; the
// fast path then hands the collectors back to their (by then unprobed) sites.
IttSource::~IttSource() {
  fast_path_.reset();
  skel_.reset();
}

Result<std::unique_ptr<ProbeSource>> IttSource::Load(const SourceContext& ctx) {
  std::unique_ptr<IttSource> self(new IttSource(ctx));
  self->skel_.reset(itt_probes__open());
  if (!self->skel_) return Status::Error("opening ITT BPF object: " + BpfErrorText(errno));
  auto* skel = self->skel_.get();
  skel->rodata->filter_by_pid = 1;
  skel->rodata->wakeup_bytes = ctx.maps.wakeup_bytes();
  if (Status st = ctx.maps.Share(skel->obj); !st.ok()) return st;
  if (int err = itt_probes__load(skel))
    return Status::Error("loading ITT BPF programs: " + BpfErrorText(err));
  self->fast_path_ = std::make_unique<IttFastPath>(ctx.maps, ctx.say, ctx.options.itt_ring_bytes,
                                                    ctx.options.nice);
  // The fast path's calls never pass BPF, which reads the Python frames: with --python-frames
  // given, a Python process keeps its ITT calls on the probe site so that its tasks carry
  // them (by default they keep the fast path; see CaptureOptions::python_frames).
  if (ctx.options.python_frames_over_itt_fast_path() && ctx.python) {
    PythonInterpreters* python = ctx.python;
    self->fast_path_->KeepOnProbeSiteIf([python](uint32_t pid) -> std::string {
      return python->Find(pid) ? "its Python frames are read there (--python-frames)" : "";
    });
  }
  return std::unique_ptr<ProbeSource>(std::move(self));
}

void IttSource::ForgetHandles(uint32_t pid) {
  struct Key {
    uint64_t handle;
    uint32_t tgid;
    uint32_t kind;
  };
  const int fd = bpf_map__fd(skel_->maps.itt_handles);
  std::vector<Key> doomed;
  Key key{}, next{};
  for (void* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
    if (next.tgid == pid) doomed.push_back(next);
    key = next;
  }
  for (const Key& k : doomed) bpf_map_delete_elem(fd, &k);
}

Result<std::vector<ProbeLink>> IttSource::AttachCollector(uint32_t pid, const MappedLibrary& lib) {
  Process& proc = processes_[pid];
  if (proc.collector) return std::vector<ProbeLink>{};  // another copy of it: one is enough
  ForgetHandles(pid);
  auto link = AttachUprobe(skel_->progs.itt_probe, static_cast<int>(pid), lib.host_path,
                           XT_ITT_PROBE_SYMBOL, false);
  if (!link.ok())
    return Status::Error(lib.path + ": cannot probe " + link.status().message() +
                         "; its ITT labels are not traced");
  std::vector<ProbeLink> links;
  links.push_back(std::move(*link));
  proc.collector = true;
  proc.collector_lib = lib;
  // Probed first, then switched on: a domain the walk misses is one made after the probe
  // went in, which the collector switches on itself (xtrace/itt_ring.h). Said after both:
  // "attached" means its calls are traced from then on.
  SwitchOnDomains(pid, proc, TscClock::MonotonicNs());
  ctx_.say("attached to pid " + std::to_string(pid) + " (ITT collector " + lib.path + ")");
  return links;
}

void IttSource::SwitchOnDomains(uint32_t pid, Process& proc, uint64_t now_ns) {
  if (!proc.collector || !proc.collector_lib || proc.domains_settled) return;
  proc.domains_checked_ns = now_ns;
  if (!proc.domains_address) {
    const std::optional<uint64_t> symbol = CollectorExportsOf(*proc.collector_lib).domains;
    if (!symbol) {
      proc.domains_settled = true;  // an older collector, whose domains are always on
      return;
    }
    const auto base = LoadBase(pid, *proc.collector_lib);
    if (!base) return;  // `record`'s command, before its exec maps the collector
    proc.domains_address = *base + *symbol;
  }
  auto switched = SwitchOnIttDomains(RemoteMemory(pid), proc.domains_address);
  if (!switched.ok()) {
    proc.domains_settled = true;
    ctx_.say("pid " + std::to_string(pid) + ": its ITT domains could not be switched on (" +
             switched.status().message() +
             "): ITT calls on domains it made before the attach are not traced");
    return;
  }
  if (switched->always_on) proc.domains_settled = true;
}

void IttSource::Tick(uint64_t now_ns, uint64_t /*idle_grace_ns*/) {
  for (auto& [pid, proc] : processes_)
    if (now_ns - proc.domains_checked_ns >= kDomainsCheckNs) SwitchOnDomains(pid, proc, now_ns);
}

const IttSource::TorchExports& IttSource::PytorchExportsOf(const MappedLibrary& lib) {
  const FileKey key{lib.dev_major, lib.dev_minor, lib.inode};
  if (auto it = torch_exports_.find(key); it != torch_exports_.end()) return it->second;
  static constexpr std::array<std::string_view, 3> kSymbols = {kTorchPush, kTorchPop, kTorchMark};
  TorchExports exports;
  // A file that cannot be read as ELF exports nothing we could probe anyway.
  if (auto found = ElfExports(lib.host_path, kSymbols); found.ok())
    exports = TorchExports{(*found)[0], (*found)[1], (*found)[2]};
  return torch_exports_.emplace(key, exports).first->second;
}

const IttSource::CollectorExports& IttSource::CollectorExportsOf(const MappedLibrary& lib) {
  const FileKey key{lib.dev_major, lib.dev_minor, lib.inode};
  if (auto it = collector_exports_.find(key); it != collector_exports_.end()) return it->second;
  static constexpr std::array<std::string_view, 2> kSymbols = {XT_ITT_CONTROL_SYMBOL,
                                                               XT_ITT_DOMAINS_SYMBOL};
  CollectorExports exports;
  if (auto values = ElfExportValues(lib.host_path, kSymbols); values.ok())
    exports = CollectorExports{(*values)[0], (*values)[1], Status::Ok()};
  else
    exports.read = values.status();
  return collector_exports_.emplace(key, exports).first->second;
}

bool IttSource::CollectorExpected(uint32_t pid, Process& proc) {
  if (proc.collector) return true;
  if (!proc.collector_in_environment) {
    const auto value = EnvironmentOf(pid, kCollectorVariable);
    proc.collector_in_environment = value && IsIttCollectorPath(*value);
  }
  return *proc.collector_in_environment;
}

std::vector<ProbeLink> IttSource::AttachPytorch(uint32_t pid, const MappedLibrary& lib,
                                                const TorchExports& exports) {
  struct Probe {
    bool exported;
    const char* symbol;
    uint16_t op;  // the program's cookie
    const char* what;
  };
  const Probe probes[] = {
      {exports.push, kTorchPush, XT_ITT_TASK_BEGIN, "itt_range_push"},
      {exports.pop, kTorchPop, XT_ITT_TASK_END, "itt_range_pop"},
      {exports.mark, kTorchMark, XT_ITT_MARKER, "itt_mark"},
  };
  std::vector<ProbeLink> links;
  std::string skipped;
  for (const Probe& p : probes) {
    if (!p.exported) {
      skipped += std::string(skipped.empty() ? "" : ", ") + p.what + " (not exported)";
      continue;
    }
    auto link = AttachUprobe(skel_->progs.torch_range, static_cast<int>(pid), lib.host_path,
                             p.symbol, false, p.op);
    if (!link.ok()) {
      skipped += std::string(skipped.empty() ? "" : ", ") + p.what + " (" +
                 link.status().message() + ")";
      continue;
    }
    links.push_back(std::move(*link));
  }
  const std::string where = "pid " + std::to_string(pid) + " (PyTorch ITT ranges in " + lib.path;
  if (!links.empty()) ctx_.say("attached to " + where + ")");
  if (!skipped.empty())
    ctx_.say(where + "): skipped " + skipped + "; the rest is traced");
  return links;
}

std::vector<MappedLibrary> IttSource::LibrariesBeforeExec(uint32_t pid) {
  const char* value = std::getenv(kCollectorVariable);
  if (!value || !*value) {
    if (ctx_.options.verbose)
      ctx_.say(std::string(kCollectorVariable) +
               " is not set: ITT labels (oneDNN, TBB, __itt_*) cannot be traced; see 'xtrace env'");
    return {};
  }
  auto lib = LibraryAtPath(value);
  if (!lib) {
    ctx_.say(std::string(kCollectorVariable) + "=" + value +
             " does not exist: the command's ITT labels cannot be traced");
    return {};
  }
  static constexpr std::array<std::string_view, 1> kSite = {XT_ITT_PROBE_SYMBOL};
  auto exports = ElfExports(lib->host_path, kSite);
  if (!exports.ok() || !(*exports)[0]) {
    ctx_.say(std::string(kCollectorVariable) + " names " + value +
             ", not xtrace's ITT collector: ITT calls go there (PyTorch ranges are still probed)");
    return {};
  }
  processes_[pid].collector_in_environment = true;
  return {*lib};
}

bool IttSource::ProbesLibrary(const MappedLibrary& lib) {
  if (IsIttCollectorPath(lib.path)) return true;
  return MayBeSharedObject(lib.path) && PytorchExportsOf(lib).any();
}

Result<std::vector<ProbeLink>> IttSource::AttachToLibrary(const MappedLibrary& lib, int pid) {
  // Always per process (attaches_per_process): which probes a library gets depends on it.
  const auto target = static_cast<uint32_t>(pid);
  if (IsIttCollectorPath(lib.path)) {
    auto links = AttachCollector(target, lib);
    // The probe site stays for discovery and as the fallback; the calls move to the
    // in-process rings once the collector is mapped and initialised (for `record`, this is
    // before exec: the fast path waits for the mapping).
    Process& proc = processes_[target];
    if (links.ok() && fast_path_ && proc.collector && !proc.fast_path_tried) {
      proc.fast_path_tried = true;
      const CollectorExports& exports = CollectorExportsOf(lib);
      fast_path_->Attach(target, lib, exports.control, exports.read);
    }
    return links;
  }
  const TorchExports& exports = PytorchExportsOf(lib);
  if (!exports.any()) return std::vector<ProbeLink>{};
  if (CollectorExpected(target, processes_[target])) {
    ctx_.say("pid " + std::to_string(pid) + ": PyTorch ITT ranges of " + lib.path +
             " reach xtrace through its ITT collector; not probing them twice");
    return std::vector<ProbeLink>{};
  }
  return AttachPytorch(target, lib, exports);
}

void IttSource::OnProcessExec(uint32_t pid, uint64_t exec_ns) {
  if (fast_path_) fast_path_->ReleaseImage(pid, exec_ns);
  // The new image maps its collector (if any) elsewhere.
  if (auto it = processes_.find(pid); it != processes_.end()) it->second.domains_address = 0;
}

void IttSource::OnProcessExit(uint32_t pid) {
  if (fast_path_) fast_path_->Release(pid);
  processes_.erase(pid);
  ForgetHandles(pid);
}

RecordEffect IttSource::OnRecord(const DecodedRecord& record) {
  const auto* state = std::get_if<DecodedIttState>(&record);
  return {.process_detached = state && state->state == XT_COLLECT_DETACHED};
}

SourceSummary IttSource::Summary(const SourceSummaryInputs& in) const {
  return {.sentences = SummarizeItt(in.correlator.itt_stats(), in.counters[XT_CNT_PAUSED]),
          .lines = {}};
}

}  // namespace xtrace
