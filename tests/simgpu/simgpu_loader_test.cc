// Tests of the simulated Level Zero driver, always through Debian's real loader
// (libze_loader.so.1 with ZE_ENABLE_ALT_DRIVERS). Scenarios that need their own driver
// configuration (clock offsets, drift, DRM flavour) run in a re-executed child process.
// The kernels, executions, memory and synchronization tests are in simgpu_execution_test.cc;
// what both files share in simgpu_loader_support.h (tests/simgpu/test_child.h has the child
// protocol of the scenarios at the end, which re-execute this binary as configured children).
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "simgpu_loader_support.h"
#include "test_child.h"
#include "test_ze.h"

using namespace simgpu_test;

namespace {

// ---------------------------------------------------------------------------------------------
// Discovery and properties

TEST(Discovery, DevicePropertiesAndBothTimerResolutionFlavours) {
  Session& s = session();
  ASSERT_EQ(s.devices.size(), 2u);  // XTRACE_SIMZE_DEVICES=2

  ze_device_properties_t p = device_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, s.device());
  EXPECT_STREQ(p.name, kDeviceName);
  EXPECT_EQ(p.type, ZE_DEVICE_TYPE_GPU);
  EXPECT_EQ(p.vendorId, 0x8086u);
  EXPECT_EQ(p.timerResolution, 52u);  // ns per tick at 19.2 MHz, truncated as Intel reports it
  EXPECT_EQ(p.timestampValidBits, 64u);
  EXPECT_EQ(p.kernelTimestampValidBits, 32u);

  ze_device_properties_t p12 =
      device_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, s.device());
  EXPECT_EQ(p12.timerResolution, kHz);  // cycles per second with the 1.2 stype
  EXPECT_EQ(p12.stype, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2);

  ze_device_properties_t other = device_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, s.devices[1]);
  EXPECT_NE(std::memcmp(p.uuid.id, other.uuid.id, sizeof p.uuid.id), 0);
  EXPECT_STREQ(other.name, kDeviceName);
}

TEST(Discovery, QueueGroupsComputeMemoryAndDriverProperties) {
  Session& s = session();
  uint32_t n = 0;
  ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(s.device(), &n, nullptr));
  ASSERT_EQ(n, 2u);
  std::vector<ze_command_queue_group_properties_t> groups(n);
  for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(s.device(), &n, groups.data()));
  EXPECT_TRUE(groups[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
  EXPECT_GE(groups[0].numQueues, 1u);
  EXPECT_FALSE(groups[1].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
  EXPECT_TRUE(groups[1].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);

  ze_device_compute_properties_t cp{};
  cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  ZE_CHECK(zeDeviceGetComputeProperties(s.device(), &cp));
  EXPECT_EQ(cp.maxTotalGroupSize, 1024u);
  EXPECT_GE(cp.numSubGroupSizes, 1u);

  uint32_t nm = 0;
  ZE_CHECK(zeDeviceGetMemoryProperties(s.device(), &nm, nullptr));
  ASSERT_GE(nm, 1u);
  ze_device_memory_properties_t mp{};
  mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  nm = 1;
  ZE_CHECK(zeDeviceGetMemoryProperties(s.device(), &nm, &mp));
  EXPECT_GT(mp.totalSize, 0u);

  ze_api_version_t version{};
  ZE_CHECK(zeDriverGetApiVersion(s.driver, &version));
  EXPECT_EQ(ZE_MAJOR_VERSION(version), 1u);

  uint32_t next = 0;
  ZE_CHECK(zeDriverGetExtensionProperties(s.driver, &next, nullptr));
  std::vector<ze_driver_extension_properties_t> exts(next);
  ZE_CHECK(zeDriverGetExtensionProperties(s.driver, &next, exts.data()));
  EXPECT_TRUE(std::any_of(exts.begin(), exts.end(), [](const auto& e) {
    return std::strcmp(e.name, ZE_EVENT_QUERY_TIMESTAMPS_EXP_NAME) == 0;
  }));
}

// ---------------------------------------------------------------------------------------------
// Device clock

TEST(Clock, GlobalTimestampsAreMonotonicRawAndTicksFollowRateAndOffset) {
  Session& s = session();
  for (int i = 0; i < 20; ++i) {
    uint64_t before = clock_ns(CLOCK_MONOTONIC_RAW);
    uint64_t host = 0, dev = 0;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &host, &dev));
    uint64_t after = clock_ns(CLOCK_MONOTONIC_RAW);
    ASSERT_LE(before, host);
    ASSERT_LE(host, after);
    // Origin 0 (boot): ticks = offset + raw_ns * hz / 1e9, exactly.
    uint64_t expected = static_cast<uint64_t>(
        kOffsetTicks + static_cast<__int128>(host) * kHz / 1'000'000'000);
    ASSERT_EQ(dev, expected);
  }

  uint64_t h0 = 0, d0 = 0, h1 = 0, d1 = 0;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &h0, &d0));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &h1, &d1));
  double rate = static_cast<double>(d1 - d0) * 1e9 / static_cast<double>(h1 - h0);
  EXPECT_NEAR(rate, static_cast<double>(kHz), kHz * 1e-5);

  // A second GPU has its own counter, a documented distance ahead.
  uint64_t hb = 0, db = 0;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.devices[1], &hb, &db));
  uint64_t expected_b = static_cast<uint64_t>(kOffsetTicks + kPerDeviceOffset +
                                              static_cast<__int128>(hb) * kHz / 1'000'000'000);
  EXPECT_EQ(db, expected_b);
}

