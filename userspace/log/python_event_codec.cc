// Python stack encoding for the log; see python_event_codec.h.
#include "log/python_event_codec.h"

namespace xtrace::log_codec {

void EncodePythonStack(const PythonStack& e, uint64_t base_ns,
                       log_schema::Event::PythonStack::Builder out) {
  out.setPid(e.pid);
  out.setTid(e.tid);
  out.setStartOffsetNs(e.start_ns - base_ns);
  out.setDurationNs(e.end_ns - e.start_ns);
  out.setTruncated(e.truncated);
  auto frames = out.initFrames(static_cast<unsigned>(e.frames.size()));
  for (size_t i = 0; i < e.frames.size(); ++i) {
    frames[i].setFile(e.frames[i].file);
    frames[i].setFunction(e.frames[i].function);
    frames[i].setLine(e.frames[i].line);
  }
}

PythonStack DecodePythonStack(log_schema::Event::PythonStack::Reader in, uint64_t base_ns) {
  PythonStack e;
  e.pid = in.getPid();
  e.tid = in.getTid();
  e.start_ns = base_ns + in.getStartOffsetNs();
  e.end_ns = e.start_ns + in.getDurationNs();
  e.truncated = in.getTruncated();
  for (auto f : in.getFrames()) e.frames.push_back({f.getFile(), f.getFunction(), f.getLine()});
  return e;
}

}  // namespace xtrace::log_codec
