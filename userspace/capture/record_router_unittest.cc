// Tests for capture/record_router: each record read from the ring reaches the route it belongs
// to, a source's word on a record (it detached) reaches the capture, malformed records are
// counted, and the sources' parts of the summary come in the sources' order — no BPF needed.
#include "capture/record_router.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "correlate/correlator.h"
#include "xtrace/hold.h"

namespace xtrace {
namespace {

template <typename T>
std::vector<std::byte> Bytes(const T& rec) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &rec, sizeof(T));
  return out;
}

xt_record_header Hdr(uint16_t type, size_t size, uint32_t pid) {
  xt_record_header h{};
  h.type = type;
  h.size = static_cast<uint16_t>(size);
  h.pid = pid;
  h.tid = pid;
  h.start_ns = h.end_ns = 1000;
  return h;
}

std::vector<std::byte> IttState(uint32_t pid, uint32_t state) {
  xt_itt_state rec{};
  rec.hdr = Hdr(XT_REC_ITT_STATE, sizeof(rec), pid);
  rec.state = state;
  rec.previous = XT_COLLECT_ON;
  return Bytes(rec);
}

// A source that says a process detached when it sees an ITT state record saying so, serves
// the holds of `hold_kinds` if any, and keeps what it was shown.
class FakeSource : public ProbeSource {
 public:
  FakeSource(std::string sentences, std::string lines, bool api_calls, uint32_t hold_kinds = 0,
             std::string hold_sentences = "")
      : summary_{std::move(sentences), std::move(lines), std::move(hold_sentences)},
        api_calls_(api_calls),
        hold_kinds_(hold_kinds) {}
  std::string_view name() const override { return "fake"; }
  bool needs_library() const override { return false; }
  size_t link_count() const override { return 0; }
  bool records_api_calls() const override { return api_calls_; }
  void Begin(const SourceStart&) override { ++begun; }
  void Finish(uint64_t now_ns) override { finished_at = now_ns; }
  RecordEffect OnRecord(const DecodedRecord& record) override {
    ++records;
    const auto* state = std::get_if<DecodedIttState>(&record);
    return {.process_detached = state && state->state == XT_COLLECT_DETACHED};
  }
  SourceSummary Summary(const SourceSummaryInputs&) const override { return summary_; }
  uint32_t holds_served() const override { return hold_kinds_; }
  bool OnHold(const DecodedHold& hold) override {
    if (!hold_kinds_) return false;
    held_tids.push_back(hold.hdr.tid);
    return true;
  }

  int begun = 0;
  int records = 0;
  uint64_t finished_at = 0;
  std::vector<uint32_t> held_tids;

 private:
  SourceSummary summary_;
  bool api_calls_;
  uint32_t hold_kinds_;
};

// What reached each route.
struct Seen {
  std::vector<uint32_t> process_pids;
  std::vector<uint32_t> unserved_hold_tids;
  std::vector<std::pair<uint32_t, std::string>> counted;
  std::vector<uint32_t> decoded_pids;
};

RecordRouter::Routes RoutesInto(Seen& seen) {
  return RecordRouter::Routes{
      .process =
          [&seen](const DecodedProcessRecord& r) {
            seen.process_pids.push_back(std::visit([](const auto& x) { return x.hdr.pid; }, r));
          },
      .unserved_hold =
          [&seen](const DecodedHold& h) { seen.unserved_hold_tids.push_back(h.hdr.tid); },
      .counted =
          [&seen](uint32_t pid, std::string_view family) {
            seen.counted.emplace_back(pid, std::string(family));
          },
      .decoded = [&seen](const DecodedRecord& r) { seen.decoded_pids.push_back(HeaderOf(r).pid); }};
}

constexpr uint32_t kSelf = 99;

