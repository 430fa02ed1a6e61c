// Tests for correlate/itt_correlator (through Correlator, as capture uses it): handle names,
// begin/end pairing per thread and by id, unbalanced input, collection changes.
#include "correlate/itt_correlator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collecting_sink.h"
#include "correlate/correlator.h"

namespace xtrace {
namespace {

constexpr uint32_t kPid = 700;
constexpr uint64_t kDomainA = 0x1000, kDomainB = 0x2000;
constexpr uint64_t kStep = 0x3000, kInner = 0x3100, kMark = 0x3200;

class NoInspector : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t) override { return std::nullopt; }
};

xt_record_header Hdr(uint16_t type, uint32_t tid, uint64_t t, uint32_t pid = kPid) {
  xt_record_header h{};
  h.type = type;
  h.pid = pid;
  h.tid = tid;
  h.start_ns = h.end_ns = t;
  return h;
}

DecodedRecord NameRec(uint64_t handle, uint32_t kind, std::string_view text, uint32_t pid = kPid) {
  return DecodedIttName{Hdr(XT_REC_ITT_NAME, pid, 1, pid), handle, kind, text};
}

DecodedRecord Ev(uint16_t op, uint32_t tid, uint64_t t, uint64_t domain, uint64_t name = 0,
                 uint64_t id = 0, uint64_t extra = 0, uint32_t pid = kPid) {
  DecodedIttEvent e{};
  e.hdr = Hdr(XT_REC_ITT_EVENT, tid, t, pid);
  e.domain = domain;
  e.name = name;
  e.id[0] = id;
  e.extra = extra;
  e.op = op;
  e.origin = XT_ITT_FROM_COLLECTOR;
  return e;
}

DecodedRecord Torch(uint16_t op, uint32_t tid, uint64_t t, std::string_view name) {
  DecodedIttEvent e{};
  e.hdr = Hdr(XT_REC_ITT_EVENT, tid, t);
  e.op = op;
  e.origin = XT_ITT_FROM_PYTORCH;
  e.inline_name = name;
  return e;
}

DecodedRecord State(uint32_t state, uint32_t previous, uint32_t tid, uint64_t t) {
  return DecodedIttState{Hdr(XT_REC_ITT_STATE, tid, t), state, previous};
}

struct IttCorrelatorTest : ::testing::Test {
  void SetUp() override {
    Feed(NameRec(kDomainA, XT_ITT_NAME_DOMAIN, "dom.a"));
    Feed(NameRec(kDomainB, XT_ITT_NAME_DOMAIN, "dom.b"));
    Feed(NameRec(kStep, XT_ITT_NAME_STRING, "step"));
    Feed(NameRec(kInner, XT_ITT_NAME_STRING, "inner"));
    Feed(NameRec(kMark, XT_ITT_NAME_STRING, "mark"));
  }
  void Feed(const DecodedRecord& r) { correlator.OnRecord(r); }
  std::string S(StringId id) const { return std::string(strings.Get(id)); }

  StringTable strings;
  CollectingSink sink;
  NoInspector inspector;
  Correlator correlator{strings, sink, inspector};
};

TEST_F(IttCorrelatorTest, NestedTasksPairOnTheirThreadInnermostFirst) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kStep));
  Feed(Ev(XT_ITT_TASK_BEGIN, 12, 105, kDomainA, kStep));  // another thread, interleaved
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 110, kDomainA, kInner));
  Feed(Ev(XT_ITT_TASK_END, 11, 120, kDomainA));
  Feed(Ev(XT_ITT_TASK_END, 12, 125, kDomainA));
  Feed(Ev(XT_ITT_TASK_END, 11, 130, kDomainA));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(S(tasks[0].name), "inner");
  EXPECT_EQ(tasks[0].tid, 11u);
  EXPECT_EQ(tasks[0].start_ns, 110u);
  EXPECT_EQ(tasks[0].end_ns, 120u);
  EXPECT_EQ(S(tasks[1].name), "step");
  EXPECT_EQ(tasks[1].tid, 12u);
  EXPECT_EQ(tasks[1].start_ns, 105u);
  EXPECT_EQ(tasks[1].end_ns, 125u);
  EXPECT_EQ(S(tasks[2].name), "step");
  EXPECT_EQ(tasks[2].tid, 11u);
  EXPECT_EQ(tasks[2].start_ns, 100u);
  EXPECT_EQ(tasks[2].end_ns, 130u);
  for (const auto& t : tasks) {
    EXPECT_EQ(S(t.domain), "dom.a");
    EXPECT_EQ(t.kind, IttTaskKind::kTask);
    EXPECT_FALSE(t.unfinished || t.begin_missing || t.closed_by_outer);
  }
  EXPECT_EQ(correlator.itt_stats().tasks, 3u);
}

