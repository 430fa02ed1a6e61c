// Tests for correlate/correlator: kernel naming, process/thread introduction, unnamed kernels.
#include "correlate/correlator.h"

#include <gtest/gtest.h>

#include <vector>

#include "collecting_sink.h"

namespace xtrace {
namespace {

class FakeInspector : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    if (pid == 99) return std::nullopt;  // already gone
    return ProcessDetails{"app" + std::to_string(pid), "app --flag", pid + 1000,
                          "/kubepods/pod1/" + std::string(64, 'c'), std::string(64, 'c')};
  }
};

xt_record_header Header(uint16_t type, uint32_t pid, uint32_t tid, uint64_t t) {
  xt_record_header h{};
  h.type = type;
  h.pid = pid;
  h.tid = tid;
  h.start_ns = t;
  h.end_ns = t + 10;
  return h;
}

DecodedRecord Create(uint32_t pid, uint32_t tid, uint64_t kernel, std::string_view name) {
  return DecodedKernelCreate{Header(XT_REC_KERNEL_CREATE, pid, tid, 1), 0x77, kernel, 0, name};
}

DecodedRecord Name(uint32_t pid, uint32_t tid, std::string_view comm,
                   std::string_view leader = "leader") {
  return DecodedThreadName{Header(XT_REC_THREAD_NAME, pid, tid, 0), comm, leader};
}

DecodedRecord Launch(uint32_t pid, uint32_t tid, uint64_t kernel) {
  DecodedLaunchKernel l{};
  l.hdr = Header(XT_REC_LAUNCH_KERNEL, pid, tid, 5);
  l.kernel = kernel;
  l.group_count[0] = 8;
  return l;
}

struct Fixture : ::testing::Test {
  StringTable strings;
  CollectingSink sink;
  FakeInspector inspector;
  Correlator c{strings, sink, inspector};
};

TEST_F(Fixture, NamesLaunchesFromCreation) {
  c.OnRecord(Create(1, 2, 0xabc, "gemm"));
  c.OnRecord(Launch(1, 2, 0xabc));
  c.OnRecord(Launch(1, 3, 0xabc));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(strings.Get(launches[0].kernel_name), "gemm");
  EXPECT_TRUE(launches[0].name_known);
  EXPECT_EQ(launches[1].tid, 3u);
  EXPECT_EQ(launches[0].group_count[0], 8u);
  EXPECT_EQ(c.stats().launches, 2u);
  EXPECT_EQ(c.stats().launches_unnamed, 0u);
}

// --start-paused: a kernel created before the first resume is not shown, but names the
// launches that come after it.
TEST_F(Fixture, ACreationWhilePausedNamesLaterLaunchesWithoutAnEvent) {
  DecodedRecord paused = Create(1, 2, 0xabc, "gemm");
  std::get<DecodedKernelCreate>(paused).hdr.flags |= XT_FLAG_PAUSED;
  c.OnRecord(paused);
  EXPECT_TRUE(sink.All<KernelCreate>().empty());
  c.OnRecord(Launch(1, 2, 0xabc));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(strings.Get(launches[0].kernel_name), "gemm");
  EXPECT_TRUE(launches[0].name_known);
  EXPECT_EQ(c.stats().kernel_creates, 0u);
  EXPECT_EQ(c.stats().kernel_names_kept_paused, 1u);
  EXPECT_EQ(c.stats().launches_unnamed, 0u);
}

// A kernel made before the attach and named by asking the process: a creation marked learned,
// and its launches named from then on.
TEST_F(Fixture, ALearnedKernelNamesItsLaunchesAsACreationWould) {
  c.LearnKernel(1, 2, 100, 200, 0xdef, "learned_kernel", false);
  auto creates = sink.All<KernelCreate>();
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_TRUE(creates[0].learned);
  EXPECT_EQ(creates[0].kernel, 0xdefu);
  EXPECT_EQ(strings.Get(creates[0].name), "learned_kernel");
  c.OnRecord(Launch(1, 3, 0xdef));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(strings.Get(launches[0].kernel_name), "learned_kernel");
  EXPECT_TRUE(launches[0].name_known);
  EXPECT_EQ(c.stats().kernels_learned, 1u);
  EXPECT_EQ(c.stats().kernel_creates, 0u);
  EXPECT_EQ(c.stats().launches_unnamed, 0u);
}

