// Tests for capture/discovery/process_table: a pid reused by another process, a process that execs,
// and processes that are gone, with /proc replaced by a scripted one.
#include "capture/discovery/process_table.h"

#include <gtest/gtest.h>

#include <map>

namespace xtrace {
namespace {

// A scripted /proc: the processes alive now, their stat and their details.
class FakeProc : public ProcessInspector {
 public:
  void Start(uint32_t pid, uint64_t start_ticks, std::string comm) {
    stats_[pid] = ProcStat{comm, 'S', 1, start_ticks};
    details_[pid] = ProcessDetails{comm, comm + " --live", pid, "", ""};
  }
  void Zombie(uint32_t pid) { stats_[pid].state = 'Z'; }
  void Exit(uint32_t pid) {
    stats_.erase(pid);
    details_.erase(pid);
  }
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    auto it = details_.find(pid);
    if (it == details_.end()) return std::nullopt;
    return it->second;
  }
  ProcessTable::StatReader Stat() {
    return [this](uint32_t pid) -> std::optional<ProcStat> {
      auto it = stats_.find(pid);
      if (it == stats_.end()) return std::nullopt;
      return it->second;
    };
  }

 private:
  std::map<uint32_t, ProcStat> stats_;
  std::map<uint32_t, ProcessDetails> details_;
};

ProcessDetails Seen(std::string comm, std::string command_line) {
  return ProcessDetails{std::move(comm), std::move(command_line), 0, "", ""};
}

class ProcessTableTest : public ::testing::Test {
 protected:
  FakeProc proc_;
  ProcessTable table_{proc_, proc_.Stat()};
};

TEST_F(ProcessTableTest, TrackingTwiceIsOneEntry) {
  proc_.Start(100, 5000, "app");
  auto first = table_.Track(100, false);
  EXPECT_TRUE(first.fresh);
  EXPECT_FALSE(first.replaced);
  EXPECT_EQ(first.process.start_ticks, 5000u);
  auto again = table_.Track(100, true);
  EXPECT_FALSE(again.fresh);
  EXPECT_EQ(&again.process, &first.process);
  EXPECT_TRUE(again.process.given) << "given once, given for good";
  EXPECT_EQ(table_.live_count(), 1u);
}

TEST_F(ProcessTableTest, ReusedPidIsAnotherProcess) {
  proc_.Start(100, 5000, "trainer");
  TrackedProcess& t = table_.Track(100, false).process;
  table_.SawStart(100, Seen("trainer", "python train.py"), 0);
  EXPECT_FALSE(table_.Recycled(t));
  EXPECT_FALSE(table_.Ended(t));
  // Its exit was missed; a new process got the pid.
  proc_.Exit(100);
  proc_.Start(100, 7000, "shell");
  EXPECT_TRUE(table_.Recycled(t));
  EXPECT_TRUE(table_.Ended(t));
  table_.MarkGone(100);
  EXPECT_EQ(table_.Find(100), nullptr) << "a discovered process is forgotten when gone";
  auto next = table_.Track(100, false);
  EXPECT_TRUE(next.fresh);
  EXPECT_EQ(next.process.start_ticks, 7000u);
  EXPECT_TRUE(next.process.identities.empty()) << "the old identity does not carry over";
}

TEST_F(ProcessTableTest, GivenProcessStaysWhenGoneAndIsReplacedByTheNextWithItsPid) {
  proc_.Start(200, 10, "server");
  TrackedProcess& t = table_.Track(200, true).process;
  t.ever_attached = true;
  table_.MarkGone(200);
  ASSERT_NE(table_.Find(200), nullptr) << "given processes stay for the summary";
  EXPECT_TRUE(table_.Find(200)->gone);
  EXPECT_EQ(table_.live_count(), 0u);
  proc_.Exit(200);
  proc_.Start(200, 20, "other");
  auto next = table_.Track(200, false);
  EXPECT_TRUE(next.fresh);
  EXPECT_TRUE(next.replaced);
  EXPECT_FALSE(next.process.ever_attached);
  EXPECT_FALSE(next.process.given);
}

TEST_F(ProcessTableTest, ZombieAndVanishedProcessesHaveEnded) {
  proc_.Start(300, 1, "a");
  proc_.Start(301, 1, "b");
  TrackedProcess& a = table_.Track(300, false).process;
  TrackedProcess& b = table_.Track(301, false).process;
  proc_.Zombie(300);
  proc_.Exit(301);
  EXPECT_TRUE(table_.Ended(a));
  EXPECT_TRUE(table_.Ended(b));
  // A process that was gone when first seen has no start time: only its absence counts.
  TrackedProcess& never = table_.Track(302, false).process;
  EXPECT_EQ(never.start_ticks, 0u);
  EXPECT_TRUE(table_.Ended(never));
  proc_.Start(302, 9, "late");
  EXPECT_FALSE(table_.Ended(never));
}

TEST_F(ProcessTableTest, ExecAddsAnIdentityInOrder) {
  proc_.Start(400, 1, "bash");
  table_.Track(400, false);
  table_.SawStart(400, Seen("bash", "bash run.sh"), 7);
  table_.SawStart(400, Seen("bash", "bash run.sh"), 7);  // the same record twice: one identity
  table_.SawStart(400, Seen("python3", "python3 train.py"), 7);
  const TrackedProcess* t = table_.Find(400);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->identities.size(), 2u);
  EXPECT_EQ(t->identities[0].comm, "bash");
  EXPECT_EQ(t->identities[1].comm, "python3");
  EXPECT_EQ(t->seen_cgroup_id, 7u);
  EXPECT_EQ(table_.NameOf(400), "python3");
}

TEST_F(ProcessTableTest, NamesLiveProcessesFromProcAndGoneOnesFromTheirRecords) {
  proc_.Start(500, 1, "worker");
  table_.Track(500, true);
  table_.SawStart(500, Seen("worker", "worker --from-record"), 0);
  EXPECT_EQ(table_.Process(500)->command_line, "worker --live");
  proc_.Exit(500);
  EXPECT_EQ(table_.Process(500)->command_line, "worker --from-record");
  EXPECT_FALSE(table_.Process(501)) << "never seen, not running: unknown";
}

TEST_F(ProcessTableTest, CountsProcessesTracedOnce) {
  table_.NoteTraced(1);
  table_.NoteTraced(1);
  table_.NoteTraced(2);
  EXPECT_EQ(table_.traced_count(), 2u);
}

TEST_F(ProcessTableTest, NamesAProcessAsTheLogNamedItLastAlsoOnceGone) {
  proc_.Start(10, 100, "trainer");
  table_.Track(10, false);
  EXPECT_EQ(table_.NameOf(10), "") << "found in /proc, not named yet";
  table_.Named(10, "trainer");
  table_.MarkGone(10);
  EXPECT_EQ(table_.NameOf(10), "trainer") << "the summary still names gone processes";
  // An exec the log followed: the summary names what it is now.
  table_.Named(10, "env");
  table_.Named(10, "python3");
  EXPECT_EQ(table_.NameOf(10), "python3") << "the summary names what it is now";
  // A later process with the pid, named anew.
  table_.Named(10, "shell");
  EXPECT_EQ(table_.NameOf(10), "shell");
  // Never named by the log: what its records said.
  proc_.Start(20, 200, "x");
  table_.Track(20, false);
  table_.SawStart(20, Seen("server", "server --port 1"), 0);
  EXPECT_EQ(table_.NameOf(20), "server");
}

}  // namespace
}  // namespace xtrace