TEST_F(IttCorrelatorTest, NamesTheProbeCutEndInAnEllipsisAndAreMarkedCut) {
  constexpr uint64_t kLong = 0x3300;
  const std::string cut(XT_MAX_ITT_NAME - 1, 'n');  // as much as the probe copies
  DecodedRecord name = NameRec(kLong, XT_ITT_NAME_STRING, cut);
  std::get<DecodedIttName>(name).hdr.flags = XT_FLAG_TRUNCATED;
  Feed(name);
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kLong));
  Feed(Ev(XT_ITT_TASK_END, 11, 110, kDomainA));
  Feed(Ev(XT_ITT_MARKER, 11, 115, kDomainA, kLong));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 120, kDomainA, kStep));  // whole: not marked
  Feed(Ev(XT_ITT_TASK_END, 11, 130, kDomainA));
  DecodedRecord torch = Torch(XT_ITT_TASK_BEGIN, 12, 140, cut);
  std::get<DecodedIttEvent>(torch).hdr.flags = XT_FLAG_TRUNCATED;
  Feed(torch);
  Feed(Torch(XT_ITT_TASK_END, 12, 150, ""));

  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(S(tasks[0].name), cut + "\u2026");
  EXPECT_TRUE(tasks[0].name_truncated);
  EXPECT_EQ(S(tasks[1].name), "step");
  EXPECT_FALSE(tasks[1].name_truncated);
  EXPECT_EQ(S(tasks[2].name), cut + "\u2026") << "a PyTorch range's inline name";
  EXPECT_TRUE(tasks[2].name_truncated);
  const auto markers = sink.All<IttMarker>();
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(S(markers[0].name), cut + "\u2026");
  EXPECT_TRUE(markers[0].name_truncated);
}

TEST_F(IttCorrelatorTest, EndClosesInnermostTaskOfItsDomainAndTheOpenTasksInsideIt) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kStep));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 110, kDomainB, kInner));  // never ended
  Feed(Ev(XT_ITT_TASK_END, 11, 150, kDomainA));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(S(tasks[0].domain), "dom.b");
  EXPECT_TRUE(tasks[0].closed_by_outer);
  EXPECT_EQ(tasks[0].end_ns, 150u);
  EXPECT_EQ(S(tasks[1].domain), "dom.a");
  EXPECT_FALSE(tasks[1].closed_by_outer);
  EXPECT_EQ(correlator.itt_stats().closed_by_outer, 1u);
}

TEST_F(IttCorrelatorTest, EndWithoutBeginIsKeptAndDoesNotTouchOtherThreads) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kStep));
  Feed(Ev(XT_ITT_TASK_END, 12, 110, kDomainA));  // thread 12 began nothing
  Feed(Ev(XT_ITT_TASK_END, 11, 120, kDomainA));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_TRUE(tasks[0].begin_missing);
  EXPECT_EQ(tasks[0].tid, 12u);
  EXPECT_EQ(tasks[0].start_ns, 110u);
  EXPECT_EQ(tasks[0].end_ns, 110u);
  EXPECT_EQ(S(tasks[0].domain), "dom.a");
  EXPECT_FALSE(tasks[1].begin_missing);
  EXPECT_EQ(tasks[1].tid, 11u);
  EXPECT_EQ(tasks[1].end_ns, 120u);
  EXPECT_EQ(correlator.itt_stats().ends_without_begin, 1u);
}

TEST_F(IttCorrelatorTest, FinishEndsWhatIsStillOpenAsUnfinished) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kStep));
  Feed(Ev(XT_ITT_REGION_BEGIN, 11, 105, kDomainA, kInner, 0x77));
  correlator.Finish(500);
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 2u);
  for (const auto& t : tasks) {
    EXPECT_TRUE(t.unfinished);
    EXPECT_EQ(t.end_ns, 500u);
  }
  EXPECT_EQ(correlator.itt_stats().unfinished, 2u);
  correlator.Finish(600);  // nothing left
  EXPECT_EQ(sink.All<IttTask>().size(), 2u);
}

