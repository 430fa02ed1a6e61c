// Tests of the "records dropped" instants the converter (userspace/export/converter.cc) puts
// where a capture lost records: their counts, and a remedy that fits the ring that lost them,
// alike in Chrome JSON and Perfetto.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "export/converter.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "perfetto_trace_reader.h"
#include "trace_equivalence.h"

namespace xtrace {
namespace {

using test_util::ReadFileBytes;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint64_t kStart = 5'000'000'000'000;

// Three drop windows a second apart: lost in the BPF ring only, in the programs' own ITT
// rings only, and in both.
const RecordsDropped kWindows[] = {
    {.start_ns = kStart, .end_ns = kStart + 1'000, .level_zero = 7, .itt = 2},
    {.start_ns = kStart + 1'000'000'000, .end_ns = kStart + 1'000'001'000, .itt = 30,
     .itt_rings = 30},
    {.start_ns = kStart + 2'000'000'000, .end_ns = kStart + 2'000'001'000, .level_zero = 5,
     .itt = 12, .other = 1, .itt_rings = 9},
};
const char* const kBpfRing = "raise --buffer-size";
const char* const kIttRings =
    "all in the programs' own ITT rings: raise --itt-ring-size or give xtrace a CPU the program "
    "does not use";
const char* const kBoth =
    "raise --buffer-size; 9 of them in the programs' own ITT rings: raise --itt-ring-size or "
    "give xtrace a CPU the program does not use";

std::string WriteDrops(const ScratchDir& dir) {
  const std::string path = dir.File("drops.capnp");
  auto writer = LogWriter::Create(path, SampleHeader());
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return path;
  for (const RecordsDropped& w : kWindows) (*writer)->Append(w);
  EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  return path;
}

TEST(ConverterDropsTest, EachWindowNamesTheRemedyOfTheRingThatLostItsRecords) {
  ScratchDir dir;
  const std::string in = WriteDrops(dir);

  ASSERT_TRUE(ConvertLog(in, dir.File("drops.json"), {}, nullptr).ok());
  const nlohmann::json trace = nlohmann::json::parse(ReadFileBytes(dir.File("drops.json")));
  std::map<uint64_t, nlohmann::json> json_args;  // by the window's start, ns after kStart
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["name"] != "records dropped") continue;
    EXPECT_EQ(e["ph"], "i");
    EXPECT_EQ(e["s"], "g");
    json_args[test_util::JsonNs(e["ts"]) - kStart] = e["args"];
  }
  ASSERT_EQ(json_args.size(), 3u) << trace.dump();
  EXPECT_EQ(json_args[0]["remedy"], kBpfRing);
  EXPECT_EQ(json_args[0]["dropped"], 9);
  EXPECT_FALSE(json_args[0].contains("itt_rings")) << "only counts with drops are given";
  EXPECT_EQ(json_args[1'000'000'000]["remedy"], kIttRings);
  EXPECT_EQ(json_args[1'000'000'000]["itt_rings"], 30);
  EXPECT_EQ(json_args[2'000'000'000]["remedy"], kBoth);
  EXPECT_EQ(json_args[2'000'000'000]["dropped"], 18);
  EXPECT_EQ(json_args[2'000'000'000]["itt"], 12);
  EXPECT_EQ(json_args[2'000'000'000]["itt_rings"], 9);

  ConvertOptions perfetto;
  perfetto.format = TraceFormat::kPerfetto;
  ASSERT_TRUE(ConvertLog(in, dir.File("drops.pftrace"), perfetto, nullptr).ok());
  test_util::PerfettoTraceReader pf(ReadFileBytes(dir.File("drops.pftrace")));
  for (const std::string& e : pf.errors) ADD_FAILURE() << e;
  std::map<uint64_t, std::map<std::string, std::string>> pf_args;
  for (const auto& e : pf.events) {
    if (e.name != "records dropped") continue;
    EXPECT_EQ(e.type, 3u);  // an instant
    pf_args[e.ts - kStart] = e.args;
  }
  ASSERT_EQ(pf_args.size(), 3u);
  EXPECT_EQ(pf_args[0].at("remedy"), kBpfRing);
  EXPECT_EQ(pf_args[1'000'000'000].at("remedy"), kIttRings);
  EXPECT_EQ(pf_args[1'000'000'000].at("itt_rings"), "30");
  EXPECT_EQ(pf_args[2'000'000'000].at("remedy"), kBoth);
  EXPECT_EQ(pf_args[2'000'000'000].at("itt_rings"), "9");
}

}  // namespace
}  // namespace xtrace
