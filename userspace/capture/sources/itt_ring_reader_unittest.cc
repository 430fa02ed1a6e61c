// Tests of IttRingReader (itt_ring_reader.cc) against the real collector loaded into this
// very process: process_vm_readv/writev on one's own pid needs no privilege, and the
// protocol is the same as across processes.
#include "capture/sources/itt_ring_reader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "capture/sources/tsc_clock.h"
#include "itt_client.h"
#include "itt_control_test_util.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

namespace itt = itt_client;

xt_itt_control* LoadedControl() { return testing::LoadCollectorControl(); }

const uint32_t kSelf = static_cast<uint32_t>(getpid());

IttRingReader::Clock Clock(uint64_t lease = uint64_t{1} << 40) {
  return {XT_ITT_CLOCK_TSC, TscClock::ReadTsc(), lease};
}

// Attaches as a capture does: the fast path, then the collector's domains switched on.
Result<std::unique_ptr<IttRingReader>> AttachAsCapture(uint64_t address, IttRingReader::Clock clock) {
  auto reader = IttRingReader::Attach(kSelf, address, clock);
  if (reader.ok()) testing::SwitchOnCollectorDomains();
  return reader;
}

std::vector<IttRingRecord> DrainAll(IttRingReader& reader, IttDrainStats* stats = nullptr) {
  std::vector<IttRingRecord> out;
  const IttDrainStats s = reader.Drain(TscClock::ReadTsc(), [&](const IttRingRecord& r) {
    out.push_back(r);
    out.back().text = {};
  });
  if (stats) *stats = s;
  reader.Commit();
  return out;
}

TEST(IttRingReader, AttachesDrainsCommitsAndDetaches) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  const auto address = reinterpret_cast<uintptr_t>(c);
  itt::Domain* d = itt::DomainCreate("xt.reader");
  itt::TaskEnd(d);  // before the attach: the probe site, no ring
  auto reader = AttachAsCapture(address, Clock());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ(c->generation, (*reader)->generation());
  EXPECT_NE(c->generation, 0u);
  // A second capture is turned away while this one's heartbeat is fresh.
  auto second = AttachAsCapture(address, Clock());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another capture"), std::string::npos);

  uint32_t tid = 0;
  std::thread([&] {
    tid = static_cast<uint32_t>(syscall(SYS_gettid));
    itt::TaskBegin(d, itt::StringHandleCreate("xt.reader.task"));
    itt::TaskEnd(d);
  }).join();
  const auto got = DrainAll(**reader);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tid, tid);
  EXPECT_EQ(got[0].op, uint32_t{XT_ITT_TASK_BEGIN});
  EXPECT_EQ(got[1].op, uint32_t{XT_ITT_TASK_END});
  EXPECT_TRUE(DrainAll(**reader).empty()) << "read twice";
  for (uint32_t i = 0; i < IttRingCount(*c); ++i) {
    auto* ring = reinterpret_cast<xt_itt_ring*>(c->rings[i]);
    if (!ring) continue;
    EXPECT_EQ(ring->read_pos, ring->write_pos);  // committed
  }
  (*reader)->Detach();
  EXPECT_EQ(c->generation, 0u);
}