TEST_F(IttCorrelatorTest, OverlappedTasksPairByIdAcrossThreadsWithoutNesting) {
  Feed(Ev(XT_ITT_TASK_BEGIN_OVERLAPPED, 11, 100, kDomainB, kStep, 1));
  Feed(Ev(XT_ITT_TASK_BEGIN_OVERLAPPED, 11, 110, kDomainB, kInner, 2));
  Feed(Ev(XT_ITT_TASK_END_OVERLAPPED, 12, 120, kDomainB, 0, 1));  // ended on another thread
  Feed(Ev(XT_ITT_TASK_END_OVERLAPPED, 11, 130, kDomainB, 0, 2));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(S(tasks[0].name), "step");
  EXPECT_EQ(tasks[0].kind, IttTaskKind::kOverlappedTask);
  EXPECT_EQ(tasks[0].tid, 11u);
  EXPECT_EQ(tasks[0].end_tid, 12u);
  EXPECT_EQ(tasks[0].id, 1u);
  EXPECT_EQ(tasks[0].start_ns, 100u);
  EXPECT_EQ(tasks[0].end_ns, 120u);
  EXPECT_EQ(S(tasks[1].name), "inner");
  EXPECT_EQ(tasks[1].start_ns, 110u);
  EXPECT_EQ(tasks[1].end_ns, 130u);
}

TEST_F(IttCorrelatorTest, RegionsAndFramesPairByKindDomainAndId) {
  Feed(Ev(XT_ITT_REGION_BEGIN, 11, 100, kDomainA, kInner, 9));
  Feed(Ev(XT_ITT_FRAME_BEGIN, 11, 101, kDomainA, 0, 9));
  Feed(Ev(XT_ITT_REGION_END, 11, 102, kDomainB, 0, 9));  // other domain: no match
  Feed(Ev(XT_ITT_FRAME_END, 11, 103, kDomainA, 0, 9));
  Feed(Ev(XT_ITT_REGION_END, 11, 104, kDomainA, 0, 9));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_TRUE(tasks[0].begin_missing);
  EXPECT_EQ(tasks[0].kind, IttTaskKind::kRegion);
  EXPECT_EQ(tasks[1].kind, IttTaskKind::kFrame);
  EXPECT_EQ(tasks[1].start_ns, 101u);
  EXPECT_EQ(tasks[1].end_ns, 103u);
  EXPECT_EQ(S(tasks[1].name), "");
  EXPECT_EQ(tasks[2].kind, IttTaskKind::kRegion);
  EXPECT_EQ(S(tasks[2].name), "inner");
  EXPECT_EQ(tasks[2].end_ns, 104u);
}

TEST_F(IttCorrelatorTest, MarkersCarryDomainNameAndScope) {
  Feed(Ev(XT_ITT_MARKER, 11, 100, kDomainA, kMark, 0, /*__itt_scope_global*/ 1));
  Feed(Ev(XT_ITT_MARKER, 11, 101, kDomainA, kMark, 0, /*__itt_scope_track*/ 3));
  const auto markers = sink.All<IttMarker>();
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(S(markers[0].name), "mark");
  EXPECT_EQ(S(markers[0].domain), "dom.a");
  EXPECT_EQ(markers[0].scope, IttMarkerScope::kGlobal);
  EXPECT_EQ(markers[0].ts_ns, 100u);
  EXPECT_EQ(markers[1].scope, IttMarkerScope::kThread);
}

TEST_F(IttCorrelatorTest, PytorchRangesUseTheirInlineNamesInDomainPytorch) {
  Feed(Torch(XT_ITT_TASK_BEGIN, 11, 100, "forward"));
  Feed(Torch(XT_ITT_TASK_BEGIN, 11, 110, "aten::linear"));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 111, kDomainA, kStep));  // a collector task inside
  Feed(Ev(XT_ITT_TASK_END, 11, 112, kDomainA));
  Feed(Torch(XT_ITT_TASK_END, 11, 120, ""));
  Feed(Torch(XT_ITT_MARKER, 11, 121, "step"));
  Feed(Torch(XT_ITT_TASK_END, 11, 130, ""));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(S(tasks[0].name), "step");
  EXPECT_EQ(S(tasks[1].name), "aten::linear");
  EXPECT_EQ(S(tasks[1].domain), "PyTorch");
  EXPECT_EQ(S(tasks[2].name), "forward");
  EXPECT_EQ(tasks[2].end_ns, 130u);
  const auto markers = sink.All<IttMarker>();
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(S(markers[0].name), "step");
  EXPECT_EQ(S(markers[0].domain), "PyTorch");
}