TEST(Clock, DriftPpmMakesTheDeviceClockRunFast) {
  ChildResult r = run_child("drift", {{"XTRACE_SIMZE_DRIFT_PPM", "2000"},
                                      {"XTRACE_SIMZE_CLOCK_ORIGIN_NS", "init"}},
                            false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  uint64_t h0, d0, h1, d1;
  ASSERT_EQ(std::sscanf(r.output.c_str(), "drift %lu %lu %lu %lu", &h0, &d0, &h1, &d1), 4)
      << r.output;
  double rate = static_cast<double>(d1 - d0) * 1e9 / static_cast<double>(h1 - h0);
  EXPECT_NEAR(rate / kHz, 1.002, 20e-6) << "measured " << rate << " Hz";
}

// XTRACE_SIMZE_DEVICE_ORDER lists the devices in another order, as an affinity mask gives a
// process its own view: each device keeps its UUID and its clock wherever it is listed.
TEST(Discovery, DeviceOrderReordersTheListButNotTheDevices) {
  ChildResult plain = run_child("uuids", {}, false);
  ChildResult reversed = run_child("uuids", {{"XTRACE_SIMZE_DEVICE_ORDER", "1,0"}}, false);
  ChildResult one = run_child("uuids", {{"XTRACE_SIMZE_DEVICE_ORDER", "1"}}, false);
  ChildResult bad = run_child("uuids", {{"XTRACE_SIMZE_DEVICE_ORDER", "0,2"}}, false);
  for (const ChildResult* r : {&plain, &reversed, &one, &bad}) ASSERT_EQ(r->exit_code, 0) << r->output;
  // "device <position> <uuid> <ticks / 10^12>": device i runs i x 10^12 ticks ahead.
  auto lines = [](const std::string& out) {
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("device ", 0) == 0) v.push_back(line.substr(9));  // past "device <position> "
    return v;
  };
  const auto p = lines(plain.output), r = lines(reversed.output), o = lines(one.output);
  ASSERT_EQ(p.size(), 2u) << plain.output;
  EXPECT_NE(p[0], p[1]);
  EXPECT_EQ(r, (std::vector<std::string>{p[1], p[0]})) << reversed.output;
  EXPECT_EQ(o, (std::vector<std::string>{p[1]})) << one.output;
  EXPECT_NE(bad.output.find("xtrace-simze: ignoring XTRACE_SIMZE_DEVICE_ORDER=0,2"), std::string::npos)
      << bad.output;
  EXPECT_EQ(lines(bad.output), p);
}

