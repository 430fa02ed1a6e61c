// A test-side reader of Perfetto protobuf traces, written from the wire format and the field
// numbers of Perfetto's published perfetto_trace.proto. It shares no code with the writer
// (userspace/export/perfetto_writer.cc): tests check the writer against an independent reading
// of the bytes. It resolves interned names per packet sequence as a consumer must (cleared by
// sequence_flags 1, needed by 2), pairs slice begins and ends per track in time order, and
// records every violation it sees in `errors`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace::test_util {

class PerfettoTraceReader {
 public:
  struct Track {
    uint64_t uuid = 0;
    uint64_t parent = 0;
    std::string name;  // TrackDescriptor.name, or the process/thread name
    std::optional<int64_t> pid, tid;
    bool is_process = false, is_thread = false, is_counter = false;
    uint64_t merge_behavior = 0;
    std::vector<std::string> cmdline, labels;
  };
  struct Event {
    uint64_t ts = 0;
    uint64_t type = 0;  // 1 begin, 2 end, 3 instant, 4 counter
    uint64_t track = 0;
    std::string name;
    std::vector<std::string> categories;
    std::map<std::string, std::string> args;  // value as text: numbers decimal, pointers 0x
    std::vector<uint64_t> flow_ids, terminating_flow_ids;
    int64_t counter_value = 0;
    size_t order = 0;  // position in the file
  };
  // A begin paired with its end on one track.
  struct Slice {
    uint64_t track = 0;
    uint64_t start = 0, end = 0;
    std::string name;
    std::vector<std::string> categories;
    std::map<std::string, std::string> args;
    std::vector<uint64_t> flow_ids, terminating_flow_ids;
    int depth = 0;
  };

  explicit PerfettoTraceReader(std::string_view bytes) {
    for (const Field& f : Fields(bytes, "Trace")) {
      if (f.number != 1 || f.wire != 2) {
        Error("Trace: field " + std::to_string(f.number) + " is not a packet");
        continue;
      }
      ReadPacket(f.bytes);
    }
    PairSlices();
  }

  std::map<uint64_t, Track> tracks;
  std::vector<Event> events;
  std::vector<Slice> slices;  // in start order
  std::vector<std::string> errors;
  std::map<uint64_t, uint64_t> clocks;  // clock id -> timestamp, from the clock snapshots
  uint64_t primary_clock = 0;
  uint64_t default_clock = 0;  // TracePacketDefaults.timestamp_clock_id
  uint64_t state_clears = 0;
  std::vector<std::map<std::string, std::string>> capture_facts;  // "xtrace capture" args

  // The track named `name` (first match) or null.
  const Track* FindTrack(std::string_view name) const {
    for (const auto& [uuid, t] : tracks)
      if (t.name == name) return &t;
    return nullptr;
  }
  std::vector<const Slice*> SlicesNamed(std::string_view name) const {
    std::vector<const Slice*> out;
    for (const Slice& s : slices)
      if (s.name == name) out.push_back(&s);
    return out;
  }
  // The process or device track tree root above `uuid`.
  uint64_t Root(uint64_t uuid) const {
    auto it = tracks.find(uuid);
    if (it == tracks.end()) return uuid;
    if (it->second.is_thread && it->second.pid) {
      for (const auto& [u, t] : tracks)
        if (t.is_process && t.pid == it->second.pid) return u;
    }
    return it->second.parent ? Root(it->second.parent) : uuid;
  }

 private:
  struct Field {
    uint32_t number = 0;
    uint32_t wire = 0;
    uint64_t value = 0;  // varint or fixed64
    std::string_view bytes;
  };

  void Error(std::string message) { errors.push_back(std::move(message)); }

  static bool ReadVarint(std::string_view s, size_t* pos, uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(s[(*pos)++]);
      v |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false;
  }