TEST(RecordRouterTest, ASourceThatSaysAProcessDetachedIsHeard) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  router.Route(IttState(7, XT_COLLECT_PAUSED));
  router.Route(IttState(8, XT_COLLECT_DETACHED));
  EXPECT_EQ(source.records, 2);
  EXPECT_EQ(seen.decoded_pids, (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(seen.counted, (std::vector<std::pair<uint32_t, std::string>>{{7, "ITT"}, {8, "ITT"}}));
  EXPECT_EQ(router.TakeDetached(), std::vector<uint32_t>{8});
  EXPECT_TRUE(router.TakeDetached().empty()) << "taken once";
}

// The ITT fast path passes its calls on decoded: they are counted and routed as the same
// call read from the ring is, and the collector's own are not the workload's.
TEST(RecordRouterTest, ASideStreamsDecodedRecordIsCountedAndRoutedAsARingRecordIs) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  DecodedIttEvent call{};
  call.hdr = Hdr(XT_REC_ITT_EVENT, sizeof(xt_itt_event), 7);
  call.op = XT_ITT_TASK_BEGIN;
  call.origin = XT_ITT_FROM_COLLECTOR;
  router.RouteSideRecord(call);
  call.hdr.pid = kSelf;
  router.RouteSideRecord(call);
  DecodedIttState detached{Hdr(XT_REC_ITT_STATE, sizeof(xt_itt_state), 8), XT_COLLECT_DETACHED,
                           XT_COLLECT_ON};
  router.RouteSideRecord(detached);
  EXPECT_EQ(seen.decoded_pids, (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(seen.counted, (std::vector<std::pair<uint32_t, std::string>>{{7, "ITT"}, {8, "ITT"}}));
  EXPECT_EQ(source.records, 2);
  EXPECT_EQ(router.TakeDetached(), std::vector<uint32_t>{8}) << "a source's word is heard too";
}

TEST(RecordRouterTest, WithoutASourceToSayItNoProcessDetaches) {
  Seen seen;
  RecordRouter router(kSelf, {}, RoutesInto(seen));
  router.Route(IttState(8, XT_COLLECT_DETACHED));
  EXPECT_EQ(seen.decoded_pids, std::vector<uint32_t>{8}) << "the correlator still has it";
  EXPECT_TRUE(router.TakeDetached().empty());
}

TEST(RecordRouterTest, LifecycleAndQueryHoldRecordsTakeTheirOwnRoutes) {
  FakeSource bystander("", "", false);
  FakeSource source("", "", false, XT_HOLD_QUERY);
  Seen seen;
  RecordRouter router(kSelf, {&bystander, &source}, RoutesInto(seen));
  xt_process_exit exit_rec{};
  exit_rec.hdr = Hdr(XT_REC_PROCESS_EXIT, sizeof(exit_rec), 5);
  router.Route(Bytes(exit_rec));
  // The collector's own lifecycle records are routed too: it may be held like any process.
  exit_rec.hdr.pid = kSelf;
  router.Route(Bytes(exit_rec));
  xt_ze_query_hold hold{};
  hold.hdr = Hdr(XT_REC_ZE_QUERY_HOLD, sizeof(hold), 6);
  hold.hdr.tid = 61;
  router.Route(Bytes(hold));
  EXPECT_EQ(seen.process_pids, (std::vector<uint32_t>{5, kSelf}));
  EXPECT_EQ(source.held_tids, std::vector<uint32_t>{61}) << "the source that serves it";
  EXPECT_TRUE(bystander.held_tids.empty());
  EXPECT_TRUE(seen.unserved_hold_tids.empty());
  EXPECT_TRUE(seen.decoded_pids.empty());
  EXPECT_TRUE(seen.counted.empty());
  EXPECT_EQ(source.records, 0) << "sources see decoded records only";
  EXPECT_EQ(bystander.records, 0);
}

// Python stacks are made whole here from each thread's chain; a process's exit lets its
// chains go, so a stack of a later process with that pid that claims shared frames gets none.
TEST(RecordRouterTest, AProcessExitEndsItsThreadsPythonStackChains) {
  Seen seen;
  RecordRouter::Routes routes = RoutesInto(seen);
  std::vector<uint32_t> frames;
  routes.decoded = [&frames](const DecodedRecord& r) {
    if (const auto* stack = std::get_if<DecodedPyStack>(&r)) frames.push_back(stack->frames);
  };
  RecordRouter router(kSelf, {}, std::move(routes));
  auto stack = [](uint32_t total, uint32_t shared) {
    struct {
      xt_py_stack rec;
      xt_py_frame inner[2];
    } r{};
    const uint32_t written = total - shared;
    r.rec.hdr = Hdr(XT_REC_PY_STACK, sizeof(r.rec) + written * sizeof(xt_py_frame), 5);
    r.rec.frames = total;
    r.rec.shared = shared;
    for (uint32_t i = 0; i < written; ++i) r.inner[i] = {0x10 + i, i};
    std::vector<std::byte> bytes = Bytes(r);
    bytes.resize(r.rec.hdr.size);
    return bytes;
  };
  router.Route(stack(2, 0));
  router.Route(stack(2, 1));  // shares the outer frame: whole
  xt_process_exit exit_rec{};
  exit_rec.hdr = Hdr(XT_REC_PROCESS_EXIT, sizeof(exit_rec), 5);
  router.Route(Bytes(exit_rec));
  router.Route(stack(2, 1));  // nothing left to share with
  EXPECT_EQ(frames, (std::vector<uint32_t>{2, 2, 0}));
}

TEST(RecordRouterTest, AHoldNoSourceServesIsHandedBackToBeContinued) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  xt_ze_query_hold hold{};
  hold.hdr = Hdr(XT_REC_ZE_QUERY_HOLD, sizeof(hold), 6);
  hold.hdr.tid = 62;
  router.Route(Bytes(hold));
  EXPECT_EQ(seen.unserved_hold_tids, std::vector<uint32_t>{62});
  EXPECT_TRUE(seen.decoded_pids.empty());
  EXPECT_EQ(source.records, 0);
}

TEST(RecordRouterTest, TheCollectorsOwnCallsAreNotTheWorkloads) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  router.Route(IttState(kSelf, XT_COLLECT_DETACHED));
  EXPECT_TRUE(seen.decoded_pids.empty());
  EXPECT_TRUE(seen.counted.empty());
  EXPECT_EQ(source.records, 0);
  EXPECT_TRUE(router.TakeDetached().empty());
}

