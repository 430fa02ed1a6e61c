// A probe source: one family of BPF probes (Level Zero loader, ITT, DRM ioctls, ...) that the
// capture loop drives without knowing what it probes. Each source owns its BPF object and
// links (RAII) and writes into the shared maps; adding a source means adding a class and one
// line in probe_sources.cc, not editing the capture loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "capture/capture_maps.h"
#include "capture/proc_maps.h"

namespace xtrace {

struct CaptureOptions;

// What a source is given when it loads.
struct SourceContext {
  CaptureMaps& maps;
  const CaptureOptions& options;
  std::function<void(const std::string&)> say;  // one progress line on stderr (unless quiet)
};

class ProbeSource {
 public:
  virtual ~ProbeSource() = default;

  // Short name for messages ("Level Zero").
  virtual std::string_view name() const = 0;

  // What a process must load for this source to trace it, for "pid N has not loaded ..."
  // messages, e.g. "Level Zero (libze_loader.so*)". Empty for sources that need nothing.
  virtual std::string_view waits_for() const = 0;

  // The command of `record` is held before exec: attach where its libraries will be, so its
  // first calls are captured. Returns true if something was attached.
  virtual bool BeforeExec(uint32_t pid) {
    (void)pid;
    return false;
  }

  // Called on every scan of a traced process's memory map with every file it maps; attaches
  // whatever is new (idempotent). Returns true while the process has a probe of this source.
  virtual bool OnProcessMaps(uint32_t pid, const std::vector<MappedLibrary>& files) = 0;

  // The process is gone: release what was attached for it alone.
  virtual void OnProcessExit(uint32_t pid) { (void)pid; }

  // Links currently held (for leak checks and verbose output).
  virtual size_t link_count() const = 0;
};

// Every source this build knows, loaded; a source that cannot load on this kernel says why
// in one line and is left out. Fails only if none loads.
Result<std::vector<std::unique_ptr<ProbeSource>>> LoadProbeSources(const SourceContext& ctx);

}  // namespace xtrace
