// Tests of the simulated Level Zero driver, always through Debian's real loader
// (libze_loader.so.1 with ZE_ENABLE_ALT_DRIVERS). Scenarios that need their own driver
// configuration (clock offsets, drift, DRM flavour) run in a re-executed child process.
// Longer than our ~600-line rule on purpose: the scenarios at the end re-execute this one
// binary as configured children and share the ground-truth and timestamp helpers at the top.
// A new driver surface starts its own file (tests/simgpu/test_child.h has the child protocol).
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

#include "test_child.h"
#include "test_ze.h"

using namespace simgpu_test;

namespace {

// Driver configuration of the main test process (set in main, before any zeInit).
constexpr uint64_t kHz = 19'200'000;
constexpr int64_t kOffsetTicks = 3LL * 3600 * 19'200'000;  // three hours of ticks
constexpr uint64_t kDefaultKernelNs = 300'000;
constexpr double kCopyGbps = 10.0;
constexpr const char* kDeviceName = "simgpu loader test <Xe-HPC>, device";
constexpr uint64_t kMask32 = 0xffff'ffffULL;
constexpr uint64_t kPerDeviceOffset = 1'000'000'000'000ULL;  // documented in README.md
// Upper bound on how late a single command may end on a saturated machine (a preempted worker
// thread). Accuracy is checked separately on the median, so this only catches gross errors.
constexpr uint64_t kSchedulingSlackNs = 50'000'000;

std::string g_truth_path;
uint64_t g_test_start_mono = 0;  // CLOCK_MONOTONIC when the current test started

// Handles of destroyed objects may be reused by later ones, so ground truth is looked up only
// among records of the current test.
class TestStartClock : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override {
    g_test_start_mono = simgpu_test::clock_ns(CLOCK_MONOTONIC);
  }
};

