// Tests for `report --by python`: a log with Python stacks, launches and device operations;
// device time and launches land on the user's line, past the frames inside torch/.
#include "report/python_lines.h"

#include <gtest/gtest.h>

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
  uint64_t t = 1'000'000;
  auto launch = [&](std::vector<PythonFrame> frames, uint64_t device_ns) {
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
    (*writer)->Append(op);
    t += 10'000;
  };
  launch({conv, model, loop}, 3000);
  launch({conv, model, loop}, 3000);
  launch({loop}, 1000);
  ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
}

TEST(PythonLines, DeviceTimeAndLaunchesPerUserLine) {
  ScratchDir dir;
  const std::string path = dir.File("py.capnp");
  WriteLog(path);
  PythonLinesOptions options;
  options.skips = {"torch/"};
  auto section = PythonLinesReport({path}, options);
  ASSERT_TRUE(section.ok()) << section.status().message();
  ASSERT_EQ(section->tables.size(), 1u);
  const ReportTable& t = section->tables[0];
  ASSERT_EQ(t.rows.size(), 2u);
  auto col = [&](const std::string& key) { return static_cast<size_t>(t.ColumnIndex(key)); };
  EXPECT_EQ(t.rows[0][col("line")], "/w/model.py(12): Net.forward");
  EXPECT_EQ(t.rows[0][col("device_ns")], 6000u);
  EXPECT_EQ(t.rows[0][col("launches")], 2u);
  EXPECT_EQ(t.rows[0][col("device_ops")], 2u);
  EXPECT_NEAR(t.rows[0][col("device_percent")].get<double>(), 6000.0 / 7000.0 * 100, 1e-9);
  EXPECT_EQ(t.rows[1][col("line")], "/w/model.py(30): train");
  EXPECT_EQ(t.rows[1][col("launches")], 1u);

  // Skipping nothing: the torch frame is the line.
  options.skips.clear();
  section = PythonLinesReport({path}, options);
  ASSERT_TRUE(section.ok());
  const ReportTable& all = section->tables[0];
  EXPECT_EQ(all.rows[0][static_cast<size_t>(all.ColumnIndex("line"))],
            "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py(459): Conv2d.forward");
}

}  // namespace
}  // namespace xtrace::report
