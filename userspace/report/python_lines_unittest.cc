// Tests for `report --by python`: a log with Python stacks, launches and device operations;
// device time and launches land on the user's line, past the frames inside torch/.
#include "report/python_lines.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "log/log_writer.h"
#include "log_test_util.h"
#include "model/event.h"

namespace xtrace::report {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint32_t kPid = 7100, kTid = 7101;

void WriteLog(const std::string& path) {
  auto writer = LogWriter::Create(path, SampleHeader());
  ASSERT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  const PythonFrame conv{s.Intern("/usr/lib/python3/dist-packages/torch/nn/modules/conv.py"),
                         s.Intern("Conv2d.forward"), 459};
  const PythonFrame model{s.Intern("/w/model.py"), s.Intern("Net.forward"), 12};
  const PythonFrame loop{s.Intern("/w/model.py"), s.Intern("train"), 30};
  // 1 ms into the capture, then 10 µs apart.
  uint64_t t = SampleHeader().start_clock.monotonic_ns + 1'000'000;
  auto launch = [&](std::vector<PythonFrame> frames, uint64_t device_ns, bool measured = true) {
    PythonStack st;
    st.pid = kPid;
    st.tid = kTid;
    st.start_ns = t;
    st.end_ns = t + 100;
    st.frames = std::move(frames);
    (*writer)->Append(st);
    KernelLaunch l;
    l.pid = kPid;
    l.tid = kTid;
    l.start_ns = t;
    l.end_ns = t + 100;
    l.kernel_name = s.Intern("k");
    (*writer)->Append(l);
    DeviceOp op;
    op.pid = kPid;
    op.device = 0;
    op.track = 1;
    op.id = t;
    op.name = l.kernel_name;
    op.append_tid = kTid;
    op.append_ns = t;
    op.start_ns = t + 200;
    op.end_ns = t + 200 + device_ns;
    op.measured = measured;
    (*writer)->Append(op);
    t += 10'000;
  };
  launch({conv, model, loop}, 3000);
  launch({conv, model, loop}, 3000);
  launch({loop}, 1000);
  // Without kernel timestamps: a host-side bound, not a time.
  launch({loop}, 50'000, false);
  ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
}

TEST(PythonLines, DeviceTimeAndLaunchesPerUserLine) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  WriteLog(path);
  PythonLinesOptions options;
  options.skips = {"torch/"};
  auto report = PythonLinesReport({path}, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->sections.size(), 1u);
  ASSERT_EQ(report->sections[0].tables.size(), 1u);
  const ReportTable& t = report->sections[0].tables[0];
  ASSERT_EQ(t.rows.size(), 2u);
  auto col = [&](const std::string& key) { return static_cast<size_t>(t.ColumnIndex(key)); };
  EXPECT_EQ(t.rows[0][col("line")], "/w/model.py(12): Net.forward");
  EXPECT_EQ(t.rows[0][col("device_ns")], 6000u);
  EXPECT_EQ(t.rows[0][col("launches")], 2u);
  EXPECT_EQ(t.rows[0][col("device_ops")], 2u);
  EXPECT_NEAR(t.rows[0][col("device_percent")].get<double>(), 6000.0 / 7000.0 * 100, 1e-9);
  EXPECT_EQ(t.rows[0][col("estimated")], 0u);
  EXPECT_EQ(t.rows[1][col("line")], "/w/model.py(30): train");
  EXPECT_EQ(t.rows[1][col("launches")], 2u);
  // The estimated operation is counted, its bound apart: the line's time is the measured one.
  EXPECT_EQ(t.rows[1][col("device_ops")], 2u);
  EXPECT_EQ(t.rows[1][col("device_ns")], 1000u);
  EXPECT_EQ(t.rows[1][col("estimated")], 1u);
  EXPECT_EQ(t.rows[1][col("bound_ns")], 50'000u);
  EXPECT_NEAR(t.rows[1][col("device_percent")].get<double>(), 1000.0 / 7000.0 * 100, 1e-9);

  // Skipping nothing: the torch frame is the line.
  options.skips.clear();
  report = PythonLinesReport({path}, options);
  ASSERT_TRUE(report.ok());
  const ReportTable& all = report->sections[0].tables[0];
  EXPECT_EQ(all.rows[0][static_cast<size_t>(all.ColumnIndex("line"))],
            "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py(459): Conv2d.forward");
}

// The lines of a report's selection: --pid, --from/--to (by the start of each call and
// operation, as the other tables count) and --name narrow it as they narrow the other tables.
TEST(PythonLines, SelectionNarrowsTheLines) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  WriteLog(path);
  auto lines = [&](const PythonLinesOptions& options) {
    std::vector<std::pair<std::string, uint64_t>> out;  // line, device ns
    auto report = PythonLinesReport({path}, options);
    EXPECT_TRUE(report.ok()) << report.status().message();
    if (!report.ok()) return out;
    const ReportTable& t = report->sections[0].tables[0];
    for (const auto& row : t.rows)
      out.emplace_back(row[static_cast<size_t>(t.ColumnIndex("line"))].get<std::string>(),
                       row[static_cast<size_t>(t.ColumnIndex("device_ns"))].get<uint64_t>());
    return out;
  };
  using Lines = std::vector<std::pair<std::string, uint64_t>>;
  PythonLinesOptions options;
  options.skips = {"torch/"};

  options.read.aggregate.pids = {kPid + 1};
  EXPECT_EQ(lines(options), Lines{});
  options.read.aggregate.pids = {kPid};
  EXPECT_EQ(lines(options).size(), 2u);

  // The launches start 1.00, 1.01 and 1.02 ms into the capture: from 1.005 ms on, the second
  // and the third; up to 1.015 ms, the first two.
  options.read.from = TimeBound{.ns = 1'005'000};
  EXPECT_EQ(lines(options), (Lines{{"/w/model.py(12): Net.forward", 3000}, {"/w/model.py(30): train", 1000}}));
  options.read.from.reset();
  options.read.to = TimeBound{.ns = 1'015'000};
  EXPECT_EQ(lines(options), (Lines{{"/w/model.py(12): Net.forward", 6000}}));
  options.read.to.reset();

  options.name = std::regex("train");
  EXPECT_EQ(lines(options), (Lines{{"/w/model.py(30): train", 1000}}));
}

// Without kernel timestamps no line has device time: the lines that made the most GPU work
// (the estimated operations' bounds) come first, not those that spent longest in calls. And
// --rank selects the processes of a rank, as --pid does.
TEST(PythonLines, WithoutTimestampsTheBoundsOrderTheLinesAndRankSelects) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    (*writer)->Append(ProcessInfo{.pid = kPid, .comm = s.Intern("python3"), .rank = 3});
    uint64_t t = SampleHeader().start_clock.monotonic_ns + 1'000'000;
    auto line = [&](const char* function, uint64_t call_ns, uint64_t bound_ns) {
      PythonStack st;
      st.pid = kPid;
      st.tid = kTid;
      st.start_ns = t;
      st.end_ns = t + call_ns;
      st.frames = {PythonFrame{s.Intern("/w/model.py"), s.Intern(function), 7}};
      (*writer)->Append(st);
      DeviceOp op;
      op.pid = kPid;
      op.track = 1;
      op.id = t;
      op.name = s.Intern("k");
      op.append_tid = kTid;
      op.append_ns = t;
      op.start_ns = t + call_ns;
      op.end_ns = op.start_ns + bound_ns;
      op.measured = false;
      (*writer)->Append(op);
      t += 1'000'000;
    };
    line("sync_heavy", 500'000, 1'000);
    line("gpu_heavy", 1'000, 400'000);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  PythonLinesOptions options;
  auto report = PythonLinesReport({path}, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const ReportTable& t = report->sections[0].tables[0];
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][static_cast<size_t>(t.ColumnIndex("line"))], "/w/model.py(7): gpu_heavy");
  EXPECT_EQ(t.rows[1][static_cast<size_t>(t.ColumnIndex("line"))], "/w/model.py(7): sync_heavy");
  EXPECT_EQ(report->processes.at(kPid).rank, 3);

  options.read.aggregate.ranks = {3};
  report = PythonLinesReport({path}, options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->sections[0].tables[0].rows.size(), 2u);
  options.read.aggregate.ranks = {0};
  report = PythonLinesReport({path}, options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->sections[0].tables[0].rows.empty());
}