uint64_t ticks_to_ns(uint64_t ticks) { return ticks * 1'000'000'000ULL / kHz; }

std::vector<Truth> truth_where(const std::function<bool(const Truth&)>& pred,
                               const std::string& path = g_truth_path) {
  std::vector<Truth> out;
  for (Truth& t : read_ground_truth(path)) {
    if (pred(t)) out.push_back(std::move(t));
  }
  return out;
}

std::vector<Truth> truth_for_list(ze_command_list_handle_t list) {
  return truth_where([&](const Truth& t) {
    return t.cmdlist == handle_value(list) && t.submit_mono >= g_test_start_mono;
  });
}

ze_kernel_timestamp_result_t kernel_ts(ze_event_handle_t e) {
  ze_kernel_timestamp_result_t r{};
  ZE_CHECK(zeEventQueryKernelTimestamp(e, &r));
  return r;
}

uint64_t masked_duration(const ze_kernel_timestamp_result_t& r) {
  return (r.global.kernelEnd - r.global.kernelStart) & kMask32;
}

ze_device_properties_t device_properties(ze_structure_type_t stype, ze_device_handle_t dev) {
  ze_device_properties_t p{};
  p.stype = stype;
  ZE_CHECK(zeDeviceGetProperties(dev, &p));
  return p;
}

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
// Kernels and their timing

// Executes `list` (kernels alternating long/short, one timestamp event each) once and checks
// every kernel against its timestamps and ground truth. Returns measured - module duration.
std::vector<int64_t> run_timed_list(ze_command_queue_handle_t q, ze_command_list_handle_t list,
                                    const std::vector<ze_event_handle_t>& events,
                                    const uint64_t want_ns[2], const char* const names[2]) {
  for (ze_event_handle_t e : events) ZE_CHECK(zeEventHostReset(e));
  ze_fence_handle_t fence = make_fence(q);
  const uint64_t before = clock_ns(CLOCK_MONOTONIC);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, fence));
  ZE_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
  const uint64_t after = clock_ns(CLOCK_MONOTONIC);
  ZE_CHECK(zeFenceDestroy(fence));

  std::vector<Truth> truth = truth_for_list(list);
  if (truth.size() < events.size()) throw std::runtime_error("missing ground truth lines");
  truth.erase(truth.begin(), truth.end() - static_cast<long>(events.size()));  // this execution
  std::vector<int64_t> errors_ns;
  for (size_t i = 0; i < events.size(); ++i) {
    const uint64_t want = want_ns[i % 2];
    ze_kernel_timestamp_result_t ts = kernel_ts(events[i]);
    EXPECT_LE(ts.global.kernelStart, kMask32);
    EXPECT_LE(ts.global.kernelEnd, kMask32);
    const uint64_t measured = ticks_to_ns(masked_duration(ts));
    // Never short (one tick of quantisation aside), and late by scheduling noise at most.
    EXPECT_GE(measured + 53, want) << "kernel " << i;
    EXPECT_LE(measured, want + kSchedulingSlackNs) << "kernel " << i;
    errors_ns.push_back(static_cast<int64_t>(measured) - static_cast<int64_t>(want));

    uint32_t count = 0;
    ZE_CHECK(zeEventQueryTimestampsExp(events[i], session().device(), &count, nullptr));
    EXPECT_EQ(count, 1u);
    ze_kernel_timestamp_result_t exp{};
    count = 1;
    ZE_CHECK(zeEventQueryTimestampsExp(events[i], session().device(), &count, &exp));
    EXPECT_EQ(exp.global.kernelStart, ts.global.kernelStart);
    EXPECT_EQ(exp.global.kernelEnd, ts.global.kernelEnd);

    const Truth& t = truth[i];
    EXPECT_EQ(t.kind, "kernel");
    EXPECT_EQ(t.name, names[i % 2]);
    EXPECT_EQ(t.start_ticks & kMask32, ts.global.kernelStart);
    EXPECT_EQ(t.end_ticks & kMask32, ts.global.kernelEnd);
    EXPECT_EQ(t.queue, handle_value(q));
    EXPECT_EQ(t.pid, getpid());
    EXPECT_EQ(t.device, 0u);
    EXPECT_EQ(t.bytes, 0u);
    // Ground truth is CLOCK_MONOTONIC: inside the host's bracket, after the submission.
    EXPECT_GE(t.start_mono, before);
    EXPECT_LE(t.end_mono, after);
    EXPECT_LE(t.submit_mono, t.start_mono);
    EXPECT_GE(t.submit_mono, before);
    EXPECT_EQ(t.submit_tid, static_cast<int>(gettid()));
    // MONOTONIC may be slewed against RAW by up to 500 ppm: allow 1 µs on 2 ms.
    EXPECT_GE(t.end_mono - t.start_mono + 1'000, want);
    EXPECT_LE(t.end_mono - t.start_mono, want + kSchedulingSlackNs);
    if (i > 0) {
      EXPECT_GE(t.start_mono, truth[i - 1].end_mono) << "in order, one at a time";
      EXPECT_EQ(t.submission, truth[i - 1].submission);
    }
  }
  return errors_ns;
}

TEST(Kernel, DurationFromModuleMeasuredByTimestampsAndGroundTruth) {
  const uint64_t want_ns[2] = {2'000'000, 50'000};
  const char* const names[2] = {"simgpu_sleep_2ms", "simgpu_short_50us"};
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\n"
      "kernel 2000000 simgpu_sleep_2ms\n"
      "kernel 50000 simgpu_short_50us\n");
  ze_kernel_handle_t kernels[2] = {make_kernel(m, names[0]), make_kernel(m, names[1])};
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  ze_event_pool_handle_t pool = make_event_pool(8, true);
  std::vector<ze_event_handle_t> events;
  for (uint32_t i = 0; i < 8; ++i) events.push_back(make_event(pool, i));
  for (uint32_t i = 0; i < 8; ++i) {
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, kernels[i % 2], &kOneGroup, events[i], 0,
                                             nullptr));
  }
  ZE_CHECK(zeCommandListClose(list));

  // Accuracy: the median error is a few hundred ns on a quiet machine. A saturated machine can
  // delay the worker thread by milliseconds, so up to three executions are tried; a simulator
  // that is systematically off fails all of them.
  int64_t best_median = INT64_MAX;
  for (int attempt = 0; attempt < 3 && best_median > 20'000; ++attempt) {
    std::vector<int64_t> errors = run_timed_list(q, list, events, want_ns, names);
    if (HasFailure()) return;
    std::vector<int64_t> sorted = errors;
    std::sort(sorted.begin(), sorted.end());
    const int64_t median = sorted[sorted.size() / 2];
    best_median = std::min(best_median, median);
    std::printf("kernel duration error (measured - module), ns: median %ld, max %ld; all:",
                static_cast<long>(median), static_cast<long>(sorted.back()));
    for (int64_t e : errors) std::printf(" %ld", static_cast<long>(e));
    std::printf("\n");
  }
  EXPECT_LE(best_median, 20'000) << "durations should be accurate to a few µs";
}