TEST(Discovery, DefaultsAndInvalidSettings) {
  // Unset (empty) settings take their documented defaults; an invalid one is reported and
  // ignored rather than half-applied.
  ChildResult r = run_child("defaults", {{"XTRACE_SIMZE_DEVICE_NAME", ""},
                                         {"XTRACE_SIMZE_DEVICES", ""},
                                         {"XTRACE_SIMZE_CLOCK_OFFSET_TICKS", ""},
                                         {"XTRACE_SIMZE_TIMER_HZ", "19.2MHz"}},
                            false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("xtrace-simze: ignoring XTRACE_SIMZE_TIMER_HZ=19.2MHz"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("name=xtrace simulated GPU (Xe-HPC)\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("devices=1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hz=19200000\n"), std::string::npos) << r.output;
  uint64_t host = 0, dev = 0;
  size_t at = r.output.find("global ");
  ASSERT_NE(at, std::string::npos) << r.output;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at, "global %lu %lu", &host, &dev), 2);
  EXPECT_EQ(dev, 1'234'567'890'123ULL +
                     static_cast<uint64_t>(static_cast<__int128>(host) * kHz / 1'000'000'000));
}

// ---------------------------------------------------------------------------------------------
// Timestamps

TEST(Timestamps, WriteGlobalTimestampAndQueryKernelTimestamps) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000000 timed\n");
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  ze_event_pool_handle_t pool = make_event_pool(1, true);
  ze_event_handle_t e = make_event(pool, 0);
  uint64_t global[2] = {0, 0};
  ze_kernel_timestamp_result_t queried{};
  ZE_CHECK(zeCommandListAppendWriteGlobalTimestamp(list, &global[0], nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, make_kernel(m, "timed"), &kOneGroup, e, 0,
                                           nullptr));
  ZE_CHECK(zeCommandListAppendWriteGlobalTimestamp(list, &global[1], nullptr, 1, &e));
  ZE_CHECK(zeCommandListAppendQueryKernelTimestamps(list, 1, &e, &queried, nullptr, nullptr, 0,
                                                    nullptr));
  ZE_CHECK(zeCommandListClose(list));
  uint64_t host0 = 0, dev0 = 0, host1 = 0, dev1 = 0;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(session().device(), &host0, &dev0));
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));
  ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
  ZE_CHECK(zeDeviceGetGlobalTimestamps(session().device(), &host1, &dev1));

  EXPECT_GE(global[0], dev0);
  EXPECT_LE(global[1], dev1);
  EXPECT_GE(global[1] - global[0], kHz / 1000) << "the 1 ms kernel ran in between";
  EXPECT_GT(global[0], kMask32) << "global timestamps keep all 64 bits";
  ze_kernel_timestamp_result_t direct = kernel_ts(e);
  EXPECT_EQ(std::memcmp(&queried, &direct, sizeof direct), 0);
  // The kernel ran between the two global timestamps (compared on the 32-bit counter).
  const uint64_t span = (global[1] - global[0]) & kMask32;
  EXPECT_LE((direct.global.kernelStart - global[0]) & kMask32, span);
  EXPECT_LE((direct.global.kernelEnd - global[0]) & kMask32, span);
}

