// The Level Zero source: uprobes on the loader's (libze_loader.so*) API entry points, and on
// the functions a driver hands out by pointer (zeDriverGetExtensionFunctionAddress), found by
// name in the driver file; attached by the capture per file (or per process and file for
// explicit targets).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "capture/bpf_link.h"
#include "capture/probe_source.h"

struct ze_probes;  // generated skeleton (build/bpf/ze_probes.skel.h)

namespace xtrace {

class ZeSource final : public ProbeSource {
 public:
  static Result<std::unique_ptr<ProbeSource>> Load(const SourceContext& ctx);
  ~ZeSource() override;

  std::string_view name() const override { return "Level Zero"; }
  bool needs_library() const override { return true; }
  std::string_view waits_for() const override { return "Level Zero (libze_loader.so*)"; }
  bool ProbesLibrary(const MappedLibrary& lib) override;
  bool NamesAttachment(const MappedLibrary& lib) const override;
  Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) override;
  std::vector<MappedLibrary> LibrariesBeforeExec(uint32_t pid) override;
  std::string_view host_soname() const override;
  size_t link_count() const override { return 0; }  // the capture holds them

  // Where this source probes `symbol` in the loader file at `path`: bytes into the function
  // (0: its entry; see probe_site.h), or nullopt if it does not probe that function. For the
  // benchmark, which measures the bare trap at the same instruction.
  static Result<std::optional<uint32_t>> ProbeSiteOf(const std::string& path,
                                                     std::string_view symbol);

 private:
  explicit ZeSource(const SourceContext& ctx) : ctx_(ctx) {}
  // Opens and loads the programs, as uprobe_multi programs if `multi`.
  Status LoadPrograms(bool multi);
  // The two ways to put every probe on `lib` for `pid` (-1: every process that maps it): a
  // few uprobe_multi links per library, or two perf-event uprobes per function (kernels
  // before 6.6). Both add their links to `links` and return how many functions are probed.
  size_t AttachMulti(int pid, const MappedLibrary& lib, std::string* first_error,
                     std::vector<ProbeLink>* links);
  size_t AttachEach(int pid, const MappedLibrary& lib, std::string* first_error,
                    std::vector<ProbeLink>* links);

  struct SkeletonDeleter {
    void operator()(::ze_probes* skel) const;
  };
  // Says once per loader file which entry points it does not export.
  void SayMissing(const MappedLibrary& lib, const std::string& missing);

  SourceContext ctx_;
  bool multi_ = false;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, bool> said_missing_;  // (dev, inode)
  std::unique_ptr<::ze_probes, SkeletonDeleter> skel_;
};

}  // namespace xtrace
