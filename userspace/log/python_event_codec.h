// Model <-> Cap'n Proto translation of Python stacks (model/python_event.h); the general
// codec (event_codec.h) hands this kind over. Internal to the log library.
#pragma once

#include "log/xtrace_log.capnp.h"
#include "model/event.h"

namespace xtrace::log_codec {

void EncodePythonStack(const PythonStack& e, uint64_t base_ns,
                       log_schema::Event::PythonStack::Builder out);
PythonStack DecodePythonStack(log_schema::Event::PythonStack::Reader in, uint64_t base_ns);

}  // namespace xtrace::log_codec
