// PerfettoWriter: see perfetto_writer.h.
#include "export/perfetto_writer.h"

#include <algorithm>
#include <cstring>

#include "export/proto_encoder.h"

namespace xtrace {
namespace {

// Whether `text` holds the bytes `interned` does. Inline and a word at a time: the intern
// cache asks it of every name and argument key of every event, mostly short literals, for
// which a call to memcmp costs more than the comparison.
inline bool SameText(const std::string& interned, std::string_view text) {
  const size_t n = text.size();
  if (interned.size() != n) return false;
  const char* a = interned.data();
  const char* b = text.data();
  if (n < 8) {
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  auto word = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  for (size_t i = 0; i + 8 < n; i += 8)
    if (word(a + i) != word(b + i)) return false;
  return word(a + n - 8) == word(b + n - 8);  // the last word, overlapping the one before
}

// Field numbers and enum values of Perfetto's perfetto_trace.proto (package perfetto.protos).
constexpr uint32_t kTracePacket = 1;  // Trace.packet

namespace packet {  // TracePacket
constexpr uint32_t kTimestamp = 8, kTrackEvent = 11, kTrackDescriptor = 60, kClockSnapshot = 6,
                   kSequenceId = 10, kInternedData = 12, kSequenceFlags = 13, kDefaults = 59;
constexpr uint32_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;  // sequence_flags
}  // namespace packet

constexpr uint32_t kDefaultsClockId = 58;  // TracePacketDefaults.timestamp_clock_id

namespace clock {  // ClockSnapshot, ClockSnapshot.Clock, BuiltinClock
constexpr uint32_t kClocks = 1, kPrimaryTraceClock = 2, kClockId = 1, kTimestamp = 2;
constexpr uint32_t kRealtime = 1, kMonotonic = 3, kMonotonicRaw = 5;
}  // namespace clock

namespace track {  // TrackDescriptor
constexpr uint32_t kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5,
                   kCounter = 8, kChildOrdering = 11, kSiblingOrderRank = 12,
                   kSiblingMergeBehavior = 15;
constexpr uint32_t kChildOrderingExplicit = 3, kSiblingMergeNone = 2;
}  // namespace track

namespace process {  // ProcessDescriptor
constexpr uint32_t kPid = 1, kCmdline = 2, kProcessName = 6, kLabels = 8;
}
namespace thread {  // ThreadDescriptor
constexpr uint32_t kPid = 1, kTid = 2, kThreadName = 5;
}

namespace event {  // TrackEvent
constexpr uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10,
                   kTrackUuid = 11, kCounterValue = 30, kFlowIds = 47, kTerminatingFlowIds = 48;
constexpr uint32_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;  // Type
}  // namespace event

namespace annotation {  // DebugAnnotation
constexpr uint32_t kNameIid = 1, kBool = 2, kUint = 3, kInt = 4, kString = 6, kPointer = 7,
                   kStringIid = 17;
}

namespace interned {  // InternedData, and its entries' {iid = 1, name or str = 2}
constexpr uint32_t kCategories = 1, kNames = 2, kArgNames = 3, kArgStrings = 29;
constexpr uint32_t kIid = 1, kText = 2;
}  // namespace interned

// Output is written in chunks of about this size.
constexpr size_t kFlushBytes = 256 * 1024;
// Argument strings up to this long are interned (states, device labels, call names recur);
// longer ones are written in place.
constexpr size_t kMaxInternedArgString = 128;

}  // namespace

PerfettoWriter::PerfettoWriter(OutputFile out, size_t max_interned)
    : out_(std::move(out)), max_interned_(max_interned) {
  buffer_.reserve(kFlushBytes + 64 * 1024);
}

Result<std::unique_ptr<PerfettoWriter>> PerfettoWriter::Create(const std::string& path) {
  Result<OutputFile> out = OutputFile::Create(path);
  if (!out.ok()) return out.status();
  return std::make_unique<PerfettoWriter>(std::move(*out));
}

PerfettoWriter::~PerfettoWriter() = default;

void PerfettoWriter::MaybeFlushBuffer() {
  if (buffer_.size() < kFlushBytes) return;
  out_.Write(buffer_);
  buffer_.clear();
}

void PerfettoWriter::EmitClockSnapshot() {
  ProtoEncoder enc(&buffer_);
  const size_t p = enc.BeginMessage(kTracePacket);
  const size_t snapshot = enc.BeginMessage(packet::kClockSnapshot);
  const std::pair<uint32_t, uint64_t> clocks[] = {{clock::kMonotonic, clocks_.monotonic_ns},
                                                  {clock::kMonotonicRaw, clocks_.monotonic_raw_ns},
                                                  {clock::kRealtime, clocks_.realtime_ns}};
  for (const auto& [id, ts] : clocks) {
    if (id != clock::kMonotonic && !have_clocks_) continue;
    const size_t c = enc.BeginMessage(clock::kClocks);
    enc.Varint(clock::kClockId, id);
    enc.Varint(clock::kTimestamp, ts);
    enc.EndMessage(c);
  }
  enc.Varint(clock::kPrimaryTraceClock, clock::kMonotonic);
  enc.EndMessage(snapshot);
  enc.Varint(packet::kSequenceId, kSequenceId);
  enc.EndMessage(p);
}

void PerfettoWriter::Clocks(const ClockAnchor& anchor) {
  clocks_ = anchor;
  have_clocks_ = true;
  if (sequence_started_) EmitClockSnapshot();
}

void PerfettoWriter::PrepareSequence() {
  const size_t interned = names_.size() + categories_.size() + arg_names_.size() +
                          arg_strings_.size() + recurring_.size();
  if (sequence_started_ && interned < max_interned_) return;
  if (!sequence_started_) {
    EmitClockSnapshot();
  } else {
    // Nothing held back may refer to the ids about to be forgotten.
    FlushPending();
    ++clears_;
  }
  sequence_started_ = true;
  names_.clear();
  categories_.clear();
  arg_names_.clear();
  arg_strings_.clear();
  recurring_.clear();
  std::fill(intern_cache_.begin(), intern_cache_.end(), InternCacheEntry{});
  next_iid_ = 1;
  ProtoEncoder enc(&buffer_);
  const size_t p = enc.BeginMessage(kTracePacket);
  enc.Varint(packet::kSequenceId, kSequenceId);
  enc.Varint(packet::kSequenceFlags, packet::kIncrementalStateCleared);
  const size_t defaults = enc.BeginMessage(packet::kDefaults);
  enc.Varint(kDefaultsClockId, clock::kMonotonic);
  enc.EndMessage(defaults);
  enc.EndMessage(p);
}

uint64_t PerfettoWriter::Intern(InternTable& table, uint32_t interned_field, std::string_view text) {
  const auto address = reinterpret_cast<uintptr_t>(text.data());
  InternCacheEntry& cached =
      intern_cache_[((address >> 3) ^ (reinterpret_cast<uintptr_t>(&table) >> 5)) % kInternCacheSize];
  if (cached.table == &table && cached.data == text.data() && SameText(*cached.text, text))
    return cached.iid;
  if (auto it = table.find(text); it != table.end()) {
    cached = {&table, text.data(), &it->first, it->second};
    return it->second;
  }
  const uint64_t iid = next_iid_++;
  auto added = table.emplace(std::string(text), iid).first;
  cached = {&table, text.data(), &added->first, iid};
  ProtoEncoder enc(&interned_);
  const size_t entry = enc.BeginMessage(interned_field);
  enc.Varint(interned::kIid, iid);
  enc.Text(interned::kText, text);
  enc.EndMessage(entry);
  return iid;
}

void PerfettoWriter::EmitInterned() {
  if (interned_.empty()) return;
  ProtoEncoder enc(&buffer_);
  const size_t p = enc.BeginMessage(kTracePacket);
  enc.Varint(packet::kSequenceId, kSequenceId);
  enc.Varint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
  enc.Bytes(packet::kInternedData, interned_);
  enc.EndMessage(p);
  interned_.clear();
}

void PerfettoWriter::EmitTrackDescriptor(std::string_view body) {
  if (!sequence_started_) PrepareSequence();  // the sequence's first packet clears its state
  ProtoEncoder enc(&buffer_);
  const size_t p = enc.BeginMessage(kTracePacket);
  enc.Bytes(packet::kTrackDescriptor, body);
  enc.Varint(packet::kSequenceId, kSequenceId);
  enc.EndMessage(p);
}

void PerfettoWriter::DescribeProcess(uint32_t pid, Track& t, std::span<const TraceArg> args) {
  scratch_.clear();
  ProtoEncoder enc(&scratch_);
  enc.Varint(track::kUuid, t.uuid);
  if (IsDevice(pid)) {
    // Not a process: a track tree of its own, its engines in the order they are numbered.
    enc.Text(track::kName, t.name.empty() ? std::string_view("GPU") : std::string_view(t.name));
    enc.Varint(track::kChildOrdering, track::kChildOrderingExplicit);
    enc.Varint(track::kSiblingMergeBehavior, track::kSiblingMergeNone);
  } else {
    const size_t d = enc.BeginMessage(track::kProcess);
    enc.Int(process::kPid, pid);
    if (!t.name.empty()) enc.Text(process::kProcessName, t.name);
    for (const TraceArg& arg : args) {
      if (arg.kind != TraceArg::Kind::kString) continue;
      if (arg.key == "command_line") {
        enc.Text(process::kCmdline, arg.string_value);
      } else {
        std::string label(arg.key);
        label += '=';
        label += arg.string_value;
        enc.Text(process::kLabels, label);
      }
    }
    enc.EndMessage(d);
  }
  EmitTrackDescriptor(scratch_);
  t.described = true;
}

uint64_t PerfettoWriter::ProcessTrack(uint32_t pid) {
  Track& t = processes_[pid];
  if (t.uuid == 0) t.uuid = next_uuid_++;
  if (!t.described) DescribeProcess(pid, t, {});
  return t.uuid;
}

void PerfettoWriter::DescribeThread(uint32_t pid, uint32_t tid, Track& t) {
  const uint64_t parent = ProcessTrack(pid);
  scratch_.clear();
  ProtoEncoder enc(&scratch_);
  enc.Varint(track::kUuid, t.uuid);
  if (IsDevice(pid) || tid >= kFirstSyntheticTid) {
    enc.Varint(track::kParentUuid, parent);
    enc.Text(track::kName, t.name.empty() ? "track " + std::to_string(tid) : t.name);
    enc.Int(track::kSiblingOrderRank, static_cast<int32_t>(tid & 0x7fffffff));
    enc.Varint(track::kSiblingMergeBehavior, track::kSiblingMergeNone);
  } else {
    const size_t d = enc.BeginMessage(track::kThread);
    enc.Int(thread::kPid, pid);
    enc.Int(thread::kTid, tid);
    if (!t.name.empty()) enc.Text(thread::kThreadName, t.name);
    enc.EndMessage(d);
  }
  EmitTrackDescriptor(scratch_);
  t.described = true;
}

uint64_t PerfettoWriter::ThreadTrack(uint32_t pid, uint32_t tid) {
  Track& t = threads_[{pid, tid}];
  if (t.uuid == 0) t.uuid = next_uuid_++;
  if (!t.described) DescribeThread(pid, tid, t);
  return t.uuid;
}

uint64_t PerfettoWriter::CounterTrack(uint32_t pid, std::string_view name) {
  auto [it, added] = counters_.try_emplace({pid, std::string(name)}, 0);
  if (!added) return it->second;
  it->second = next_uuid_++;
  const uint64_t parent = ProcessTrack(pid);
  scratch_.clear();
  ProtoEncoder enc(&scratch_);
  enc.Varint(track::kUuid, it->second);
  enc.Varint(track::kParentUuid, parent);
  enc.Text(track::kName, name);
  enc.Bytes(track::kCounter, {});  // an empty CounterDescriptor: the track holds numbers
  EmitTrackDescriptor(scratch_);
  return it->second;
}

uint64_t PerfettoWriter::LaneTrack(uint32_t pid, std::string_view category, uint64_t start,
                                   uint64_t end) {
  Lanes& lanes = lanes_[{pid, std::string(category)}];
  const LanePacking::Placement place = lanes.packing.Place(start, end);
  if (!place.opened) return lanes.uuids[place.lane];
  const uint64_t uuid = next_uuid_++;
  lanes.uuids.push_back(uuid);
  const uint64_t parent = ProcessTrack(pid);
  scratch_.clear();
  ProtoEncoder enc(&scratch_);
  enc.Varint(track::kUuid, uuid);
  enc.Varint(track::kParentUuid, parent);
  std::string name(category);
  if (place.lane > 0) name += " " + std::to_string(place.lane + 1);
  enc.Text(track::kName, name);
  enc.Varint(track::kSiblingMergeBehavior, track::kSiblingMergeNone);
  EmitTrackDescriptor(scratch_);
  return uuid;
}

void PerfettoWriter::ProcessName(uint32_t pid, std::string_view name,
                                 std::span<const TraceArg> args) {
  FlushPending();
  Track& t = processes_[pid];
  if (t.uuid == 0) t.uuid = next_uuid_++;
  t.name = name;
  DescribeProcess(pid, t, args);
  MaybeFlushBuffer();
}

// Ordering among processes is the viewer's; a device's engines are ordered by their numbers.
void PerfettoWriter::ProcessSortIndex(uint32_t, int64_t) {}

void PerfettoWriter::ThreadName(uint32_t pid, uint32_t tid, std::string_view name) {
  FlushPending();
  Track& t = threads_[{pid, tid}];
  if (t.uuid == 0) t.uuid = next_uuid_++;
  t.name = name;
  DescribeThread(pid, tid, t);
  MaybeFlushBuffer();
}

void PerfettoWriter::EncodeArgs(std::span<const TraceArg> args) {
  ProtoEncoder enc(&event_);
  for (const TraceArg& arg : args) {
    const uint64_t key = Intern(arg_names_, interned::kArgNames, arg.key);
    const size_t a = enc.BeginMessage(event::kDebugAnnotations);
    enc.Varint(annotation::kNameIid, key);
    switch (arg.kind) {
      case TraceArg::Kind::kInt:
        enc.Int(annotation::kInt, arg.int_value);
        break;
      case TraceArg::Kind::kUint:
        enc.Varint(annotation::kUint, arg.uint_value);
        break;
      case TraceArg::Kind::kHex:
        enc.Varint(annotation::kPointer, arg.uint_value);
        break;
      case TraceArg::Kind::kBool:
        enc.Bool(annotation::kBool, arg.int_value != 0);
        break;
      case TraceArg::Kind::kString:
        if (arg.string_value.size() <= kMaxInternedArgString) {
          // Interning may append to interned_, never to event_: the encoder stays valid.
          enc.Varint(annotation::kStringIid,
                     Intern(arg_strings_, interned::kArgStrings, arg.string_value));
        } else {
          enc.Text(annotation::kString, arg.string_value);
        }
        break;
    }
    enc.EndMessage(a);
  }
}

void PerfettoWriter::EncodeEvent(uint32_t type, uint64_t track, uint64_t name_iid,
                                 std::string_view category, std::span<const TraceArg> args) {
  event_.clear();
  ProtoEncoder enc(&event_);
  enc.Varint(event::kType, type);
  enc.Varint(event::kTrackUuid, track);
  if (name_iid) enc.Varint(event::kNameIid, name_iid);
  if (!category.empty()) {
    enc.Varint(event::kCategoryIids, Intern(categories_, interned::kCategories, category));
  }
  EncodeArgs(args);
}

void PerfettoWriter::EmitEvent(uint64_t ts_ns) {
  EmitInterned();
  ProtoEncoder enc(&buffer_);
  const size_t p = enc.BeginMessage(kTracePacket);
  enc.Varint(packet::kTimestamp, ts_ns);
  enc.Varint(packet::kSequenceId, kSequenceId);
  enc.Varint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
  enc.Bytes(packet::kTrackEvent, event_);
  enc.EndMessage(p);
  if (first_ts_ == 0 || ts_ns < first_ts_) first_ts_ = ts_ns;
}

void PerfettoWriter::FlushPending() {
  if (!pending_.active) return;
  pending_.active = false;
  event_.swap(pending_.event);
  EmitEvent(pending_.start);
  event_.clear();
  ProtoEncoder enc(&event_);
  enc.Varint(event::kType, event::kSliceEnd);
  enc.Varint(event::kTrackUuid, pending_.track);
  EmitEvent(pending_.end);
  MaybeFlushBuffer();
}

void PerfettoWriter::BeginSlice(uint64_t track, uint64_t name_iid, std::string_view category,
                                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) {
  FlushPending();
  EncodeEvent(event::kSliceBegin, track, name_iid, category, args);
  EmitInterned();  // before the slice in the stream, whenever the slice is written
  pending_.active = true;
  pending_.track = track;
  pending_.start = ts_ns;
  pending_.end = ts_ns + dur_ns;
  pending_.event.swap(event_);
  ++events_;
}

void PerfettoWriter::Complete(std::string_view name, std::string_view category, uint32_t pid,
                              uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
                              std::span<const TraceArg> args) {
  PrepareSequence();
  const uint64_t track = ThreadTrack(pid, tid);
  BeginSlice(track, InternName(name), category, ts_ns, dur_ns, args);
}

void PerfettoWriter::Complete(RecurringName name, std::string_view category, uint32_t pid,
                              uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
                              std::span<const TraceArg> args) {
  PrepareSequence();
  const uint64_t track = ThreadTrack(pid, tid);
  uint64_t& iid = recurring_[name.key];
  if (iid == 0) iid = InternName(name.text);
  BeginSlice(track, iid, category, ts_ns, dur_ns, args);
}

void PerfettoWriter::AsyncSpan(std::string_view name, std::string_view category, uint32_t pid,
                               uint32_t, uint64_t, uint64_t ts_ns, uint64_t dur_ns,
                               std::span<const TraceArg> args) {
  PrepareSequence();
  FlushPending();
  const uint64_t track = LaneTrack(pid, category, ts_ns, ts_ns + dur_ns);
  BeginSlice(track, InternName(name), category, ts_ns, dur_ns, args);
}

void PerfettoWriter::Instant(std::string_view name, std::string_view category, uint32_t pid,
                             uint32_t tid, uint64_t ts_ns, InstantScope scope,
                             std::span<const TraceArg> args) {
  PrepareSequence();
  FlushPending();
  // The global scope goes on the trace-wide track (uuid 0), which needs no descriptor.
  const uint64_t track = scope == InstantScope::kThread    ? ThreadTrack(pid, tid)
                         : scope == InstantScope::kProcess ? ProcessTrack(pid)
                                                           : 0;
  EncodeEvent(event::kInstant, track, InternName(name), category, args);
  EmitEvent(ts_ns);
  ++events_;
  MaybeFlushBuffer();
}

void PerfettoWriter::Flow(FlowPhase phase, std::string_view name, std::string_view category,
                          uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id) {
  PrepareSequence();
  const uint64_t track = ThreadTrack(pid, tid);
  const uint32_t field = phase == FlowPhase::kStart ? event::kFlowIds : event::kTerminatingFlowIds;
  // JSON readers key a flow by category and id; Perfetto's ids are trace-wide.
  id ^= std::hash<std::string_view>{}(category) * 0x9E3779B97F4A7C15ull;
  if (pending_.active && pending_.track == track && ts_ns >= pending_.start &&
      ts_ns <= pending_.end) {
    ProtoEncoder(&pending_.event).Fixed64(field, id);
    return;
  }
  // Elsewhere: an instant at the point, which nests in the span around it. The held-back span
  // stays held back (its interned names are already out), so later ends can still reach it.
  EncodeEvent(event::kInstant, track, InternName(name), category, {});
  ProtoEncoder(&event_).Fixed64(field, id);
  EmitEvent(ts_ns);
  ++events_;
  MaybeFlushBuffer();
}

void PerfettoWriter::Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
                             std::span<const TraceArg> series) {
  PrepareSequence();
  FlushPending();
  for (const TraceArg& s : series) {
    int64_t value = 0;
    switch (s.kind) {
      case TraceArg::Kind::kInt:
      case TraceArg::Kind::kBool:
        value = s.int_value;
        break;
      case TraceArg::Kind::kUint:
      case TraceArg::Kind::kHex:
        value = static_cast<int64_t>(s.uint_value);
        break;
      case TraceArg::Kind::kString:
        continue;
    }
    std::string track_name(name);
    if (series.size() > 1 || s.key != name) track_name += " (" + std::string(s.key) + ")";
    const uint64_t track = CounterTrack(pid, track_name);
    event_.clear();
    ProtoEncoder enc(&event_);
    enc.Varint(event::kType, event::kCounter);
    enc.Varint(event::kTrackUuid, track);
    enc.Int(event::kCounterValue, value);
    EmitEvent(ts_ns);
    ++events_;
  }
  MaybeFlushBuffer();
}

Status PerfettoWriter::Finish(std::span<const TraceArg> other_data) {
  if (finished_) return finish_status_;
  finished_ = true;
  PrepareSequence();
  FlushPending();
  if (capture_track_ == 0) {
    capture_track_ = next_uuid_++;
    scratch_.clear();
    ProtoEncoder enc(&scratch_);
    enc.Varint(track::kUuid, capture_track_);
    enc.Text(track::kName, "xtrace capture");
    EmitTrackDescriptor(scratch_);
  }
  EncodeEvent(event::kInstant, capture_track_, InternName("xtrace capture"), "xtrace", other_data);
  const uint64_t start = have_clocks_ && clocks_.monotonic_ns ? clocks_.monotonic_ns : first_ts_;
  EmitEvent(start);
  out_.Write(buffer_);
  buffer_.clear();
  finish_status_ = out_.Close();
  return finish_status_;
}

}  // namespace xtrace
