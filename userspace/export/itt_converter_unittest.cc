// Tests for the ITT events in the log and in Chrome JSON: written with LogWriter, read back
// field by field with LogReader, converted, and the JSON parsed back (ph, ts, dur, cat,
// names, nesting).
#include "export/itt_converter.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "export/converter.h"
#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint32_t kPid = 5100, kTid = 5101;
constexpr uint64_t kT0 = 7'000'000'000'000;

// A step task enclosing a kernel launch, a marker, an overlapped task ended on another
// thread, an unmatched end, an unfinished task, and collection paused then resumed.
std::vector<Event> WriteIttCapture(const std::string& path) {
  auto writer = LogWriter::Create(path, SampleHeader());
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return {};
  StringTable& s = (*writer)->strings();
  std::vector<Event> events;

  IttTask step;
  step.pid = kPid;
  step.tid = step.end_tid = kTid;
  step.start_ns = kT0;
  step.end_ns = kT0 + 50'000;
  step.domain = s.Intern("xt.app");
  step.name = s.Intern("xt.step");
  events.push_back(step);

  KernelLaunch launch;
  launch.pid = kPid;
  launch.tid = kTid;
  launch.start_ns = kT0 + 10'000;
  launch.end_ns = kT0 + 12'500;
  launch.kernel_name = s.Intern("xt_scale_f32");
  launch.name_known = true;
  events.push_back(launch);

  events.push_back(IttMarker{kPid, kTid, kT0 + 20'000, step.domain, s.Intern("xt.mark"),
                             IttMarkerScope::kGlobal});

  IttTask overlapped = step;
  overlapped.kind = IttTaskKind::kOverlappedTask;
  overlapped.id = 0xfeed;
  overlapped.end_tid = kTid + 1;
  overlapped.start_ns = kT0 + 30'000;
  overlapped.end_ns = kT0 + 90'000;
  overlapped.name = s.Intern("xt.overlap.a");
  events.push_back(overlapped);

  IttTask missing;
  missing.pid = kPid;
  missing.tid = missing.end_tid = kTid;
  missing.start_ns = missing.end_ns = kT0 + 95'000;
  missing.domain = step.domain;
  missing.begin_missing = true;
  events.push_back(missing);

  IttTask unfinished = step;
  unfinished.start_ns = kT0 + 100'000;
  unfinished.end_ns = kT0 + 400'000;
  unfinished.unfinished = true;
  events.push_back(unfinished);

  events.push_back(CollectionChange{kPid, 0, kT0 - 1'000, CollectionState::kPaused,
                                    CollectionCause::kStartPaused});
  events.push_back(CollectionChange{kPid, kTid, kT0 - 500, CollectionState::kCollecting,
                                    CollectionCause::kIttCall});
  for (const Event& e : events) (*writer)->Append(e);
  EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  return events;
}

TEST(IttLogEvents, RoundTripFieldByField) {
  ScratchDir dir;
  const std::string path = dir.File("itt.capnp");
  const std::vector<Event> written = WriteIttCapture(path);
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<Event> read;
  Event e;
  while (true) {
    auto more = reader->Next(&e);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!*more) break;
    read.push_back(e);
  }
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    ASSERT_EQ(read[i].index(), written[i].index()) << i;
    if (const auto* w = std::get_if<IttTask>(&written[i])) {
      const auto& r = std::get<IttTask>(read[i]);
      EXPECT_EQ(r.pid, w->pid);
      EXPECT_EQ(r.tid, w->tid);
      EXPECT_EQ(r.end_tid, w->end_tid);
      EXPECT_EQ(r.start_ns, w->start_ns);
      EXPECT_EQ(r.end_ns, w->end_ns);
      EXPECT_EQ(r.domain, w->domain);
      EXPECT_EQ(r.name, w->name);
      EXPECT_EQ(r.kind, w->kind);
      EXPECT_EQ(r.id, w->id);
      EXPECT_EQ(r.unfinished, w->unfinished);
      EXPECT_EQ(r.begin_missing, w->begin_missing);
      EXPECT_EQ(r.closed_by_outer, w->closed_by_outer);
    } else if (const auto* w = std::get_if<IttMarker>(&written[i])) {
      const auto& r = std::get<IttMarker>(read[i]);
      EXPECT_EQ(r.ts_ns, w->ts_ns);
      EXPECT_EQ(r.domain, w->domain);
      EXPECT_EQ(r.name, w->name);
      EXPECT_EQ(r.scope, w->scope);
      EXPECT_EQ(r.tid, w->tid);
    } else if (const auto* w = std::get_if<CollectionChange>(&written[i])) {
      const auto& r = std::get<CollectionChange>(read[i]);
      EXPECT_EQ(r.ts_ns, w->ts_ns);
      EXPECT_EQ(r.state, w->state);
      EXPECT_EQ(r.cause, w->cause);
      EXPECT_EQ(r.tid, w->tid);
    }
  }
}

