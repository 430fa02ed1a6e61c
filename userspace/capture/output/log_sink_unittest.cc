// Tests for capture/output/log_sink: each rotated file starts with the identities still worth
// naming (not those of processes gone before it), as the one keeper of what the log said
// (correlate/process_identities) gives them, and its tallies are its own.
#include "capture/output/log_sink.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "correlate/process_identities.h"
#include "log/log_reader.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

// Processes that are gone: each is named by what its records said.
class NoLiveProcesses : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t) override { return std::nullopt; }
};

class LogSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = LogWriter::Create(dir_.File("0.capnp"), SampleHeader());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    writer_ = std::move(*writer);
    sink_ = std::make_unique<LogSink>(*writer_);
    ids_ = std::make_unique<ProcessIdentities>(writer_->strings(), *sink_, inspector_,
                                               [] { return uint64_t{0}; });
  }

  // The log introduces `pid` as `comm`, or says it exec'd into `comm` at `exec_ns`.
  void Process(uint32_t pid, std::string_view comm, uint64_t exec_ns = 0) {
    if (exec_ns == 0) {
      ASSERT_TRUE(ids_->Introduce(pid, comm));
    } else {
      ids_->Execed(pid, exec_ns, ProcessDetails{std::string(comm), "", pid, "", ""}, false);
    }
  }
  void Thread(uint32_t pid, uint32_t tid, std::string_view name) {
    ids_->NameThread(pid, tid, writer_->strings().Intern(name));
  }
  // The process exited (the correlator forgets it).
  void Gone(uint32_t pid) { ids_->Forget(pid); }
  // Goes on in file `n`, the way the capture rotates.
  void Rotate(int n, uint64_t dropped_total = 0, const std::map<uint32_t, uint64_t>& drops = {}) {
    ASSERT_TRUE(writer_
                    ->ContinueInNewFile(SampleSummary(), dir_.File(std::to_string(n) + ".capnp"),
                                        SampleHeader())
                    .ok());
    sink_->BeginFile(dropped_total, drops, ids_->Written());
  }
  // "process 4242 app" / "thread 4242/4243 worker", in the order file `n` holds them.
  std::vector<std::string> Identities(int n) {
    EXPECT_TRUE(writer_->Finish(SampleSummary()).ok());
    auto reader = LogReader::Open(dir_.File(std::to_string(n) + ".capnp"));
    EXPECT_TRUE(reader.ok()) << reader.status().message();
    std::vector<std::string> out;
    Event event;
    while (reader.ok()) {
      auto more = reader->Next(&event);
      if (!more.ok() || !*more) break;
      if (const auto* p = std::get_if<ProcessInfo>(&event))
        out.push_back("process " + std::to_string(p->pid) + " " +
                      std::string(reader->strings().Get(p->comm)) +
                      (p->exec_ns ? " exec@" + std::to_string(p->exec_ns) : ""));
      if (const auto* t = std::get_if<ThreadInfo>(&event))
        out.push_back("thread " + std::to_string(t->pid) + "/" + std::to_string(t->tid) + " " +
                      std::string(reader->strings().Get(t->name)));
    }
    return out;
  }

  ScratchDir dir_;
  std::unique_ptr<LogWriter> writer_;
  std::unique_ptr<LogSink> sink_;
  NoLiveProcesses inspector_;
  std::unique_ptr<ProcessIdentities> ids_;
};

TEST_F(LogSinkTest, NewFileStartsWithLiveIdentities) {
  Process(10, "trainer");
  Thread(10, 11, "loader");
  Process(20, "server");
  Rotate(1);
  EXPECT_EQ(sink_->file_events(), 3u);
  EXPECT_EQ(sink_->events(), 3u);
  EXPECT_EQ(Identities(1),
            (std::vector<std::string>{"process 10 trainer", "process 20 server", "thread 10/11 loader"}));
}

TEST_F(LogSinkTest, GoneProcessIsNamedUntilTheNextRotationOnly) {
  Process(10, "trainer");
  Thread(10, 11, "loader");
  Process(20, "server");
  Gone(10);
  Rotate(1);  // 10 left during file 0: file 1 no longer names it
  Gone(20);
  Rotate(2);
  EXPECT_EQ(sink_->file_events(), 0u);
  EXPECT_TRUE(Identities(2).empty());
}

TEST_F(LogSinkTest, RecycledPidIsReplayedUnderItsNewName) {
  Process(10, "trainer");
  Thread(10, 11, "loader");
  Gone(10);
  Process(10, "shell");  // the pid now names another process
  Thread(10, 10, "shell");
  Rotate(1);
  EXPECT_EQ(Identities(1), (std::vector<std::string>{"process 10 shell", "thread 10/10 shell"}));
}