TEST_F(Fixture, IntroducesProcessesAndThreadsOnce) {
  c.OnRecord(Name(1, 2, "worker-2"));
  c.OnRecord(Launch(1, 2, 0x1));
  c.OnRecord(Launch(1, 2, 0x1));
  c.OnRecord(Name(1, 3, "worker-3"));
  c.OnRecord(Launch(1, 3, 0x1));
  auto procs = sink.All<ProcessInfo>();
  auto threads = sink.All<ThreadInfo>();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(strings.Get(procs[0].comm), "app1");
  EXPECT_EQ(strings.Get(procs[0].command_line), "app --flag");
  EXPECT_EQ(procs[0].ns_pid, 1001u);
  EXPECT_EQ(strings.Get(procs[0].cgroup), "/kubepods/pod1/" + std::string(64, 'c'));
  EXPECT_EQ(strings.Get(procs[0].container_id), std::string(64, 'c'));
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(strings.Get(threads[1].name), "worker-3");
  EXPECT_EQ(c.stats().threads, 2u);
  // The process and thread are announced before the first event that refers to them.
  EXPECT_TRUE(std::holds_alternative<ProcessInfo>(sink.events[0]));
  EXPECT_TRUE(std::holds_alternative<ThreadInfo>(sink.events[1]));
}

TEST_F(Fixture, RenamedThreadIsAnnouncedAgainSameNameIsNot) {
  c.OnRecord(Name(1, 2, "python"));
  c.OnRecord(Name(1, 2, "python"));
  c.OnRecord(Name(1, 2, "dataloader"));
  auto threads = sink.All<ThreadInfo>();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(strings.Get(threads[0].name), "python");
  EXPECT_EQ(strings.Get(threads[1].name), "dataloader");
  EXPECT_EQ(c.stats().threads, 1u);
}

TEST_F(Fixture, GoneProcessIsNamedByItsLeaderComm) {
  c.OnRecord(Name(99, 100, "worker", "trainer"));
  c.OnRecord(Launch(99, 100, 0x1));
  auto procs = sink.All<ProcessInfo>();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 99u);
  EXPECT_EQ(procs[0].ns_pid, 99u);
  EXPECT_EQ(strings.Get(procs[0].comm), "trainer");
}

TEST_F(Fixture, GoneProcessWithoutNameRecordIsStillIntroduced) {
  c.OnRecord(Launch(99, 99, 0x1));
  auto procs = sink.All<ProcessInfo>();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(strings.Get(procs[0].comm), "");
  EXPECT_EQ(sink.All<ThreadInfo>().size(), 0u);
  EXPECT_EQ(c.stats().threads, 1u);
}

TEST_F(Fixture, KernelsCreatedBeforeCaptureAreNamedByHandle) {
  c.OnRecord(Launch(1, 2, 0xdead));
  c.OnRecord(Launch(1, 2, 0xdead));
  c.OnRecord(Launch(1, 2, 0xbeef));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(strings.Get(launches[0].kernel_name), "kernel@0xdead");
  EXPECT_FALSE(launches[0].name_known);
  EXPECT_EQ(c.stats().launches_unnamed, 3u);
  EXPECT_EQ(c.stats().kernels_unnamed, 2u);
}

TEST_F(Fixture, HandlesAreScopedByProcess) {
  c.OnRecord(Create(1, 1, 0x10, "a"));
  c.OnRecord(Create(2, 2, 0x10, "b"));
  c.OnRecord(Launch(2, 2, 0x10));
  c.OnRecord(Launch(1, 1, 0x10));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(strings.Get(launches[0].kernel_name), "b");
  EXPECT_EQ(strings.Get(launches[1].kernel_name), "a");
}

TEST_F(Fixture, ReusedHandleTakesTheNewName) {
  c.OnRecord(Create(1, 1, 0x10, "first"));
  c.OnRecord(Create(1, 1, 0x10, "second"));
  c.OnRecord(Launch(1, 1, 0x10));
  EXPECT_EQ(strings.Get(sink.All<KernelLaunch>()[0].kernel_name), "second");
}

TEST_F(Fixture, FailedCreateDoesNotNameAHandle) {
  DecodedKernelCreate bad{Header(XT_REC_KERNEL_CREATE, 1, 1, 1), 0x77, 0, 0x78000011, "missing"};
  c.OnRecord(bad);
  auto creates = sink.All<KernelCreate>();
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].result, 0x78000011);
  EXPECT_EQ(c.stats().failed_calls, 1u);
  c.OnRecord(Launch(1, 1, 0));
  EXPECT_FALSE(sink.All<KernelLaunch>()[0].name_known);
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

DecodedRecord ZeCall(uint32_t pid, uint16_t fn, uint64_t arg0, int32_t result = 0) {
  DecodedZeCall c{};
  c.hdr = Header(XT_REC_ZE_CALL, pid, pid, 7);
  c.fn = fn;
  c.arg[0] = arg0;
  c.result = result;
  return c;
}