std::vector<nlohmann::json> EventsNamed(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"])
    if (e.value("name", "") == name) out.push_back(e);
  return out;
}

TEST(IttChromeJson, TasksNestAroundLaunchesMarkersAreInstantsUserAnnotationsOfTheirDomain) {
  ScratchDir dir;
  WriteIttCapture(dir.File("itt.capnp"));
  ASSERT_TRUE(
      ConvertLogToChromeJson(dir.File("itt.capnp"), dir.File("itt.json"), {}, nullptr).ok());
  const auto trace = nlohmann::json::parse(test_util::ReadFileBytes(dir.File("itt.json")));

  const auto steps = EventsNamed(trace, "xt.step");
  ASSERT_EQ(steps.size(), 2u);
  const auto& step = steps[0];
  EXPECT_EQ(step["ph"], "X");
  EXPECT_EQ(step["cat"], "user_annotation");
  EXPECT_EQ(step["args"]["domain"], "xt.app");
  EXPECT_EQ(step["tid"], kTid);
  EXPECT_DOUBLE_EQ(step["ts"].get<double>(), 7'000'000'000.0);
  EXPECT_DOUBLE_EQ(step["dur"].get<double>(), 50.0);
  const auto launches = EventsNamed(trace, "xt_scale_f32");
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0]["tid"], step["tid"]);
  EXPECT_GT(launches[0]["ts"].get<double>(), step["ts"].get<double>());
  EXPECT_LT(launches[0]["ts"].get<double>() + launches[0]["dur"].get<double>(),
            step["ts"].get<double>() + step["dur"].get<double>());
  EXPECT_EQ(steps[1]["args"]["unfinished"], true);

  const auto marks = EventsNamed(trace, "xt.mark");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["ph"], "i");
  EXPECT_EQ(marks[0]["s"], "g");
  EXPECT_EQ(marks[0]["cat"], "user_annotation");
  EXPECT_EQ(marks[0]["args"]["domain"], "xt.app");

  const auto overlapped = EventsNamed(trace, "xt.overlap.a");
  ASSERT_EQ(overlapped.size(), 2u);
  EXPECT_EQ(overlapped[0]["ph"], "b");
  EXPECT_EQ(overlapped[1]["ph"], "e");
  EXPECT_EQ(overlapped[0]["id"], overlapped[1]["id"]);
  EXPECT_EQ(overlapped[0]["args"]["itt_id"], "0xfeed");
  EXPECT_EQ(overlapped[0]["args"]["end_tid"], kTid + 1);
  EXPECT_DOUBLE_EQ(overlapped[1]["ts"].get<double>() - overlapped[0]["ts"].get<double>(), 60.0);

  const auto unmatched = EventsNamed(trace, "end without begin");
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_EQ(unmatched[0]["ph"], "i");
  EXPECT_EQ(unmatched[0]["cat"], "user_annotation");
  EXPECT_EQ(unmatched[0]["args"]["domain"], "xt.app");

  const auto paused = EventsNamed(trace, "collection paused");
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_EQ(paused[0]["args"]["cause"], "--start-paused");
  EXPECT_EQ(paused[0]["s"], "p");
  const auto resumed = EventsNamed(trace, "collection resumed");
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0]["args"]["cause"], "__itt_resume");
}

}  // namespace
}  // namespace xtrace
