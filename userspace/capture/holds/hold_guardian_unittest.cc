// Tests for capture/holds/hold_guardian: a process held in the `held` map is continued by the
// capture's Release, by the guardian's bound, when the capture ends, and when the capture is
// SIGKILLed; a stop xtrace did not take is never undone; each hold is continued once.
#include "capture/holds/hold_guardian.h"

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "preempting_thread.h"
#include "xtrace/hold.h"

namespace xtrace {
namespace {

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// A child that runs until killed, stopped with SIGSTOP (as the BPF program stops a process).
class StoppedChild {
 public:
  StoppedChild() {
    pid_ = fork();
    if (pid_ == 0) {
      for (;;) pause();
    }
    kill(pid_, SIGSTOP);
    int status = 0;
    waitpid(pid_, &status, WUNTRACED);
    stopped_ = WIFSTOPPED(status);
  }
  ~StoppedChild() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  bool stopped_at_start() const { return stopped_; }
  // Waits up to `timeout` for the child to be continued; returns whether it was.
  bool WaitContinued(std::chrono::milliseconds timeout) const {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WCONTINUED | WNOHANG);
      if (r == pid_ && WIFCONTINUED(status)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  bool stopped_ = false;
};

class HoldGuardianTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "creating a BPF map needs root (CAP_BPF)";
    map_fd_ = bpf_map_create(BPF_MAP_TYPE_HASH, "held", sizeof(uint32_t), sizeof(xt_hold),
                             XT_MAX_HELD, nullptr);
    ASSERT_GE(map_fd_, 0) << "bpf_map_create: " << std::strerror(errno);
  }
  void TearDown() override {
    if (map_fd_ >= 0) close(map_fd_);
  }
  void Hold(pid_t pid, uint64_t since_ns) {
    const uint32_t key = static_cast<uint32_t>(pid);
    xt_hold hold{since_ns, key, XT_HOLD_EXEC, 0};
    ASSERT_EQ(bpf_map_update_elem(map_fd_, &key, &hold, BPF_ANY), 0);
  }
  bool InMap(pid_t pid) const {
    const uint32_t key = static_cast<uint32_t>(pid);
    xt_hold hold{};
    return bpf_map_lookup_elem(map_fd_, &key, &hold) == 0;
  }

