// Checks that a Perfetto protobuf trace says what the Chrome JSON of the same log says: every
// span with its track, name, category, times and arguments, every flow arrow with its two ends
// in order, every counter sample. Used by the converter's unit tests and by the integration
// tests on real captures; returns the differences (empty: the same timeline).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "perfetto_trace_reader.h"

namespace xtrace::test_util {

// JSON times are µs with three decimals: back to integer ns.
inline uint64_t JsonNs(const nlohmann::json& v) {
  return static_cast<uint64_t>(std::llround(v.get<double>() * 1000.0));
}

inline std::string JsonArgText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return v.dump();
}

inline std::vector<std::string> CompareJsonAndPerfetto(const nlohmann::json& json,
                                                       const PerfettoTraceReader& pf) {
  std::vector<std::string> diffs;
  // JSON track names: (pid) -> process name, (pid, tid) -> thread name.
  std::map<uint64_t, std::string> process_names;
  std::map<std::pair<uint64_t, uint64_t>, std::string> thread_names;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  // Does Perfetto track `uuid` stand for JSON's (pid, tid)?
  auto same_track = [&](uint64_t uuid, uint64_t pid, uint64_t tid) {
    auto it = pf.tracks.find(uuid);
    if (it == pf.tracks.end()) return false;
    const auto& t = it->second;
    if (t.is_thread) return t.pid == int64_t(pid) && t.tid == int64_t(tid);
    auto name = thread_names.find({pid, tid});
    const std::string expected = name != thread_names.end() ? name->second
                                                            : "track " + std::to_string(tid);
    if (t.name != expected) return false;
    auto parent = pf.tracks.find(t.parent);
    if (parent == pf.tracks.end()) return false;
    if (parent->second.is_process) return parent->second.pid == int64_t(pid);
    return process_names.count(pid) && parent->second.name == process_names[pid];
  };

  std::multimap<std::pair<std::string, uint64_t>, const PerfettoTraceReader::Slice*> slices;
  for (const auto& s : pf.slices) slices.emplace(std::make_pair(s.name, s.start), &s);

  std::map<std::pair<std::string, uint64_t>, std::vector<const nlohmann::json*>> flow_ends;
  for (const auto& e : json["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s" || ph == "f") flow_ends[{e["cat"], e["id"].get<uint64_t>()}].push_back(&e);
    if (ph == "C") {
      for (const auto& [key, value] : e["args"].items()) {
        const std::string track_name = e["name"].get<std::string>() + " (" + key + ")";
        const uint64_t ts = JsonNs(e["ts"]);
        bool found = false;
        for (const auto& pe : pf.events) {
          if (pe.type != 4 || pe.ts != ts || pf.tracks.at(pe.track).name != track_name) continue;
          found = found || std::to_string(pe.counter_value) == JsonArgText(value);
        }
        if (!found) diffs.push_back("counter " + track_name + " at " + std::to_string(ts));
      }
    }
    if (ph != "X") continue;
    const std::string name = e["name"];
    const uint64_t start = JsonNs(e["ts"]), end = start + JsonNs(e["dur"]);
    const PerfettoTraceReader::Slice* match = nullptr;
    auto [lo, hi] = slices.equal_range({name, start});
    for (auto it = lo; it != hi && !match; ++it) {
      if (it->second->end == end && same_track(it->second->track, e["pid"], e["tid"]))
        match = it->second;
    }
    if (!match) {
      diffs.push_back("no slice for " + e.dump());
      continue;
    }
    if (match->categories != std::vector<std::string>{e["cat"].get<std::string>()})
      diffs.push_back("category of " + name);
    if (e.contains("args")) {
      for (const auto& [key, value] : e["args"].items()) {
        auto arg = match->args.find(key);
        if (arg == match->args.end() || arg->second != JsonArgText(value))
          diffs.push_back(name + ": argument " + key + " differs");
      }
    }
  }

  // Each JSON arrow (cat and id name it, as JSON readers key flows): its start side carries a
  // Perfetto flow id in flow_ids, its end side the same id in terminating_flow_ids, each on the
  // span (or an instant inside the span) at that time and place.
  std::map<bool, std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>>> carriers;
  for (const auto& s : pf.slices) {
    for (uint64_t id : s.flow_ids) carriers[false].push_back({id, s.track, s.start, s.end});
    for (uint64_t id : s.terminating_flow_ids) carriers[true].push_back({id, s.track, s.start, s.end});
  }
  for (const auto& pe : pf.events) {
    if (pe.type != 3) continue;
    for (uint64_t id : pe.flow_ids) carriers[false].push_back({id, pe.track, pe.ts, pe.ts});
    for (uint64_t id : pe.terminating_flow_ids) carriers[true].push_back({id, pe.track, pe.ts, pe.ts});
  }
  auto ids_at = [&](const nlohmann::json& j) {
    std::set<uint64_t> ids;
    const uint64_t ts = JsonNs(j["ts"]);
    for (const auto& [id, track, start, end] : carriers[j["ph"] == "f"])
      if (start <= ts && ts <= end && same_track(track, j["pid"], j["tid"])) ids.insert(id);
    return ids;
  };
  for (const auto& [key, ends] : flow_ends) {
    std::set<uint64_t> common;
    bool first = true;
    for (const nlohmann::json* j : ends) {
      std::set<uint64_t> ids = ids_at(*j), kept;
      if (first) kept = ids;
      for (uint64_t id : ids)
        if (common.count(id)) kept.insert(id);
      common = kept;
      first = false;
    }
    if (common.empty()) diffs.push_back("flow " + key.first + " " + std::to_string(key.second));
  }
  return diffs;
}

}  // namespace xtrace::test_util