  std::vector<Field> Fields(std::string_view s, const std::string& where) {
    std::vector<Field> out;
    size_t pos = 0;
    while (pos < s.size()) {
      uint64_t tag = 0;
      if (!ReadVarint(s, &pos, &tag)) return Error(where + ": bad tag"), out;
      Field f;
      f.number = static_cast<uint32_t>(tag >> 3);
      f.wire = static_cast<uint32_t>(tag & 7);
      if (f.wire == 0) {
        if (!ReadVarint(s, &pos, &f.value)) return Error(where + ": bad varint"), out;
      } else if (f.wire == 1) {
        if (s.size() - pos < 8) return Error(where + ": short fixed64"), out;
        for (int i = 7; i >= 0; --i) f.value = (f.value << 8) | static_cast<uint8_t>(s[pos + i]);
        pos += 8;
      } else if (f.wire == 2) {
        uint64_t len = 0;
        if (!ReadVarint(s, &pos, &len) || len > s.size() - pos)
          return Error(where + ": bad length"), out;
        f.bytes = s.substr(pos, len);
        pos += len;
      } else {
        return Error(where + ": wire type " + std::to_string(f.wire)), out;
      }
      out.push_back(f);
    }
    return out;
  }

  struct Sequence {
    bool started = false;
    std::map<std::pair<uint32_t, uint64_t>, std::string> interned;  // (table field, iid)
  };

  std::string Lookup(Sequence& seq, uint32_t table, uint64_t iid, bool needs_state) {
    if (!needs_state) Error("interned id used on a packet without SEQ_NEEDS_INCREMENTAL_STATE");
    auto it = seq.interned.find({table, iid});
    if (it == seq.interned.end()) {
      Error("unknown iid " + std::to_string(iid) + " in table " + std::to_string(table));
      return "?";
    }
    return it->second;
  }

  void ReadPacket(std::string_view bytes) {
    uint64_t ts = 0, seq_id = 0, flags = 0;
    std::string_view track_event, descriptor, interned, snapshot, defaults;
    for (const Field& f : Fields(bytes, "TracePacket")) {
      switch (f.number) {
        case 8: ts = f.value; break;
        case 10: seq_id = f.value; break;
        case 13: flags = f.value; break;
        case 11: track_event = f.bytes; break;
        case 60: descriptor = f.bytes; break;
        case 12: interned = f.bytes; break;
        case 6: snapshot = f.bytes; break;
        case 59: defaults = f.bytes; break;
        default: Error("TracePacket: unexpected field " + std::to_string(f.number));
      }
    }
    if (seq_id == 0) Error("packet without trusted_packet_sequence_id");
    Sequence& seq = sequences_[seq_id];
    if (flags & 1) {
      if (seq.started) ++state_clears;
      seq.started = true;
      seq.interned.clear();
    }
    if (!defaults.empty()) {
      for (const Field& f : Fields(defaults, "TracePacketDefaults"))
        if (f.number == 58) default_clock = f.value;
    }
    if (!interned.empty()) {
      if (!seq.started) Error("interned data before the sequence's state was cleared");
      for (const Field& entry : Fields(interned, "InternedData")) {
        uint64_t iid = 0;
        std::string text;
        for (const Field& f : Fields(entry.bytes, "interned entry")) {
          if (f.number == 1) iid = f.value;
          if (f.number == 2) text = std::string(f.bytes);
        }
        seq.interned[{entry.number, iid}] = text;
      }
    }
    if (!snapshot.empty()) ReadClockSnapshot(snapshot);
    if (!descriptor.empty()) ReadDescriptor(descriptor);
    if (!track_event.empty()) ReadEvent(seq, ts, (flags & 2) != 0, track_event);
  }

  void ReadClockSnapshot(std::string_view bytes) {
    for (const Field& f : Fields(bytes, "ClockSnapshot")) {
      if (f.number == 2) primary_clock = f.value;
      if (f.number != 1) continue;
      uint64_t id = 0, ts = 0;
      for (const Field& c : Fields(f.bytes, "Clock")) {
        if (c.number == 1) id = c.value;
        if (c.number == 2) ts = c.value;
      }
      clocks[id] = ts;
    }
  }