// A launch of a process attached mid-run, held by xtrace at its entry to ask the kernel's name
// (the learned creation, over the hold, is written first). Its line's time in calls is the
// launch's own, not the hold's.
TEST(PythonLines, TimeXtraceHeldTheThreadIsNotTheLinesTime) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    const uint64_t t = SampleHeader().start_clock.monotonic_ns + 1'000'000;
    KernelCreate learned;
    learned.pid = kPid;
    learned.tid = kTid;
    learned.start_ns = t + 100;
    learned.end_ns = t + 80'000'100;  // an 80 ms hold
    learned.kernel = 0x5;
    learned.name = s.Intern("k");
    learned.learned = true;
    (*writer)->Append(learned);
    PythonStack st;
    st.pid = kPid;
    st.tid = kTid;
    st.start_ns = t;
    st.end_ns = t + 80'000'300;
    st.frames = {PythonFrame{s.Intern("/w/model.py"), s.Intern("train"), 30}};
    (*writer)->Append(st);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto report = PythonLinesReport({path}, PythonLinesOptions{});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const ReportTable& t = report->sections[0].tables[0];
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][static_cast<size_t>(t.ColumnIndex("events"))], 1u) << "the learned creation is no call";
  EXPECT_EQ(t.rows[0][static_cast<size_t>(t.ColumnIndex("host_ns"))], 300u);
}

// A damaged log fails naming the damage and --salvage; with salvage, the part before it is
// reported and a warning says so.
TEST(PythonLines, DamagedLogFailsOrIsSalvaged) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  WriteLog(path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 8);
  PythonLinesOptions options;
  options.skips = {"torch/"};
  auto failed = PythonLinesReport({path}, options);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("--salvage"), std::string::npos) << failed.status().message();
  EXPECT_EQ(failed.status().message().find(path + ": " + path), std::string::npos)
      << failed.status().message();

  options.read.salvage = true;
  auto salvaged = PythonLinesReport({path}, options);
  ASSERT_TRUE(salvaged.ok()) << salvaged.status().message();
  ASSERT_EQ(salvaged->warnings.size(), 1u);
  EXPECT_NE(salvaged->warnings[0].find("events before it"), std::string::npos) << salvaged->warnings[0];
}

}  // namespace
}  // namespace xtrace::report
