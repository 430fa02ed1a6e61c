// Tests of the text, CSV and JSON rendering of report tables.
#include "report/table_writer.h"

#include <gtest/gtest.h>

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
