// Tests for capture/sources/probe_site: the dispatch stubs of Debian's Level Zero loader are recognised
// and probed on their `je`, never where a register the probe reads has been overwritten, and
// anything else is left to its entry.
#include "capture/sources/probe_site.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "capture/discovery/elf_function_offsets.h"
#include "model/ze_api.h"

namespace xtrace {
namespace {

constexpr ArgRegisterMask kAll = 0b111111;

std::optional<uint32_t> Site(std::vector<uint8_t> code, ArgRegisterMask needed) {
  const auto site = FindEmulatedProbeSite(code, needed);
  if (site) {
    EXPECT_EQ(site->argument_in_r10, -1);
  }
  return site ? std::optional<uint32_t>(site->offset) : std::nullopt;
}

// zeCommandListAppendLaunchKernel in libze1 1.8.12: scratch register r10.
const std::vector<uint8_t> kLaunchStub = {0x48, 0x8b, 0x05, 0x39, 0x4f, 0x03, 0x00,  // mov rip,rax
                                          0x4c, 0x8b, 0x10,                          // mov (rax),r10
                                          0x49, 0x8b, 0x82, 0xf0, 0x01, 0x00, 0x00,  // mov 0x1f0(r10),rax
                                          0x48, 0x85, 0xc0,                          // test rax,rax
                                          0x74, 0x0a,                                // je
                                          0xff, 0xe0};                               // jmp *rax
// zeMemAllocShared: saves rdx in r10, then uses rdx as scratch.
const std::vector<uint8_t> kSharedStub = {0x48, 0x8b, 0x05, 0xf9, 0x56, 0x03, 0x00,
                                          0x49, 0x89, 0xd2,                          // mov rdx,r10
                                          0x48, 0x8b, 0x10,                          // mov (rax),rdx
                                          0x48, 0x8b, 0x82, 0xc8, 0x03, 0x00, 0x00,
                                          0x48, 0x85, 0xc0, 0x74, 0x07};

TEST(ProbeSite, FindsTheBranchOfADispatchStub) {
  EXPECT_EQ(Site(kLaunchStub, kAll), 20u);
  EXPECT_EQ(Site(kSharedStub, 0b111011), 23u);  // every argument but rdx
}

TEST(ProbeSite, NeverWhereANeededRegisterWasOverwritten) {
  EXPECT_EQ(Site(kSharedStub, 0b000100), std::nullopt);  // rdx is the table pointer there
  std::vector<uint8_t> rcx = kLaunchStub;
  rcx[7] = 0x48;  // mov (rax),rcx
  rcx[8] = 0x8b;
  rcx[9] = 0x08;
  rcx[10] = 0x48;  // mov 0x1f0(rcx),rax
  rcx[12] = 0x81;
  EXPECT_EQ(Site(rcx, 0b000111), 20u);
  EXPECT_EQ(Site(rcx, 0b001000), std::nullopt);
}

// zeCommandListAppendMemoryCopy saves rdx (srcptr) in r10 before using rdx for the table: a
// probe that can read that argument from r10 goes on the `je` all the same, and is told so.
TEST(ProbeSite, AnArgumentSavedInR10IsReadFromThere) {
  const auto site = FindEmulatedProbeSite(kSharedStub, kAll, kAll);
  ASSERT_TRUE(site.has_value());
  EXPECT_EQ(site->offset, 23u);
  EXPECT_EQ(site->argument_in_r10, 2);  // rdx: the third argument
  // Only if r10 is an option for that very argument.
  EXPECT_FALSE(FindEmulatedProbeSite(kSharedStub, kAll, 0b111011).has_value());
  // Not needed at all: nothing to read from r10.
  const auto unneeded = FindEmulatedProbeSite(kSharedStub, 0b111011, kAll);
  ASSERT_TRUE(unneeded.has_value());
  EXPECT_EQ(unneeded->argument_in_r10, -1);
  // Saved from another register than the one overwritten: the value is lost.
  std::vector<uint8_t> other = kSharedStub;
  other[9] = 0xca;  // mov %rcx,%r10
  EXPECT_FALSE(FindEmulatedProbeSite(other, kAll, kAll).has_value());
  // A stub without the save keeps its rule.
  EXPECT_EQ(FindEmulatedProbeSite(kLaunchStub, kAll, kAll)->argument_in_r10, -1);
}

TEST(ProbeSite, AnythingElseIsProbedAtItsEntry) {
  EXPECT_EQ(Site({0x41, 0x54, 0x55, 0x53}, 0), std::nullopt);  // push r12: a real function
  EXPECT_EQ(Site(std::vector<uint8_t>(kLaunchStub.begin(), kLaunchStub.begin() + 21), 0),
            std::nullopt);  // cut short
  std::vector<uint8_t> other_base = kLaunchStub;
  other_base[12] = 0x80;  // mov 0x1f0(r8),rax: not the register just loaded
  EXPECT_EQ(Site(other_base, 0), std::nullopt);
  std::vector<uint8_t> jne = kLaunchStub;
  jne[20] = 0x75;
  EXPECT_EQ(Site(jne, 0), std::nullopt);
}

// On the installed loader, every plain dispatch stub gets its `je`; zeInit (a real function)
// and the stubs that push registers before their branch (those with stack arguments: the
// return address is no longer at the stack pointer there) keep their entry.
TEST(ProbeSite, ClassifiesTheInstalledLoadersFunctions) {
  const std::string loader = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1";
  std::vector<std::string_view> names;
  // Debian bookworm's loader (1.8.12) has the table's functions but the newer four, and no
  // loader has Intel's zex* ones.
  const std::set<std::string_view> newer = {"zeCommandListHostSynchronize", "zeInitDrivers",
                                            "zeCommandListImmediateAppendCommandListsExp",
                                            "zeEventCounterBasedCreate"};
  for (const ZeApiInfo& api : ZeApiTable())
    if (!api.driver_only && !newer.count(api.symbol)) names.push_back(api.symbol);
  names.push_back("zeKernelCreate");
  names.push_back("zeCommandListAppendLaunchKernel");
  auto offsets = FindFunctionOffsets(loader, names);
  ASSERT_TRUE(offsets.ok()) << offsets.status().message();
  ASSERT_EQ(offsets->size(), names.size());
  std::ifstream file(loader, std::ios::binary);
  std::set<std::string> at_entry;
  for (const auto& [name, offset] : *offsets) {
    std::vector<uint8_t> code(48);
    file.seekg(static_cast<std::streamoff>(offset));
    file.read(reinterpret_cast<char*>(code.data()), static_cast<std::streamsize>(code.size()));
    if (const auto site = FindEmulatedProbeSite(code, 0)) {
      EXPECT_EQ(code[site->offset], 0x74) << name;  // je rel8
      EXPECT_LE(site->offset, 30u) << name;
    } else {
      at_entry.insert(name);
    }
  }
  EXPECT_EQ(at_entry, (std::set<std::string>{"zeInit", "zeCommandListAppendMemoryCopyRegion",
                                             "zeCommandListAppendMemoryFill",
                                             "zeCommandListAppendQueryKernelTimestamps",
                                             "zeCommandListAppendLaunchMultipleKernelsIndirect"}));
}

}  // namespace
}  // namespace xtrace