TEST_F(IttCorrelatorTest, UnknownHandlesAreNamedByAddress) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, 0xabc, 0xdef));
  Feed(Ev(XT_ITT_TASK_END, 11, 110, 0xabc));
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(S(tasks[0].domain), "domain@0xabc");
  EXPECT_EQ(S(tasks[0].name), "name@0xdef");
  EXPECT_EQ(correlator.itt_stats().unknown_handles, 2u);
}

// A handle named by its address (its name record lost) and then named again (the text sent
// again after a loss) takes the new name from then on, however often it was looked up
// before; another process's handle of the same value keeps its own.
TEST_F(IttCorrelatorTest, AHandleNamedAgainTakesItsNewNameAtOnce) {
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, 0xdef, 0, 0, kPid + 1));
  Feed(Ev(XT_ITT_TASK_END, 11, 110, kDomainA, 0, 0, 0, kPid + 1));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 120, kDomainA, 0xdef));
  Feed(Ev(XT_ITT_TASK_END, 11, 130, kDomainA));
  Feed(NameRec(0xdef, XT_ITT_NAME_STRING, "sent again"));
  Feed(NameRec(kDomainA, XT_ITT_NAME_DOMAIN, "dom.a2"));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 140, kDomainA, 0xdef));
  Feed(Ev(XT_ITT_TASK_END, 11, 150, kDomainA));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 160, kDomainA, 0xdef, 0, 0, kPid + 1));
  Feed(Ev(XT_ITT_TASK_END, 11, 170, kDomainA, 0, 0, 0, kPid + 1));
  std::vector<std::pair<std::string, std::string>> named;  // (name, domain) per task
  for (const IttTask& t : sink.All<IttTask>()) named.emplace_back(S(t.name), S(t.domain));
  EXPECT_EQ(named, (std::vector<std::pair<std::string, std::string>>{
                       {"name@0xdef", "domain@0x1000"},  // the other process's, unnamed
                       {"name@0xdef", "dom.a"},
                       {"sent again", "dom.a2"},
                       {"name@0xdef", "domain@0x1000"}}));
}

TEST_F(IttCorrelatorTest, HandlesAreNamedPerProcess) {
  Feed(NameRec(kDomainA, XT_ITT_NAME_DOMAIN, "other.a", kPid + 1));
  Feed(Ev(XT_ITT_MARKER, 11, 100, kDomainA, kMark));
  Feed(Ev(XT_ITT_MARKER, 11, 100, kDomainA, 0, 0, 0, kPid + 1));
  const auto markers = sink.All<IttMarker>();
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(S(markers[0].domain), "dom.a");
  EXPECT_EQ(S(markers[1].domain), "other.a");
}

TEST_F(IttCorrelatorTest, PauseCutsOpenTasksAndIsRecordedWithResumeAndDetach) {
  correlator.NoteStartPaused(kPid, 50);
  Feed(State(XT_COLLECT_ON, XT_COLLECT_PAUSED, 11, 90));
  Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100, kDomainA, kStep));
  Feed(State(XT_COLLECT_PAUSED, XT_COLLECT_ON, 11, 150));
  Feed(State(XT_COLLECT_ON, XT_COLLECT_PAUSED, 11, 200));
  Feed(Ev(XT_ITT_TASK_END, 11, 210, kDomainA));  // its begin was cut at the pause
  Feed(State(XT_COLLECT_DETACHED, XT_COLLECT_ON, 11, 300));
  const auto changes = sink.All<CollectionChange>();
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0].state, CollectionState::kPaused);
  EXPECT_EQ(changes[0].cause, CollectionCause::kStartPaused);
  EXPECT_EQ(changes[0].ts_ns, 50u);
  EXPECT_EQ(changes[1].state, CollectionState::kCollecting);
  EXPECT_EQ(changes[1].cause, CollectionCause::kIttCall);
  EXPECT_EQ(changes[1].tid, 11u);
  EXPECT_EQ(changes[2].state, CollectionState::kPaused);
  EXPECT_EQ(changes[3].state, CollectionState::kCollecting);
  EXPECT_EQ(changes[4].state, CollectionState::kDetached);
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_TRUE(tasks[0].unfinished);
  EXPECT_EQ(tasks[0].end_ns, 150u);
  EXPECT_TRUE(tasks[1].begin_missing);
  const IttStats& s = correlator.itt_stats();
  EXPECT_EQ(s.pauses, 2u);
  EXPECT_EQ(s.resumes, 2u);
  EXPECT_EQ(s.detaches, 1u);
}