TEST_F(LogSinkTest, TalliesAreCountedPerFileAndInAll) {
  sink_->CountRecord(10, "Level Zero");
  sink_->CountRecord(10, "Level Zero");
  sink_->CountRecord(20, "ITT");
  EXPECT_EQ(sink_->FileDropped(4), 4u);
  Rotate(1, /*dropped_total=*/4, /*drops=*/{{10, 3}, {20, 1}});
  sink_->CountRecord(10, "ITT");
  EXPECT_EQ(sink_->file_tally().records,
            (std::map<uint32_t, std::map<std::string, uint64_t>>{{10, {{"ITT", 1}}}}));
  EXPECT_EQ(sink_->total_tally().records.at(10).at("Level Zero"), 2u);
  EXPECT_EQ(sink_->total_tally().records.at(10).at("ITT"), 1u);
  EXPECT_EQ(sink_->total_tally().records.at(20).at("ITT"), 1u);
  EXPECT_EQ(sink_->FileDropped(9), 5u);
  EXPECT_EQ(sink_->FileDropsByPid({{10, 3}, {20, 6}, {30, 2}}),
            (std::map<uint32_t, uint64_t>{{10, 0}, {20, 5}, {30, 2}}));
}

// A run of records of one process and source is counted without a lookup each: the run is
// told by the source's text, wherever that lies, and it restarts with each file.
TEST_F(LogSinkTest, ARunOfRecordsIsCountedByItsSourceTextAndPerFile) {
  std::string family = "ITT";
  sink_->CountRecord(10, family);
  family = "DRM";  // the same buffer, another source
  sink_->CountRecord(10, family);
  sink_->CountRecord(10, family);
  sink_->CountRecord(11, family);
  Rotate(1);
  sink_->CountRecord(11, "DRM");
  EXPECT_EQ(sink_->file_tally().records,
            (std::map<uint32_t, std::map<std::string, uint64_t>>{{11, {{"DRM", 1}}}}));
  EXPECT_EQ(sink_->total_tally().records,
            (std::map<uint32_t, std::map<std::string, uint64_t>>{
                {10, {{"ITT", 1}, {"DRM", 2}}}, {11, {{"DRM", 2}}}}));
}

TEST_F(LogSinkTest, AProcessThatExecdIsReplayedWithEveryIdentityInOrder) {
  Process(10, "env");
  Process(10, "python3", 5'000);
  Process(20, "server");
  Rotate(1);
  EXPECT_EQ(Identities(1), (std::vector<std::string>{"process 10 env", "process 10 python3 exec@5000",
                                                     "process 20 server"}));
  EXPECT_EQ(sink_->file_events(), 3u);
}

TEST_F(LogSinkTest, ARecycledPidForgetsTheOldProcessesExecs) {
  Process(10, "env");
  Process(10, "python3", 5'000);
  Gone(10);
  Process(10, "shell");
  Rotate(1);
  EXPECT_EQ(Identities(1), (std::vector<std::string>{"process 10 shell"}));
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

// Records what it is fed: the names of the processes, in order.
class RecordingTap final : public EventTap {
 public:
  std::vector<std::string> seen;
  void Add(const Event& event, const StringTable& strings) override {
    if (const auto* p = std::get_if<ProcessInfo>(&event)) seen.emplace_back(strings.Get(p->comm));
    else seen.emplace_back("other");
  }
  std::string Summary() const override { return std::to_string(seen.size()) + " events"; }
};

// The tap sees every event the log gets, in order, whatever file it goes to.
TEST(LogSinkTapTest, ATapIsFedEveryEventInOrder) {
  test_util::ScratchDir dir;
  auto writer = LogWriter::Create(dir.File("0.capnp"), test_util::SampleHeader());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  RecordingTap tap;
  LogSink sink(**writer, &tap);
  ProcessInfo a;
  a.pid = 1;
  a.comm = (*writer)->strings().Intern("first");
  sink.OnEvent(a);
  sink.OnEvent(ThreadInfo{1, 2, (*writer)->strings().Intern("t")});
  ProcessInfo b = a;
  b.pid = 3;
  b.comm = (*writer)->strings().Intern("second");
  sink.OnEvent(b);
  EXPECT_EQ(tap.seen, (std::vector<std::string>{"first", "other", "second"}));
  EXPECT_EQ(sink.events(), 3u);
  EXPECT_EQ(tap.Summary(), "3 events");
  ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
}

}  // namespace
}  // namespace xtrace
