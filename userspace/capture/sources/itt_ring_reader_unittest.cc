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

#include "capture/sources/itt_fast_path.h"
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
  // A second capture does not take the process from this one while its heartbeat is fresh.
  auto second = AttachAsCapture(address, Clock());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_TRUE((*second)->following());
  EXPECT_EQ(c->generation, (*reader)->generation());

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

// The drain thread drains sooner while a ring fills fast: a drain says how full the fullest was.
TEST(IttRingReader, ADrainSaysHowManyBytesItsFullestRingHeld) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  itt::Domain* d = itt::DomainCreate("xt.fullest");
  itt::StringHandle* name = itt::StringHandleCreate("xt.fullest.task");
  auto reader = AttachAsCapture(reinterpret_cast<uintptr_t>(c), Clock());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto pairs = [&](int n) {
    std::thread([&] {
      for (int i = 0; i < n; ++i) {
        itt::TaskBegin(d, name);  // head, domain, name: 32 bytes
        itt::TaskEnd(d);          // head, domain: 24 bytes
      }
    }).join();
  };
  pairs(1);
  pairs(3);
  IttDrainStats stats;
  EXPECT_EQ(DrainAll(**reader, &stats).size(), 8u);
  EXPECT_EQ(stats.fullest, 3u * 56);
  DrainAll(**reader, &stats);
  EXPECT_EQ(stats.fullest, 0u);
  (*reader)->Detach();
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
    // 24-byte records: 8000 more than the ring holds.
    for (; made < XT_ITT_RING_BYTES / 24 + 8000; ++made) itt::TaskEnd(d);
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

// Two captures of one process: the collector writes into the rings of the one that drains
// them and never calls its probe site, so the second reads the same rings alongside it,
// writing nothing into the process; once the first lets go, the second takes it over.
TEST(IttRingReader, ASecondCaptureReadsTheRecordsAlongsideTheOneThatDrainsThem) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  const auto address = reinterpret_cast<uintptr_t>(c);
  EXPECT_FALSE(IttRingReader::Attach(kSelf, address, Clock(), true).ok()) << "nobody drains it yet";
  itt::Domain* d = itt::DomainCreate("xt.reader.alongside");
  auto first = AttachAsCapture(address, Clock());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE((*first)->following());
  auto second = IttRingReader::Attach(kSelf, address, Clock(), true);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_TRUE((*second)->following());
  EXPECT_EQ((*second)->generation(), 0u);
  const uint64_t heartbeat = c->heartbeat;

  xt_itt_ring* ring = nullptr;
  std::thread([&] {
    itt::TaskBegin(d, itt::StringHandleCreate("xt.reader.alongside.task"));
    itt::TaskEnd(d);
    for (uint32_t i = 0; i < IttRingCount(*c); ++i) {
      auto* r = reinterpret_cast<xt_itt_ring*>(c->rings[i]);
      if (r && r->owner_tid == static_cast<uint32_t>(syscall(SYS_gettid))) ring = r;
    }
  }).join();
  ASSERT_NE(ring, nullptr);
  const uint64_t read_pos = ring->read_pos;
  // The follower first: it takes the records and tells the process nothing.
  const auto by_second = DrainAll(**second);
  ASSERT_EQ(by_second.size(), 2u);
  EXPECT_EQ(by_second[0].op, uint32_t{XT_ITT_TASK_BEGIN});
  EXPECT_EQ(by_second[1].op, uint32_t{XT_ITT_TASK_END});
  EXPECT_EQ(ring->read_pos, read_pos);
  EXPECT_EQ(c->heartbeat, heartbeat);
  const auto by_first = DrainAll(**first);
  ASSERT_EQ(by_first.size(), 2u);
  EXPECT_EQ(by_first[0].time, by_second[0].time);
  EXPECT_EQ(ring->read_pos, ring->write_pos);
  EXPECT_TRUE(DrainAll(**second).empty()) << "read twice";

  // Letting go is the first's alone; the follower hears of it and takes the process.
  (*second)->Detach();
  EXPECT_EQ(c->generation, (*first)->generation());
  (*first)->Detach();
  IttDrainStats stats;
  DrainAll(**second, &stats);
  EXPECT_TRUE(stats.lapsed);
  auto taken = AttachAsCapture(address, Clock());
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  EXPECT_FALSE((*taken)->following());
  (*taken)->Detach();
}

// A follower that fell a ring behind the capture it follows reads nothing the writer may have
// written over meanwhile, and goes on from there with every record.
TEST(IttRingReader, AFollowerARingBehindSkipsWhatMayBeWrittenOverAndGoesOn) {
  xt_itt_control* c = LoadedControl();
  ASSERT_NE(c, nullptr);
  const auto address = reinterpret_cast<uintptr_t>(c);
  itt::Domain* d = itt::DomainCreate("xt.reader.behind");
  auto first = AttachAsCapture(address, Clock());
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = AttachAsCapture(address, Clock());
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_TRUE((*second)->following());
  std::thread([&] {
    itt::TaskEnd(d);
    EXPECT_EQ(DrainAll(**second).size(), 1u);  // the follower knows this thread's ring
    // Records of 40 bytes (domain and id), the first capture draining as they come: `fill`
    // of them fill the ring but for a few bytes, so the writer may already be on the
    // follower's oldest bytes again.
    const uint64_t fill = XT_ITT_RING_BYTES / 40;
    auto write = [&](uint64_t from, uint64_t to) {
      for (uint64_t id = from; id < to; ++id) {
        itt::TaskEndOverlapped(d, itt::Id{id, 0, 0});
        if (id % 1'000 == 0) DrainAll(**first);
      }
      DrainAll(**first);
    };
    write(1, fill + 1);
    IttDrainStats stats;
    EXPECT_TRUE(DrainAll(**second, &stats).empty());
    EXPECT_EQ(stats.overrun, 1u);
    EXPECT_EQ(stats.malformed, 0u) << stats.first_error;
    write(fill + 1, fill + 1'001);
    const auto got = DrainAll(**second, &stats);
    EXPECT_EQ(stats.overrun, 0u);
    ASSERT_EQ(got.size(), 1'000u);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].id[0], fill + 1 + i) << i;
  }).join();
  (*first)->Detach();
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

// The drain thread's busy cadence for the capture's ring size: a ring asked small still
// turns it on before it fills (a threshold above the ring never would).
TEST(IttFastPathCadence, ADrainIsBusyBeforeARingOfAnySizeFills) {
  EXPECT_EQ(IttFastPath::BusyBytes(XT_ITT_RING_BYTES), 128u << 10);
  for (uint32_t bytes = XT_ITT_RING_MIN_BYTES; bytes <= XT_ITT_RING_MAX_BYTES; bytes *= 2) {
    EXPECT_LE(IttFastPath::BusyBytes(bytes), bytes / 8) << bytes;
    EXPECT_GT(IttFastPath::BusyBytes(bytes), 0u) << bytes;
  }
}

}  // namespace
}  // namespace xtrace