TEST_F(Fixture, DestroyedKernelHandlesAreForgottenAndMayNameAnotherKernel) {
  c.OnRecord(Create(1, 2, 0xabc, "first"));
  c.OnRecord(ZeCall(1, XT_ZE_KERNEL_DESTROY, 0xabc));
  c.OnRecord(Launch(1, 2, 0xabc));  // the handle is dead: no name
  c.OnRecord(Create(1, 2, 0xabc, "second"));
  c.OnRecord(Launch(1, 2, 0xabc));
  auto launches = sink.All<KernelLaunch>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_FALSE(launches[0].name_known);
  EXPECT_EQ(strings.Get(launches[1].kernel_name), "second");
  EXPECT_EQ(sink.All<ApiCall>().size(), 1u);
  EXPECT_EQ(c.stats().api_calls, 1u);
}

// A thread that exited inside a call: named by its function (generic or dedicated), with the
// signal that killed it, and counted; nothing is inferred from what it never returned.
TEST_F(Fixture, AnUnfinishedCallIsNamedAndCounted) {
  DecodedCallUnfinished sync{Header(XT_REC_CALL_UNFINISHED, 1, 3, 100), XT_ZE_FENCE_HOST_SYNCHRONIZE, 9};
  sync.hdr.end_ns = 5000;
  c.OnRecord(sync);
  c.OnRecord(DecodedCallUnfinished{Header(XT_REC_CALL_UNFINISHED, 1, 4, 200),
                                   XT_ZE_PAIR_APPEND_LAUNCH_KERNEL, 0});
  c.OnRecord(DecodedCallUnfinished{Header(XT_REC_CALL_UNFINISHED, 1, 5, 300),
                                   XT_ZE_PAIR_KERNEL_CREATE, 256});  // exit(1) from another thread
  const auto unfinished = sink.All<UnfinishedCall>();
  ASSERT_EQ(unfinished.size(), 3u);
  EXPECT_EQ(strings.Get(unfinished[0].function), "zeFenceHostSynchronize");
  EXPECT_EQ(unfinished[0].tid, 3u);
  EXPECT_EQ(unfinished[0].start_ns, 100u);
  EXPECT_EQ(unfinished[0].end_ns, 5000u);
  EXPECT_EQ(unfinished[0].signal, 9);
  EXPECT_EQ(strings.Get(unfinished[1].function), "zeCommandListAppendLaunchKernel");
  EXPECT_EQ(unfinished[1].signal, 0);
  EXPECT_EQ(strings.Get(unfinished[2].function), "zeKernelCreate");
  EXPECT_EQ(unfinished[2].signal, 0);
  EXPECT_EQ(c.stats().unfinished_calls, 3u);
  DecodedCallUnfinished at_stop{Header(XT_REC_CALL_UNFINISHED, 1, 6, 400), XT_ZE_INIT, 0};
  at_stop.capture_ended = true;
  c.OnRecord(at_stop);
  ASSERT_EQ(sink.All<UnfinishedCall>().size(), 4u);
  EXPECT_TRUE(sink.All<UnfinishedCall>()[3].capture_ended);
  EXPECT_EQ(c.stats().unfinished_calls, 3u);
  EXPECT_EQ(c.stats().calls_at_stop, 1u);
  EXPECT_EQ(c.stats().api_calls, 0u);
  EXPECT_TRUE(sink.All<ApiCall>().empty());
}

TEST_F(Fixture, NotReadyIsNotCountedAsAFailure) {
  c.OnRecord(ZeCall(1, XT_ZE_EVENT_QUERY_STATUS, 0xe, 1));
  c.OnRecord(ZeCall(1, XT_ZE_EVENT_QUERY_STATUS, 0xe, 0x78000004));
  EXPECT_EQ(c.stats().failed_calls, 1u);
  EXPECT_EQ(c.stats().api_calls, 2u);
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

// /proc as it changes: a pid names one process, then, once that one is gone, another.
class ChangingInspector : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    return ProcessDetails{comm, comm + " --run", pid, "", ""};
  }
  std::string comm;
};

TEST(CorrelatorRecycledPid, NamesTheNewProcessAfterTheOldOneEnded) {
  StringTable strings;
  CollectingSink sink;
  ChangingInspector inspector;
  Correlator c{strings, sink, inspector};
  inspector.comm = "trainer";
  c.OnRecord(Name(7, 7, "trainer"));
  c.OnRecord(Launch(7, 7, 0x1));
  c.ProcessEnded(7, 100);
  EXPECT_FALSE(c.SawProcess(7));
  inspector.comm = "shell";
  c.OnRecord(Launch(7, 7, 0x1));
  auto procs = sink.All<ProcessInfo>();
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(strings.Get(procs[0].comm), "trainer");
  EXPECT_EQ(strings.Get(procs[1].comm), "shell");
  EXPECT_EQ(c.stats().processes, 2u);
  // Its main thread is introduced again too, under the new process.
  c.OnRecord(Name(7, 7, "trainer"));
  auto threads = sink.All<ThreadInfo>();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(strings.Get(threads[1].name), "trainer");
}

}  // namespace
}  // namespace xtrace