TEST(Kernel, EventsFromAPoolWithoutTimestampsSignalButHoldNoTimestamps) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 10000 plain_kernel\n");
  ze_kernel_handle_t k = make_kernel(m, "plain_kernel");
  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(1, false);
  ze_event_handle_t e = make_event(pool, 0);
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, e, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(e, UINT64_MAX));
  ze_kernel_timestamp_result_t r{};
  EXPECT_EQ(zeEventQueryKernelTimestamp(e, &r), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

std::string templated_name(size_t length) {
  std::string name =
      "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
      "float, at::native::binary_internal::MulFunctor<float>>, std::array<char*, 3ul>, ";
  while (name.size() < length - 40) name += "std::tuple<int, float, std::pair<long, double>>, ";
  name.resize(length - 40);
  name += ">(int, at::native::BinaryFunctor<float>, x)";
  name.resize(length);
  return name;
}

TEST(Kernel, ThousandCharacterTemplatedNameRoundTrips) {
  const std::string name = templated_name(1000);
  ASSERT_EQ(name.size(), 1000u);
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 100000 " + name +
                                     "\nkernel 1000 other_kernel\n");
  ze_kernel_handle_t k = make_kernel(m, name);
  size_t size = 0;
  ZE_CHECK(zeKernelGetName(k, &size, nullptr));
  ASSERT_EQ(size, 1001u);
  std::string back(size, '\0');
  ZE_CHECK(zeKernelGetName(k, &size, back.data()));
  back.resize(size - 1);
  EXPECT_EQ(back, name);

  uint32_t count = 0;
  ZE_CHECK(zeModuleGetKernelNames(m, &count, nullptr));
  ASSERT_EQ(count, 2u);
  std::vector<const char*> names(count);
  ZE_CHECK(zeModuleGetKernelNames(m, &count, names.data()));
  EXPECT_EQ(std::string(names[0]), name);
  EXPECT_STREQ(names[1], "other_kernel");

  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(1, true);
  ze_event_handle_t e = make_event(pool, 0);
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, e, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(e, UINT64_MAX));
  std::vector<Truth> truth = truth_for_list(il);
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_EQ(truth[0].name, name);
  EXPECT_EQ(truth[0].queue, handle_value(il)) << "an immediate list is its own queue";
  EXPECT_GE(ticks_to_ns(masked_duration(kernel_ts(e))) + 53, 100'000u);
}