TEST_F(IttCorrelatorTest, ThreadNameFromIttRenamesTheThread) {
  Feed(DecodedThreadName{Hdr(XT_REC_THREAD_NAME, 11, 1), "itt_workload", "itt_workload"});
  Feed(DecodedIttName{Hdr(XT_REC_ITT_NAME, 11, 2), 0, XT_ITT_NAME_THREAD, "xt-itt-labeller-0"});
  const auto threads = sink.All<ThreadInfo>();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(S(threads[1].name), "xt-itt-labeller-0");
  EXPECT_EQ(threads[1].tid, 11u);
  EXPECT_EQ(correlator.stats().threads, 2u);  // thread 1 (the name records) and thread 11
}

TEST_F(IttCorrelatorTest, BeginsBeyondTheOpenLimitAreIgnoredWithTheirEnds) {
  for (size_t i = 0; i < IttCorrelator::kMaxOpenPerThread + 2; ++i)
    Feed(Ev(XT_ITT_TASK_BEGIN, 11, 100 + i, kDomainA, kStep));
  for (size_t i = 0; i < IttCorrelator::kMaxOpenPerThread + 2; ++i)
    Feed(Ev(XT_ITT_TASK_END, 11, 5000 + i, kDomainA));
  EXPECT_EQ(correlator.itt_stats().too_deep, 2u);
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), IttCorrelator::kMaxOpenPerThread);
  for (const auto& t : tasks) EXPECT_FALSE(t.begin_missing || t.closed_by_outer);
  EXPECT_EQ(tasks.back().start_ns, 100u);
}

// A thread's stack outlives its tasks (no allocation a pair) until there are more idle ones
// than kMaxIdleStacks: pairing is the same either way, and a stack that went is made again.
TEST_F(IttCorrelatorTest, ThreadsPairTheSameWhetherTheirIdleStacksAreKeptOrNot) {
  const uint32_t threads = IttCorrelator::kMaxIdleStacks + 8;
  for (uint32_t round = 0; round < 2; ++round) {
    for (uint32_t tid = 1; tid <= threads; ++tid) {
      const uint64_t t = 1000 * (round * threads + tid);
      Feed(Ev(XT_ITT_TASK_BEGIN, tid, t, kDomainA, kStep));
      Feed(Ev(XT_ITT_TASK_BEGIN, tid, t + 1, kDomainB, kInner));
      Feed(Ev(XT_ITT_TASK_END, tid, t + 2, kDomainB));
      Feed(Ev(XT_ITT_TASK_END, tid, t + 3, kDomainA));
    }
  }
  Feed(Ev(XT_ITT_TASK_END, 1, 1, kDomainA));  // nothing open on thread 1 any more
  const auto tasks = sink.All<IttTask>();
  ASSERT_EQ(tasks.size(), 4u * threads + 1);
  for (size_t i = 0; i + 1 < tasks.size(); i += 2) {
    EXPECT_EQ(S(tasks[i].name), "inner");
    EXPECT_EQ(S(tasks[i + 1].name), "step");
    EXPECT_EQ(tasks[i].tid, tasks[i + 1].tid);
    EXPECT_EQ(tasks[i + 1].end_ns, tasks[i + 1].start_ns + 3);
    EXPECT_FALSE(tasks[i].begin_missing || tasks[i].closed_by_outer || tasks[i].unfinished);
  }
  EXPECT_TRUE(tasks.back().begin_missing);
  EXPECT_EQ(correlator.itt_stats().ends_without_begin, 1u);
  correlator.Finish(1'000'000'000);
  EXPECT_EQ(sink.All<IttTask>().size(), 4u * threads + 1) << "nothing was left open";
}

}  // namespace
}  // namespace xtrace
