// Tests for capture/discovery/elf_symbols: exported symbols of real built libraries, and errors.
#include "capture/discovery/elf_symbols.h"

#include <gtest/gtest.h>

#include <array>
#include <fstream>

#include "log_test_util.h"

namespace xtrace {
namespace {

constexpr std::array<std::string_view, 3> kTorch = {"_ZN5torch8profiler14itt_range_pushEPKc",
                                                    "_ZN5torch8profiler13itt_range_popEv",
                                                    "_ZN5torch8profiler8itt_markEPKc"};

TEST(ElfSymbols, FindsWhatALibraryExportsAndNotWhatItLacks) {
  auto full = ElfExports(TORCH_STANDIN_LIB, kTorch);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(*full, (std::vector<bool>{true, true, true}));
  auto nomark = ElfExports(TORCH_STANDIN_NOMARK_LIB, kTorch);
  ASSERT_TRUE(nomark.ok()) << nomark.status().message();
  EXPECT_EQ(*nomark, (std::vector<bool>{true, true, false}));
  constexpr std::array<std::string_view, 2> kCollector = {"xtrace_itt_probe", "__itt_api_init"};
  auto collector = ElfExports(XTRACE_ITT_COLLECTOR, kCollector);
  ASSERT_TRUE(collector.ok()) << collector.status().message();
  EXPECT_EQ(*collector, (std::vector<bool>{true, true}));
  // Internal functions are not exported.
  constexpr std::array<std::string_view, 1> kInternal = {"_ZN6xtrace3itt7HandlesEv"};
  EXPECT_EQ(*ElfExports(XTRACE_ITT_COLLECTOR, kInternal), std::vector<bool>{false});
}

// An interpreter linked against libpython names it among what it needs.
TEST(ElfSymbols, NeededListsTheSharedObjectsAFileIsLinkedAgainst) {
  auto needed = ElfNeeded(SHARED_PYTHON_BIN);
  ASSERT_TRUE(needed.ok()) << needed.status().message();
  bool libpython = false, libc = false;
  for (const std::string& n : *needed) {
    libpython = libpython || n.starts_with("libpython3.");
    libc = libc || n == "libc.so.6";
  }
  EXPECT_TRUE(libpython && libc) << testing::PrintToString(*needed);
  auto collector = ElfNeeded(XTRACE_ITT_COLLECTOR);
  ASSERT_TRUE(collector.ok());
  for (const std::string& n : *collector) EXPECT_FALSE(n.starts_with("libpython")) << n;
  EXPECT_FALSE(ElfNeeded("/nonexistent/python3.11").ok());
}

TEST(ElfSymbols, NamesTheFileWhenItIsMissingOrNotElf) {
  auto missing = ElfExports("/nonexistent/libfoo.so", kTorch);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(test_util::Contains(missing.status().message(), "/nonexistent/libfoo.so"));
  test_util::ScratchDir dir;
  const std::string text = dir.File("libtext.so");
  std::ofstream(text) << "not an ELF file\n";
  auto not_elf = ElfExports(text, kTorch);
  ASSERT_FALSE(not_elf.ok());
  EXPECT_TRUE(test_util::Contains(not_elf.status().message(), "not an ELF file"));
}

}  // namespace
}  // namespace xtrace
