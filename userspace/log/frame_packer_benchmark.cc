// Benchmark of FramePacker against Cap'n Proto's packer on the frames a capture writes: a
// batch of ITT tasks, a batch of kernel launches, and random words of mixed density. Prints
// ns per unpacked word and GB/s of unpacked input for each packer (the best of several
// rounds), and the packed sizes; then LogWriter's whole cost per ITT task (encode, pack,
// write to a file in /tmp). Usage: xtrace_frame_packer_benchmark [rounds]
#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <kj/io.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "log/event_codec.h"
#include "log/frame_packer.h"
#include "log/log_writer.h"
#include "log/xtrace_log.capnp.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

constexpr unsigned kEvents = 4096;  // LogWriterOptions::events_per_batch's default

void EncodeBatch(capnp::MessageBuilder& message, const std::vector<Event>& events) {
  auto batch = message.initRoot<log_schema::LogFrame>().initBatch();
  const uint64_t base_ns = log_codec::BatchBaseNs(events);
  batch.setBaseNs(base_ns);
  batch.setEndNs(log_codec::BatchEndNs(events));
  auto list = batch.initEvents(static_cast<unsigned>(events.size()));
  log_codec::HandleTable handles;
  for (unsigned i = 0; i < events.size(); ++i) {
    log_codec::EncodeEvent(events[i], base_ns, handles, list[i]);
  }
  auto table = batch.initHandles(static_cast<unsigned>(handles.handles().size()));
  for (unsigned i = 0; i < table.size(); ++i) table.set(i, handles.handles()[i]);
}

std::vector<Event> IttTasks() {
  std::vector<Event> events;
  for (uint64_t i = 0; i < kEvents; ++i) {
    IttTask t;
    t.pid = t.tid = t.end_tid = 91234;
    t.start_ns = 7'000'000'000'000 + i * 500 + (i * 7919) % 97;
    t.end_ns = t.start_ns + 180 + (i * 104'729) % 61;
    t.domain = 3;
    t.name = 4 + static_cast<StringId>(i % 8);
    events.push_back(t);
  }
  return events;
}

std::vector<Event> Launches() {
  std::vector<Event> events;
  for (uint64_t i = 0; i < kEvents; ++i) events.push_back(test_util::RealisticLaunch(i, 5, 16));
  return events;
}

// CPU time of this thread, so that other work on a shared machine does not count (preemption
// would otherwise land in a round's figure).
double CpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Best-of-rounds seconds of one call of `fn`, each round long enough to time well.
double BestSeconds(unsigned rounds, const std::function<void()>& fn) {
  double best = 1e9;
  for (unsigned r = 0; r < rounds; ++r) {
    constexpr int kCalls = 50;
    const double t0 = CpuSeconds();
    for (int i = 0; i < kCalls; ++i) fn();
    best = std::min(best, (CpuSeconds() - t0) / kCalls);
  }
  return best;
}

void Compare(const char* what, kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments,
             unsigned rounds) {
  size_t words = (segments.size() + 2) / 2;
  for (const auto& s : segments) words += s.size();
  std::vector<kj::byte> capnp_out(packing::MaxPackedBytes(words));
  size_t capnp_bytes = 0;
  const double capnp_s = BestSeconds(rounds, [&] {
    kj::ArrayOutputStream out(kj::arrayPtr(capnp_out.data(), capnp_out.size()));
    capnp::writePackedMessage(out, segments);
    capnp_bytes = out.getArray().size();
  });
  FramePacker packer;
  size_t ours_bytes = 0;
  const double ours_s = BestSeconds(rounds, [&] { ours_bytes = packer.Pack(segments); });
  auto line = [&](const char* packer_name, double s, size_t bytes) {
    std::printf("%-14s %-7s %7.3f ns/word %6.2f GB/s  %zu words -> %zu bytes\n", what,
                packer_name, s * 1e9 / static_cast<double>(words),
                static_cast<double>(words) * 8 / s / 1e9, words, bytes);
  };
  line("capnp", capnp_s, capnp_bytes);
  line(packing::Bmi2Available() ? "ours" : "fallback", ours_s, ours_bytes);
  std::printf("%-14s speedup %.1fx\n", what, capnp_s / ours_s);
}

// Appends `batches` full batches of ITT tasks to a LogWriter; best-of-rounds ns per task.
void WriterCost(unsigned rounds, unsigned batches) {
  const std::vector<Event> tasks = IttTasks();
  const std::string path = "/tmp/xtrace_frame_packer_benchmark." + std::to_string(::getpid());
  double best = 1e9;
  for (unsigned r = 0; r < rounds; ++r) {
    auto writer = LogWriter::Create(path, LogHeader{});
    if (!writer.ok()) {
      std::fprintf(stderr, "%s\n", writer.status().message().c_str());
      return;
    }
    for (int i = 0; i < 12; ++i) (*writer)->strings().Intern("name" + std::to_string(i));
    const double t0 = CpuSeconds();
    for (unsigned b = 0; b < batches; ++b) {
      for (const Event& e : tasks) (*writer)->Append(e);
    }
    (void)(*writer)->Flush();
    best = std::min(best, (CpuSeconds() - t0) * 1e9 /
                              (static_cast<double>(batches) * static_cast<double>(tasks.size())));
  }
  ::unlink(path.c_str());
  std::printf("%-14s %7.1f ns/task (LogWriter: encode, pack, write)\n", "writer", best);
}

}  // namespace
}  // namespace xtrace

int main(int argc, char** argv) {
  using namespace xtrace;
  const unsigned rounds = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 20;
  {
    capnp::MallocMessageBuilder message(kEvents * 23 + 64);
    EncodeBatch(message, IttTasks());
    Compare("itt batch", message.getSegmentsForOutput(), rounds);
  }
  {
    capnp::MallocMessageBuilder message(kEvents * 23 + 64);
    EncodeBatch(message, Launches());
    Compare("launch batch", message.getSegmentsForOutput(), rounds);
  }
  {
    std::mt19937_64 rng(1);
    std::vector<uint64_t> words(kEvents * 20);
    for (uint64_t& w : words) {
      const unsigned density = static_cast<unsigned>(rng() % 9);
      w = 0;
      for (unsigned i = 0; i < 8; ++i) {
        if (rng() % 8 < density) w |= uint64_t{1 + rng() % 255} << (8 * i);
      }
    }
    const kj::ArrayPtr<const capnp::word> segment(
        reinterpret_cast<const capnp::word*>(words.data()), words.size());
    Compare("random words", kj::arrayPtr(&segment, 1), rounds);
  }
  WriterCost(std::max(rounds / 4, 3u), 64);
  return 0;
}
