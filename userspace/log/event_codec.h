// Translation between the model (model/event.h, model/log_header.h) and the log's Cap'n Proto
// form (xtrace_log.capnp). Internal to the log library: only the writer and reader use it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "log/xtrace_log.capnp.h"
#include "model/event.h"
#include "model/log_header.h"

namespace xtrace::log_codec {

// No time: the earliest start of events that carry none.
inline constexpr uint64_t kNoTime = ~uint64_t{0};

// Times in a batch are stored relative to the batch's earliest start (see Batch.baseNs): that
// of `events` or `others_earliest` (the earliest start of the batch's events kept apart from
// them, as the writer keeps its IttTasks), whichever is earlier. Returns 0 when neither
// carries a time.
uint64_t BatchBaseNs(std::span<const Event> events, uint64_t others_earliest = kNoTime);

// The latest start or end of the batch's spans and instants (Batch.endNs): the kinds
// IsWindowedKind accepts, in `events` or as `others_latest` says of the rest. 0 when there
// are none.
uint64_t BatchEndNs(std::span<const Event> events, uint64_t others_latest = 0);

// Kinds whose every time lies within [Batch.baseNs, Batch.endNs] — spans and instants — and
// that a windowed reader may therefore leave out of a batch outside its window. The other
// kinds (process, thread and device identities, counters, clock readings) carry state a
// reader needs whatever the window.
bool IsWindowedKind(log_schema::Event::Which kind);
// The same, of a model event (what the writer knows).
bool IsWindowedEvent(const Event& event);

// The handles a batch's events refer to by ref (Batch.handles): each distinct handle once,
// in order of first use. One per batch being written.
class HandleTable {
 public:
  // Refs are UInt16 in the schema: small enough to share a word with the union tag.
  static constexpr uint32_t kMaxRef = 0xffff;

  // The ref of `handle` (from 1), adding it if new; 0 for handle 0 (no handle), and for a
  // new handle once the table is full (the event then keeps it inline).
  uint32_t Ref(uint64_t handle);
  const std::vector<uint64_t>& handles() const { return handles_; }

 private:
  std::unordered_map<uint64_t, uint32_t> refs_;
  std::vector<uint64_t> handles_;
};

void EncodeEvent(const Event& event, uint64_t base_ns, HandleTable& handles,
                 log_schema::Event::Builder out);

enum class DecodeResult {
  kEvent,         // *out holds the event
  kUnknownKind,   // a kind this build does not know (written by a newer xtrace): skip it
  kBadHandleRef,  // a handle ref beyond the batch's table: the batch is corrupt
};

// `handles` is the batch's table (Batch.handles).
DecodeResult DecodeEvent(log_schema::Event::Reader in, uint64_t base_ns,
                         std::span<const uint64_t> handles, Event* out);

// Header.batchIndexAt's stored form: 7 bits a byte, each byte's high bit set, so that the word
// packs to the same length whatever the offset and can be written over in place. Offsets up
// to 2^56 - 1.
inline constexpr uint64_t kMaxBatchIndexAt = (uint64_t{1} << 56) - 1;
constexpr uint64_t EncodeBatchIndexAt(uint64_t offset) {
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= (0x80 | ((offset >> (7 * i)) & 0x7f)) << (8 * i);
  return stored;
}
// The offset, or 0 (no index) for a value not in that form (0: logs before the field).
constexpr uint64_t DecodeBatchIndexAt(uint64_t stored) {
  uint64_t offset = 0;
  for (int i = 0; i < 8; ++i) {
    const uint64_t byte = (stored >> (8 * i)) & 0xff;
    if ((byte & 0x80) == 0) return 0;
    offset |= (byte & 0x7f) << (7 * i);
  }
  return offset;
}

void EncodeHeader(const LogHeader& header, log_schema::Header::Builder out);
LogHeader DecodeHeader(log_schema::Header::Reader in);

void EncodeSummary(const LogSummary& summary, log_schema::Summary::Builder out);
LogSummary DecodeSummary(log_schema::Summary::Reader in);

// Calls `visit(id)` for every string id `event` refers to; writer and reader both check that
// each id is in the string table, so a bad id is caught where it is made or where it is read.
template <typename Visitor>
void ForEachStringId(const IttTask& task, Visitor&& visit) {
  visit(task.domain);
  visit(task.name);
}

template <typename Visitor>
void ForEachStringId(const Event& event, Visitor&& visit) {
  if (const auto* e = std::get_if<KernelLaunch>(&event)) {
    visit(e->kernel_name);
  } else if (const auto* e = std::get_if<KernelCreate>(&event)) {
    visit(e->name);
  } else if (const auto* e = std::get_if<ProcessInfo>(&event)) {
    visit(e->comm);
    visit(e->command_line);
    visit(e->cgroup);
    visit(e->container_id);
  } else if (const auto* e = std::get_if<ThreadInfo>(&event)) {
    visit(e->name);
  } else if (const auto* e = std::get_if<IttTask>(&event)) {
    ForEachStringId(*e, visit);
  } else if (const auto* e = std::get_if<IttMarker>(&event)) {
    visit(e->domain);
    visit(e->name);
  } else if (const auto* e = std::get_if<DrmFile>(&event)) {
    visit(e->path);
    visit(e->driver);
  } else if (const auto* e = std::get_if<DrmIoctl>(&event)) {
    visit(e->name);
    visit(e->cause);
  } else if (const auto* e = std::get_if<DrmFenceSignal>(&event)) {
    visit(e->source);
  } else if (const auto* e = std::get_if<DeviceOp>(&event)) {
    visit(e->name);
  } else if (const auto* e = std::get_if<DeviceInfo>(&event)) {
    visit(e->name);
  } else if (const auto* e = std::get_if<UnfinishedCall>(&event)) {
    visit(e->function);
  } else if (const auto* e = std::get_if<PythonStack>(&event)) {
    for (const PythonFrame& f : e->frames) {
      visit(f.file);
      visit(f.function);
    }
  }
}

}  // namespace xtrace::log_codec
