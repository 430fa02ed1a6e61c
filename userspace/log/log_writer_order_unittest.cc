// Tests of how LogWriter (userspace/log/log_writer.cc) keeps its pending events: IttTasks kept
// apart from the other events must still reach the log each in its place, encoded exactly as
// an Event of that task would be, and be checked against the string table alike.
#include "log/log_writer.h"

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <span>
#include <string>
#include <variant>
#include <vector>

#include "log/event_codec.h"
#include "log/log_reader.h"
#include "log/xtrace_log.capnp.h"
#include "log_file_test_util.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::ReadAll;
using test_util::RealisticLaunch;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

// A batch frame of `events` as a writer that keeps every event as an Event makes it: the
// reference the writer's bytes are held to.
std::string ReferenceBatch(std::span<const Event> events, StringId first_string_id,
                           const std::vector<std::string>& new_strings) {
  capnp::MallocMessageBuilder message;
  auto batch = message.initRoot<log_schema::LogFrame>().initBatch();
  batch.setFirstStringId(first_string_id);
  auto strings = batch.initStrings(static_cast<unsigned>(new_strings.size()));
  for (unsigned i = 0; i < new_strings.size(); ++i) strings.set(i, new_strings[i]);
  const uint64_t base_ns = log_codec::BatchBaseNs(events);
  batch.setBaseNs(base_ns);
  batch.setEndNs(log_codec::BatchEndNs(events));
  auto out = batch.initEvents(static_cast<unsigned>(events.size()));
  log_codec::HandleTable handles;
  for (unsigned i = 0; i < events.size(); ++i)
    log_codec::EncodeEvent(events[i], base_ns, handles, out[i]);
  auto table = batch.initHandles(static_cast<unsigned>(handles.handles().size()));
  for (unsigned i = 0; i < table.size(); ++i) table.set(i, handles.handles()[i]);
  kj::VectorOutputStream bytes;
  capnp::writePackedMessage(bytes, message);
  auto written = bytes.getArray();
  return std::string(reinterpret_cast<const char*>(written.begin()), written.size());
}

