// Checks every output format of one capture must pass: no track holds slices a viewer would
// misdraw (two slices that overlap without one containing the other; on a device engine's
// track, any two that overlap at all, since operations on one engine never nest), the JSON
// follows the conventions PyTorch's analyzers read (kineto_checks.h), and the Perfetto trace
// reads back cleanly and says what the JSON says. Used by the integration tests
// on the captures they make.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kineto_checks.h"
#include "perfetto_trace_reader.h"
#include "trace_equivalence.h"

namespace xtrace::test_util {

struct TrackSlice {
  uint64_t start, end;
  std::string name;
};

// Slices of one track that a viewer cannot draw as they are. `device`: nesting is wrong too.
inline void FindOverlaps(const std::string& track, std::vector<TrackSlice> slices, bool device,
                         std::vector<std::string>* problems) {
  std::sort(slices.begin(), slices.end(), [](const TrackSlice& a, const TrackSlice& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<const TrackSlice*> open;  // enclosing slices, innermost last
  for (const TrackSlice& s : slices) {
    while (!open.empty() && open.back()->end <= s.start) open.pop_back();
    if (!open.empty()) {
      const TrackSlice& outer = *open.back();
      if (outer.end < s.end || device) {
        problems->push_back(track + ": \"" + s.name + "\" [" + std::to_string(s.start) + ", " +
                            std::to_string(s.end) + "] overlaps \"" + outer.name + "\" [" +
                            std::to_string(outer.start) + ", " + std::to_string(outer.end) + "]");
      }
    }
    open.push_back(&s);
  }
}

inline std::vector<std::string> TrackOverlaps(const nlohmann::json& json) {
  std::map<std::pair<uint64_t, uint64_t>, std::vector<TrackSlice>> tracks;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const uint64_t start = JsonNs(e["ts"]);
    tracks[{e["pid"], e["tid"]}].push_back({start, start + JsonNs(e["dur"]), e["name"]});
  }
  std::vector<std::string> problems;
  constexpr uint64_t kFirstDevicePid = 0x40000000;
  for (auto& [key, slices] : tracks) {
    FindOverlaps("JSON pid " + std::to_string(key.first) + " tid " + std::to_string(key.second),
                 std::move(slices), key.first >= kFirstDevicePid, &problems);
  }
  return problems;
}

inline std::vector<std::string> TrackOverlaps(const PerfettoTraceReader& pf) {
  std::map<uint64_t, std::vector<TrackSlice>> tracks;
  for (const auto& s : pf.slices) tracks[s.track].push_back({s.start, s.end, s.name});
  std::vector<std::string> problems;
  for (auto& [uuid, slices] : tracks) {
    // A track under a root that is not a process is a device's.
    const uint64_t root = pf.Root(uuid);
    const bool device = pf.tracks.count(root) && !pf.tracks.at(root).is_process &&
                        !pf.tracks.at(uuid).is_thread && root != uuid;
    const auto& t = pf.tracks.at(uuid);
    FindOverlaps("Perfetto track \"" + t.name + "\"", std::move(slices), device, &problems);
  }
  return problems;
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything wrong with the JSON and Perfetto conversions of one capture.
inline std::vector<std::string> CheckEveryFormat(const std::string& json_path,
                                                 const std::string& perfetto_path) {
  std::vector<std::string> problems;
  nlohmann::json json;
  const std::string json_text = ReadWholeFile(json_path);
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    return {json_path + ": " + e.what()};
  }
  PerfettoTraceReader pf(ReadWholeFile(perfetto_path));
  for (const auto& list : {pf.errors, TrackOverlaps(json), TrackOverlaps(pf),
                           CompareJsonAndPerfetto(json, pf),
                           KinetoConventionProblems(json_text, json)})
    problems.insert(problems.end(), list.begin(), list.end());
  if (pf.slices.empty()) problems.push_back(perfetto_path + ": no slices");
  return problems;
}

}  // namespace xtrace::test_util