TEST(Timestamps, KernelTimestampsWrapAt32Bits) {
  // The device counter passes 2^32 500 ms after the origin we pin here; the child launches a
  // 200 ms kernel 50 ms before that, so the wrap happens while it runs (even if the launch is
  // delayed by a busy machine).
  const uint64_t origin = clock_ns(CLOCK_MONOTONIC_RAW);
  const uint64_t offset = (uint64_t{1} << 32) - kHz * 500 / 1000;
  char truth_path[] = "/tmp/simgpu_wrap_truth_XXXXXX";
  int fd = mkstemp(truth_path);
  ASSERT_GE(fd, 0);
  close(fd);
  ChildResult r = run_child("wrap", {{"XTRACE_SIMZE_CLOCK_ORIGIN_NS", std::to_string(origin)},
                                     {"XTRACE_SIMZE_CLOCK_OFFSET_TICKS", std::to_string(offset)},
                                     {"XTRACE_SIMZE_DEVICES", "1"},
                                     {"XTRACE_SIMZE_GROUND_TRUTH", truth_path}},
                            false);
  std::vector<Truth> truth = read_ground_truth(truth_path);
  unlink(truth_path);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  uint64_t s0, e0, xs0, xe0, s1, e1, host, dev;
  ASSERT_EQ(std::sscanf(r.output.c_str(), "wrap %lu %lu exp %lu %lu after %lu %lu global %lu %lu",
                        &s0, &e0, &xs0, &xe0, &s1, &e1, &host, &dev),
            8)
      << r.output;
  for (uint64_t v : {s0, e0, s1, e1}) EXPECT_LE(v, kMask32);
  EXPECT_LT(e0, s0) << "the 32-bit kernel counter wrapped during the kernel";
  EXPECT_GE(((e0 - s0) & kMask32) + 1, kHz * 200 / 1000) << "200 ms, measured across the wrap";
  EXPECT_LE((e0 - s0) & kMask32, kHz * (200'000'000 + kSchedulingSlackNs) / 1'000'000'000);
  EXPECT_EQ(xs0, s0);
  EXPECT_EQ(xe0, e0);
  EXPECT_GT(s1, e0 - 1) << "after the wrap, small values again";
  EXPECT_LT(s1, kHz) << "within a second of the wrap";
  // The 64-bit global counter does not wrap, and follows the pinned origin exactly.
  EXPECT_GT(dev, kMask32);
  EXPECT_EQ(dev, offset + static_cast<uint64_t>(static_cast<__int128>(host - origin) * kHz /
                                                1'000'000'000));

  ASSERT_EQ(truth.size(), 2u);
  EXPECT_LT(truth[0].start_ticks, uint64_t{1} << 32);
  EXPECT_GE(truth[0].end_ticks, uint64_t{1} << 32) << "ground truth keeps raw 64-bit ticks";
  EXPECT_EQ(truth[0].start_ticks & kMask32, s0);
  EXPECT_EQ(truth[0].end_ticks & kMask32, e0);
  EXPECT_EQ(truth[1].start_ticks & kMask32, s1);
}

// ---------------------------------------------------------------------------------------------
// Kernel-driver stand-in: observed from outside with ptrace, as a syscall tracer would see it

struct ExecCall {
  unsigned long cmd;
  std::vector<uint8_t> arg;
  std::vector<uint8_t> objects;
  std::string fd_target;
};

// Parses the traced child's calls into "ioctls between marker k and k+1".
std::map<long, std::vector<ExecCall>> exec_calls_by_marker(const ChildResult& r,
                                                            unsigned long cmd) {
  std::map<long, std::vector<ExecCall>> out;
  long current = 0;  // before the first marker
  out[current];
  for (const TracedCall& c : r.calls) {
    if (c.kind == TracedCall::kMarker) {
      current = c.marker;
      out[current];
    } else if (c.cmd == 0x40406469 || c.cmd == 0x40386449) {
      EXPECT_EQ(c.cmd, cmd) << "only the configured flavour is issued";
      out[current].push_back({c.cmd, c.arg, c.i915_objects, c.fd_target});
    }
  }
  return out;
}

template <typename T>
T field(const std::vector<uint8_t>& bytes, size_t offset) {
  T v{};
  if (offset + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

// Scenario "submissions" (see below): marker k precedes submission k; 7 is a prefetch (no
// submission); 8 ends. Expected exec ioctls per marker: 1..6 exactly one, 0/7/8 none.
void expect_one_exec_per_submission(const std::map<long, std::vector<ExecCall>>& calls) {
  for (long k = 0; k <= 8; ++k) {
    auto it = calls.find(k);
    ASSERT_TRUE(it != calls.end()) << "marker " << k << " missing";
    const size_t want = (k >= 1 && k <= 6) ? 1 : 0;
    ASSERT_EQ(it->second.size(), want) << "exec ioctls after marker " << k;
    for (const ExecCall& c : it->second) EXPECT_EQ(c.fd_target, "/dev/null");
  }
}

TEST(Kmd, OneI915ExecbufferPerSubmissionOnTheCallingThread) {
  ChildResult r = run_child("submissions", {{"XTRACE_SIMZE_DRM", "i915"}}, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto calls = exec_calls_by_marker(r, 0x40406469);
  expect_one_exec_per_submission(calls);
  if (HasFatalFailure()) return;
  auto eb = [&](long k) { return calls.at(k).at(0); };
  // drm_i915_gem_execbuffer2: buffer_count@8, batch_start_offset@12, batch_len@16,
  // flags@40 (engine in bits 0-5), rsvd1@48 (context id).
  EXPECT_EQ(field<uint32_t>(eb(1).arg, 8), 3u) << "two command lists plus the batch";
  EXPECT_EQ(field<uint32_t>(eb(2).arg, 8), 2u);
  EXPECT_EQ(field<uint32_t>(eb(3).arg, 8), 2u);
  EXPECT_EQ(field<uint64_t>(eb(1).arg, 40) & 0x3f, 1u) << "compute queue on the render engine";
  EXPECT_EQ(field<uint64_t>(eb(3).arg, 40) & 0x3f, 3u) << "copy queue on the blitter";
  EXPECT_EQ(field<uint64_t>(eb(4).arg, 40) & 0x3f, 1u);
  const uint64_t ctx_q = field<uint64_t>(eb(1).arg, 48);
  EXPECT_EQ(field<uint64_t>(eb(2).arg, 48), ctx_q) << "same queue, same context";
  EXPECT_NE(field<uint64_t>(eb(3).arg, 48), ctx_q);
  const uint64_t ctx_il = field<uint64_t>(eb(4).arg, 48);
  EXPECT_NE(ctx_il, ctx_q);
  EXPECT_NE(ctx_il, field<uint64_t>(eb(3).arg, 48));
  EXPECT_EQ(field<uint64_t>(eb(5).arg, 48), ctx_il);
  EXPECT_EQ(field<uint64_t>(eb(6).arg, 48), ctx_il);
  EXPECT_NE(field<uint32_t>(eb(2).arg, 12), field<uint32_t>(eb(1).arg, 12)) << "ring advances";
  for (long k = 1; k <= 6; ++k) {
    uint32_t len = field<uint32_t>(eb(k).arg, 16);
    EXPECT_GT(len, 0u);
    EXPECT_EQ(len % 8, 0u);
    // buffers_ptr points at real exec objects in the child (read back through process_vm_readv).
    ASSERT_EQ(eb(k).objects.size(), field<uint32_t>(eb(k).arg, 8) * 56u) << "submission " << k;
    EXPECT_NE(field<uint32_t>(eb(k).objects, 0), 0u) << "object handles are set";
  }
}

TEST(Kmd, XeExecWhenConfigured) {
  ChildResult r = run_child("submissions", {{"XTRACE_SIMZE_DRM", "xe"}}, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto calls = exec_calls_by_marker(r, 0x40386449);
  expect_one_exec_per_submission(calls);
  if (HasFatalFailure()) return;
  auto ex = [&](long k) { return calls.at(k).at(0).arg; };
  // drm_xe_exec: exec_queue_id@8, num_syncs@12, address@24, num_batch_buffer(u16)@32.
  const uint32_t q = field<uint32_t>(ex(1), 8);
  EXPECT_EQ(field<uint32_t>(ex(2), 8), q);
  EXPECT_NE(field<uint32_t>(ex(3), 8), q);
  EXPECT_NE(field<uint32_t>(ex(4), 8), q);
  EXPECT_EQ(field<uint32_t>(ex(5), 8), field<uint32_t>(ex(4), 8));
  for (long k = 1; k <= 6; ++k) {
    EXPECT_EQ(field<uint16_t>(ex(k), 32), 1u);
    EXPECT_NE(field<uint64_t>(ex(k), 24), 0u);
    EXPECT_EQ(field<uint64_t>(ex(k), 0), 0u) << "no extensions";
  }
}

TEST(Kmd, NoneIssuesNoExecIoctl) {
  ChildResult r = run_child("submissions", {{"XTRACE_SIMZE_DRM", "none"}}, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t markers = 0;
  for (const TracedCall& c : r.calls) {
    if (c.kind == TracedCall::kMarker) ++markers;
    if (c.kind == TracedCall::kIoctl) {
      EXPECT_NE(c.cmd, 0x40406469u);
      EXPECT_NE(c.cmd, 0x40386449u);
    }
  }
  EXPECT_EQ(markers, 8u) << "the trace itself worked";
}

// ---------------------------------------------------------------------------------------------
// Child scenarios (run by run_child in a fresh process with their own configuration)

int scenario_drift() {
  Session& s = session();
  uint64_t h0, d0, h1, d1;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &h0, &d0));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &h1, &d1));
  std::printf("drift %lu %lu %lu %lu\n", h0, d0, h1, d1);
  return 0;
}

int scenario_defaults() {
  Session& s = session();
  ze_device_properties_t p = device_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, s.device());
  uint64_t host = 0, dev = 0;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &host, &dev));
  std::printf("name=%s\ndevices=%zu\nhz=%lu\nglobal %lu %lu\n", p.name, s.devices.size(),
              p.timerResolution, host, dev);
  return 0;
}

int scenario_wrap() {
  Session& s = session();
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\nkernel 200000000 spans_the_wrap\nkernel 1000000 after_the_wrap\n");
  ze_kernel_handle_t k0 = make_kernel(m, "spans_the_wrap");
  ze_kernel_handle_t k1 = make_kernel(m, "after_the_wrap");
  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(2, true);
  ze_event_handle_t e0 = make_event(pool, 0), e1 = make_event(pool, 1);
  const uint64_t wrap = uint64_t{1} << 32;
  // Wait until 50 ms before the counter reaches 2^32.
  for (;;) {
    uint64_t host, dev;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &host, &dev));
    if (dev >= wrap - kHz / 1000) {
      std::printf("started too late: device counter already at %lu\n", dev);
      return 1;
    }
    if (dev >= wrap - kHz * 50 / 1000) break;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k0, &kOneGroup, e0, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k1, &kOneGroup, e1, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(e1, UINT64_MAX));
  ze_kernel_timestamp_result_t t0 = kernel_ts(e0), t1 = kernel_ts(e1), x0{};
  uint32_t count = 1;
  ZE_CHECK(zeEventQueryTimestampsExp(e0, s.device(), &count, &x0));
  uint64_t host, dev;
  ZE_CHECK(zeDeviceGetGlobalTimestamps(s.device(), &host, &dev));
  std::printf("wrap %lu %lu exp %lu %lu after %lu %lu global %lu %lu\n", t0.global.kernelStart,
              t0.global.kernelEnd, x0.global.kernelStart, x0.global.kernelEnd,
              t1.global.kernelStart, t1.global.kernelEnd, host, dev);
  return 0;
}