TEST(Kernel, UnknownNameInSimulatedModuleIsRejected) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000 known\n");
  ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "unknown"};
  ze_kernel_handle_t k = nullptr;
  EXPECT_EQ(zeKernelCreate(m, &desc, &k), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
  desc.pKernelName = "known ";  // names are exact
  EXPECT_EQ(zeKernelCreate(m, &desc, &k), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
  desc.pKernelName = "known";
  EXPECT_EQ(zeKernelCreate(m, &desc, &k), ZE_RESULT_SUCCESS);
}

TEST(Kernel, MalformedSimulatedModuleFailsWithBuildLog) {
  const std::string text = "XTRACE-SIMGPU-MODULE 1\nkernel 100 fine\nkernel soon broken\n";
  ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV,
                        text.size(), reinterpret_cast<const uint8_t*>(text.data()), nullptr,
                        nullptr};
  ze_module_handle_t m = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  EXPECT_EQ(zeModuleCreate(session().context, session().device(), &desc, &m, &log),
            ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
  ASSERT_NE(log, nullptr);
  size_t size = 0;
  ZE_CHECK(zeModuleBuildLogGetString(log, &size, nullptr));
  std::string text_log(size, '\0');
  ZE_CHECK(zeModuleBuildLogGetString(log, &size, text_log.data()));
  EXPECT_NE(text_log.find("line 3"), std::string::npos) << text_log;
  ZE_CHECK(zeModuleBuildLogDestroy(log));
}

TEST(Kernel, OpaqueModuleAcceptsAnyNameWithDefaultDuration) {
  // Starts like SPIR-V (magic 0x07230203): any real program's module is accepted.
  const uint8_t spirv[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00,
                           0x0e, 0x00, 0x06, 0x00, 0xde, 0xad, 0xbe, 0xef};
  ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV,
                        sizeof spirv, spirv, nullptr, nullptr};
  ze_module_handle_t m = nullptr;
  ZE_CHECK(zeModuleCreate(session().context, session().device(), &desc, &m, nullptr));
  ze_kernel_handle_t k = make_kernel(m, "whatever_the_program_asks_for");
  ze_kernel_handle_t k2 = make_kernel(m, "_ZTSZ4mainEUlN4sycl3_V14itemILi1ELb1EEEE_");
  uint32_t count = 7;
  ZE_CHECK(zeModuleGetKernelNames(m, &count, nullptr));
  EXPECT_EQ(count, 0u) << "an opaque module cannot list its kernels";

  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(2, true);
  ze_event_handle_t e0 = make_event(pool, 0), e1 = make_event(pool, 1);
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, e0, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k2, &kOneGroup, e1, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(e1, UINT64_MAX));
  for (ze_event_handle_t e : {e0, e1}) {
    uint64_t ns = ticks_to_ns(masked_duration(kernel_ts(e)));
    EXPECT_GE(ns + 53, kDefaultKernelNs);
    EXPECT_LE(ns, kDefaultKernelNs + kSchedulingSlackNs);
  }
  std::vector<Truth> truth = truth_for_list(il);
  ASSERT_EQ(truth.size(), 2u);
  EXPECT_EQ(truth[0].name, "whatever_the_program_asks_for");
  EXPECT_EQ(truth[1].name, "_ZTSZ4mainEUlN4sycl3_V14itemILi1ELb1EEEE_");
}

TEST(Kernel, GroupSizesAndProperties) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000 gemm\n");
  ze_kernel_handle_t k = make_kernel(m, "gemm");
  uint32_t x = 0, y = 0, z = 0;
  ZE_CHECK(zeKernelSuggestGroupSize(k, 4096, 6, 1, &x, &y, &z));
  EXPECT_EQ(4096 % x, 0u);
  EXPECT_EQ(6 % y, 0u);
  EXPECT_LE(x * y * z, 1024u);
  ZE_CHECK(zeKernelSetGroupSize(k, x, y, z));
  EXPECT_EQ(zeKernelSetGroupSize(k, 1024, 2, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
  int arg = 3;
  ZE_CHECK(zeKernelSetArgumentValue(k, 0, sizeof arg, &arg));
  ZE_CHECK(zeKernelSetArgumentValue(k, 5, sizeof arg, &arg));
  ze_kernel_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  ZE_CHECK(zeKernelGetProperties(k, &props));
  EXPECT_GT(props.maxSubgroupSize, 0u);
}

// ---------------------------------------------------------------------------------------------
// Execution model

TEST(Execution, RegularListRunsAgainOnEveryExecution) {
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\nkernel 1000000 repeat_me\nkernel 200000 after_reset\n");
  ze_kernel_handle_t k = make_kernel(m, "repeat_me");
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  ze_event_pool_handle_t pool = make_event_pool(1, true);
  ze_event_handle_t e = make_event(pool, 0);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, k, &kOneGroup, e, 0, nullptr));
  ZE_CHECK(zeCommandListClose(list));

  std::vector<ze_kernel_timestamp_result_t> stamps;
  for (int i = 0; i < 3; ++i) {
    ZE_CHECK(zeEventHostReset(e));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));
    ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
    EXPECT_EQ(zeEventQueryStatus(e), ZE_RESULT_SUCCESS);
    stamps.push_back(kernel_ts(e));
  }
  std::vector<Truth> truth = truth_for_list(list);
  ASSERT_EQ(truth.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(truth[i].name, "repeat_me");
    EXPECT_EQ(truth[i].start_ticks & kMask32, stamps[i].global.kernelStart) << "re-recorded";
    if (i > 0) {
      EXPECT_GT(truth[i].submission, truth[i - 1].submission);
      EXPECT_GE(truth[i].start_ticks, truth[i - 1].end_ticks);
    }
  }

  // Reset and re-record: the next execution runs only the new contents.
  ZE_CHECK(zeCommandListReset(list));
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, make_kernel(m, "after_reset"), &kOneGroup,
                                           nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListClose(list));
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));
  ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
  truth = truth_for_list(list);
  ASSERT_EQ(truth.size(), 4u);
  EXPECT_EQ(truth[3].name, "after_reset");
}

