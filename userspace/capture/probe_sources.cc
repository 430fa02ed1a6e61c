// The registry of probe sources: each capture loads every source this build knows.
#include "capture/itt_source.h"
#include "capture/probe_source.h"
#include "capture/ze_source.h"

namespace xtrace {

Result<std::vector<std::unique_ptr<ProbeSource>>> LoadProbeSources(const SourceContext& ctx) {
  using Loader = Result<std::unique_ptr<ProbeSource>> (*)(const SourceContext&);
  static constexpr Loader kLoaders[] = {
      &ZeSource::Load,
      &IttSource::Load,
  };
  std::vector<std::unique_ptr<ProbeSource>> sources;
  std::string errors;
  for (Loader load : kLoaders) {
    auto source = load(ctx);
    if (!source.ok()) {
      ctx.say(source.status().message() + "; continuing without it");
      errors += (errors.empty() ? "" : "; ") + source.status().message();
      continue;
    }
    sources.push_back(std::move(*source));
  }
  if (sources.empty()) return Status::Error(errors);
  return sources;
}

}  // namespace xtrace