// Submissions, each preceded by a marker syscall: 1-2 compute queue, 3 copy queue,
// 4-6 immediate list appends; 7 a prefetch (no submission); 8 the end.
int scenario_submissions() {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 10000 traced_kernel\n");
  ze_kernel_handle_t k = make_kernel(m, "traced_kernel");
  ze_command_queue_handle_t q = make_queue(0), cq = make_queue(1);
  ze_command_list_handle_t l1 = make_list(0), l2 = make_list(0), l3 = make_list(1);
  ze_command_list_handle_t il = make_immediate(0);
  std::vector<uint8_t> a(4096, 1), b(4096, 0);
  ZE_CHECK(zeCommandListAppendLaunchKernel(l1, k, &kOneGroup, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(l2, k, &kOneGroup, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(l3, b.data(), a.data(), a.size(), nullptr, 0, nullptr));
  for (auto l : {l1, l2, l3}) ZE_CHECK(zeCommandListClose(l));
  ze_command_list_handle_t both[2] = {l1, l2};

  syscall_marker(1);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 2, both, nullptr));
  syscall_marker(2);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &l1, nullptr));
  syscall_marker(3);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(cq, 1, &l3, nullptr));
  syscall_marker(4);
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, nullptr, 0, nullptr));
  syscall_marker(5);
  ZE_CHECK(zeCommandListAppendMemoryCopy(il, b.data(), a.data(), 64, nullptr, 0, nullptr));
  syscall_marker(6);
  ZE_CHECK(zeCommandListAppendBarrier(il, nullptr, 0, nullptr));
  syscall_marker(7);
  ZE_CHECK(zeCommandListAppendMemoryPrefetch(il, a.data(), a.size()));
  syscall_marker(8);
  ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
  ZE_CHECK(zeCommandQueueSynchronize(cq, UINT64_MAX));
  ZE_CHECK(zeCommandListDestroy(il));
  return b[0] == 1 ? 0 : 2;
}