TEST(Execution, UnclosedOrMismatchedListsAreRefused) {
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t open_list = make_list(0);
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(q, 1, &open_list, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ze_command_list_handle_t copy_list = make_list(1);
  ZE_CHECK(zeCommandListClose(copy_list));
  EXPECT_EQ(zeCommandQueueExecuteCommandLists(q, 1, &copy_list, nullptr),
            ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
}

TEST(Execution, ImmediateListRunsAsynchronouslyInOrder) {
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\nkernel 100000000 first_100ms\nkernel 1000000 second_1ms\n"
      "kernel 1000000 third_1ms\n");
  ze_kernel_handle_t k[3] = {make_kernel(m, "first_100ms"), make_kernel(m, "second_1ms"),
                             make_kernel(m, "third_1ms")};
  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(3, true);
  ze_event_handle_t e[3] = {make_event(pool, 0), make_event(pool, 1), make_event(pool, 2)};

  uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < 3; ++i) {
    ZE_CHECK(zeCommandListAppendLaunchKernel(il, k[i], &kOneGroup, e[i], 0, nullptr));
  }
  uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
  EXPECT_LT(t1 - t0, 50'000'000u) << "appends must not wait for the 100 ms kernel";
  EXPECT_EQ(zeEventQueryStatus(e[2]), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeEventHostSynchronize(e[2], 0), ZE_RESULT_NOT_READY);
  ZE_CHECK(zeEventHostSynchronize(e[2], UINT64_MAX));
  EXPECT_EQ(zeEventQueryStatus(e[0]), ZE_RESULT_SUCCESS);

  std::vector<Truth> truth = truth_for_list(il);
  ASSERT_EQ(truth.size(), 3u);
  EXPECT_EQ(truth[0].name, "first_100ms");
  EXPECT_EQ(truth[1].name, "second_1ms");
  EXPECT_EQ(truth[2].name, "third_1ms");
  for (int i = 1; i < 3; ++i) {
    EXPECT_GE(truth[i].start_mono, truth[i - 1].end_mono);
    EXPECT_EQ(truth[i].submission, truth[i - 1].submission + 1) << "one submission per append";
  }
  ZE_CHECK(zeCommandListDestroy(il));
}

// ---------------------------------------------------------------------------------------------
// Memory

