// Attaching to, draining and detaching from one process's ITT fast path (itt_ring_reader.h).
#include "capture/sources/itt_ring_reader.h"

#include "base/hex.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

namespace xtrace {
namespace {

constexpr size_t kPage = 4096;

Status MemoryError(const char* what, uint32_t pid, uint64_t address, size_t size, ssize_t got) {
  const int err = errno;
  std::string why = got < 0 ? std::strerror(err) : "only " + std::to_string(got) + " bytes";
  return Status::Error(std::string(what) + " " + std::to_string(size) + " bytes at " + Hex(address) +
                       " of pid " + std::to_string(pid) + ": " + why);
}

template <typename T>
uint64_t FieldAddress(uint64_t base, T xt_itt_control::*field) {
  const xt_itt_control probe{};
  return base + static_cast<uint64_t>(reinterpret_cast<const char*>(&(probe.*field)) -
                                      reinterpret_cast<const char*>(&probe));
}

uint64_t NewGeneration() {
  std::random_device rd;
  uint64_t g = 0;
  while (g == 0) g = (uint64_t{rd()} << 32) | rd();
  return g;
}

}  // namespace

Status RemoteMemory::Read(uint64_t address, void* out, size_t size) const {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  const ssize_t n = process_vm_readv(static_cast<pid_t>(pid_), &local, 1, &remote, 1, 0);
  if (n != static_cast<ssize_t>(size)) return MemoryError("reading", pid_, address, size, n);
  return Status::Ok();
}

Status RemoteMemory::Write(uint64_t address, const void* data, size_t size) const {
  iovec local{const_cast<void*>(data), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  const ssize_t n = process_vm_writev(static_cast<pid_t>(pid_), &local, 1, &remote, 1, 0);
  if (n != static_cast<ssize_t>(size)) return MemoryError("writing", pid_, address, size, n);
  return Status::Ok();
}

Result<std::string> RemoteMemory::ReadString(uint64_t address, size_t max, bool* truncated) const {
  std::string text;
  *truncated = false;
  char chunk[kPage];
  while (text.size() < max) {
    const uint64_t at = address + text.size();
    const size_t want = std::min<size_t>({kPage - at % kPage, max - text.size(), sizeof(chunk)});
    if (Status st = Read(at, chunk, want); !st.ok()) return st;
    const void* nul = std::memchr(chunk, 0, want);
    if (nul) {
      text.append(chunk, static_cast<const char*>(nul) - chunk);
      return text;
    }
    text.append(chunk, want);
  }
  *truncated = true;
  return text;
}

Result<std::unique_ptr<IttRingReader>> IttRingReader::Attach(uint32_t pid, uint64_t control_address,
                                                             const Clock& clock, bool follow_only) {
  std::unique_ptr<IttRingReader> self(new IttRingReader(pid, control_address));
  self->control_ = std::make_unique<xt_itt_control>();
  xt_itt_control& c = *self->control_;
  const RemoteMemory& mem = self->memory_;
  if (Status st = mem.Read(control_address, &c, sizeof(c)); !st.ok()) return st;
  if (Status st = ValidateIttControl(c, control_address); !st.ok()) return st;
  if (c.refused) return Status::Error("the process opted out (XTRACE_ITT_FAST_PATH=0)");
  self->following_ = c.generation != 0 && c.clock == clock.kind &&
                     static_cast<int64_t>(clock.heartbeat - c.heartbeat) < static_cast<int64_t>(c.lease);
  if (self->following_) {
    // Another capture drains it: what its rings hold now is that capture's; from here on
    // both read the same records.
    self->StartAtWritePositions(false);
    return self;
  }
  if (follow_only) return Status::Error("no other capture drains its ITT rings");
  // Stop writers of an earlier (dead) capture first, then skip what its rings still hold.
  const uint64_t zero = 0;
  if (Status st = mem.Write(FieldAddress(control_address, &xt_itt_control::generation), &zero, 8);
      !st.ok())
    return st;
  if (Status st = mem.Read(control_address, &c, sizeof(c)); !st.ok()) return st;
  self->StartAtWritePositions(true);
  struct {
    uint64_t heartbeat, lease;
    uint32_t clock, ring_bytes_wanted;
  } __attribute__((packed)) timing{clock.heartbeat, clock.lease, clock.kind, clock.ring_bytes};
  if (Status st = mem.Write(FieldAddress(control_address, &xt_itt_control::heartbeat), &timing,
                            sizeof(timing));
      !st.ok())
    return st;
  self->generation_ = NewGeneration();
  if (Status st = mem.Write(FieldAddress(control_address, &xt_itt_control::generation),
                            &self->generation_, 8);
      !st.ok())
    return st;
  return self;
}

void IttRingReader::StartAtWritePositions(bool write_back) {
  const xt_itt_control& c = *control_;
  no_ring_dropped_seen_ = c.no_ring_dropped;
  at_attach_.dropped = c.no_ring_dropped;
  for (uint32_t i = 0; i < IttRingCount(c); ++i) {
    const uint64_t address = c.rings[i];
    if (!address) continue;
    xt_itt_ring ring;
    RingState& state = rings_[address];
    if (!memory_.Read(address, &ring, sizeof(ring)).ok() || !ValidateIttRing(ring, address).ok()) {
      state.bad = true;
      continue;
    }
    state.read_pos = state.committed = ring.write_pos;
    state.dropped_seen = ring.dropped;
    at_attach_.records += ring.records;
    at_attach_.dropped += ring.dropped;
    if (write_back) (void)memory_.Write(address + offsetof(xt_itt_ring, read_pos), &state.read_pos, 8);
  }
}

IttDrainStats IttRingReader::Drain(uint64_t heartbeat,
                                   const std::function<void(const IttRingRecord&)>& out) {
  IttDrainStats stats;
  auto malformed = [&stats](const std::string& why) {
    if (stats.malformed++ == 0) stats.first_error = why;
  };
  xt_itt_control& c = *control_;
  if (Status st = memory_.Read(control_address_, &c, sizeof(c)); !st.ok()) {
    stats.gone = true;
    stats.first_error = st.message();
    return stats;
  }
  if (Status st = ValidateIttControl(c, control_address_); !st.ok()) {
    stats.gone = true;  // nothing it says can be believed any more
    malformed(st.message());
    return stats;
  }
  if (following_) {
    // The capture followed let go (or its lease ran out): the calls go to the probe site now.
    // Another nonzero generation is another capture taking over: still followed.
    stats.lapsed = c.generation == 0;
  } else {
    stats.lapsed = c.generation != generation_;
    if (!stats.lapsed)
      (void)memory_.Write(FieldAddress(control_address_, &xt_itt_control::heartbeat), &heartbeat, 8);
  }
  if (c.no_ring_dropped > no_ring_dropped_seen_) stats.dropped += c.no_ring_dropped - no_ring_dropped_seen_;
  no_ring_dropped_seen_ = c.no_ring_dropped;

  for (uint32_t i = 0; i < IttRingCount(c); ++i) {
    const uint64_t address = c.rings[i];
    if (!address) continue;
    const bool known = rings_.count(address) != 0;
    RingState& state = rings_[address];
    if (state.bad) continue;
    xt_itt_ring ring;
    if (Status st = memory_.Read(address, &ring, sizeof(ring)); !st.ok()) {
      state.bad = true;
      malformed(st.message());
      continue;
    }
    if (Status st = ValidateIttRing(ring, address); !st.ok()) {
      state.bad = true;
      malformed(st.message());
      continue;
    }
    if (!known) {
      // New since the attach: it started empty. A follower starts where it started, unless
      // the capture it follows took so much of it already that its start is written over.
      state.read_pos = state.committed =
          !following_ ? ring.read_pos
                      : ring.write_pos + XT_ITT_RING_MAX_RECORD <= ring.data_bytes ? 0 : ring.write_pos;
      state.dropped_seen = 0;
    }
    if (ring.dropped > state.dropped_seen) stats.dropped += ring.dropped - state.dropped_seen;
    state.dropped_seen = ring.dropped;
    if (following_ && ring.write_pos > state.read_pos + ring.data_bytes) {
      state.read_pos = ring.write_pos;  // lapped while the capture followed freed the room
      ++stats.overrun;
      continue;
    }
    auto pending = IttRingPending(ring, state.read_pos);
    if (!pending.ok()) {
      malformed(pending.status().message());
      state.read_pos = ring.write_pos;  // start afresh from where it claims to be
      continue;
    }
    if (*pending == 0) continue;
    stats.fullest = std::max(stats.fullest, *pending);
    // The pending bytes, unwrapped: up to the end of the data area, then from its start.
    const uint64_t mask = ring.data_bytes - 1;
    const uint64_t first = state.read_pos & mask;
    const uint64_t head_len = std::min<uint64_t>(*pending, ring.data_bytes - first);
    // Kept from drain to drain: a ring's worth is not allocated (and faulted in) anew each time.
    if (buffer_bytes_ < *pending) {
      buffer_ = std::make_unique_for_overwrite<std::byte[]>(*pending);
      buffer_bytes_ = *pending;
    }
    const std::span<const std::byte> data(buffer_.get(), *pending);
    const uint64_t base = address + sizeof(xt_itt_ring);
    Status st = memory_.Read(base + first, buffer_.get(), head_len);
    if (st.ok() && head_len < *pending)
      st = memory_.Read(base, buffer_.get() + head_len, *pending - head_len);
    if (!st.ok()) {
      state.bad = true;
      malformed(st.message());
      continue;
    }
    if (following_ && Overrun(address, ring.data_bytes, state)) {
      ++stats.overrun;
      continue;
    }
    const IttRingDecodeStats decoded = DecodeIttRingRecords(data, out);
    stats.records += decoded.records;
    if (decoded.malformed) malformed(decoded.first_error);
    state.read_pos += *pending;  // a malformed tail is skipped: its framing is lost
  }
  return stats;
}

// A follower reads bytes the capture it follows may have taken already, so the writer may
// reuse them meanwhile. The writer publishes each record after writing it, so it wrote
// nowhere past the write position read after the copy, plus one record; that write lands
// data_bytes lower. What was copied from below that is not to be trusted: the follower skips
// to the write position (the records skipped are counted lost at the process's end).
bool IttRingReader::Overrun(uint64_t address, uint32_t data_bytes, RingState& state) {
  xt_itt_ring after;
  if (!memory_.Read(address, &after, sizeof(after)).ok()) return false;  // gone: decode what was copied
  if (state.read_pos + data_bytes >= after.write_pos + XT_ITT_RING_MAX_RECORD) return false;
  state.read_pos = after.write_pos;
  return true;
}

void IttRingReader::Commit() {
  if (following_) return;
  for (auto& [address, state] : rings_) {
    if (state.bad || state.read_pos == state.committed) continue;
    if (memory_.Write(address + offsetof(xt_itt_ring, read_pos), &state.read_pos, 8).ok())
      state.committed = state.read_pos;
  }
}

Result<IttRingTotals> IttRingReader::ReadTotals() const {
  xt_itt_control& c = *control_;
  if (Status st = memory_.Read(control_address_, &c, sizeof(c)); !st.ok()) return st;
  if (Status st = ValidateIttControl(c, control_address_); !st.ok()) return st;
  IttRingTotals totals{0, c.no_ring_dropped};
  for (uint32_t i = 0; i < IttRingCount(c); ++i) {
    if (!c.rings[i]) continue;
    xt_itt_ring ring;
    if (Status st = memory_.Read(c.rings[i], &ring, sizeof(ring)); !st.ok()) return st;
    totals.records += ring.records;
    totals.dropped += ring.dropped;
  }
  return totals;
}

void IttRingReader::Detach() {
  if (following_) return;  // the capture followed lets go itself
  uint64_t current = 0;
  const uint64_t at = FieldAddress(control_address_, &xt_itt_control::generation);
  if (!memory_.Read(at, &current, 8).ok() || current != generation_) return;
  const uint64_t zero = 0;
  (void)memory_.Write(at, &zero, 8);
}

}  // namespace xtrace
