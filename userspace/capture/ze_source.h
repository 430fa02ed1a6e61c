// The Level Zero source: uprobes on the loader's (libze_loader.so*) API entry points in each
// traced process.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "base/unique_fd.h"
#include "capture/bpf_link.h"
#include "capture/probe_source.h"

struct ze_probes;  // generated skeleton (build/bpf/ze_probes.skel.h)

namespace xtrace {

class ZeSource final : public ProbeSource {
 public:
  static Result<std::unique_ptr<ProbeSource>> Load(const SourceContext& ctx);
  ~ZeSource() override;

  std::string_view name() const override { return "Level Zero"; }
  std::string_view waits_for() const override { return "Level Zero (libze_loader.so*)"; }
  bool BeforeExec(uint32_t pid) override;
  bool OnProcessMaps(uint32_t pid, const std::vector<MappedLibrary>& files) override;
  void OnProcessExit(uint32_t pid) override;
  size_t link_count() const override;

 private:
  explicit ZeSource(const SourceContext& ctx) : ctx_(ctx) {}
  // Opens and loads the programs, as uprobe_multi programs if `multi`.
  Status LoadPrograms(bool multi);
  // Attaches every probe to `lib` in `pid`; false if nothing could be attached.
  bool AttachLibrary(uint32_t pid, const MappedLibrary& lib);
  // The two ways: a few uprobe_multi links per library, or two perf-event uprobes per function
  // (kernels before 6.6). Both return how many functions are probed.
  size_t AttachMulti(uint32_t pid, const MappedLibrary& lib, std::string* first_error);
  size_t AttachEach(uint32_t pid, const MappedLibrary& lib, std::string* first_error);

  struct SkeletonDeleter {
    void operator()(::ze_probes* skel) const;
  };
  struct Process {
    std::vector<MappedLibrary> files;  // loader files already handled (attached or failed)
    std::vector<BpfLink> links;
    std::vector<UniqueFd> multi_links;
    bool attached() const { return !links.empty() || !multi_links.empty(); }
  };

  SourceContext ctx_;
  bool multi_ = false;
  std::unique_ptr<::ze_probes, SkeletonDeleter> skel_;
  std::map<uint32_t, Process> processes_;
};

}  // namespace xtrace
