// Level Zero events as Chrome trace events; see ze_export.h.
#include "export/ze_export.h"

#include "model/ze_api.h"

namespace xtrace {
namespace {

constexpr std::string_view kZeCategory = "ze";

uint64_t Duration(uint64_t start_ns, uint64_t end_ns) {
  return end_ns >= start_ns ? end_ns - start_ns : 0;
}

}  // namespace

void ZeTraceExporter::Write(const ApiCall& e) {
  args_.clear();
  scratch_.clear();
  const ZeApiInfo* api = FindZeApi(e.fn);
  std::string_view name;
  if (api) {
    name = api->symbol;
    for (int i = 0; i < kApiCallArgs; ++i) {
      const ZeArgInfo& arg = api->args[i];
      if (!arg.name) continue;
      args_.push_back(arg.hex ? TraceArg::Hex(arg.name, e.arg[i]) : TraceArg::Uint(arg.name, e.arg[i]));
    }
  } else {
    // Written by a newer xtrace: keep the call visible with what it carries.
    name = scratch_.emplace_back("ze function " + std::to_string(e.fn));
    for (int i = 0; i < kApiCallArgs; ++i)
      args_.push_back(TraceArg::Hex(scratch_.emplace_back("arg" + std::to_string(i)), e.arg[i]));
  }
  if (e.result != 0) {
    args_.push_back(TraceArg::Int("result", e.result));
    const std::string_view result_name = ZeResultName(e.result);
    if (!result_name.empty()) args_.push_back(TraceArg::String("result_name", result_name));
  }
  if (e.args_unreadable) args_.push_back(TraceArg::Bool("args_unreadable", true));
  if (e.truncated) args_.push_back(TraceArg::Bool("truncated", true));
  out_.Complete(name, kZeCategory, e.pid, e.tid, e.start_ns, Duration(e.start_ns, e.end_ns), args_);
}

}  // namespace xtrace
