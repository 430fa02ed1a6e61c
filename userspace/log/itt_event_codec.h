// Model <-> Cap'n Proto for the ITT events (IttTask, IttMarker, CollectionChange); used by
// event_codec.cc. Times are offsets from the batch base, as for every event.
#pragma once

#include <cstdint>

#include "log/xtrace_log.capnp.h"
#include "model/itt_event.h"

namespace xtrace::log_codec {

void EncodeIttTask(const IttTask& e, uint64_t base_ns, log_schema::Event::IttTask::Builder g);
IttTask DecodeIttTask(log_schema::Event::IttTask::Reader g, uint64_t base_ns);

void EncodeIttMarker(const IttMarker& e, uint64_t base_ns,
                     log_schema::Event::IttMarker::Builder g);
IttMarker DecodeIttMarker(log_schema::Event::IttMarker::Reader g, uint64_t base_ns);

void EncodeCollectionChange(const CollectionChange& e, uint64_t base_ns,
                            log_schema::Event::CollectionChange::Builder g);
CollectionChange DecodeCollectionChange(log_schema::Event::CollectionChange::Reader g,
                                        uint64_t base_ns);

}  // namespace xtrace::log_codec
