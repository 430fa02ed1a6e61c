// Level Zero event encoding for the log; see ze_event_codec.h.
#include "log/ze_event_codec.h"

namespace xtrace::log_codec {

bool ZeEventStart(const Event& event, uint64_t* start_ns) {
  if (const auto* e = std::get_if<ApiCall>(&event)) {
    *start_ns = e->start_ns;
    return true;
  }
  return false;
}

// Times are offsets from the batch base, wrapping mod 2^64 like the other kinds.
bool EncodeZeEvent(const Event& event, uint64_t base_ns, log_schema::Event::Builder out) {
  if (const auto* e = std::get_if<ApiCall>(&event)) {
    auto g = out.initApiCall();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setFunction(e->fn);
    g.setResult(e->result);
    g.setArg0(e->arg[0]);
    g.setArg1(e->arg[1]);
    g.setArg2(e->arg[2]);
    g.setArg3(e->arg[3]);
    g.setArg4(e->arg[4]);
    g.setArg5(e->arg[5]);
    g.setArgsUnreadable(e->args_unreadable);
    g.setTruncated(e->truncated);
    return true;
  }
  return false;
}

bool DecodeZeEvent(log_schema::Event::Reader in, uint64_t base_ns, Event* out) {
  switch (in.which()) {
    case log_schema::Event::API_CALL: {
      auto g = in.getApiCall();
      ApiCall e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.fn = g.getFunction();
      e.result = g.getResult();
      e.arg[0] = g.getArg0();
      e.arg[1] = g.getArg1();
      e.arg[2] = g.getArg2();
      e.arg[3] = g.getArg3();
      e.arg[4] = g.getArg4();
      e.arg[5] = g.getArg5();
      e.args_unreadable = g.getArgsUnreadable();
      e.truncated = g.getTruncated();
      *out = e;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace xtrace::log_codec