// Each listed device: its position, UUID and clock (in units of 10^12 ticks, which tell the
// devices apart: see kPerDeviceOffsetTicks).
int scenario_uuids() {
  Session& s = session();
  for (size_t i = 0; i < s.devices.size(); ++i) {
    ze_device_properties_t p = device_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, s.devices[i]);
    uint64_t host = 0, ticks = 0;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(s.devices[i], &host, &ticks));
    std::printf("device %zu ", i);
    for (uint8_t b : p.uuid.id) std::printf("%02x", b);
    std::printf(" %lu\n", static_cast<unsigned long>(ticks / 1'000'000'000'000));
  }
  return 0;
}

int run_scenario(const std::string& name) {
  static const std::map<std::string, std::function<int()>> scenarios = {
      {"defaults", scenario_defaults},
      {"drift", scenario_drift},
      {"wrap", scenario_wrap},
      {"submissions", scenario_submissions},
      {"uuids", scenario_uuids},
  };
  auto it = scenarios.find(name);
  if (it == scenarios.end()) {
    std::fprintf(stderr, "unknown scenario %s\n", name.c_str());
    return 3;
  }
  try {
    int rc = it->second();
    std::fflush(stdout);
    return rc;
  } catch (const std::exception& e) {
    std::printf("scenario %s failed: %s\n", name.c_str(), e.what());
    return 1;
  }
}