TEST(Memory, CopiesFillsAndRegionsReallyHappenInOrder) {
  Session& s = session();
  constexpr size_t kSize = 1 << 20;
  ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void *dev = nullptr, *host_src = nullptr, *shared = nullptr;
  ZE_CHECK(zeMemAllocDevice(s.context, &dd, kSize, 64, s.device(), &dev));
  ZE_CHECK(zeMemAllocHost(s.context, &hd, kSize, 64, &host_src));
  ZE_CHECK(zeMemAllocShared(s.context, &dd, &hd, kSize, 64, s.device(), &shared));
  auto* src = static_cast<uint8_t*>(host_src);
  for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  std::memset(shared, 0, kSize);
  std::vector<uint8_t> region_dst(64 * 16, 0xEE);

  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  const uint16_t pattern = 0xA5C3;
  // fill everything, copy the first half over it, copy it all out, then a 2-D region.
  ZE_CHECK(zeCommandListAppendMemoryFill(list, dev, &pattern, sizeof pattern, kSize, nullptr, 0,
                                         nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, dev, host_src, kSize / 2, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendMemoryCopy(list, shared, dev, kSize, nullptr, 0, nullptr));
  ze_copy_region_t src_region{16, 2, 0, 32, 8, 0};  // 32 bytes x 8 rows from (16, 2), pitch 256
  ze_copy_region_t dst_region{8, 4, 0, 32, 8, 0};   // to (8, 4), pitch 64
  ZE_CHECK(zeCommandListAppendMemoryCopyRegion(list, region_dst.data(), &dst_region, 64, 0,
                                               host_src, &src_region, 256, 0, nullptr, 0,
                                               nullptr));
  ZE_CHECK(zeCommandListClose(list));
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));
  ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));

  auto* out = static_cast<uint8_t*>(shared);
  EXPECT_EQ(std::memcmp(out, src, kSize / 2), 0);
  for (size_t i = kSize / 2; i < kSize; i += 2) {
    uint16_t v;
    std::memcpy(&v, out + i, 2);
    ASSERT_EQ(v, pattern) << "at " << i;
  }
  for (uint32_t row = 0; row < 16; ++row) {
    for (uint32_t col = 0; col < 64; ++col) {
      uint8_t want = 0xEE;
      if (row >= 4 && row < 12 && col >= 8 && col < 40) {
        want = src[(row - 4 + 2) * 256 + (col - 8 + 16)];
      }
      ASSERT_EQ(region_dst[row * 64 + col], want) << "row " << row << " col " << col;
    }
  }

  std::vector<Truth> truth = truth_for_list(list);
  ASSERT_EQ(truth.size(), 4u);
  EXPECT_EQ(truth[0].kind, "fill");
  EXPECT_EQ(truth[1].kind, "copy");
  EXPECT_EQ(truth[1].bytes, kSize / 2);
  EXPECT_EQ(truth[2].kind, "copy");
  EXPECT_EQ(truth[3].kind, "copy_region");
  EXPECT_EQ(truth[3].bytes, 32u * 8);
  // 1 MiB at the configured 10 GB/s takes about 105 µs.
  const uint64_t expect_ns = static_cast<uint64_t>(kSize / kCopyGbps);
  EXPECT_GE(truth[2].end_mono - truth[2].start_mono + 1'000, expect_ns);
  EXPECT_LE(truth[2].end_mono - truth[2].start_mono, expect_ns + kSchedulingSlackNs);

  ZE_CHECK(zeMemFree(s.context, dev));
  ZE_CHECK(zeMemFree(s.context, host_src));
  ZE_CHECK(zeMemFree(s.context, shared));
}

