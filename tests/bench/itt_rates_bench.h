// Section 3's rows on what the collector does with ITT tasks at a program's full rate: the
// fast path at 2M pairs/s with the collector held to one core (alone there, and sharing it),
// and oneDNN's tiny-primitive
// loop on two threads, untraced and attached in interleaved rounds.
#pragma once

#include <string>

#include "bench_context.h"

namespace xtrace::bench {

// `loaded`: the INTEL_LIBITTNOTIFY64=... entry naming the collector.
void IttOneCoreRow(BenchContext& ctx, const std::string& section, const std::string& loaded);
// The same rate with a nice-0 CPU hog on the collector's core: drops at the capture threads'
// default priority and, for contrast, at the hog's.
void IttSharedCoreRow(BenchContext& ctx, const std::string& section, const std::string& loaded);
void DnnlTinyLoopRow(BenchContext& ctx, const std::string& section, const std::string& loaded);

}  // namespace xtrace::bench