// The bytes of each batch frame of the log at `path`, in file order.
std::vector<std::string> BatchFrames(const std::string& path) {
  const std::string bytes = test_util::ReadFileBytes(path);
  kj::ArrayInputStream input(
      kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  std::vector<std::string> batches;
  while (input.tryGetReadBuffer().size() > 0) {
    const size_t begin = bytes.size() - input.tryGetReadBuffer().size();
    bool batch = false;
    {
      capnp::PackedMessageReader message(input);
      batch = message.getRoot<log_schema::LogFrame>().isBatch();
    }
    const size_t end = bytes.size() - input.tryGetReadBuffer().size();
    if (batch) batches.push_back(bytes.substr(begin, end - begin));
  }
  return batches;
}

IttTask Task(uint64_t start_ns, StringId domain, StringId name, uint64_t id = 0) {
  IttTask t;
  t.pid = 7;
  t.tid = 8 + static_cast<uint32_t>(id);
  t.end_tid = t.tid + 1;
  t.start_ns = start_ns;
  t.end_ns = start_ns + 300 + id;
  t.domain = domain;
  t.name = name;
  t.kind = id ? IttTaskKind::kRegion : IttTaskKind::kTask;
  t.id = id;
  t.name_truncated = id % 2 == 1;
  t.closed_by_outer = id % 3 == 1;
  return t;
}

TEST(LogWriterOrderTest, TasksKeepTheirPlaceAmongOtherEventsAndEncodeAsEvents) {
  ScratchDir dir;
  const std::string path = dir.File("order.capnp");
  constexpr size_t kPerBatch = 7;
  auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kPerBatch});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  LogWriter& w = **writer;
  const std::vector<std::string> names = {"omp", "gemm", "conv", "main", "python3"};
  std::vector<StringId> id;
  for (const std::string& name : names) id.push_back(w.strings().Intern(name));

  // Tasks alone, and mixed with events whose order a reader relies on (a process before its
  // events, a pause between two tasks, drops where they happened); some batches begin or end
  // on a task, one task starts before every other event of its batch (its base), and one
  // comes in as an Event.
  std::vector<Event> events;
  events.push_back(ProcessInfo{.pid = 7, .ns_pid = 7, .comm = id[4]});
  events.push_back(ThreadInfo{.pid = 7, .tid = 8, .name = id[3]});
  events.push_back(Task(5'000, id[0], id[1]));
  events.push_back(Task(5'100, id[0], id[2], 1));
  events.push_back(CollectionChange{7, 8, 5'500, CollectionState::kPaused,
                                    CollectionCause::kIttCall});
  events.push_back(Task(4'000, id[0], id[1], 2));
  events.push_back(IttMarker{.pid = 7, .tid = 9, .ts_ns = 6'000, .domain = id[0],
                             .name = id[3]});
  for (uint64_t i = 0; i < 9; ++i) events.push_back(Task(7'000 + 50 * i, id[0], id[1 + i % 2], i));
  events.push_back(RecordsDropped{.start_ns = 7'100, .end_ns = 9'000, .itt = 12});
  events.push_back(RealisticLaunch(3, id[1], 2));
  events.push_back(Task(6'500, id[0], id[2], 4));
  events.push_back(Task(10'000, id[0], id[1], 5));
  const size_t as_event = events.size() - 1;  // appended as an Event, not as an IttTask

  for (size_t i = 0; i < events.size(); ++i) {
    if (const auto* task = std::get_if<IttTask>(&events[i]); task && i != as_event) {
      w.Append(*task);
    } else {
      w.Append(events[i]);
    }
  }
  ASSERT_TRUE(w.Finish(SampleSummary()).ok());

  const std::vector<std::string> batches = BatchFrames(path);
  const size_t expected_batches = (events.size() + kPerBatch - 1) / kPerBatch;
  ASSERT_EQ(batches.size(), expected_batches);
  for (size_t b = 0; b < batches.size(); ++b) {
    const size_t begin = b * kPerBatch;
    const size_t count = std::min(kPerBatch, events.size() - begin);
    const std::string reference =
        ReferenceBatch(std::span<const Event>(events).subspan(begin, count),
                       b == 0 ? 1 : static_cast<StringId>(names.size() + 1),
                       b == 0 ? names : std::vector<std::string>{});
    EXPECT_EQ(batches[b], reference) << "batch " << b << " differs from the reference bytes";
  }

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(read[i].index(), events[i].index()) << "event " << i;
    const auto* want = std::get_if<IttTask>(&events[i]);
    if (!want) continue;
    const auto& got = std::get<IttTask>(read[i]);
    EXPECT_EQ(got.start_ns, want->start_ns) << "event " << i;
    EXPECT_EQ(got.end_ns, want->end_ns) << "event " << i;
    EXPECT_EQ(got.tid, want->tid) << "event " << i;
    EXPECT_EQ(got.end_tid, want->end_tid) << "event " << i;
    EXPECT_EQ(got.name, want->name) << "event " << i;
    EXPECT_EQ(got.id, want->id) << "event " << i;
    EXPECT_EQ(got.kind, want->kind) << "event " << i;
  }
}

TEST(LogWriterOrderTest, ATaskWithAnUnknownStringIsRefusedLikeAnyEvent) {
  ScratchDir dir;
  auto writer = LogWriter::Create(dir.File("bad.capnp"), SampleHeader());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const StringId domain = (*writer)->strings().Intern("omp");
  (*writer)->Append(Task(1'000, domain, domain));
  (*writer)->Append(Task(2'000, domain, domain + 5));
  const Status st = (*writer)->Flush();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(test_util::Contains(st.message(), "string id " + std::to_string(domain + 5)));
  EXPECT_EQ((*writer)->events_written(), 0u);
}

}  // namespace
}  // namespace xtrace
