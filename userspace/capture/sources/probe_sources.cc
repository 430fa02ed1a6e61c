// The registry of probe sources: each capture loads every source this build knows that its
// options select.
#include "capture/capture_options.h"
#include "capture/sources/drm_source.h"
#include "capture/sources/itt_source.h"
#include "capture/sources/probe_source.h"
#include "capture/sources/python_source.h"
#include "capture/sources/ze_source.h"

namespace xtrace {

Result<std::vector<std::unique_ptr<ProbeSource>>> LoadProbeSources(const SourceContext& ctx) {
  using Loader = Result<std::unique_ptr<ProbeSource>> (*)(const SourceContext&);
  struct Entry {
    Loader load;
    bool kernel_driver;  // the DRM view, which --no-drm and --drm-only select
  };
  static constexpr Entry kEntries[] = {
      {&ZeSource::Load, false},
      {&IttSource::Load, false},
      {&DrmSource::Load, true},
  };
  std::vector<std::unique_ptr<ProbeSource>> sources;
  // Made first: the others are told of its interpreter registry (with --python-frames the
  // ITT source keeps a Python process's calls on its probe site, where frames are read).
  std::unique_ptr<PythonSource> python = PythonSource::Load(ctx);
  SourceContext shared = ctx;
  if (python) shared.python = &python->interpreters();
  std::vector<std::string> failed;
  for (const Entry& entry : kEntries) {
    if (entry.kernel_driver ? ctx.options.drm == DrmCapture::kOff
                            : ctx.options.drm == DrmCapture::kOnly)
      continue;
    auto source = entry.load(shared);
    if (!source.ok()) {
      failed.push_back(source.status().message());
      continue;
    }
    sources.push_back(std::move(*source));
  }
  // With no source left the capture fails with the reasons, said once; otherwise it goes on
  // without the ones that failed.
  if (sources.empty()) {
    std::string errors;
    for (const std::string& why : failed) errors += (errors.empty() ? "" : "; ") + why;
    return Status::Error(errors);
  }
  for (const std::string& why : failed) ctx.say(why + "; continuing without it");
  // Not a source of records by itself: last, after the sources whose probes it rides on.
  if (python) sources.push_back(std::move(python));
  return sources;
}

}  // namespace xtrace
