// Model <-> Cap'n Proto translation of the Level Zero events of model/ze_events.h; the general
// codec (event_codec.h) hands these kinds over. Internal to the log library.
#pragma once

#include <cstdint>

#include "log/xtrace_log.capnp.h"
#include "model/event.h"

namespace xtrace::log_codec {

// The event's start time, for the batch base; false for events without a time.
bool ZeEventStart(const Event& event, uint64_t* start_ns);

// False if `event` is not one of the Level Zero kinds.
bool EncodeZeEvent(const Event& event, uint64_t base_ns, log_schema::Event::Builder out);

// False if `in` is not one of the Level Zero kinds (or is one this build does not know).
bool DecodeZeEvent(log_schema::Event::Reader in, uint64_t base_ns, Event* out);

}  // namespace xtrace::log_codec
