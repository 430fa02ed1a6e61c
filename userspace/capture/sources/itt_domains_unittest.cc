// Tests of switching on a collector's ITT domains from outside (itt_domains.h), on lists
// laid out in this process's own memory as a collector lays them out.
#include "capture/sources/itt_domains.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include "xtrace/itt_ring.h"

namespace xtrace {
namespace {

// __itt_domain as the collector lays it out (xtrace/itt_ring.h gives the offsets xtrace uses).
struct FakeDomain {
  int flags = 0;
  const char* name = nullptr;
  const void* wide = nullptr;
  int extra1 = 0;
  void* extra2 = nullptr;
  FakeDomain* next = nullptr;
};
static_assert(sizeof(FakeDomain) == XT_ITT_DOMAIN_SIZE);
static_assert(offsetof(FakeDomain, next) == XT_ITT_DOMAIN_NEXT_OFFSET);

RemoteMemory Self() { return RemoteMemory(static_cast<uint32_t>(getpid())); }
uint64_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

xt_itt_domains ListOf(FakeDomain* head, uint64_t count) {
  xt_itt_domains list{};
  list.magic = XT_ITT_DOMAINS_MAGIC;
  list.head = Address(head);
  list.count = count;
  return list;
}

TEST(IttDomains, SwitchesOnEveryDomainThatIsOffAndLeavesTheOthers) {
  FakeDomain oldest, middle, newest;
  middle.flags = 1;
  newest.next = &middle;
  middle.next = &oldest;
  xt_itt_domains list = ListOf(&newest, 3);
  list.self = Address(&list);
  auto r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ready);
  EXPECT_EQ(r->domains, 3u);
  EXPECT_EQ(r->switched_on, 2u);
  EXPECT_EQ(oldest.flags, 1);
  EXPECT_EQ(middle.flags, 1);
  EXPECT_EQ(newest.flags, 1);
}

// Domains a client made itself, adopted by the collector: switched on one by one, their own
// list (the client's) not followed.
TEST(IttDomains, AdoptedDomainsAreSwitchedOnWithoutFollowingTheirClientsList) {
  FakeDomain own, adopted, clients_next;
  adopted.next = &clients_next;
  xt_itt_domains list = ListOf(&own, 1);
  list.self = Address(&list);
  list.adopted[0] = Address(&adopted);
  list.adopted_count = 1;
  auto r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->domains, 2u);
  EXPECT_EQ(own.flags, 1);
  EXPECT_EQ(adopted.flags, 1);
  EXPECT_EQ(clients_next.flags, 0);
}

// The collector counts a domain before publishing it: one read may see the newer head with
// the older count, so one domain beyond the count is walked, and no more.
TEST(IttDomains, WalksOneBeyondTheCountAndNoFurther) {
  FakeDomain d[4];
  for (int i = 0; i < 3; ++i) d[i].next = &d[i + 1];
  xt_itt_domains list = ListOf(&d[0], 2);
  list.self = Address(&list);
  auto r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->domains, 3u);
  EXPECT_EQ(d[2].flags, 1);
  EXPECT_EQ(d[3].flags, 0);
}

TEST(IttDomains, AListNotYetInitialisedIsTriedLaterAndAnOptedOutOneIsNotWritten) {
  xt_itt_domains blank{};
  auto r = SwitchOnIttDomains(Self(), Address(&blank));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ready);

  FakeDomain off;
  xt_itt_domains list = ListOf(&off, 1);
  list.self = Address(&list);
  list.always_on = 1;
  r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->always_on);
  EXPECT_EQ(off.flags, 0);
}

TEST(IttDomains, SomethingElseAtTheAddressOrAnUnreadableDomainIsAnErrorSayingWhat) {
  FakeDomain off;
  xt_itt_domains list = ListOf(&off, 1);
  list.self = Address(&list) + 8;  // the symbol's address was computed wrong
  auto r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no ITT domain list at 0x"), std::string::npos)
      << r.status().message();

  list = ListOf(reinterpret_cast<FakeDomain*>(uintptr_t{8}), 1);  // unmapped
  list.self = Address(&list);
  r = SwitchOnIttDomains(Self(), Address(&list));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reading 48 bytes at 0x8"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace xtrace