  int map_fd_ = -1;
};

TEST_F(HoldGuardianTest, ReleaseContinuesAHeldProcessOnce) {
  StoppedChild child;
  ASSERT_TRUE(child.stopped_at_start());
  Hold(child.pid(), NowNs());
  auto guardian = HoldGuardian::Start(map_fd_, {.bound_ns = 60'000'000'000ull});
  ASSERT_TRUE(guardian.ok()) << guardian.status().message();
  EXPECT_TRUE((*guardian)->Release(child.pid()));
  EXPECT_TRUE(child.WaitContinued(std::chrono::milliseconds(2000)));
  EXPECT_FALSE(InMap(child.pid()));
  // Not held any more: a second release sends nothing.
  EXPECT_FALSE((*guardian)->Release(child.pid()));
}

// The capture heard of a library hold; the bound released it and the process was held again,
// this time for its queries, before the capture's turn to release came. That stale release
// must not end the query hold (its thread would run on unasked, or be let go mid-query).
TEST_F(HoldGuardianTest, AStaleReleaseLeavesANewerHoldOfTheProcessAlone) {
  StoppedChild child;
  ASSERT_TRUE(child.stopped_at_start());
  const uint32_t key = static_cast<uint32_t>(child.pid());
  const xt_hold query{NowNs(), key, XT_HOLD_QUERY, 0x1234};
  ASSERT_EQ(bpf_map_update_elem(map_fd_, &key, &query, BPF_ANY), 0);
  auto guardian = HoldGuardian::Start(map_fd_, {.bound_ns = 60'000'000'000ull});
  ASSERT_TRUE(guardian.ok()) << guardian.status().message();
  // The library hold it took before (another time), and a query hold's own time for another
  // reason: neither is the hold there now.
  EXPECT_FALSE((*guardian)->ReleaseIf(key, query.since_ns - 5'000'000, XT_HOLD_LIBRARY));
  EXPECT_FALSE((*guardian)->ReleaseIf(key, query.since_ns, XT_HOLD_LIBRARY));
  EXPECT_TRUE(InMap(child.pid()));
  EXPECT_FALSE(child.WaitContinued(std::chrono::milliseconds(100)));
  // The query hold's owner ends it.
  EXPECT_TRUE((*guardian)->ReleaseIf(key, query.since_ns, XT_HOLD_QUERY));
  EXPECT_TRUE(child.WaitContinued(std::chrono::milliseconds(2000)));
  EXPECT_FALSE(InMap(child.pid()));
}

// The same stale release, racing: the capture ends the hold the release means and BPF holds
// another thread, between the release's look at the entry and its delete. Looked at, then
// deleted, the newer hold went with it, and with its SIGCONT sent before BPF's SIGSTOP (or
// none at all) its process stayed stopped for good. Taken out in one step, the newer hold is
// put back. The other side runs at real-time priority on the releasing CPU, preempting the
// release wherever it stands.
TEST_F(HoldGuardianTest, AReleaseRacingANewHoldNeverEndsTheNewOne) {
  const uint32_t key = static_cast<uint32_t>(getpid());  // a SIGCONT to ourselves does nothing
  std::atomic<uint64_t> newer_since{0};
  uint64_t since = 0, newer = 1'000'000'000'000ull, checked = 0, acts = 0;
  int lost = 0;
  auto step = [&] {
    if (const uint64_t s = newer_since.load()) {
      xt_hold entry{};
      if (bpf_map_lookup_elem(map_fd_, &key, &entry) != 0 || entry.since_ns != s) ++lost;
      ++checked;
      (void)bpf_map_delete_elem(map_fd_, &key);
      newer_since.store(0);
    }
    const xt_hold old{++since, 1, XT_HOLD_LIBRARY, 0};
    if (bpf_map_update_elem(map_fd_, &key, &old, BPF_NOEXIST) != 0) return;
    (void)ContinueHeldIf(map_fd_, key, old.since_ns, XT_HOLD_LIBRARY);
  };
  auto act = [&] {
    if (newer_since.load()) return;
    xt_hold entry{};
    if (bpf_map_lookup_elem(map_fd_, &key, &entry) != 0 || entry.tid != 1) return;
    (void)bpf_map_delete_elem(map_fd_, &key);  // the hold's owner ends it
    const xt_hold taken{++newer, 2, XT_HOLD_QUERY, 0};  // BPF holds another thread
    if (bpf_map_update_elem(map_fd_, &key, &taken, BPF_NOEXIST) == 0) newer_since.store(taken.since_ns);
  };
  const std::string why = testing::RunPreempted(step, act, std::chrono::milliseconds(1000), &acts);
  if (!why.empty()) GTEST_SKIP() << why;
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(lost, 0) << "newer holds ended by an older hold's release, of " << checked << " (" << acts << " preemptions)";
}

TEST_F(HoldGuardianTest, BoundContinuesAHoldNobodyReleased) {
  StoppedChild child;
  ASSERT_TRUE(child.stopped_at_start());
  const uint64_t start = NowNs();
  Hold(child.pid(), start);
  auto guardian = HoldGuardian::Start(map_fd_, {.bound_ns = 50'000'000, .check_interval_ms = 5});
  ASSERT_TRUE(guardian.ok()) << guardian.status().message();
  ASSERT_TRUE(child.WaitContinued(std::chrono::milliseconds(3000)));
  EXPECT_GE(NowNs() - start, 50'000'000u) << "continued before its bound";
  EXPECT_FALSE(InMap(child.pid()));
  EXPECT_EQ((*guardian)->tally().released_by_bound.load(), 1u);
  // The capture's late release finds nothing to do.
  EXPECT_FALSE((*guardian)->Release(child.pid()));
}

TEST_F(HoldGuardianTest, EndOfCaptureContinuesEverythingStillHeld) {
  StoppedChild a, b;
  Hold(a.pid(), NowNs());
  Hold(b.pid(), NowNs());
  auto guardian = HoldGuardian::Start(map_fd_, {.bound_ns = 60'000'000'000ull});
  ASSERT_TRUE(guardian.ok()) << guardian.status().message();
  guardian->reset();  // the capture ends: the guardian continues both, then exits
  EXPECT_TRUE(a.WaitContinued(std::chrono::milliseconds(2000)));
  EXPECT_TRUE(b.WaitContinued(std::chrono::milliseconds(2000)));
  EXPECT_FALSE(InMap(a.pid()));
  EXPECT_FALSE(InMap(b.pid()));
}

// A "capture" in a process of its own (leading its own process group): starts its guardian,
// says so, and waits to be killed. Returns its pid, or -1.
pid_t StartCaptureWithGuardian(int map_fd) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t capture = fork();
  if (capture == 0) {
    close(ready[0]);
    setpgid(0, 0);
    auto guardian = HoldGuardian::Start(map_fd, {.bound_ns = 60'000'000'000ull});
    const char ok = guardian.ok() ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  const bool started = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  if (!started && capture > 0) {
    kill(capture, SIGKILL);
    waitpid(capture, nullptr, 0);
  }
  return started ? capture : -1;
}

TEST_F(HoldGuardianTest, ACaptureKilledWithSigkillLeavesNothingStopped) {
  StoppedChild held;
  Hold(held.pid(), NowNs());
  const pid_t capture = StartCaptureWithGuardian(map_fd_);
  ASSERT_GT(capture, 0);
  EXPECT_FALSE(held.WaitContinued(std::chrono::milliseconds(50))) << "continued while held";
  kill(capture, SIGKILL);
  waitpid(capture, nullptr, 0);
  EXPECT_TRUE(held.WaitContinued(std::chrono::milliseconds(3000)));
  EXPECT_FALSE(InMap(held.pid()));
}

// A supervisor or a test runner that kills the capture's whole process group must not take the
// guardian with it: it runs in a session of its own.
TEST_F(HoldGuardianTest, KillingTheCapturesProcessGroupSparesTheGuardian) {
  StoppedChild held;
  Hold(held.pid(), NowNs());
  const pid_t capture = StartCaptureWithGuardian(map_fd_);
  ASSERT_GT(capture, 0);
  kill(-capture, SIGKILL);
  waitpid(capture, nullptr, 0);
  EXPECT_TRUE(held.WaitContinued(std::chrono::milliseconds(3000)))
      << "the group kill took the guardian: the held process stays stopped";
  EXPECT_FALSE(InMap(held.pid()));
}

TEST_F(HoldGuardianTest, AStopXtraceDidNotTakeIsNeverUndone) {
  StoppedChild users_stop;  // stopped by someone else: not in the map
  {
    auto guardian = HoldGuardian::Start(map_fd_, {.bound_ns = 1'000'000, .check_interval_ms = 1});
    ASSERT_TRUE(guardian.ok()) << guardian.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_FALSE((*guardian)->Release(users_stop.pid()));
  }
  EXPECT_FALSE(users_stop.WaitContinued(std::chrono::milliseconds(100)));
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

// A hold taken after the guardian read its clock (it was preempted before it looked at the
// map) is newer than that reading. It used to count as due and was continued at once: on a
// loaded machine a query hold ended within a millisecond, its launch unnamed. It is fresh.
TEST(HoldDueTest, AHoldNewerThanTheClockReadingIsFresh) {
  constexpr uint64_t kNow = 1'000'000'000'000ull, kBound = 500'000'000;
  EXPECT_FALSE(HoldDue(kNow + 3'000'000, kNow, kBound));
  EXPECT_FALSE(HoldDue(kNow - 499'000'000, kNow, kBound));
  EXPECT_TRUE(HoldDue(kNow - 500'000'000, kNow, kBound));
  EXPECT_TRUE(HoldDue(kNow + 3'000'000, kNow, 0)) << "the end of the capture continues every hold";
  EXPECT_TRUE(HoldDue(kNow + 3'600'000'000'000ull, kNow, kBound)) << "no reading of our clock";
}

// A query hold waits for the capture to take it up as long as the queries' own bound allows:
// continued at the 500 ms of --hold-max while the capture was off its CPU, its launch ran on
// unasked and came out "kernel@0x...". Once taken up, the lease counts with the usual bound.
TEST(HoldBoundOfTest, AQueryHoldWaitsForTheCaptureUpToTheQueryBound) {
  constexpr uint64_t kBound = 500'000'000, kQuery = 10'000'000'000;
  RemoteCallSlot slot;
  // As the guardian asks: from where the hold's bound counts, then how long it is.
  auto BoundOf = [](uint32_t pid, uint64_t since_ns, uint32_t reason, const RemoteCallSlot& s,
                    uint64_t bound_ns, uint64_t query_wait_ns) {
    return HoldBoundOf(HoldBoundFrom(pid, since_ns, reason, &s), since_ns, reason, bound_ns,
                       query_wait_ns);
  };
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_QUERY, slot, kBound, kQuery), kQuery);
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_LIBRARY, slot, kBound, kQuery), kBound);
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_EXEC, slot, kBound, kQuery), kBound);
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_QUERY, slot, kBound, 0), kBound) << "without queries";
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_QUERY, slot, 0, kQuery), 0u) << "the end continues all";
  slot.lease_since_ns.store(1'000);
  slot.lease_ns.store(5'000);
  slot.lease_pid.store(100);
  EXPECT_EQ(BoundOf(100, 1'000, XT_HOLD_QUERY, slot, kBound, kQuery), kBound) << "taken up";
  EXPECT_EQ(BoundOf(100, 2'000, XT_HOLD_QUERY, slot, kBound, kQuery), kQuery)
      << "another hold of the process, not taken up yet";
  EXPECT_EQ(BoundOf(200, 1'000, XT_HOLD_QUERY, slot, kBound, kQuery), kQuery);
}

}  // namespace
}  // namespace xtrace
