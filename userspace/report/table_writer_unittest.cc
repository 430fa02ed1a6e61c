// Tests of the text, CSV and JSON rendering of report tables.
#include "report/table_writer.h"

#include <gtest/gtest.h>

#include "report/display_name.h"
#include "report/report_tables.h"

namespace xtrace::report {
namespace {

ReportTable Sample() {
  ReportTable t{"t", "Title", {}, {}, "a note"};
  t.columns = {{"name", "Name", Column::kText},
               {"calls", "Calls", Column::kCount},
               {"total_ns", "Total", Column::kNs},
               {"percent", "%", Column::kPercent},
               {"detail", "", Column::kJsonOnly}};
  t.rows = {{"b, \"quoted\"", 2, 1500, 25.0, nlohmann::json::object()},
            {"a", 10, 4'500'000, 75.0, {{"x", 1}}}};
  return t;
}

TEST(TableWriterTest, TextIsAlignedAndHumanReadable) {
  ReportTable t = Sample();
  SortAndCut(&t, SortKey::kTotal, 0);
  EXPECT_EQ(RenderText({{"", {t}}}),
            "Title\n"
            "Name         Calls    Total      %\n"
            "a               10  4.50 ms  75.0%\n"
            "b, \"quoted\"      2  1.50 us  25.0%\n"
            "a note\n\n");
  EXPECT_EQ(FormatDuration(-2500), "-2.50 us");
  EXPECT_EQ(FormatDuration(3e9), "3.000 s");
}

// Long names are cut to fit the width asked for, keeping what tells them apart; without a
// width, and in CSV and JSON, they stay whole.
TEST(TableWriterTest, TextCutsLongNamesToTheWidth) {
  ReportTable t{"t", "Title", {}, {}, "a note that is long enough to be wrapped at the width"};
  t.columns = {{"name", "Name", Column::kText, true}, {"calls", "Calls", Column::kCount}};
  const std::string shared(300, 'x');
  t.rows = {{"void gemm<" + shared + ", tile<256>, " + shared + ">(float*)", 1},
            {"void gemm<" + shared + ", tile<128>, " + shared + ">(float*)", 2},
            {"short", 3}};
  const std::string text = RenderText({{"", {t}}}, {.width = 60});
  size_t lines = 0;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    EXPECT_LE(DisplayWidth(text.substr(start, end - start)), 60u) << text.substr(start, end - start);
    ++lines;
  }
  EXPECT_EQ(lines, 1 + 1 + 3 + 1 + 1) << text;  // title, header, rows, note, blank line
  EXPECT_NE(text.find("tile<256>"), std::string::npos) << text;
  EXPECT_NE(text.find("tile<128>"), std::string::npos) << text;
  EXPECT_NE(text.find(kCutMark), std::string::npos) << text;
  EXPECT_NE(text.find("short"), std::string::npos) << text;

  const std::string whole = RenderText({{"", {t}}});
  EXPECT_NE(whole.find(t.rows[0][0].get<std::string>()), std::string::npos);
  EXPECT_EQ(whole.find(kCutMark), std::string::npos);
  EXPECT_NE(RenderCsv({{"", {t}}}).find(t.rows[1][0].get<std::string>()), std::string::npos);
  EXPECT_EQ(SectionsToJson({{"", {t}}})[0]["tables"]["t"][0]["name"], t.rows[0][0]);
}

// Lines of `text`, each no wider than `width`.
std::vector<std::string> LinesWithin(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
    EXPECT_LE(DisplayWidth(lines.back()), width) << lines.back();
  }
  return lines;
}