  void ReadDescriptor(std::string_view bytes) {
    Track t;
    for (const Field& f : Fields(bytes, "TrackDescriptor")) {
      switch (f.number) {
        case 1: t.uuid = f.value; break;
        case 5: t.parent = f.value; break;
        case 2: t.name = std::string(f.bytes); break;
        case 15: t.merge_behavior = f.value; break;
        case 8: t.is_counter = true; break;
        case 3:
          t.is_process = true;
          for (const Field& p : Fields(f.bytes, "ProcessDescriptor")) {
            if (p.number == 1) t.pid = static_cast<int32_t>(p.value);
            if (p.number == 6) t.name = std::string(p.bytes);
            if (p.number == 2) t.cmdline.emplace_back(p.bytes);
            if (p.number == 8) t.labels.emplace_back(p.bytes);
          }
          break;
        case 4:
          t.is_thread = true;
          for (const Field& p : Fields(f.bytes, "ThreadDescriptor")) {
            if (p.number == 1) t.pid = static_cast<int32_t>(p.value);
            if (p.number == 2) t.tid = static_cast<int64_t>(p.value);
            if (p.number == 5) t.name = std::string(p.bytes);
          }
          break;
        default: break;
      }
    }
    if (t.uuid == 0) Error("track descriptor without uuid");
    tracks[t.uuid] = t;
  }

  void ReadEvent(Sequence& seq, uint64_t ts, bool needs_state, std::string_view bytes) {
    Event e;
    e.ts = ts;
    e.order = events.size();
    for (const Field& f : Fields(bytes, "TrackEvent")) {
      switch (f.number) {
        case 9: e.type = f.value; break;
        case 11: e.track = f.value; break;
        case 10: e.name = Lookup(seq, 2, f.value, needs_state); break;
        case 23: e.name = std::string(f.bytes); break;
        case 3: e.categories.push_back(Lookup(seq, 1, f.value, needs_state)); break;
        case 30: e.counter_value = static_cast<int64_t>(f.value); break;
        case 47: e.flow_ids.push_back(f.value); break;
        case 48: e.terminating_flow_ids.push_back(f.value); break;
        case 4: ReadAnnotation(seq, needs_state, f.bytes, &e.args); break;
        default: Error("TrackEvent: unexpected field " + std::to_string(f.number));
      }
    }
    if (e.track != 0 && !tracks.count(e.track)) Error("event on undescribed track");
    events.push_back(std::move(e));
    if (events.back().name == "xtrace capture") capture_facts.push_back(events.back().args);
  }

  void ReadAnnotation(Sequence& seq, bool needs_state, std::string_view bytes,
                      std::map<std::string, std::string>* args) {
    std::string name, value;
    for (const Field& f : Fields(bytes, "DebugAnnotation")) {
      switch (f.number) {
        case 1: name = Lookup(seq, 3, f.value, needs_state); break;
        case 10: name = std::string(f.bytes); break;
        case 2: value = f.value ? "true" : "false"; break;
        case 3: value = std::to_string(f.value); break;
        case 4: value = std::to_string(static_cast<int64_t>(f.value)); break;
        case 6: value = std::string(f.bytes); break;
        case 17: value = Lookup(seq, 29, f.value, needs_state); break;
        case 7: {
          char hex[24];
          std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(f.value));
          value = hex;
          break;
        }
        default: Error("DebugAnnotation: unexpected field " + std::to_string(f.number));
      }
    }
    (*args)[name] = value;
  }

  // Orders events by time (file order among equal times, as trace processors sort) and pairs
  // begins with ends on each track's stack.
  void PairSlices() {
    std::vector<const Event*> sorted;
    for (const Event& e : events) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Event* a, const Event* b) { return a->ts < b->ts; });
    std::map<uint64_t, std::vector<size_t>> open;  // track -> indices into slices
    for (const Event* e : sorted) {
      if (e->type == 1) {
        Slice s;
        s.track = e->track;
        s.start = e->ts;
        s.name = e->name;
        s.categories = e->categories;
        s.args = e->args;
        s.flow_ids = e->flow_ids;
        s.terminating_flow_ids = e->terminating_flow_ids;
        s.depth = static_cast<int>(open[e->track].size());
        open[e->track].push_back(slices.size());
        slices.push_back(std::move(s));
      } else if (e->type == 2) {
        auto& stack = open[e->track];
        if (stack.empty()) {
          Error("slice end without a begin on track " + std::to_string(e->track));
          continue;
        }
        slices[stack.back()].end = e->ts;
        stack.pop_back();
      }
    }
    for (const auto& [track, stack] : open)
      if (!stack.empty()) Error("slice never ended on track " + std::to_string(track));
  }

  std::map<uint64_t, Sequence> sequences_;
};

}  // namespace xtrace::test_util
