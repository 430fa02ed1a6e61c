// Tests for export/byte_buffer.h: appends of every form, writing in place, inserting, growth
// far past the first capacity, and swapping.
#include "export/byte_buffer.h"

#include <gtest/gtest.h>

#include <string>

namespace xtrace {
namespace {

TEST(ByteBuffer, AppendsInOrder) {
  ByteBuffer b;
  EXPECT_TRUE(b.empty());
  b.push_back('a');
  b.append("bc");
  const char more[] = "defg";
  b.append(more, 2);
  b.append(more + 2, more + 4);
  EXPECT_EQ(b.view(), "abcdefg");
  b.clear();
  EXPECT_TRUE(b.empty());
  b.append(std::string_view("x\0y", 3));
  EXPECT_EQ(b.view(), std::string_view("x\0y", 3));
}

TEST(ByteBuffer, RoomAndCommitWriteInPlace) {
  ByteBuffer b;
  b.append("n=");
  char* p = b.Room(24);
  p[0] = '4';
  p[1] = '2';
  b.Commit(p + 2);
  EXPECT_EQ(b.view(), "n=42");
}

TEST(ByteBuffer, InsertMovesWhatFollows) {
  ByteBuffer b;
  b.append("abcdef");
  b.insert(2, 3, '-');
  EXPECT_EQ(b.view(), "ab---cdef");
  b[0] = 'A';
  EXPECT_EQ(b.view(), "Ab---cdef");
}

TEST(ByteBuffer, GrowsKeepingEverything) {
  ByteBuffer b;
  std::string expected;
  for (int i = 0; i < 100'000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    b.append(piece);
    expected += piece;
  }
  EXPECT_EQ(b.view(), expected);
  ByteBuffer other;
  other.append("small");
  b.swap(other);
  EXPECT_EQ(b.view(), "small");
  EXPECT_EQ(other.size(), expected.size());
}

}  // namespace
}  // namespace xtrace