TEST(Memory, CopyEngineLimits) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000 k\n");
  ze_command_list_handle_t copy_list = make_list(1);
  std::vector<uint8_t> buf(256);
  const uint64_t wide = 0x0102030405060708ULL;
  const uint32_t narrow = 0xdeadbeef;
  EXPECT_EQ(zeCommandListAppendMemoryFill(copy_list, buf.data(), &wide, sizeof wide, buf.size(),
                                          nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_SIZE);
  ZE_CHECK(zeCommandListAppendMemoryFill(copy_list, buf.data(), &narrow, sizeof narrow, buf.size(),
                                         nullptr, 0, nullptr));
  EXPECT_EQ(zeCommandListAppendLaunchKernel(copy_list, make_kernel(m, "k"), &kOneGroup, nullptr, 0,
                                            nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ZE_CHECK(zeCommandListClose(copy_list));
  ze_command_queue_handle_t cq = make_queue(1);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(cq, 1, &copy_list, nullptr));
  ZE_CHECK(zeCommandQueueSynchronize(cq, UINT64_MAX));
  for (size_t i = 0; i < buf.size(); i += 4) {
    uint32_t v;
    std::memcpy(&v, buf.data() + i, 4);
    ASSERT_EQ(v, narrow);
  }
}

TEST(Memory, AllocationProperties) {
  Session& s = session();
  ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void *dev = nullptr, *host = nullptr, *shared = nullptr;
  ZE_CHECK(zeMemAllocDevice(s.context, &dd, 4096, 0, s.devices[1], &dev));
  ZE_CHECK(zeMemAllocHost(s.context, &hd, 100, 0, &host));
  ZE_CHECK(zeMemAllocShared(s.context, &dd, &hd, 5000, 4096, s.device(), &shared));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(shared) % 4096, 0u);

  ze_memory_allocation_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  ze_device_handle_t owner = nullptr;
  ZE_CHECK(zeMemGetAllocProperties(s.context, static_cast<char*>(dev) + 100, &p, &owner));
  EXPECT_EQ(p.type, ZE_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(owner, s.devices[1]);
  const uint64_t dev_id = p.id;
  ZE_CHECK(zeMemGetAllocProperties(s.context, host, &p, &owner));
  EXPECT_EQ(p.type, ZE_MEMORY_TYPE_HOST);
  EXPECT_NE(p.id, dev_id);
  ZE_CHECK(zeMemGetAllocProperties(s.context, shared, &p, &owner));
  EXPECT_EQ(p.type, ZE_MEMORY_TYPE_SHARED);
  int on_stack = 0;
  ZE_CHECK(zeMemGetAllocProperties(s.context, &on_stack, &p, &owner));
  EXPECT_EQ(p.type, ZE_MEMORY_TYPE_UNKNOWN);

  void* base = nullptr;
  size_t size = 0;
  ZE_CHECK(zeMemGetAddressRange(s.context, static_cast<char*>(shared) + 4999, &base, &size));
  EXPECT_EQ(base, shared);
  EXPECT_EQ(size, 5000u);
  EXPECT_EQ(zeMemAllocHost(s.context, &hd, 64, 3, &host), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
  ZE_CHECK(zeMemFree(s.context, dev));
  ZE_CHECK(zeMemFree(s.context, shared));
}

// ---------------------------------------------------------------------------------------------
// Synchronisation

TEST(Sync, FenceSignalsOnlyWhenExecutionCompletes) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 50000000 slow_50ms\n");
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, make_kernel(m, "slow_50ms"), &kOneGroup, nullptr,
                                           0, nullptr));
  ZE_CHECK(zeCommandListClose(list));
  ze_fence_handle_t fence = make_fence(q);
  EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);

  uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, fence));
  EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeFenceHostSynchronize(fence, 0), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeFenceHostSynchronize(fence, 5'000'000), ZE_RESULT_NOT_READY);
  EXPECT_EQ(zeCommandQueueSynchronize(q, 1'000'000), ZE_RESULT_NOT_READY);
  ZE_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
  uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
  EXPECT_GE(t1 - t0, 50'000'000u);
  EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_SUCCESS);
  ZE_CHECK(zeCommandQueueSynchronize(q, 0));
  ZE_CHECK(zeFenceReset(fence));
  EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
  ZE_CHECK(zeFenceDestroy(fence));
  ZE_CHECK(zeCommandQueueDestroy(q));
}

TEST(Sync, DeviceWaitsForHostSignalledEvent) {
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000000 gated\n");
  ze_command_queue_handle_t q = make_queue(0);
  ze_command_list_handle_t list = make_list(0);
  ze_event_pool_handle_t pool = make_event_pool(4, false);
  ze_event_handle_t gate = make_event(pool, 0), done = make_event(pool, 1),
                    marker = make_event(pool, 2), reset_me = make_event(pool, 3);
  ZE_CHECK(zeEventHostSignal(reset_me));
  ZE_CHECK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
  ZE_CHECK(zeCommandListAppendLaunchKernel(list, make_kernel(m, "gated"), &kOneGroup, done, 0,
                                           nullptr));
  ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 1, &done));
  ZE_CHECK(zeCommandListAppendSignalEvent(list, marker));
  ZE_CHECK(zeCommandListAppendEventReset(list, reset_me));
  ZE_CHECK(zeCommandListClose(list));
  ZE_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr));

  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(zeEventQueryStatus(done), ZE_RESULT_NOT_READY) << "must wait for the gate";
  EXPECT_EQ(zeEventHostSynchronize(done, 2'000'000), ZE_RESULT_NOT_READY);
  const uint64_t signalled_at = clock_ns(CLOCK_MONOTONIC);
  ZE_CHECK(zeEventHostSignal(gate));
  ZE_CHECK(zeEventHostSynchronize(marker, 1'000'000'000));
  ZE_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
  EXPECT_EQ(zeEventQueryStatus(done), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeEventQueryStatus(reset_me), ZE_RESULT_NOT_READY) << "reset by the device";

  std::vector<Truth> truth = truth_for_list(list);
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_GE(truth[0].start_mono, signalled_at);

  ZE_CHECK(zeEventHostReset(gate));
  EXPECT_EQ(zeEventQueryStatus(gate), ZE_RESULT_NOT_READY);
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
