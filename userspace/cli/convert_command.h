// `xtrace convert`: turns an event log into Chrome trace JSON for ui.perfetto.dev.
#pragma once

#include <cstdint>
#include <string>

#include "export/converter.h"

namespace xtrace {

// argv[0] is "convert". Returns the process exit status (see --help).
int RunConvertCommand(int argc, char** argv);

// What to do with a trace of `trace_bytes` (before compression) written to `output` in
// `format`, when it is likely too large to open in ui.perfetto.dev in a browser; empty when it
// is not.
std::string LargeTraceNote(TraceFormat format, uint64_t trace_bytes, const std::string& output);

// Where part `part` (from 1) of `parts` of a --split conversion goes: `output` with
// ".partNN" before its extension (and before .gz), numbered to the same width so that the
// parts sort in order: day.pftrace -> day.part01.pftrace; a name without an extension ends
// with it.
std::string PartPath(const std::string& output, size_t part, size_t parts);

}  // namespace xtrace
