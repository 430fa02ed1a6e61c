// What the ITT integration tests share: the programs they run, a capture read back with its
// names resolved, the workloads' own logs as lines to compare with, and the root fixture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/event.h"
#include "root_fixture.h"

namespace xtrace::itt_test {

inline const std::string kXtrace = XTRACE_BIN;
inline const std::string kCollector = ITT_COLLECTOR_LIB;
inline const std::string kWithCollector = "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB;
// A target that opts out of the fast path: its ITT calls go through the probe site.
inline const std::string kProbeSiteOnly = "XTRACE_ITT_FAST_PATH=0";
inline const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// A capture with its names resolved.
struct Span {
  IttTask task;
  std::string domain, name;
};
struct Mark {
  IttMarker marker;
  std::string domain, name;
};
struct IttCapture {
  std::vector<Span> tasks;
  std::vector<Mark> markers;
  std::vector<CollectionChange> changes;
  std::vector<KernelLaunch> launches;
  std::vector<std::string> launch_names;
  std::map<uint32_t, std::string> thread_names;  // last name per tid
  bool complete = false;
};

// The log at `path` read whole (every read failure is a test failure).
IttCapture ReadIttCapture(const std::string& path);

// The capture as itt_workload logs itself: "<tid>\t<kind>\t<domain>\t<name>", sorted.
std::vector<std::string> AsLabelLines(const IttCapture& c);

// A workload log ("<round>\t<rest>"), keeping the lines of `rounds` (all if empty) without
// their round, sorted.
std::vector<std::string> LogLines(const std::string& path, const std::set<int>& rounds = {});

// Whether `outer` spans [start, end].
bool Encloses(const IttTask& outer, uint64_t start, uint64_t end);

// How many lines of `text` hold `needle`.
size_t CountLinesWith(const std::string& text, const std::string& needle);

class IttIntegrationTest : public testing::RootTest {
 protected:
  IttIntegrationTest() : RootTest("ITT capture", "itt") {}
};

}  // namespace xtrace::itt_test
