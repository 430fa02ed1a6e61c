// Tests for log/event_codec: the batch handle table (refs from 1, 0 for no handle, inline once
// full), the batch base time, event round trips through the Cap'n Proto form (handles by ref
// and inline, times that wrap), a corrupt handle ref, and header and summary round trips.
#include "log/event_codec.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <utility>
#include <variant>
#include <vector>

#include "log_test_util.h"

namespace xtrace::log_codec {
namespace {

using test_util::ExpectSameEvent;
using test_util::RealisticLaunch;
using test_util::SampleHeader;
using test_util::SampleSummary;

// Encodes `event` in a batch whose table is `table` and decodes it against that table.
Event RoundTrip(const Event& event, uint64_t base_ns, HandleTable& table,
                DecodeResult* result = nullptr) {
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<log_schema::Event>();
  EncodeEvent(event, base_ns, table, built);
  Event decoded;
  const DecodeResult r = DecodeEvent(built.asReader(), base_ns, table.handles(), &decoded);
  if (result) *result = r;
  return decoded;
}

TEST(HandleTable, RefsCountFromOneAndRepeatForTheSameHandle) {
  HandleTable table;
  EXPECT_EQ(table.Ref(0), 0u) << "no handle has no ref";
  EXPECT_EQ(table.Ref(0xa000), 1u);
  EXPECT_EQ(table.Ref(0xb000), 2u);
  EXPECT_EQ(table.Ref(0xa000), 1u);
  EXPECT_EQ(table.handles(), (std::vector<uint64_t>{0xa000, 0xb000}));
}

TEST(HandleTable, AFullTableGivesNewHandlesNoRef) {
  HandleTable table;
  for (uint64_t h = 1; h <= HandleTable::kMaxRef; ++h) ASSERT_EQ(table.Ref(h), h);
  EXPECT_EQ(table.Ref(HandleTable::kMaxRef + 1), 0u);
  EXPECT_EQ(table.Ref(5), 5u) << "handles already in the table keep their ref";
  EXPECT_EQ(table.handles().size(), HandleTable::kMaxRef);
}

TEST(BatchBaseNs, IsTheEarliestStartAndZeroWithoutTimes) {
  KernelLaunch early = RealisticLaunch(3, 1, 4), late = RealisticLaunch(9, 1, 4);
  const std::vector<Event> events = {late, ProcessInfo{.pid = 7}, early};
  EXPECT_EQ(BatchBaseNs(events), early.start_ns);
  const std::vector<Event> timeless = {ProcessInfo{.pid = 7}, ThreadInfo{.pid = 7, .tid = 8}};
  EXPECT_EQ(BatchBaseNs(timeless), 0u);
}

// The writer decides which batches a windowed reader may step over by IsWindowedEvent, the
// reader which events to leave out by IsWindowedKind: they must agree on every kind.
template <size_t... I>
void ExpectWindowedKindsAgree(std::index_sequence<I...>) {
  auto check = [](const Event& event) {
    capnp::MallocMessageBuilder message;
    auto built = message.initRoot<log_schema::Event>();
    HandleTable table;
    EncodeEvent(event, 0, table, built);
    EXPECT_EQ(IsWindowedKind(built.which()), IsWindowedEvent(event)) << "kind " << event.index();
  };
  (check(Event(std::in_place_index<I>)), ...);
}

TEST(EventCodec, WriterAndReaderAgreeOnWhichKindsAWindowLeavesOut) {
  ExpectWindowedKindsAgree(std::make_index_sequence<std::variant_size_v<Event>>());
  EXPECT_TRUE(IsWindowedEvent(Event(KernelLaunch{})));
  EXPECT_FALSE(IsWindowedEvent(Event(ProcessInfo{})));
}

TEST(EventCodec, LaunchRoundTripsWithHandlesByRef) {
  HandleTable table;
  const KernelLaunch launch = RealisticLaunch(11, 3, 5);
  const Event decoded = RoundTrip(launch, launch.start_ns - 100, table);
  ExpectSameEvent(launch, decoded);
  EXPECT_EQ(table.handles().size(), 3u) << "kernel, command list and signal event by ref";
}

TEST(EventCodec, LaunchRoundTripsWithHandlesInlineOnceTheTableIsFull) {
  HandleTable table;
  for (uint64_t h = 1; h <= HandleTable::kMaxRef; ++h) table.Ref(h);
  const KernelLaunch launch = RealisticLaunch(2, 3, 5);
  ExpectSameEvent(launch, RoundTrip(launch, launch.start_ns, table));
}

TEST(EventCodec, TimesWrapRatherThanClamp) {
  HandleTable table;
  KernelLaunch launch = RealisticLaunch(1, 3, 5);
  launch.end_ns = launch.start_ns - 10;  // an end before its start still round-trips
  ExpectSameEvent(launch, RoundTrip(launch, launch.start_ns + 50, table));
}

TEST(EventCodec, CreateProcessAndThreadRoundTrip) {
  HandleTable table;
  const KernelCreate create{.pid = 9, .tid = 10, .start_ns = 1000, .end_ns = 1500, .module = 0x77,
                            .kernel = 0x88, .name = 4, .result = 0x78000011, .name_truncated = true};
  ExpectSameEvent(create, RoundTrip(create, 900, table));
  const KernelCreate learned{.pid = 9, .tid = 10, .start_ns = 2000, .end_ns = 2100, .kernel = 0x99,
                             .name = 4, .learned = true};
  ExpectSameEvent(learned, RoundTrip(learned, 900, table));
  const ProcessInfo process{.pid = 30043, .ns_pid = 3, .comm = 5, .command_line = 6, .cgroup = 7,
                            .container_id = 8};
  ExpectSameEvent(process, RoundTrip(process, 0, table));
  // An exec: its time sets the batch base like any other, and may lie before it (a file
  // that repeats who a process was).
  const ProcessInfo execed{.pid = 30043, .ns_pid = 3, .comm = 9, .exec_ns = 7'000};
  EXPECT_EQ(BatchBaseNs(std::vector<Event>{execed}), 7'000u);
  ExpectSameEvent(execed, RoundTrip(execed, 6'000, table));
  ExpectSameEvent(execed, RoundTrip(execed, 9'000, table));
  const ThreadInfo thread{.pid = 30043, .tid = 30044, .name = 9};
  ExpectSameEvent(thread, RoundTrip(thread, 0, table));
}

void ExpectSameDrops(const RecordsDropped& expected, const Event& decoded) {
  const auto* d = std::get_if<RecordsDropped>(&decoded);
  ASSERT_NE(d, nullptr) << "kind " << decoded.index();
  EXPECT_EQ(d->start_ns, expected.start_ns);
  EXPECT_EQ(d->end_ns, expected.end_ns);
  EXPECT_EQ(d->level_zero, expected.level_zero);
  EXPECT_EQ(d->itt, expected.itt);
  EXPECT_EQ(d->drm, expected.drm);
  EXPECT_EQ(d->other, expected.other);
  EXPECT_EQ(d->itt_rings, expected.itt_rings);
}

// The programs' own ITT rings' share of the drops travels with the window; a log written
// before it was counted (its recordsDropped set only the fields before ittRings, in a zeroed
// message as every writer's batch is) reads as none lost there.
TEST(EventCodec, DropWindowsRoundTripWithTheIttRingsShareAndOldLogsReadItAsZero) {
  HandleTable table;
  const RecordsDropped drops{.start_ns = 7'000, .end_ns = 9'500, .level_zero = 3, .itt = 40,
                             .drm = 2, .other = 1, .itt_rings = 25};
  ExpectSameDrops(drops, RoundTrip(drops, 6'000, table));

  capnp::MallocMessageBuilder message;
  auto old = message.initRoot<log_schema::Event>().initRecordsDropped();
  old.setStartOffsetNs(1'000);
  old.setDurationNs(2'500);
  old.setLevelZero(3);
  old.setItt(40);
  old.setDrm(2);
  old.setOther(1);
  Event decoded;
  ASSERT_EQ(DecodeEvent(message.getRoot<log_schema::Event>().asReader(), 6'000, {}, &decoded),
            DecodeResult::kEvent);
  RecordsDropped before_rings = drops;
  before_rings.itt_rings = 0;
  ExpectSameDrops(before_rings, decoded);
}

void ExpectSameHold(const XtraceHold& expected, const Event& decoded) {
  const auto* d = std::get_if<XtraceHold>(&decoded);
  ASSERT_NE(d, nullptr) << "kind " << decoded.index();
  EXPECT_EQ(d->pid, expected.pid);
  EXPECT_EQ(d->tid, expected.tid);
  EXPECT_EQ(d->start_ns, expected.start_ns);
  EXPECT_EQ(d->end_ns, expected.end_ns);
  EXPECT_EQ(d->process_end_ns, expected.process_end_ns);
  EXPECT_EQ(d->cause, expected.cause);
  EXPECT_EQ(d->learned, expected.learned);
  EXPECT_EQ(d->failed, expected.failed);
}

// A hold is a record of its own, whatever it learned: its span, how much of it held the whole
// process, why, and what its queries came to. It is a span a windowed reader may leave out,
// and the batch's times cover it.
TEST(EventCodec, HoldsRoundTripWithTheirCauseAndTheWholeProcessPart) {
  HandleTable table;
  const XtraceHold query{.pid = 41, .tid = 43, .start_ns = 7'000, .end_ns = 19'000,
                         .process_end_ns = 7'400, .cause = HoldCause::kAttachQueries,
                         .learned = 0, .failed = 3};
  ExpectSameHold(query, RoundTrip(query, 6'000, table));
  EXPECT_FALSE(query.whole_process());
  const XtraceHold library{.pid = 41, .tid = 41, .start_ns = 30'000, .end_ns = 31'500,
                           .process_end_ns = 31'500, .cause = HoldCause::kLibraryLoad};
  ExpectSameHold(library, RoundTrip(library, 6'000, table));
  EXPECT_TRUE(library.whole_process());
  for (HoldCause cause : {HoldCause::kExec, HoldCause::kTableGetter, HoldCause::kLevelZeroInit}) {
    XtraceHold h = library;
    h.cause = cause;
    ExpectSameHold(h, RoundTrip(h, 6'000, table));
  }
  const std::vector<Event> batch = {ProcessInfo{.pid = 41}, query, library};
  EXPECT_EQ(BatchBaseNs(batch), 7'000u);
  EXPECT_EQ(BatchEndNs(batch), 31'500u);
  EXPECT_TRUE(IsWindowedEvent(Event(query)));

  // A cause a newer xtrace added reads as unknown; a process part past the hold is cut to it.
  capnp::MallocMessageBuilder message;
  auto newer = message.initRoot<log_schema::Event>().initXtraceHold();
  newer.setPid(41);
  newer.setStartOffsetNs(1'000);
  newer.setDurationNs(500);
  newer.setProcessDurationNs(900);
  newer.setCause(static_cast<log_schema::HoldCause>(77));
  Event decoded;
  ASSERT_EQ(DecodeEvent(message.getRoot<log_schema::Event>().asReader(), 6'000, {}, &decoded),
            DecodeResult::kEvent);
  ExpectSameHold(XtraceHold{.pid = 41, .start_ns = 7'000, .end_ns = 7'500, .process_end_ns = 7'500,
                            .cause = HoldCause::kUnknown},
                 decoded);
}

TEST(EventCodec, AHandleRefBeyondTheBatchTableIsCorrupt) {
  HandleTable writer_table;
  const KernelLaunch launch = RealisticLaunch(4, 3, 5);
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<log_schema::Event>();
  EncodeEvent(launch, launch.start_ns, writer_table, built);
  Event decoded;
  // The reader's table lacks the last handle the writer added.
  std::vector<uint64_t> short_table = writer_table.handles();
  short_table.pop_back();
  EXPECT_EQ(DecodeEvent(built.asReader(), launch.start_ns, short_table, &decoded),
            DecodeResult::kBadHandleRef);
}

TEST(EventCodec, HeaderAndSummaryRoundTrip) {
  capnp::MallocMessageBuilder message;
  const LogHeader header = SampleHeader();
  auto h = message.initRoot<log_schema::Header>();
  EncodeHeader(header, h);
  const LogHeader back = DecodeHeader(h.asReader());
  EXPECT_EQ(back.xtrace_version, header.xtrace_version);
  EXPECT_EQ(back.host, header.host);
  EXPECT_EQ(back.kernel_release, header.kernel_release);
  EXPECT_EQ(back.boot_id, header.boot_id);
  EXPECT_EQ(back.command_line, header.command_line);
  EXPECT_EQ(back.start_clock.monotonic_ns, header.start_clock.monotonic_ns);
  EXPECT_EQ(back.start_clock.monotonic_raw_ns, header.start_clock.monotonic_raw_ns);
  EXPECT_EQ(back.start_clock.realtime_ns, header.start_clock.realtime_ns);

  capnp::MallocMessageBuilder summary_message;
  const LogSummary summary = SampleSummary();
  auto s = summary_message.initRoot<log_schema::Summary>();
  EncodeSummary(summary, s);
  const LogSummary sback = DecodeSummary(s.asReader());
  EXPECT_EQ(sback.end_clock.realtime_ns, summary.end_clock.realtime_ns);
  EXPECT_EQ(sback.events, summary.events);
  EXPECT_EQ(sback.dropped, summary.dropped);
  EXPECT_EQ(sback.processes, summary.processes);
  ASSERT_EQ(sback.process_stats.size(), summary.process_stats.size());
  for (size_t i = 0; i < summary.process_stats.size(); ++i) {
    EXPECT_EQ(sback.process_stats[i].pid, summary.process_stats[i].pid);
    EXPECT_EQ(sback.process_stats[i].comm, summary.process_stats[i].comm);
    EXPECT_EQ(sback.process_stats[i].records_by_source, summary.process_stats[i].records_by_source);
    EXPECT_EQ(sback.process_stats[i].dropped, summary.process_stats[i].dropped);
  }
  ASSERT_FALSE(summary.notes.empty());
  EXPECT_EQ(sback.notes, summary.notes);
}

}  // namespace
}  // namespace xtrace::log_codec
