// The DRM source: ioctl(2) calls with DRM commands made by traced processes, from fentry/fexit
// on the ioctl syscall (or the syscall tracepoints), plus — where the kernel has them — fence tracepoints that say when the work a
// submission handed to the driver completed. Needs no library in the target: a process is
// traced from the moment it is a target, whatever API (Level Zero, OpenCL, media) it uses.
#pragma once

#include <memory>
#include <vector>

#include "capture/bpf/bpf_link.h"
#include "capture/capture_options.h"
#include "capture/sources/probe_source.h"

struct drm_ioctl;  // generated skeletons (build/bpf/drm_*.skel.h)
struct drm_fence;

namespace xtrace {

class DrmSource final : public ProbeSource {
 public:
  static Result<std::unique_ptr<ProbeSource>> Load(const SourceContext& ctx);
  ~DrmSource() override;

  std::string_view name() const override { return "DRM ioctls"; }
  // The ioctl programs are attached once for every process; the traced-process filter, which
  // the capture fills before the command execs, selects the targets.
  bool needs_library() const override { return false; }
  size_t link_count() const override { return links_.size(); }
  // A line per DRM device, and what the probes could not see (drm_summary.h).
  SourceSummary Summary(const SourceSummaryInputs& in) const override;

 private:
  explicit DrmSource(const SourceContext& ctx) : ctx_(ctx) {}
  // Where the ioctl programs attach (see bpf/drm_ioctl.bpf.c): the hook asked for, or the
  // first of fentry, the ioctl trace events and the raw syscall tracepoints the kernel takes.
  Status LoadIoctlProbes();
  Status LoadIoctlObject(DrmHook hook);
  // Optional: every problem is said in one line and leaves the ioctl probes working.
  void LoadCompletionProbes();

  struct IoctlSkeletonDeleter {
    void operator()(::drm_ioctl* skel) const;
  };
  struct FenceSkeletonDeleter {
    void operator()(::drm_fence* skel) const;
  };

  SourceContext ctx_;
  std::unique_ptr<::drm_ioctl, IoctlSkeletonDeleter> ioctl_skel_;
  std::unique_ptr<::drm_fence, FenceSkeletonDeleter> fence_skel_;
  std::vector<BpfLink> links_;
};

}  // namespace xtrace
