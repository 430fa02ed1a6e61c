#include "base/thread_nice.h"

#include <gtest/gtest.h>
#include <linux/capability.h>

#include <thread>

namespace xtrace {
namespace {

int OwnNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

// Run on a thread of its own, so the test's thread keeps its value whatever happens.
template <typename F>
void OnAThread(F f) {
  std::thread t(f);
  t.join();
}

TEST(ThreadNice, SetsTheCallingThreadOnlyAndPutsItBack) {
  OnAThread([] {
    const int before = OwnNice();
    const int want = before + 3 > 19 ? 19 : before + 3;  // raising the value needs no privilege
    int seen_by_other = -100, started_meanwhile = -100;
    {
      ThreadNice nice(want);
      ASSERT_TRUE(nice.error().empty()) << nice.error();
      EXPECT_EQ(nice.previous(), before);
      EXPECT_EQ(OwnNice(), want);
      EXPECT_EQ(nice.changed(), want != before);
      // A thread started now begins with the changed value; the process's other threads
      // keep theirs (checked from the test's thread below).
      std::thread([&] { started_meanwhile = OwnNice(); }).join();
      seen_by_other = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
    }
    EXPECT_EQ(OwnNice(), before);
    EXPECT_EQ(started_meanwhile, want);
    EXPECT_EQ(seen_by_other, before);  // the main thread's value: this runs on another
  });
}

TEST(ThreadNice, NothingAskedChangesNothing) {
  OnAThread([] {
    const int before = OwnNice();
    ThreadNice nice(std::nullopt);
    EXPECT_TRUE(nice.error().empty());
    EXPECT_FALSE(nice.changed());
    EXPECT_EQ(nice.previous(), before);
    EXPECT_EQ(OwnNice(), before);
  });
}

// Takes CAP_SYS_NICE out of the calling thread's effective set (capabilities are per thread),
// so that lowering its nice value is refused as it is to a user without it.
bool DropSysNice() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(ThreadNice, ARefusedValueIsSaidAndChangesNothing) {
  OnAThread([] {
    ASSERT_TRUE(DropSysNice()) << std::strerror(errno);
    rlimit limit{};
    getrlimit(RLIMIT_NICE, &limit);
    if (limit.rlim_cur >= 40) GTEST_SKIP() << "RLIMIT_NICE lets any thread take nice -20";
    const int before = OwnNice();
    ThreadNice nice(-20);
    EXPECT_FALSE(nice.changed());
    EXPECT_NE(nice.error().find("setpriority to nice -20: "), std::string::npos) << nice.error();
    EXPECT_EQ(OwnNice(), before);
  });
}

TEST(ThreadNice, TheCaptureTakesItsDefaultOnlyAtNiceZero) {
  EXPECT_EQ(CaptureThreadNice(std::nullopt, 0), std::optional<int>(kCaptureNice));
  EXPECT_EQ(CaptureThreadNice(std::nullopt, 5), std::nullopt);   // started under nice(1)
  EXPECT_EQ(CaptureThreadNice(std::nullopt, -5), std::nullopt);
  EXPECT_EQ(CaptureThreadNice(3, 0), std::optional<int>(3));     // asked for: taken
  EXPECT_EQ(CaptureThreadNice(0, 7), std::optional<int>(0));
}

}  // namespace
}  // namespace xtrace
