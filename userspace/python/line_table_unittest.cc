// Tests for CPython's location table reader against tables CPython itself wrote: the bytes
// of real code objects' co_linetable (Debian's python3.11), and malformed input.
#include "python/line_table.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace xtrace {
namespace {

std::vector<uint8_t> Bytes(std::initializer_list<int> b) {
  return std::vector<uint8_t>(b.begin(), b.end());
}

TEST(LineTable, ShortOneLineNoColumnAndLongForms) {
  // Entry 1: one-line form moving 1 line (kind 11), 2 code units, columns 0..5.
  // Entry 2: short form (kind 0), 1 code unit, same line.
  // Entry 3: no-columns form (kind 13), 3 units, line delta +3 (svarint 6).
  // Entry 4: long form (kind 14), 1 unit, line delta -2 (svarint 5), end delta 0, cols 1, 2.
  // Entry 5: no location (kind 15), 1 unit.
  const auto table = Bytes({0x80 | (11 << 3) | 1, 0, 5,
                            0x80 | (0 << 3) | 0, 0x12,
                            0x80 | (13 << 3) | 2, 6,
                            0x80 | (14 << 3) | 0, 5, 0, 1, 2,
                            0x80 | (15 << 3) | 0});
  EXPECT_EQ(LineOfCodeUnit(table, 10, 0), 11u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 1), 11u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 2), 11u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 3), 14u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 5), 14u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 6), 12u);
  EXPECT_EQ(LineOfCodeUnit(table, 10, 7), std::nullopt);  // no location
  EXPECT_EQ(LineOfCodeUnit(table, 10, 8), std::nullopt);  // past the table
}

TEST(LineTable, MultiByteVarints) {
  // No-columns form with a line delta of +100 (svarint 200 = 0b11'001000: 8 | 64, then 3).
  const auto table = Bytes({0x80 | (13 << 3) | 0, 8 | 64, 3});
  EXPECT_EQ(LineOfCodeUnit(table, 1, 0), 101u);
}

TEST(LineTable, MalformedTablesGiveNoLine) {
  EXPECT_EQ(LineOfCodeUnit(Bytes({0x05}), 1, 0), std::nullopt);  // not an entry start
  EXPECT_EQ(LineOfCodeUnit(Bytes({0x80 | (14 << 3), 64}), 1, 0), std::nullopt);  // cut varint
  EXPECT_EQ(LineOfCodeUnit(Bytes({0x80 | (10 << 3), 1}), 1, 0), std::nullopt);  // cut columns
  EXPECT_EQ(LineOfCodeUnit({}, 1, 0), std::nullopt);
}

// Every instruction of a real function, against what CPython's own co_lines() says.
TEST(LineTable, AgreesWithCPython) {
  const char* python = "/usr/bin/python3.11";
  if (access(python, X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  const std::string script =
      "import sys\n"
      "def f(a):\n"
      "    x = a + 1\n"
      "    if x > 2:\n"
      "        y = [i for i in range(x)]\n"
      "    else:\n"
      "        y = None\n"
      "    return (x,\n"
      "            y)\n"
      "c = f.__code__\n"
      "print(c.co_firstlineno, c.co_linetable.hex())\n"
      "for s, e, l in c.co_lines():\n"
      "    for u in range(s // 2, e // 2): print(u, -1 if l is None else l)\n";
  const std::string cmd = std::string(python) + " -c '" + script + "'";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  int first = 0;
  char hex[65536] = {};
  ASSERT_EQ(fscanf(p, "%d %65535s", &first, hex), 2);
  std::vector<uint8_t> table;
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2)
    table.push_back(static_cast<uint8_t>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  int unit = 0, line = 0, checked = 0;
  while (fscanf(p, "%d %d", &unit, &line) == 2) {
    const auto got = LineOfCodeUnit(table, first, static_cast<uint64_t>(unit));
    if (line < 0) EXPECT_EQ(got, std::nullopt) << unit;
    else EXPECT_EQ(got, std::optional<uint32_t>(line)) << unit;
    ++checked;
  }
  pclose(p);
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace xtrace
