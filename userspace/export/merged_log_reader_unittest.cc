// Tests for export/merged_log_reader: several logs come out as one stream in time order, each
// event tagged with its log, identities in place, offsets applied to the order.
#include "export/merged_log_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::ScratchDir;

// A log with a process identity, then launches of that pid at the given start times, written
// in batches of two.
std::string WriteLog(const ScratchDir& dir, const std::string& name, uint32_t pid,
                     const std::vector<uint64_t>& starts) {
  const std::string path = dir.File(name);
  auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 2});
  EXPECT_TRUE(writer.ok());
  (*writer)->Append(ProcessInfo{.pid = pid});
  for (uint64_t start : starts) {
    KernelLaunch l;
    l.pid = pid;
    l.tid = pid;
    l.start_ns = start;
    l.end_ns = start + 5;
    (*writer)->Append(l);
  }
  EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  return path;
}

std::vector<std::string> ReadAll(MergedLogReader& merged) {
  std::vector<std::string> out;
  Event e;
  size_t source = 0;
  while (true) {
    Result<bool> next = merged.Next(&e, &source);
    EXPECT_TRUE(next.ok()) << next.status().message();
    if (!next.ok() || !*next) break;
    if (const auto* p = std::get_if<ProcessInfo>(&e)) {
      out.push_back("log" + std::to_string(source) + " process " + std::to_string(p->pid));
    } else if (const auto* l = std::get_if<KernelLaunch>(&e)) {
      out.push_back("log" + std::to_string(source) + " " + std::to_string(l->start_ns));
    }
  }
  return out;
}

TEST(MergedLogReaderTest, InterleavesLogsInTimeOrder) {
  ScratchDir dir;
  std::vector<MergedLogReader::Source> sources;
  for (const auto& [name, pid, starts] :
       std::vector<std::tuple<std::string, uint32_t, std::vector<uint64_t>>>{
           {"a.capnp", 1, {100, 300, 500, 700}}, {"b.capnp", 2, {200, 250, 600}}, {"c.capnp", 3, {}}}) {
    auto reader = LogReader::Open(WriteLog(dir, name, pid, starts));
    ASSERT_TRUE(reader.ok());
    sources.push_back({std::move(*reader), 0});
  }
  MergedLogReader merged(std::move(sources));
  EXPECT_EQ(ReadAll(merged), (std::vector<std::string>{
                                 "log0 process 1", "log1 process 2", "log2 process 3", "log0 100",
                                 "log1 200", "log1 250", "log0 300", "log0 500", "log1 600",
                                 "log0 700"}));
}

TEST(MergedLogReaderTest, OrdersByTheCommonClockAndKeepsEachLogsOwnOrder) {
  ScratchDir dir;
  std::vector<MergedLogReader::Source> sources;
  auto a = LogReader::Open(WriteLog(dir, "a.capnp", 1, {1000, 1100}));
  // Log b's clock runs 1000 ns behind: its 50 is the common clock's 1050. Its events are not
  // in time order (as a device operation after its host call): the log's order stands.
  auto b = LogReader::Open(WriteLog(dir, "b.capnp", 2, {50, 20, 300}));
  ASSERT_TRUE(a.ok() && b.ok());
  sources.push_back({std::move(*a), 0});
  sources.push_back({std::move(*b), 1000});
  MergedLogReader merged(std::move(sources));
  EXPECT_EQ(ReadAll(merged), (std::vector<std::string>{"log0 process 1", "log1 process 2",
                                                       "log0 1000", "log1 50", "log1 20",
                                                       "log0 1100", "log1 300"}));
  EXPECT_EQ(merged.total_size().value_or(0), merged.bytes_read());
}

// NextEvent: the event stays where its reader holds it until the next call, which only then
// reads on in that log; the order, the sources and the bytes read are Next's.
TEST(MergedLogReaderTest, NextEventKeepsTheEventUntilTheNextCall) {
  ScratchDir dir;
  auto open = [&](const std::string& name, uint32_t pid, std::vector<uint64_t> starts) {
    auto reader = LogReader::Open(WriteLog(dir, name, pid, starts));
    EXPECT_TRUE(reader.ok());
    return std::move(*reader);
  };
  std::vector<MergedLogReader::Source> a, b;
  a.push_back({open("a.capnp", 1, {100, 300, 500, 700}), 0});
  a.push_back({open("b.capnp", 2, {200, 250, 600}), 0});
  MergedLogReader copying(std::move(a));
  const std::vector<std::string> expected = ReadAll(copying);

  b.push_back({open("a2.capnp", 1, {100, 300, 500, 700}), 0});
  b.push_back({open("b2.capnp", 2, {200, 250, 600}), 0});
  MergedLogReader merged(std::move(b));
  std::vector<std::string> got;
  size_t source = 0;
  while (true) {
    Result<const Event*> next = merged.NextEvent(&source);
    ASSERT_TRUE(next.ok()) << next.status().message();
    if (!*next) break;
    const Event* event = *next;
    if (const auto* p = std::get_if<ProcessInfo>(event)) {
      got.push_back("log" + std::to_string(source) + " process " + std::to_string(p->pid));
    } else if (const auto* l = std::get_if<KernelLaunch>(event)) {
      got.push_back("log" + std::to_string(source) + " " + std::to_string(l->start_ns));
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(merged.total_size().value_or(0), merged.bytes_read());
}

TEST(MergedLogReaderTest, EventStartNsCoversTimedKinds) {
  EXPECT_EQ(EventStartNs(Event{IttMarker{.ts_ns = 9}}), std::optional<uint64_t>(9));
  EXPECT_EQ(EventStartNs(Event{MemoryUsage{.time_ns = 8}}), std::optional<uint64_t>(8));
  EXPECT_EQ(EventStartNs(Event{ThreadInfo{}}), std::nullopt);
}

}  // namespace
}  // namespace xtrace
