#include "capture/sources/table_copies.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

namespace xtrace {
namespace {

// A dispatch of two tables: [f1 f2 0 f3] [f4 f5 f6], as the loader's stubs find it.
LoaderDispatch Dispatch() {
  return LoaderDispatch{0x5000, {0x7f10, 0x7f20, 0, 0x7f30, 0x7f40, 0x7f50, 0x7f60}, {0, 4}};
}

std::vector<TableCopy> Find(const LoaderDispatch& d, const std::vector<uint64_t>& memory) {
  std::vector<TableCopy> out;
  TableCopyFinder(d).Find(memory, 0x1000, 0, memory.size(), &out);
  return out;
}

TEST(TableCopiesTest, FindsATableTakenAloneInItsOrder) {
  const LoaderDispatch d = Dispatch();
  // The second table, after other data and followed by more.
  const auto copies = Find(d, {1, 2, 0x7f40, 0x7f50, 0x7f60, 9, 0x7f10});
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].address, 0x1000u + 2 * 8);
  EXPECT_EQ(copies[0].first, 4u);
  EXPECT_EQ(copies[0].words, 3u);
  EXPECT_EQ(copies[0].functions, 3u);
  EXPECT_FALSE(TableCopyFinder(d).Whole(copies[0]));
}

TEST(TableCopiesTest, AWholeCopyIsOneRunThroughItsNullWords) {
  const LoaderDispatch d = Dispatch();
  const auto copies = Find(d, {0, 0x7f10, 0x7f20, 0, 0x7f30, 0x7f40, 0x7f50, 0x7f60, 0});
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].words, 7u);
  EXPECT_EQ(copies[0].functions, 6u);
  EXPECT_TRUE(TableCopyFinder(d).Whole(copies[0]));
}

TEST(TableCopiesTest, ScatteredOrShortRunsAreNoTable) {
  const LoaderDispatch d = Dispatch();
  // The functions apart, out of order, or two in a row.
  EXPECT_TRUE(Find(d, {0x7f10, 1, 0x7f20, 1, 0x7f30}).empty());
  EXPECT_TRUE(Find(d, {0x7f60, 0x7f50, 0x7f40, 0x7f30}).empty());
  EXPECT_TRUE(Find(d, {0x7f20, 0, 0x7f30, 5}).empty());
  EXPECT_TRUE(Find(LoaderDispatch{}, {0x7f20, 0, 0x7f30}).empty());
  // Three functions in order that do not begin where a table does: a stale part of a copy.
  EXPECT_TRUE(Find(d, {1, 0x7f20, 0, 0x7f30, 0x7f40, 2}).empty());
}

TEST(TableCopiesTest, WritableRegionsLeaveOutTheLoadersAndDriversFilesAndTheirBss) {
  const std::string maps =
      "5600000000-5600001000 r--p 00000000 08:01 11 /usr/bin/app\n"
      "5600001000-5600002000 rw-p 00001000 08:01 11 /usr/bin/app\n"
      "5600010000-5600090000 rw-p 00000000 00:00 0 [heap]\n"
      "7f00000000-7f00100000 rw-p 00000000 00:00 0 \n"
      "7f10000000-7f10001000 r-xp 00000000 08:01 12 /usr/lib/libze_loader.so.1.8.0\n"
      "7f10001000-7f10002000 rw-p 00001000 08:01 12 /usr/lib/libze_loader.so.1.8.0\n"
      "7f10002000-7f10003000 rw-p 00000000 00:00 0 \n"
      "7f20000000-7f20001000 rw-p 00000000 00:00 0 \n"
      "7ffd000000-7ffd021000 rw-p 00000000 00:00 0 [stack]\n"
      "7ffd100000-7ffd102000 r--p 00000000 00:00 0 [vvar]\n";
  const auto regions = WritableRegions(
      maps, [](std::string_view path) { return path.find("libze_loader") != std::string::npos; });
  ASSERT_EQ(regions.size(), 5u);
  EXPECT_EQ(regions[0].path, "/usr/bin/app");
  EXPECT_EQ(regions[1].path, "[heap]");
  EXPECT_EQ(regions[2].path, "[stack]");
  // Anonymous, smallest first; the loader's bss (7f10002000) is left out.
  EXPECT_EQ(regions[3].start, 0x7f20000000u);
  EXPECT_EQ(regions[4].start, 0x7f00000000u);
}

TEST(TableCopiesTest, ScansAProcessWithinItsBoundsAndLeavesTheLoadersOwnOut) {
  // This process's heap holds the loader's own dispatch and, across a chunk boundary of the
  // scan, a copy of its second table.
  std::vector<uint64_t> memory((3 << 20) / 8, 0);
  LoaderDispatch d = Dispatch();
  const size_t own = 10, taken = (1 << 20) / 8 - 1;
  std::copy(d.words.begin(), d.words.end(), memory.begin() + own);
  std::copy(d.words.begin() + 4, d.words.end(), memory.begin() + taken);
  d.start = reinterpret_cast<uint64_t>(memory.data() + own);
  const uint64_t begin = reinterpret_cast<uint64_t>(memory.data());
  const std::vector<WritableRegion> regions = {{begin, begin + memory.size() * 8, "[heap]"}};
  const TableScan scan =
      ScanForTableCopies(getpid(), regions, d, TableScanBounds{1ull << 30, 10'000'000'000});
  ASSERT_EQ(scan.copies.size(), 1u);
  EXPECT_EQ(scan.copies[0].address, begin + taken * 8);
  EXPECT_EQ(scan.copies[0].words, 3u);
  EXPECT_EQ(scan.copies[0].region, "[heap]");
  EXPECT_GE(scan.bytes, memory.size() * 8);  // the chunks overlap a little
  EXPECT_FALSE(scan.bounded);
  // Bounded in bytes: the first chunk only.
  const TableScan bounded =
      ScanForTableCopies(getpid(), regions, d, TableScanBounds{1 << 20, 10'000'000'000});
  EXPECT_TRUE(bounded.bounded);
  EXPECT_LT(bounded.bytes, memory.size() * 8);
}

}  // namespace
}  // namespace xtrace
