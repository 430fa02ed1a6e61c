// Tests for capture/bpf/link_reaper: every link queued is destroyed, on several threads at once
// when many wait (a link's detach is a wait for the kernel, which overlapping waits share).
#include "capture/bpf/link_reaper.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>

namespace xtrace {
namespace {

using namespace std::chrono_literals;

std::vector<ProbeLink> Links(size_t n) {
  std::vector<ProbeLink> links;
  for (size_t i = 0; i < n; ++i) links.emplace_back(std::in_place_type<UniqueFd>, ::open("/dev/null", O_RDONLY));
  return links;
}

bool FdOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(LinkReaper, DestroysEveryQueuedLinkAndClosesItsDescriptor) {
  LinkReaper reaper;
  std::vector<ProbeLink> links = Links(40);
  std::vector<int> fds;
  for (const auto& l : links) fds.push_back(std::get<UniqueFd>(l).get());
  reaper.Destroy(std::move(links));
  reaper.WaitIdle();
  EXPECT_EQ(reaper.pending(), 0u);
  for (int fd : fds) EXPECT_FALSE(FdOpen(fd)) << fd;
}

TEST(LinkReaper, NothingQueuedStartsNoThread) {
  LinkReaper reaper;
  reaper.Destroy({});
  EXPECT_EQ(reaper.workers(), 0u);
  reaper.WaitIdle();
}

// Each destruction below blocks until `kWorkers` of them are under way at once: with one
// thread, or with threads that took turns, the count would never get there.
TEST(LinkReaper, SlowDetachesOverlapOnSeveralThreads) {
  constexpr size_t kWorkers = 4;
  std::atomic<size_t> inside{0}, most{0}, done{0};
  std::atomic<bool> release{false};
  LinkReaper reaper(kWorkers, [&](ProbeLink) {
    const size_t now = ++inside;
    for (size_t seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (!release && most < kWorkers && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(1ms);
    release = true;
    --inside;
    ++done;
  });
  reaper.Destroy(Links(3 * kWorkers));
  reaper.WaitIdle();
  EXPECT_EQ(most.load(), kWorkers);
  EXPECT_EQ(done.load(), 3 * kWorkers);
  EXPECT_EQ(reaper.workers(), kWorkers);  // no more than the maximum
}

// Links destroyed one batch at a time, each batch fully gone before the next: one worker does.
TEST(LinkReaper, OneLinkAtATimeNeedsOneWorker) {
  LinkReaper reaper;
  for (int i = 0; i < 5; ++i) {
    reaper.Destroy(Links(1));
    reaper.WaitIdle();
  }
  EXPECT_EQ(reaper.workers(), 1u);
}

TEST(LinkReaper, LinksStillQueuedAtTheEndAreDestroyedBeforeItGoes) {
  std::atomic<size_t> done{0};
  {
    LinkReaper reaper(2, [&](ProbeLink) {
      std::this_thread::sleep_for(2ms);
      ++done;
    });
    reaper.Destroy(Links(20));
  }
  EXPECT_EQ(done.load(), 20u);
}

}  // namespace
}  // namespace xtrace