// The main process's driver configuration. Children inherit it and override what they need.
void configure_environment() {
  setenv("ZE_ENABLE_ALT_DRIVERS", SIMZE_PATH, 1);
  setenv("XTRACE_SIMZE_DEVICE_NAME", kDeviceName, 1);
  setenv("XTRACE_SIMZE_DEVICES", "2", 1);
  setenv("XTRACE_SIMZE_TIMER_HZ", std::to_string(kHz).c_str(), 1);
  setenv("XTRACE_SIMZE_CLOCK_OFFSET_TICKS", std::to_string(kOffsetTicks).c_str(), 1);
  unsetenv("XTRACE_SIMZE_CLOCK_ORIGIN_NS");
  unsetenv("XTRACE_SIMZE_DRIFT_PPM");
  setenv("XTRACE_SIMZE_DEFAULT_KERNEL_NS", std::to_string(kDefaultKernelNs).c_str(), 1);
  setenv("XTRACE_SIMZE_COPY_GBPS", "10", 1);
  setenv("XTRACE_SIMZE_DRM", "i915", 1);
  g_truth_path = "/tmp/simgpu_loader_test." + std::to_string(getpid()) + ".tsv";
  unlink(g_truth_path.c_str());
  setenv("XTRACE_SIMZE_GROUND_TRUTH", g_truth_path.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == kChildFlag) return run_scenario(argv[2]);
  configure_environment();
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new TestStartClock);
  int rc = RUN_ALL_TESTS();
  unlink(g_truth_path.c_str());
  return rc;
}
