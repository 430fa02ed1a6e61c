// Tests for daemon/control_codec: a capture request survives the control protocol, and a
// status carries what `xtrace ctl status` prints.
#include "daemon/control_codec.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(ControlCodec, RequestRoundTrips) {
  CaptureOptions r;
  r.pids = {4242, 4243};
  r.comm = "python3";
  r.cgroup = "/kubepods/pod1";
  r.follow_children = false;
  r.duration_ns = 30'000'000'000ull;
  r.ring_bytes = 64 << 20;
  r.itt_ring_bytes = 1 << 20;
  r.library_grace_ns = 5;
  r.probes_per_process = true;
  r.start_paused = true;
  r.drm = DrmCapture::kOnly;
  r.single_uprobes = true;
  r.drm_hook = DrmHook::kIoctlTracepoints;
  r.nice = 0;  // given, and the value a missing field would read as
  r.python_frames = true;
  r.verbose = true;
  r.hold = false;
  r.hold_terminal_jobs = true;
  r.hold_max_ns = 20'000'000;
  r.output_dir = "/home/alice/job42";
  r.user = "alice";
  r.slurm_job = "42";
  r.slurm_node = "n7";
  r.slurm_cluster = "c3";
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<control_schema::CaptureRequest>();
  control_codec::EncodeRequest(r, built);
  const CaptureOptions back = control_codec::DecodeRequest(built.asReader());
  EXPECT_EQ(back.pids, r.pids);
  EXPECT_EQ(back.comm, "python3");
  EXPECT_EQ(back.cgroup, "/kubepods/pod1");
  EXPECT_FALSE(back.system);
  ASSERT_TRUE(back.follow_children.has_value());
  EXPECT_FALSE(*back.follow_children);
  EXPECT_EQ(back.duration_ns, r.duration_ns);
  EXPECT_EQ(back.ring_bytes, r.ring_bytes);
  EXPECT_EQ(back.itt_ring_bytes, r.itt_ring_bytes);
  EXPECT_EQ(back.library_grace_ns, 5u);
  EXPECT_TRUE(back.probes_per_process);
  EXPECT_FALSE(back.probes_per_file);
  EXPECT_TRUE(back.start_paused);
  EXPECT_EQ(back.drm, DrmCapture::kOnly);
  EXPECT_TRUE(back.single_uprobes);
  EXPECT_EQ(back.drm_hook, DrmHook::kIoctlTracepoints);
  EXPECT_EQ(back.nice, std::optional<int>(0));
  EXPECT_EQ(back.python_frames, std::optional<bool>(true));
  EXPECT_TRUE(back.verbose);
  EXPECT_FALSE(back.hold);
  EXPECT_TRUE(back.hold_terminal_jobs);
  EXPECT_EQ(back.hold_max_ns, 20'000'000u);
  EXPECT_EQ(back.output_dir, "/home/alice/job42");
  EXPECT_EQ(back.user, "alice");
  EXPECT_EQ(back.slurm_job, "42");
  EXPECT_EQ(back.slurm_node, "n7");
  EXPECT_EQ(back.slurm_cluster, "c3");

  // Unset fields stay the capture's defaults.
  capnp::MallocMessageBuilder empty;
  const CaptureOptions defaults =
      control_codec::DecodeRequest(empty.initRoot<control_schema::CaptureRequest>().asReader());
  EXPECT_FALSE(defaults.follow_children.has_value());
  EXPECT_FALSE(defaults.duration_ns.has_value());
  EXPECT_EQ(defaults.ring_bytes, CaptureOptions().ring_bytes);
  EXPECT_EQ(defaults.itt_ring_bytes, CaptureOptions().itt_ring_bytes);
  EXPECT_FALSE(defaults.probes_per_process);
  EXPECT_FALSE(defaults.probes_per_file);
  EXPECT_EQ(defaults.drm, DrmCapture::kAlongside);
  EXPECT_FALSE(defaults.start_paused);
  EXPECT_TRUE(defaults.hold);
  EXPECT_FALSE(defaults.hold_terminal_jobs);
  EXPECT_EQ(defaults.hold_max_ns, CaptureOptions().hold_max_ns);
}

// Unset, the daemon's capture decides the nice value from its own (kCaptureNice at nice 0);
// 0 given is not the same request.
TEST(ControlCodec, NiceTravelsOnlyWhenGiven) {
  for (std::optional<int> nice : {std::optional<int>(), std::optional<int>(0), std::optional<int>(-20),
                                  std::optional<int>(19)}) {
    CaptureOptions r;
    r.nice = nice;
    capnp::MallocMessageBuilder message;
    auto built = message.initRoot<control_schema::CaptureRequest>();
    control_codec::EncodeRequest(r, built);
    EXPECT_EQ(control_codec::DecodeRequest(built.asReader()).nice, nice);
  }
}

TEST(ControlCodec, ProbesPerFileTravels) {
  CaptureOptions r;
  r.comm = "app";
  r.probes_per_file = true;
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<control_schema::CaptureRequest>();
  control_codec::EncodeRequest(r, built);
  const CaptureOptions back = control_codec::DecodeRequest(built.asReader());
  EXPECT_TRUE(back.probes_per_file);
  EXPECT_FALSE(back.probes_per_process);
}

TEST(ControlCodec, StatusCarriesPerProcessCounts) {
  ControllerStatus s;
  s.capturing = true;
  s.describe = "every process";
  s.progress.links = 8;
  s.progress.per_process = {{.pid = 7, .comm = "app", .records_by_source = {{"Level Zero", 12}}, .dropped = 1}};
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<control_schema::CaptureStatus>();
  control_codec::EncodeStatus(s, "/var/lib/xtrace", built);
  auto r = built.asReader();
  EXPECT_TRUE(r.getCapturing());
  EXPECT_EQ(r.getLinks(), 8u);
  EXPECT_EQ(std::string(r.getOutputDir().cStr()), "/var/lib/xtrace");
  ASSERT_EQ(r.getPerProcess().size(), 1u);
  EXPECT_EQ(r.getPerProcess()[0].getRecordsBySource()[0].getRecords(), 12u);
  EXPECT_EQ(r.getPerProcess()[0].getDropped(), 1u);
}

}  // namespace
}  // namespace xtrace
