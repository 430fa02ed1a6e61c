// The ITT source: a uprobe on libxtrace_itt.so's probe site in each process that loaded the
// collector (every ITT call of oneDNN, TBB, PyTorch or the program itself), and uprobes on
// PyTorch's torch::profiler::itt_range_push/itt_range_pop/itt_mark in any mapped library that
// exports them (emit_itt() ranges without a collector). Once the collector is mapped and
// initialised, its calls move to the in-process fast path (itt_fast_path.h); the probe site
// stays for the calls before that, for pause/resume/detach, and for processes that refuse it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "capture/sources/itt_fast_path.h"
#include "capture/sources/probe_source.h"

struct itt_probes;  // generated skeleton (build/bpf/itt_probes.skel.h)

namespace xtrace {

class IttSource final : public ProbeSource {
 public:
  static Result<std::unique_ptr<ProbeSource>> Load(const SourceContext& ctx);
  ~IttSource() override;

  std::string_view name() const override { return "ITT"; }
  bool needs_library() const override { return true; }
  std::string_view waits_for() const override {
    return "the ITT collector (libxtrace_itt.so) or PyTorch ITT ranges";
  }
  // The collector, and any shared object that exports PyTorch's range functions.
  bool ProbesLibrary(const MappedLibrary& lib) override;
  Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) override;
  // Whether libtorch is probed depends on whether the process loads the collector.
  bool attaches_per_process() const override { return true; }
  bool says_where_attached() const override { return true; }
  // The collector INTEL_LIBITTNOTIFY64 names in xtrace's environment, which the command
  // inherits.
  std::vector<MappedLibrary> LibrariesBeforeExec(uint32_t pid) override;
  void OnProcessExit(uint32_t pid) override;
  void OnProcessExec(uint32_t pid, uint64_t exec_ns) override;
  // Switches the collectors' ITT domains on again where due (itt_domains.h).
  void Tick(uint64_t now_ns, uint64_t idle_grace_ns) override;
  size_t link_count() const override { return 0; }  // the capture holds them
  // A process that called __itt_detach ended its own capture.
  RecordEffect OnRecord(const DecodedRecord& record) override;
  // Labels captured, unbalanced input, what pause/resume/detach did (itt_summary.h).
  SourceSummary Summary(const SourceSummaryInputs& in) const override;

 private:
  using FileKey = std::tuple<uint32_t, uint32_t, uint64_t>;  // dev major, minor, inode
  // What a collector's file exports for capture to find in its processes, read once per file:
  // the fast path's control block and the domain list (nullopt: an older collector without it).
  struct CollectorExports {
    std::optional<uint64_t> control;  // XT_ITT_CONTROL_SYMBOL's value
    std::optional<uint64_t> domains;  // XT_ITT_DOMAINS_SYMBOL's value
    Status read;                      // why the file could not be read as ELF
  };
  // Which of the three PyTorch range functions a file exports (push, pop, mark).
  struct TorchExports {
    bool any() const { return push || pop || mark; }
    bool push = false, pop = false, mark = false;
  };
  struct Process {
    bool collector = false;   // the collector's site is probed
    bool fast_path_tried = false;
    std::optional<bool> collector_in_environment;
    // Its collector's domain list (itt_domains.h): the file, and the list's address once the
    // file is mapped in this image.
    std::optional<MappedLibrary> collector_lib;
    uint64_t domains_address = 0;
    uint64_t domains_checked_ns = 0;
    bool domains_settled = false;  // nothing (more) to switch: an older collector, an opt-out, an error said
  };
  // How often a traced collector's domains are switched on again.
  static constexpr uint64_t kDomainsCheckNs = 500'000'000;

  explicit IttSource(const SourceContext& ctx) : ctx_(ctx) {}
  Result<std::vector<ProbeLink>> AttachCollector(uint32_t pid, const MappedLibrary& lib);
  std::vector<ProbeLink> AttachPytorch(uint32_t pid, const MappedLibrary& lib,
                                       const TorchExports& exports);
  const TorchExports& PytorchExportsOf(const MappedLibrary& lib);
  // The collector's exports; a file that cannot be read as ELF exports neither, and says why.
  const CollectorExports& CollectorExportsOf(const MappedLibrary& lib);
  // True when PyTorch's ITT calls in `pid` go through xtrace's collector (so probing
  // libtorch as well would record every range twice).
  bool CollectorExpected(uint32_t pid, Process& proc);
  // Switches on the domains of `pid`'s collector that are off (itt_domains.h).
  void SwitchOnDomains(uint32_t pid, Process& proc, uint64_t now_ns);
  // Drops BPF's memory of which handle texts `pid` already sent (the pid may be reused).
  void ForgetHandles(uint32_t pid);

  struct SkeletonDeleter {
    void operator()(::itt_probes* skel) const;
  };

  SourceContext ctx_;
  std::unique_ptr<::itt_probes, SkeletonDeleter> skel_;
  std::unique_ptr<IttFastPath> fast_path_;
  std::map<uint32_t, Process> processes_;
  std::map<FileKey, TorchExports> torch_exports_;  // per file, across processes
  std::map<FileKey, CollectorExports> collector_exports_;  // likewise
};

// True when the file's base name says it is xtrace's ITT collector.
bool IsIttCollectorPath(std::string_view path);

}  // namespace xtrace
