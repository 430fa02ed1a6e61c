// Model <-> Cap'n Proto translation of the kernel-driver (DRM) events, kept apart from the
// other event kinds' codec because of its size. Internal to the log library.
#pragma once

#include <cstdint>

#include "log/xtrace_log.capnp.h"
#include "model/event.h"

namespace xtrace::log_codec {

void EncodeDrmFile(const DrmFile& e, log_schema::Event::Builder out);
void EncodeDrmIoctl(const DrmIoctl& e, uint64_t base_ns, log_schema::Event::Builder out);
void EncodeDrmFenceSignal(const DrmFenceSignal& e, uint64_t base_ns,
                          log_schema::Event::Builder out);

// Decodes `in` if it is a DRM event; false otherwise.
bool DecodeDrmEvent(log_schema::Event::Reader in, uint64_t base_ns, Event* out);

}  // namespace xtrace::log_codec