TEST(RecordRouterTest, MalformedRecordsAreCountedWithTheFirstReason) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  std::vector<std::byte> state = IttState(7, XT_COLLECT_PAUSED);
  state.resize(sizeof(xt_record_header) + 2);  // cut inside its fixed part
  router.Route(state);
  xt_ze_query_hold hold{};
  hold.hdr = Hdr(XT_REC_ZE_QUERY_HOLD, sizeof(hold), 6);
  std::vector<std::byte> short_hold = Bytes(hold);
  short_hold.resize(sizeof(xt_record_header));
  router.Route(short_hold);
  xt_process_exit exit_rec{};
  exit_rec.hdr = Hdr(XT_REC_PROCESS_EXIT, sizeof(exit_rec), 5);
  std::vector<std::byte> short_exit = Bytes(exit_rec);
  short_exit.resize(sizeof(xt_record_header) + 1);
  router.Route(short_exit);
  EXPECT_EQ(router.malformed(), 3u);
  EXPECT_FALSE(router.first_malformed().empty());
  EXPECT_NE(router.first_malformed(), "query hold record too short") << "the first one's reason";
  EXPECT_TRUE(seen.decoded_pids.empty());
  EXPECT_TRUE(seen.process_pids.empty());
  EXPECT_TRUE(seen.unserved_hold_tids.empty());
  EXPECT_EQ(source.records, 0);
}

TEST(RecordRouterTest, APendingCallTakesTheRingRecordsPath) {
  FakeSource source("", "", false);
  Seen seen;
  RecordRouter router(kSelf, {&source}, RoutesInto(seen));
  xt_call_slot slot{};
  slot.start_ns = 100;
  slot.fn = XT_ZE_EVENT_HOST_SYNCHRONIZE;
  auto good = DecodePendingCall(slot, 7, 71, 900);
  ASSERT_TRUE(good.ok() && good->has_value());
  router.RouteDecoded(DecodedRecord(**good));
  EXPECT_EQ(seen.decoded_pids, std::vector<uint32_t>{7});
  EXPECT_EQ(source.records, 1);

  // A function id no record may carry: refused as a malformed record, from either path.
  slot.fn = XT_ZE_FN_COUNT + 7;
  auto bad = DecodePendingCall(slot, 7, 71, 900);
  ASSERT_FALSE(bad.ok());
  router.RouteDecoded(bad.status());
  xt_call_unfinished rec{};
  rec.hdr = Hdr(XT_REC_CALL_UNFINISHED, sizeof(rec), 7);
  rec.hdr.end_ns = 900;
  rec.fn = XT_ZE_FN_COUNT + 7;
  router.Route(Bytes(rec));
  EXPECT_EQ(router.malformed(), 2u);
  EXPECT_EQ(router.first_malformed(), bad.status().message());
  EXPECT_EQ(seen.decoded_pids, std::vector<uint32_t>{7}) << "neither reached the correlator";
  EXPECT_EQ(source.records, 1);
}

TEST(RecordRouterTest, EverySourceBeginsFinishesAndSaysItsPartInOrder) {
  FakeSource first(" One.", "\nxtrace: first line.", false, 0, " Held once.");
  FakeSource second(" Two.", "", true, XT_HOLD_QUERY);
  FakeSource third("", "\nxtrace: third line.", false, 0, " Held twice.");
  Seen seen;
  RecordRouter router(kSelf, {&first, &second, &third}, RoutesInto(seen));
  EXPECT_TRUE(router.records_api_calls()) << "one source is enough";
  EXPECT_FALSE(RecordRouter(kSelf, {&first, &third}, RoutesInto(seen)).records_api_calls());
  EXPECT_EQ(router.holds_served(), uint32_t{XT_HOLD_QUERY});
  EXPECT_EQ(RecordRouter(kSelf, {&first, &third}, RoutesInto(seen)).holds_served(), 0u);

  StringTable strings;
  class NullSink : public EventSink {
   public:
    void OnEvent(const Event&) override {}
  } sink;
  ProcfsInspector inspector;
  Correlator correlator(strings, sink, inspector);
  router.Begin(SourceStart{correlator, strings});
  router.Finish(1234);
  for (const FakeSource* s : {&first, &second, &third}) {
    EXPECT_EQ(s->begun, 1);
    EXPECT_EQ(s->finished_at, 1234u);
  }
  const Counters counters{};
  const SourceSummary all = router.Summary(SourceSummaryInputs{correlator, counters});
  EXPECT_EQ(all.sentences, " One. Two.");
  EXPECT_EQ(all.lines, "\nxtrace: first line.\nxtrace: third line.");
  EXPECT_EQ(all.hold_sentences, " Held once. Held twice.");
}

}  // namespace
}  // namespace xtrace