// The totals are what a process's end is accounted against: records written since the attach
// are the ones read plus the ones lost, and a full ring's drops show in them too.
TEST(IttRingReader, TotalsCountEveryRecordWrittenAndEveryDrop) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  itt::Domain* d = itt::DomainCreate("xt.reader.totals");
  auto reader = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const IttRingTotals base = (*reader)->at_attach();
  auto now = (*reader)->ReadTotals();
  ASSERT_TRUE(now.ok()) << now.status().message();
  EXPECT_EQ(now->records, base.records);
  EXPECT_EQ(now->dropped, base.dropped);
  // Three records read, then two written and never read: all five counted as written.
  std::thread([&] {
    itt::TaskEnd(d);
    itt::TaskEnd(d);
    itt::TaskEnd(d);
  }).join();
  EXPECT_EQ(DrainAll(**reader).size(), 3u);
  std::thread([&] {
    itt::TaskEnd(d);
    itt::TaskEnd(d);
  }).join();
  now = (*reader)->ReadTotals();
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->records - base.records, 5u);
  // A ring filled to the end: every call beyond it is a drop in the totals.
  uint64_t made = 0;
  std::thread([&] {
    for (; made < 50000; ++made) itt::TaskEnd(d);  // 24-byte records: 1.2 MB
  }).join();
  const auto full = (*reader)->ReadTotals();
  ASSERT_TRUE(full.ok());
  EXPECT_GT(full->dropped, base.dropped);
  EXPECT_EQ(full->records - now->records + full->dropped - base.dropped, made);
  (*reader)->Detach();
}

TEST(IttRingReader, RecordsOfAnEarlierCaptureAreSkipped) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  itt::Domain* d = itt::DomainCreate("xt.reader.earlier");
  {
    auto first = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
    ASSERT_TRUE(first.ok());
    itt::TaskEnd(d);  // never drained; its capture "dies" (detaches without reading)
    (*first)->Detach();
  }
  auto reader = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_TRUE(DrainAll(**reader).empty());
  (*reader)->Detach();
}

TEST(IttRingReader, ALapseIsReportedAndAnOptOutRefused) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  itt::Domain* d = itt::DomainCreate("xt.reader.lapse");
  auto reader = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock(1000));
  ASSERT_TRUE(reader.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  itt::TaskEnd(d);  // the heartbeat is older than the lease: the collector lets go
  IttDrainStats stats;
  DrainAll(**reader, &stats);
  EXPECT_TRUE(stats.lapsed);
  c->refused = 1;
  auto refused = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
  c->refused = 0;
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("opted out"), std::string::npos);
}

TEST(IttRingReader, GarbageInARingIsCountedAndSkipped) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  itt::Domain* d = itt::DomainCreate("xt.reader.garbage");
  auto reader = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
  ASSERT_TRUE(reader.ok());
  std::thread([&] {
    itt::TaskEnd(d);
    DrainAll(**reader);
    // This thread's ring: 64 bytes of garbage claimed as written.
    for (uint32_t i = 0; i < IttRingCount(*c); ++i) {
      auto* ring = reinterpret_cast<xt_itt_ring*>(c->rings[i]);
      if (!ring || ring->owner_tid != static_cast<uint32_t>(syscall(SYS_gettid))) continue;
      auto* data = reinterpret_cast<unsigned char*>(ring + 1);
      for (int b = 0; b < 64; ++b) data[(ring->write_pos + b) & (ring->data_bytes - 1)] = 0xab;
      ring->write_pos += 64;
    }
    IttDrainStats stats;
    EXPECT_TRUE(DrainAll(**reader, &stats).empty());
    EXPECT_EQ(stats.malformed, 1u);
    EXPECT_NE(stats.first_error.find("ITT ring record"), std::string::npos) << stats.first_error;
    itt::TaskEnd(d);  // the ring goes on after the garbage
    EXPECT_EQ(DrainAll(**reader).size(), 1u);
  }).join();
  (*reader)->Detach();
}

TEST(IttRingReader, StringsAreReadUpToTheirNulOrTheLimit) {
  static const char kText[] = "a handle's text";
  const RemoteMemory self(kSelf);
  bool truncated = true;
  auto text = self.ReadString(reinterpret_cast<uintptr_t>(kText), 512, &truncated);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, kText);
  EXPECT_FALSE(truncated);
  text = self.ReadString(reinterpret_cast<uintptr_t>(kText), 4, &truncated);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "a ha");
  EXPECT_TRUE(truncated);
  EXPECT_FALSE(self.ReadString(8, 16, &truncated).ok());  // unmapped
}

}  // namespace
}  // namespace xtrace
