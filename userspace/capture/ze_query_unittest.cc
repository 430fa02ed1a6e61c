// Tests for capture/ze_query: the summary sentence (what queries cost, why some were not
// made), which kinds a loader can be asked about, and the `jmp .` found in the real Level
// Zero loader's code.
#include "capture/ze_query.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "xtrace/hold.h"

namespace xtrace {
namespace {

TEST(QuerySummaryTest, SaysWhatWasQueriedAndWhatItCost) {
  QueryStats s;
  EXPECT_EQ(QuerySummary(s), "");
  s.holds = 2;
  s.learned = 17;
  s.held_ns = 2'100'000;
  s.max_held_ns = 1'500'000;
  EXPECT_EQ(QuerySummary(s),
            " 17 objects made before the attach were queried in the process: 2.1 ms held in all "
            "(2 holds, longest 1.5 ms).");
  s.failed = 1;
  s.failures = {"kernel 0x10: did not return within 100 ms"};
  s.not_queried[42] = "it is traced by pid 7 (strace)";
  EXPECT_EQ(QuerySummary(s),
            " 17 objects made before the attach were queried in the process: 2.1 ms held in all "
            "(2 holds, longest 1.5 ms). 1 could not be: kernel 0x10: did not return within 100 ms."
            " pid 42 was not queried: it is traced by pid 7 (strace).");
  QueryStats unusable_only;
  unusable_only.holds = 1;
  unusable_only.unusable = 1;
  unusable_only.failures = {"thread 9 is at 0x20, not at the call it was held in (0x10)"};
  EXPECT_EQ(QuerySummary(unusable_only),
            " 1 hold could not be used (the launch held ran unnamed): thread 9 is at 0x20, not at the "
            "call it was held in (0x10).");
  QueryStats missed_only;
  missed_only.missed = 3;
  EXPECT_EQ(QuerySummary(missed_only),
            " 3 uses of objects made before the attach could not be asked about (a query map was "
            "full, the thread could not be stopped, or a call of an earlier hold had not returned).");
}

TEST(QuerySummaryTest, SaysWhichLoadersCannotBeAskedAboutListsQueuesAndEvents) {
  QueryStats s;
  s.old_loaders["/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.12"] = {"zeCommandListGetDeviceHandle", 2};
  EXPECT_EQ(QuerySummary(s),
            " Lists, queues and events made before the attach keep an unknown device and engine in 2 "
            "processes: their loader /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.12 has no "
            "zeCommandListGetDeviceHandle (Level Zero 1.9).");
}

// What can be asked follows what the loader exports: kernels always; lists, queues and
// events only with every question their answer needs.
TEST(QueryTargetTest, KindsFollowTheLoadersQuestions) {
  QueryTargetAddresses a;
  a.kernel_get_name = 1;
  EXPECT_EQ(a.Kinds(), 1u << XT_QUERY_KERNEL);
  a.list_get_device = a.list_get_ordinal = a.list_immediate_get_index = a.list_is_immediate = 2;
  EXPECT_EQ(a.Kinds(), 1u << XT_QUERY_KERNEL) << "a list's device needs zeDeviceGetProperties too";
  a.device_get_properties = 3;
  a.queue_get_ordinal = a.queue_get_index = 4;
  a.event_get_pool = 5;
  EXPECT_EQ(a.Kinds(), (1u << XT_QUERY_KERNEL) | (1u << XT_QUERY_COMMAND_LIST) | (1u << XT_QUERY_COMMAND_QUEUE));
  a.pool_get_flags = 6;
  EXPECT_EQ(a.Kinds(), (1u << XT_QUERY_KINDS) - 1);
}

TEST(FindSelfLoopTest, FindsAJumpToItselfInTheLoadersCode) {
  const std::string loader = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1";
  auto at = FindSelfLoop(loader);
  ASSERT_TRUE(at.ok()) << at.status().message();
  // The loader's first segment starts at offset 0 and address 0: an address is an offset.
  std::ifstream in(loader, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), *at + 1);
  EXPECT_EQ(static_cast<unsigned char>(bytes[*at]), 0xeb);
  EXPECT_EQ(static_cast<unsigned char>(bytes[*at + 1]), 0xfe);
}

}  // namespace
}  // namespace xtrace
