// Tests for Python frames in the log and in the traces: PythonStack events written with
// LogWriter and read back field by field, then converted to Chrome JSON and parsed back:
// python_function slices built from consecutive calls that share frames, nesting around the
// calls, and the device slice naming the Python line of its launch.
#include "export/python_slices.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "export/converter.h"
#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint32_t kPid = 6100, kTid = 6101;
constexpr uint64_t kT0 = 9'000'000'000'000;

// train.py: main() at line 20 calls step() (line 12); step() launches on lines 13 and 14
// (the latter through torch/nn/functional.py(50): linear), then main synchronizes on line 21.
std::vector<Event> WritePythonCapture(const std::string& path) {
  auto writer = LogWriter::Create(path, SampleHeader());
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return {};
  StringTable& s = (*writer)->strings();
  const StringId train = s.Intern("/w/train.py"), torch = s.Intern("/usr/lib/python3/torch/nn/functional.py");
  const PythonFrame module{train, s.Intern("<module>"), 30}, main20{train, s.Intern("main"), 20},
      main21{train, s.Intern("main"), 21}, step13{train, s.Intern("step"), 13},
      step14{train, s.Intern("step"), 14}, linear{torch, s.Intern("linear"), 50};
  std::vector<Event> events;
  auto call = [&](uint64_t start, uint64_t end, std::vector<PythonFrame> frames) {
    PythonStack st;
    st.pid = kPid;
    st.tid = kTid;
    st.start_ns = kT0 + start;
    st.end_ns = kT0 + end;
    st.frames = std::move(frames);
    events.push_back(st);
    ApiCall c;
    c.pid = kPid;
    c.tid = kTid;
    c.start_ns = kT0 + start;
    c.end_ns = kT0 + end;
    c.fn = XT_ZE_APPEND_MEMORY_COPY;
    events.push_back(c);
  };
  call(1000, 2000, {step13, main20, module});
  call(3000, 4000, {step13, main20, module});
  call(5000, 6000, {linear, step14, main20, module});
  call(7000, 9000, {main21, module});
  PythonStack truncated;
  truncated.pid = kPid;
  truncated.tid = kTid + 1;
  truncated.start_ns = truncated.end_ns = kT0 + 9500;
  truncated.frames = {step13};
  truncated.truncated = true;
  events.push_back(truncated);
  DeviceOp op;
  op.pid = kPid;
  op.device = 0;
  op.track = 1;
  op.id = 1;
  op.kind = DeviceOpKind::kCopy;
  op.name = s.Intern("zeCommandListAppendMemoryCopy");
  op.append_tid = kTid;
  op.append_ns = kT0 + 5000;
  op.start_ns = kT0 + 6500;
  op.end_ns = kT0 + 8000;
  events.push_back(op);
  for (const Event& e : events) (*writer)->Append(e);
  EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  return events;
}

TEST(PythonLogEvents, RoundTripFieldByField) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  const std::vector<Event> written = WritePythonCapture(path);
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<PythonStack> read;
  Event e;
  while (true) {
    auto more = reader->Next(&e);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!*more) break;
    if (auto* st = std::get_if<PythonStack>(&e)) read.push_back(*st);
  }
  std::vector<PythonStack> expected;
  for (const Event& w : written)
    if (auto* st = std::get_if<PythonStack>(&w)) expected.push_back(*st);
  ASSERT_EQ(read.size(), expected.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].pid, expected[i].pid);
    EXPECT_EQ(read[i].tid, expected[i].tid);
    EXPECT_EQ(read[i].start_ns, expected[i].start_ns);
    EXPECT_EQ(read[i].end_ns, expected[i].end_ns);
    EXPECT_EQ(read[i].frames, expected[i].frames);
    EXPECT_EQ(read[i].truncated, expected[i].truncated);
  }
  EXPECT_EQ(reader->strings().Get(read[0].frames[0].function), "step");
}

std::vector<nlohmann::json> PythonSlices(const nlohmann::json& trace) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "python_function") out.push_back(e);
  return out;
}

const nlohmann::json* Named(const std::vector<nlohmann::json>& slices, const std::string& name) {
  for (const auto& s : slices)
    if (s["name"] == name) return &s;
  return nullptr;
}

TEST(PythonChromeJson, FramesBecomeSlicesAroundTheCallsTheyMade) {
  ScratchDir dir;
  WritePythonCapture(dir.File("py.capnp"));
  ASSERT_TRUE(ConvertLogToChromeJson(dir.File("py.capnp"), dir.File("py.json"), {}, nullptr).ok());
  const auto trace = nlohmann::json::parse(test_util::ReadFileBytes(dir.File("py.json")));
  const auto slices = PythonSlices(trace);
  // <module>, main(20), step(13), step(14), linear, main(21); and the other thread's step(13).
  ASSERT_EQ(slices.size(), 7u);
  for (const auto& s : slices) EXPECT_EQ(s["ph"], "X");
  auto at = [&](const std::string& name, double ts, double dur) {
    const nlohmann::json* s = Named(slices, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_DOUBLE_EQ((*s)["ts"].get<double>(), 9'000'000'000.0 + ts) << name;
    EXPECT_DOUBLE_EQ((*s)["dur"].get<double>(), dur) << name;
    EXPECT_EQ((*s)["pid"], kPid) << name;
  };
  at("/w/train.py(30): <module>", 1, 8);       // first call to the last one's end
  at("/w/train.py(20): main", 1, 5);           // the three calls from line 20
  at("/w/train.py(13): step", 1, 3);           // two consecutive calls from line 13
  at("/w/train.py(14): step", 5, 1);
  at("/usr/lib/python3/torch/nn/functional.py(50): linear", 5, 1);
  at("/w/train.py(21): main", 7, 2);

  // The copy's device slice names the user's line, skipping the frame inside torch/.
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "zeCommandListAppendMemoryCopy" || e.value("ph", "") != "X" ||
        !e.contains("args") || !e["args"].contains("stream"))
      continue;
    EXPECT_EQ(e["args"]["python"], "/w/train.py(14): step");
    found = true;
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace xtrace
