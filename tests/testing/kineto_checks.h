// Checks that a Chrome JSON trace reads in the PyTorch ecosystem's analyzers as
// docs/kineto-json.md says: what Holistic Trace Analysis (HTA) requires of a trace file and of
// its events, and what joins a host call to its device work. Returns the problems (empty: none).
// Used by trace_checks.h on every capture the integration tests make, and by unit tests.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace xtrace::test_util {

// Device processes start here (export/trace_layout.h kFirstSyntheticPid).
inline constexpr uint64_t kKinetoFirstDevicePid = 0x40000000;

// The categories of device work, as HTA's kernel breakdown selects it.
inline bool IsDeviceWorkCategory(const std::string& cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
}

// `text` is the file as written, `json` the same parsed.
inline std::vector<std::string> KinetoConventionProblems(const std::string& text,
                                                         const nlohmann::json& json) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& p) {
    if (problems.size() < 20) problems.push_back("Kineto conventions: " + p);
  };

  // The file's opening: HTA's metadata reader stops at "traceEvents", so what it reads must
  // come first; its rank finder matches "rank":\s+(\d+) line by line.
  const size_t events_key = text.find("\"traceEvents\"");
  if (text.rfind("{\"schemaVersion\":1,", 0) != 0)
    problem("the file does not open with schemaVersion 1");
  if (events_key == std::string::npos) {
    problem("no traceEvents");
    return problems;
  }
  const std::string opening = text.substr(0, events_key);
  for (const char* key : {"\"baseTimeNanoseconds\"", "\"deviceProperties\""})
    if (opening.find(key) == std::string::npos)
      problem(std::string(key) + " is not before traceEvents");
  if (!json.value("baseTimeNanoseconds", nlohmann::json()).is_number_unsigned())
    problem("baseTimeNanoseconds is not an unsigned integer");
  if (json.contains("distributedInfo")) {
    if (opening.find("\"distributedInfo\"") == std::string::npos)
      problem("distributedInfo is not before traceEvents");
    const auto& info = json["distributedInfo"];
    if (info.contains("rank")) {
      if (!info["rank"].is_number_integer()) problem("distributedInfo.rank is not an integer");
      std::smatch m;
      const std::string first_line = text.substr(0, text.find('\n'));
      if (!std::regex_search(first_line, m, std::regex(R"("rank":\s+(\d+))")) ||
          std::stoll(m[1]) != info["rank"].get<int64_t>())
        problem("HTA's rank pattern does not find distributedInfo.rank on the first line");
    }
    if (info.contains("world_size") && !info["world_size"].is_number_integer())
      problem("distributedInfo.world_size is not an integer");
  }
  for (const auto& d : json.value("deviceProperties", nlohmann::json::array()))
    if (!d.value("id", nlohmann::json()).is_number_unsigned() ||
        !d.value("name", nlohmann::json()).is_string())
      problem("a deviceProperties entry without an integer id and a name: " + d.dump());

  // Events: HTA's minimum columns; device work told by an integer stream, host calls by none;
  // correlation an integer on both sides.
  std::map<uint64_t, int> host_calls_by_correlation;
  std::vector<std::pair<uint64_t, std::string>> device_correlations;  // (correlation, name)
  std::map<uint64_t, int> flow_starts, flow_ends;
  for (const auto& e : json["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    if (ph == "s" || ph == "f") {
      if (e.value("cat", "") != "ac2g") continue;
      if (e.value("name", "") != "ac2g" || !e["id"].is_number_unsigned())
        problem("an ac2g flow without the name ac2g and an integer id: " + e.dump());
      if (ph == "f" && e.value("bp", "") != "e") problem("an ac2g end without \"bp\":\"e\"");
      (ph == "s" ? flow_starts : flow_ends)[e["id"].get<uint64_t>()]++;
      continue;
    }
    if (ph != "X") continue;
    for (const char* column : {"ts", "dur", "name", "cat", "pid", "tid"})
      if (!e.contains(column))
        problem(std::string("an X event without ") + column + ": " + e.dump());
    if (!e["cat"].is_string() || e["cat"].get<std::string>().empty() || e["cat"] == "Trace")
      problem("an X event HTA drops for its category: " + e.dump());
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    const bool on_device = e["pid"].get<uint64_t>() >= kKinetoFirstDevicePid;
    const std::string cat = e.value("cat", "");
    if (on_device && IsDeviceWorkCategory(cat)) {
      if (!args.value("stream", nlohmann::json()).is_number_unsigned() || args["stream"] == 0)
        problem("device work without an integer stream >= 1: " + e.dump());
      if (!args.value("device", nlohmann::json()).is_number_integer())
        problem("device work without an integer device: " + e.dump());
      if (!args.value("correlation", nlohmann::json()).is_number_unsigned()) {
        problem("device work without an integer correlation: " + e.dump());
        continue;
      }
      if (args["correlation"] != 0)
        device_correlations.emplace_back(args["correlation"].get<uint64_t>(), e["name"]);
    } else {
      if (args.contains("stream")) problem("a host event with a stream: " + e.dump());
      if (on_device && cat != "clock") problem("an event on a device of category " + cat);
      if (args.contains("correlation")) {
        if (!args["correlation"].is_number_unsigned() || args["correlation"] == 0)
          problem("a host call with a correlation that is not an integer >= 1: " + e.dump());
        else
          host_calls_by_correlation[args["correlation"].get<uint64_t>()]++;
      }
    }
  }
  for (const auto& [correlation, calls] : host_calls_by_correlation)
    if (calls != 1)
      problem(std::to_string(calls) + " host calls share correlation " +
              std::to_string(correlation));
  for (const auto& [correlation, name] : device_correlations) {
    if (!host_calls_by_correlation.count(correlation))
      problem(name + ": correlation " + std::to_string(correlation) + " names no host call");
    if (!flow_starts.count(correlation) || !flow_ends.count(correlation))
      problem(name + ": no ac2g arrow " + std::to_string(correlation));
  }
  for (const auto& [id, n] : flow_starts) {
    if (flow_ends[id] != n)
      problem("ac2g " + std::to_string(id) + ": starts and ends differ in number");
    if (!host_calls_by_correlation.count(id))
      problem("ac2g " + std::to_string(id) + " starts at no call of that correlation");
  }
  return problems;
}

}  // namespace xtrace::test_util
