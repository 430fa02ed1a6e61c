// Reading a Chrome JSON trace in tests: the file parsed (a parse error is a test failure), and
// its events picked by phase and name.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "log_test_util.h"

namespace xtrace::test_util {

inline nlohmann::json ParseFile(const std::string& path) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(ReadFileBytes(path));
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << path << ": invalid JSON: " << e.what();
  }
  return json;
}

// Events with the given "ph" and "name" (empty name: any).
inline std::vector<nlohmann::json> Find(const nlohmann::json& trace, const std::string& ph,
                                        const std::string& name = "") {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (name.empty() || e["name"] == name)) found.push_back(e);
  }
  return found;
}

}  // namespace xtrace::test_util
