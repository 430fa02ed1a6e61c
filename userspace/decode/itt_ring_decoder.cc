// The rules every byte read from a target's ITT fast path must pass (itt_ring_decoder.h).
#include "decode/itt_ring_decoder.h"

#include "base/hex.h"

#include <bit>
#include <cstring>

#include "xtrace/records.h"

namespace xtrace {
namespace {

// A ring larger than this is not one the collector made (it uses XT_ITT_RING_BYTES).
constexpr uint64_t kMaxRingBytes = 64u << 20;

// Which fields the collector writes for each op (a hostile or corrupt ring may claim others).
bool FieldsAllowed(uint32_t op, uint32_t fields) {
  const uint32_t common = XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME | XT_ITT_RF_ID | XT_ITT_RF_EXTRA;
  switch (op) {
    case XT_ITT_TASK_BEGIN:
    case XT_ITT_TASK_BEGIN_FN:
    case XT_ITT_TASK_END:
    case XT_ITT_TASK_BEGIN_OVERLAPPED:
    case XT_ITT_TASK_END_OVERLAPPED:
    case XT_ITT_REGION_BEGIN:
    case XT_ITT_REGION_END:
    case XT_ITT_FRAME_BEGIN:
    case XT_ITT_FRAME_END:
    case XT_ITT_MARKER:
      return (fields & ~common) == 0;
    case XT_ITT_THREAD_NAME:
      return (fields & ~XT_ITT_RF_TEXT) == 0;
    default:
      return false;  // pause/resume/detach go through the probe site; anything else is unknown
  }
}

}  // namespace

Status ValidateIttControl(const xt_itt_control& c, uint64_t address) {
  if (c.magic != XT_ITT_CONTROL_MAGIC)
    return Status::Error("no ITT control block at " + Hex(address) + " (magic " + Hex(c.magic) + ")");
  if (c.version != XT_ITT_LAYOUT_VERSION)
    return Status::Error("ITT control block layout " + std::to_string(c.version) + ", xtrace reads " +
                         std::to_string(XT_ITT_LAYOUT_VERSION));
  if (c.self != address)
    return Status::Error("ITT control block at " + Hex(address) + " says it is at " + Hex(c.self));
  if (c.max_rings != XT_ITT_MAX_RINGS)
    return Status::Error("ITT control block has " + std::to_string(c.max_rings) + " ring slots, not " +
                         std::to_string(XT_ITT_MAX_RINGS));
  return Status::Ok();
}

uint32_t IttRingCount(const xt_itt_control& c) {
  return c.ring_count < XT_ITT_MAX_RINGS ? c.ring_count : XT_ITT_MAX_RINGS;
}

Status ValidateIttRing(const xt_itt_ring& r, uint64_t address) {
  if (r.magic != XT_ITT_RING_MAGIC)
    return Status::Error("no ITT ring at " + Hex(address) + " (magic " + Hex(r.magic) + ")");
  if (r.data_bytes < 64 || r.data_bytes > kMaxRingBytes || !std::has_single_bit(r.data_bytes))
    return Status::Error("ITT ring at " + Hex(address) + " claims " + std::to_string(r.data_bytes) +
                         " data bytes");
  return Status::Ok();
}

Result<uint64_t> IttRingPending(const xt_itt_ring& r, uint64_t read_pos) {
  const uint64_t pending = r.write_pos - read_pos;
  if (r.write_pos < read_pos || pending > r.data_bytes)
    return Status::Error("ITT ring write position " + std::to_string(r.write_pos) +
                         " is not within one ring of the read position " + std::to_string(read_pos));
  return pending;
}

IttRingDecodeStats DecodeIttRingRecords(std::span<const std::byte> bytes,
                                        const std::function<void(const IttRingRecord&)>& out) {
  IttRingDecodeStats stats;
  size_t at = 0;
  auto fail = [&](const std::string& why) {
    stats.malformed = 1;
    stats.first_error = "ITT ring record at byte " + std::to_string(at) + ": " + why;
    return stats;
  };
  while (at < bytes.size()) {
    const size_t left = bytes.size() - at;
    if (left < sizeof(xt_itt_ring_record)) return fail("truncated header");
    xt_itt_ring_record head;
    std::memcpy(&head, bytes.data() + at, sizeof(head));
    if (head.size < sizeof(head) || head.size % 8 != 0 || head.size > XT_ITT_RING_MAX_RECORD)
      return fail("size " + std::to_string(head.size));
    if (head.size > left) return fail("size " + std::to_string(head.size) + " past the written bytes");
    if (!FieldsAllowed(head.op, head.fields))
      return fail("op " + std::to_string(head.op) + " with fields " + Hex(head.fields));
    if (head.tid == 0) return fail("thread id 0");
    IttRingRecord rec;
    rec.op = head.op;
    rec.tid = head.tid;
    rec.time = head.time;
    const std::byte* p = bytes.data() + at + sizeof(head);
    const std::byte* end = bytes.data() + at + head.size;
    auto word = [&p, end](uint64_t* v) {
      if (end - p < 8) return false;
      std::memcpy(v, p, 8);
      p += 8;
      return true;
    };
    bool ok = true;
    if (head.fields & XT_ITT_RF_DOMAIN) ok = ok && word(&rec.domain);
    if (head.fields & XT_ITT_RF_NAME) ok = ok && word(&rec.name);
    if (head.fields & XT_ITT_RF_ID) ok = ok && word(&rec.id[0]) && word(&rec.id[1]);
    if (head.fields & XT_ITT_RF_EXTRA) ok = ok && word(&rec.extra);
    uint64_t text_len = 0;
    if (head.fields & XT_ITT_RF_TEXT) ok = ok && word(&text_len);
    if (!ok) return fail("size " + std::to_string(head.size) + " too small for its fields");
    if (text_len > XT_ITT_RING_MAX_TEXT) return fail("text of " + std::to_string(text_len) + " bytes");
    const uint64_t padded = (text_len + 7) & ~uint64_t{7};
    if (static_cast<uint64_t>(end - p) != padded)
      return fail("size " + std::to_string(head.size) + " does not match its fields");
    rec.text = std::string_view(reinterpret_cast<const char*>(p), text_len);
    out(rec);
    ++stats.records;
    at += head.size;
    stats.bytes = at;
  }
  return stats;
}

uint64_t FuzzIttRingBytes(std::span<const std::byte> bytes) {
  auto take = [&bytes]<typename T>(T* value) {
    if (bytes.size() < sizeof(T)) return false;
    std::memcpy(value, bytes.data(), sizeof(T));
    bytes = bytes.subspan(sizeof(T));
    return true;
  };
  xt_itt_control control;
  if (take(&control) && ValidateIttControl(control, control.self).ok()) (void)IttRingCount(control);
  xt_itt_ring ring;
  if (!take(&ring)) return 0;
  if (!ValidateIttRing(ring, 0).ok()) return 0;
  auto pending = IttRingPending(ring, ring.read_pos);
  if (!pending.ok()) return 0;
  const auto data = bytes.subspan(0, std::min<uint64_t>(*pending, bytes.size()));
  uint64_t text_bytes = 0;
  const IttRingDecodeStats stats =
      DecodeIttRingRecords(data, [&](const IttRingRecord& r) { text_bytes += r.text.size(); });
  return stats.records + (text_bytes > bytes.size() ? 1 : 0);
}

}  // namespace xtrace