// A table of many figures, too wide even with its names cut, is split into parts that each
// start with its key columns: every column and every row is still there, and no line is wider
// than asked.
TEST(TableWriterTest, TextTooWideForTheWidthIsSplitIntoPartsRepeatingTheKeys) {
  ReportTable t{"t", "A table of figures", {}, {}, "a note under the last part"};
  t.key_columns = 2;
  t.columns = {{"pid", "Pid", Column::kCount}, {"name", "Name", Column::kText, true}};
  std::vector<nlohmann::json> first = {4242, "void gemm<" + std::string(80, 'x') + ", tile<256>>(float*)"};
  std::vector<nlohmann::json> second = {4243, "short"};
  for (int c = 0; c < 12; ++c) {
    t.columns.push_back({"figure" + std::to_string(c), "Figure " + std::to_string(c), Column::kNs});
    first.push_back(1'234'567 * (c + 1));
    second.push_back(c);
  }
  t.columns.push_back({"detail", "", Column::kJsonOnly});
  first.push_back(nullptr);
  second.push_back(nullptr);
  t.rows = {first, second};

  const std::string text = RenderText({{"", {t}}}, {.width = 80});
  const std::vector<std::string> lines = LinesWithin(text, 80);
  for (int c = 0; c < 12; ++c)
    EXPECT_NE(text.find("Figure " + std::to_string(c)), std::string::npos) << "column " << c << " lost:\n" << text;
  EXPECT_NE(text.find("14.81 ms"), std::string::npos) << text;  // the last figure of the first row
  EXPECT_NE(text.find("A table of figures (continued)"), std::string::npos) << text;
  EXPECT_NE(text.find(kCutMark), std::string::npos) << text;
  EXPECT_NE(text.find(">(float*)"), std::string::npos) << "the cut keeps the name's end:\n" << text;
  // Each part: a title, the header starting with the keys, both rows starting with theirs.
  size_t parts = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("A table of figures")) continue;
    ++parts;
    ASSERT_LT(i + 3, lines.size()) << text;
    EXPECT_TRUE(lines[i + 1].starts_with(" Pid  Name")) << lines[i + 1];
    EXPECT_TRUE(lines[i + 2].starts_with("4242  void gemm<")) << lines[i + 2];
    EXPECT_TRUE(lines[i + 3].starts_with("4243  short")) << lines[i + 3];
  }
  EXPECT_GT(parts, 1u) << text;
  EXPECT_EQ(text.find("a note under the last part"), text.rfind("a note")) << "one note";
  EXPECT_TRUE(text.ends_with("a note under the last part\n\n")) << text;

  // Without a width: one part, names whole.
  const std::string whole = RenderText({{"", {t}}});
  EXPECT_EQ(whole.find("(continued)"), std::string::npos) << whole;
  EXPECT_NE(whole.find(first[1].get<std::string>()), std::string::npos) << whole;
}

// A list column is cut by whole items ("+N more"), not through an item, and stays whole in
// CSV and JSON.
TEST(TableWriterTest, TextCutsListColumnsByWholeItems) {
  ReportTable t{"t", "Title", {}, {}, ""};
  t.columns = {{"calls", "Calls", Column::kCount}, {"meanwhile", "Meanwhile", Column::kText, true, true}};
  const std::string list = "zeEventHostSynchronize 5.91 ms, zeFenceReset 79.93 us, zeCommandListReset 1.20 us";
  t.rows = {{1, list}};
  const std::string text = RenderText({{"", {t}}}, {.width = 50});
  EXPECT_NE(text.find("zeEventHostSynchronize 5.91 ms, +2 more"), std::string::npos) << text;
  EXPECT_EQ(text.find(kCutMark), std::string::npos) << text;
  EXPECT_NE(RenderCsv({{"", {t}}}).find(list), std::string::npos);
  EXPECT_EQ(SectionsToJson({{"", {t}}})[0]["tables"]["t"][0]["meanwhile"], list);
}

TEST(TableWriterTest, CsvQuotesAndLeavesOutJsonOnlyColumns) {
  EXPECT_EQ(RenderCsv({{"pid 1", {Sample()}}}),
            "# pid 1 t\nname,calls,total_ns,percent\n\"b, \"\"quoted\"\"\",2,1500,25.0\na,10,4500000,75.0\n");
}

TEST(TableWriterTest, JsonRowsAreObjectsKeyedByColumn) {
  const nlohmann::json j = SectionsToJson({{"s", {Sample()}}});
  EXPECT_EQ(j[0]["label"], "s");
  EXPECT_EQ(j[0]["tables"]["t"][1]["detail"]["x"], 1);
  EXPECT_EQ(j[0]["tables"]["t"][0]["total_ns"], 1500);
}

TEST(TableWriterTest, SortKeysAndTop) {
  ReportTable t = Sample();
  SortAndCut(&t, SortKey::kName, 1);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][0], "a");
  t = Sample();
  SortAndCut(&t, SortKey::kCalls, 0);
  EXPECT_EQ(t.rows[0][1], 10);
}

}  // namespace
}  // namespace xtrace::report
