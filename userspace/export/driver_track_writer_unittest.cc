// Tests for export/driver_track_writer through the converter: a log with DRM events becomes
// driver tracks (lanes when threads overlap), named and decoded slices, flow arrows from API
// calls and a GPU fences track; checked by parsing the JSON back.
#include "export/driver_track_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "export/converter.h"
#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::ReadFileBytes;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint32_t kPid = 900;
constexpr uint32_t kDriverLane = kDriverLaneTid;

nlohmann::json ConvertEvents(const std::vector<Event>& (*make)(StringTable&)) {
  ScratchDir dir;
  const std::string in = dir.File("drm.capnp"), out = dir.File("drm.json");
  {
    auto writer = LogWriter::Create(in, SampleHeader());
    EXPECT_TRUE(writer.ok());
    for (const Event& e : make((*writer)->strings())) (*writer)->Append(e);
    EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const Status st = ConvertLogToChromeJson(in, out, {}, nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  return nlohmann::json::parse(ReadFileBytes(out));
}

DrmIoctl Exec(StringTable& s, uint32_t tid, uint64_t start, uint64_t end, uint32_t queue) {
  DrmIoctl d;
  d.pid = kPid;
  d.tid = tid;
  d.start_ns = start;
  d.end_ns = end;
  d.fd = 4;
  d.cmd = 0x40386449;
  d.name = s.Intern("DRM_IOCTL_XE_EXEC");
  d.arg = 0x7ffd'0000'0100;
  d.args =
      XeExecArgs{.exec_queue_id = queue, .num_syncs = 1, .address = 0x8000, .num_batch_buffer = 1};
  return d;
}

const std::vector<Event>& SampleDrmCapture(StringTable& s) {
  static std::vector<Event> events;
  events.clear();
  events.push_back(DrmFile{.pid = kPid,
                           .fd = 4,
                           .kind = DrmNodeKind::kRender,
                           .path = s.Intern("/dev/dri/renderD128"),
                           .major = 226,
                           .minor = 128,
                           .driver = s.Intern("xe")});
  KernelLaunch launch;
  launch.pid = kPid;
  launch.tid = 11;
  launch.start_ns = 10'000;
  launch.end_ns = 20'000;
  launch.kernel_name = s.Intern("gemm");
  launch.name_known = true;
  events.push_back(launch);
  DrmIoctl linked = Exec(s, 11, 12'000, 14'000, 3);
  linked.cause = s.Intern("zeCommandListAppendLaunchKernel");
  linked.cause_start_ns = 10'000;
  events.push_back(linked);
  events.push_back(Exec(s, 12, 13'000, 15'000, 4));  // overlaps: a second lane
  DrmIoctl bad = Exec(s, 12, 16'000, 16'500, 0);     // fits the first lane again
  bad.arg = 0;
  bad.arg_unreadable = true;
  bad.args = std::monostate();
  bad.result = -14;
  events.push_back(bad);
  events.push_back(DrmFenceSignal{.pid = kPid,
                                  .tid = 11,
                                  .created_ns = 13'000,
                                  .signaled_ns = 90'000,
                                  .ioctl_start_ns = 12'000,
                                  .context = 5,
                                  .seqno = 77,
                                  .source = s.Intern("dma_fence_signaled")});
  return events;
}

std::vector<nlohmann::json> Select(const nlohmann::json& trace, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

TEST(DriverTrackWriterTest, IoctlsGoOnLanesOfADriverTrackWithDecodedArgs) {
  const nlohmann::json trace = ConvertEvents(&SampleDrmCapture);
  std::map<uint64_t, std::string> lanes;
  for (const auto& m : Select(trace, "M"))
    if (m["name"] == "thread_name") lanes[m["tid"].get<uint64_t>()] = m["args"]["name"];
  EXPECT_EQ(lanes[kDriverLane], "driver");
  EXPECT_EQ(lanes[kDriverLane + 1], "driver 2");
  EXPECT_EQ(lanes[kFenceLaneTid], "GPU fences");

  std::vector<nlohmann::json> slices;
  for (const auto& x : Select(trace, "X"))
    if (x["cat"] == "drm" && x["name"] == "DRM_IOCTL_XE_EXEC") slices.push_back(x);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0]["tid"], kDriverLane);
  EXPECT_EQ(slices[1]["tid"], kDriverLane + 1);  // overlapped the first
  EXPECT_EQ(slices[2]["tid"], kDriverLane);      // the first lane was free again
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 2.0);
  const auto& args = slices[0]["args"];
  EXPECT_EQ(args["device"], "/dev/dri/renderD128 (xe)");
  EXPECT_EQ(args["tid"], 11);
  EXPECT_EQ(args["fd"], 4);
  EXPECT_EQ(args["cmd"], "0x40386449");
  EXPECT_EQ(args["exec_queue_id"], 3);
  EXPECT_EQ(args["address"], "0x8000");
  EXPECT_EQ(args["api_call"], "zeCommandListAppendLaunchKernel");
  EXPECT_FALSE(slices[1]["args"].contains("api_call"));
  EXPECT_EQ(slices[2]["args"]["arg_unreadable"], true);
  EXPECT_EQ(slices[2]["args"]["result"], -14);
  EXPECT_FALSE(slices[2]["args"].contains("exec_queue_id"));
}

TEST(DriverTrackWriterTest, AnArrowRunsFromTheApiCallIntoItsIoctl) {
  const nlohmann::json trace = ConvertEvents(&SampleDrmCapture);
  const auto starts = Select(trace, "s"), ends = Select(trace, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_EQ(starts[0]["name"], ends[0]["name"]);
  // Inside the launch (10-20 µs) on its thread; inside the ioctl (12-14 µs) on the lane.
  EXPECT_EQ(starts[0]["tid"], 11);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 12.0);
  EXPECT_EQ(ends[0]["tid"], kDriverLane);
  EXPECT_DOUBLE_EQ(ends[0]["ts"].get<double>(), 13.0);
  EXPECT_EQ(ends[0]["bp"], "e");
  // Its id is the DRM range's own: the launch's correlation (1) is the id of the launch arrow
  // to its device work, and a viewer that pairs flows by id alone would join the two.
  uint64_t correlation = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["args"].contains("correlation"))
      correlation = e["args"]["correlation"].get<uint64_t>();
  EXPECT_EQ(correlation, 1u);
  const uint64_t id = starts[0]["id"].get<uint64_t>();
  EXPECT_NE(id, correlation);
  EXPECT_GE(id, FlowIds::kDrmBase);
  EXPECT_LT(id, FlowIds::kRenumberedBase);
}

TEST(DriverTrackWriterTest, FencesSpanCreationToSignal) {
  const nlohmann::json trace = ConvertEvents(&SampleDrmCapture);
  std::vector<nlohmann::json> fences;
  for (const auto& x : Select(trace, "X"))
    if (x["tid"] == kFenceLaneTid) fences.push_back(x);
  ASSERT_EQ(fences.size(), 1u);
  EXPECT_EQ(fences[0]["name"], "fence 5:77");
  EXPECT_DOUBLE_EQ(fences[0]["ts"].get<double>(), 13.0);
  EXPECT_DOUBLE_EQ(fences[0]["dur"].get<double>(), 77.0);
  EXPECT_EQ(fences[0]["args"]["signaled_by"], "dma_fence_signaled");
  EXPECT_EQ(fences[0]["args"]["tid"], 11);
}

}  // namespace
}  // namespace xtrace
