// Tests of whole reports from logs on disk: tables rendered as text, CSV and JSON, several
// logs with the per-kernel spread and its outlier rank, --diff, categories, and damaged logs.
#include "report/report_builder.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "log/log_writer.h"
#include "report/display_name.h"
#include "log_test_util.h"
#include "xtrace/records.h"

namespace xtrace::report {
namespace {

using test_util::Contains;
using test_util::ScratchDir;

// A log of one process of rank `rank` (-1: none recorded) whose gemm kernels take `gemm_ns`
// each, with a copy and a failing host call.
void WriteLog(const std::string& path, int32_t rank, uint64_t gemm_ns, int kernels = 4,
              bool finish = true) {
  LogHeader header = test_util::SampleHeader();
  auto writer = LogWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  StringTable& s = (*writer)->strings();
  const uint64_t t0 = header.start_clock.monotonic_ns;
  (*writer)->Append(ProcessInfo{.pid = 100, .comm = s.Intern("trainer"), .rank = rank});
  uint64_t t = t0 + 1000;
  for (int k = 0; k < kernels; ++k) {
    KernelLaunch l;
    l.pid = 100;
    l.tid = 100;
    l.start_ns = t;
    l.end_ns = t + 2000;
    l.kernel_name = s.Intern("gemm");
    (*writer)->Append(l);
    DeviceOp op;
    op.pid = 100;
    op.device = 0;
    op.queue = 0x77;
    op.name = s.Intern("gemm");
    op.append_tid = 100;
    op.append_ns = t;
    op.submit_tid = 100;
    op.submit_ns = t;
    op.start_ns = t + 3000;
    op.end_ns = op.start_ns + gemm_ns;
    op.measured = true;
    (*writer)->Append(op);
    t = op.end_ns + 10'000;
  }
  DeviceOp copy;
  copy.pid = 100;
  copy.device = 0;
  copy.queue = 0x77;
  copy.kind = DeviceOpKind::kCopy;
  copy.name = s.Intern("zeCommandListAppendMemoryCopy");
  copy.start_ns = t;
  copy.end_ns = t + 1000;
  copy.measured = true;
  copy.bytes = 2000;
  (*writer)->Append(copy);
  ApiCall bad;
  bad.pid = 100;
  bad.tid = 100;
  bad.fn = XT_ZE_COMMAND_QUEUE_SYNCHRONIZE;
  bad.start_ns = t + 2000;
  bad.end_ns = t + 2500;
  bad.result = 0x78000004;
  (*writer)->Append(bad);
  if (finish) {
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
}

const nlohmann::json& Row(const nlohmann::json& rows, const std::string& name) {
  for (const auto& r : rows) {
    if (r["name"] == name) return r;
  }
  static const nlohmann::json kNone;
  ADD_FAILURE() << "no row " << name << " in " << rows.dump();
  return kNone;
}

TEST(ReportBuilderTest, OneLogInEveryFormat) {
  ScratchDir dir;
  WriteLog(dir.File("run.capnp"), -1, 100'000);
  auto report = BuildReport({dir.File("run.capnp")}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json j = ReportToJson(*report);
  EXPECT_EQ(j["schema"], "xtrace-report");
  EXPECT_EQ(j["version"], kReportJsonVersion);
  EXPECT_EQ(j["logs"][0]["rank"], "log 0");
  const auto& tables = j["sections"][0]["tables"];
  const auto& gemm = Row(tables["device_ops"], "gemm");
  EXPECT_EQ(gemm["calls"], 4);
  EXPECT_EQ(gemm["total_ns"], 400'000);
  EXPECT_EQ(gemm["measured"], 4);
  EXPECT_EQ(gemm["estimated"], 0);
  const auto& copy = Row(tables["device_ops"], "zeCommandListAppendMemoryCopy");
  EXPECT_EQ(copy["kind"], "copy");
  EXPECT_DOUBLE_EQ(copy["gb_per_s"].get<double>(), 2.0);
  const auto& sync = Row(tables["host_calls"], "zeCommandQueueSynchronize");
  EXPECT_EQ(sync["failed"], 1);
  EXPECT_EQ(sync["failures"]["ZE_RESULT_ERROR_INVALID_ARGUMENT"], 1);
  EXPECT_EQ(Row(tables["submission"], "gemm")["submit_to_start_ns"], 3000);
  ASSERT_EQ(tables["engines"].size(), 1u);
  EXPECT_EQ(tables["engines"][0]["operations"], 5);
  EXPECT_FALSE(j.contains("across_logs"));

  const std::string text = RenderReport(*report, OutputFormat::kText);
  EXPECT_TRUE(Contains(text, "Device operations"));
  EXPECT_TRUE(Contains(text, "400.00 us"));
  EXPECT_TRUE(Contains(text, "GPU utilization"));
  // A log without engine identities: its queues named by handle, and the note says why.
  EXPECT_TRUE(tables["engines"][0]["engine"].get<std::string>().starts_with("GPU 0 queue 0x"))
      << tables["engines"][0];
  EXPECT_TRUE(Contains(text, "does not say which engine")) << text;
  const std::string csv = RenderReport(*report, OutputFormat::kCsv);
  EXPECT_TRUE(Contains(csv, "# device_ops\nname,kind,calls,total_ns,"));
  EXPECT_TRUE(Contains(csv, "gemm,kernel,4,400000,"));
}

TEST(ReportBuilderTest, SeveralLogsShowTheSpreadAndTheStragglerRank) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.File("ranks"));
  WriteLog(dir.File("ranks/a.capnp"), 0, 100'000);
  WriteLog(dir.File("ranks/b.capnp"), 1, 100'000);
  WriteLog(dir.File("ranks/c.capnp"), 2, 300'000);  // the straggler
  auto logs = ExpandLogInputs({dir.File("ranks")});
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 3u);
  ReportOptions options;
  options.read.aggregate.by = GroupBy::kRank;
  auto report = BuildReport(*logs, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json j = ReportToJson(*report);
  ASSERT_EQ(j["sections"].size(), 3u);
  EXPECT_EQ(j["sections"][2]["label"], "rank 2");
  const auto& spread = Row(j["across_logs"]["ranks"], "gemm");
  EXPECT_EQ(spread["logs"], 3);
  EXPECT_EQ(spread["min_ns"], 400'000);
  EXPECT_EQ(spread["median_ns"], 400'000);
  EXPECT_EQ(spread["max_ns"], 1'200'000);
  EXPECT_EQ(spread["outlier"], "rank 2");
  EXPECT_DOUBLE_EQ(spread["outlier_vs_median"].get<double>(), 3.0);
  EXPECT_EQ(spread["per_log_ns"]["rank 0"], 400'000);
}

// The log of one node holds several ranks (xtrace slurm): each rank is counted apart, and the
// spread names the slowest rank of the job, for kernels and ranges, whatever log it is in.
TEST(ReportBuilderTest, RanksInsideNodeLogsAreComparedOneByOne) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.File("job/n1"));
  std::filesystem::create_directories(dir.File("job/n2"));
  const auto node_log = [](const std::string& path, std::vector<std::pair<int32_t, uint64_t>> ranks) {
    LogHeader header = test_util::SampleHeader();
    auto writer = LogWriter::Create(path, header);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    StringTable& s = (*writer)->strings();
    uint64_t t = header.start_clock.monotonic_ns + 1000;
    for (const auto& [rank, step_ns] : ranks) {
      const uint32_t pid = 100 + static_cast<uint32_t>(rank);
      (*writer)->Append(ProcessInfo{.pid = pid, .comm = s.Intern("trainer"), .rank = rank});
      for (int k = 0; k < 3; ++k, t += step_ns + 10'000) {
        DeviceOp op;
        op.pid = pid;
        op.queue = 0x77;
        op.name = s.Intern("step");
        op.append_tid = pid;
        op.append_ns = op.submit_ns = t;
        op.start_ns = t + 1000;
        op.end_ns = op.start_ns + step_ns;
        op.measured = true;
        (*writer)->Append(op);
        (*writer)->Append(IttTask{.pid = pid, .tid = pid, .end_tid = pid, .start_ns = t,
                                  .end_ns = t + 2 * step_ns, .domain = s.Intern("train"),
                                  .name = s.Intern("forward")});
      }
    }
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  };
  node_log(dir.File("job/n1/a.capnp"), {{0, 100'000}, {1, 110'000}});
  node_log(dir.File("job/n2/a.capnp"), {{2, 400'000}, {3, 100'000}});  // rank 2: the straggler
  auto logs = ExpandLogInputs({dir.File("job")});
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 2u);
  auto report = BuildReport(*logs, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json j = ReportToJson(*report);
  const auto& kernels = Row(j["across_logs"]["ranks"], "step");
  EXPECT_EQ(kernels["logs"], 4);
  EXPECT_EQ(kernels["slowest"], "rank 2");
  EXPECT_EQ(kernels["median_ns"], 315'000);  // (300'000 + 330'000) / 2
  EXPECT_EQ(kernels["excess_ns"], 1'200'000 - 315'000);
  EXPECT_EQ(kernels["per_log_ns"]["rank 1"], 330'000);
  const auto& ranges = Row(j["across_logs"]["range_ranks"], "train/forward");
  EXPECT_EQ(ranges["slowest"], "rank 2");
  EXPECT_EQ(ranges["per_log_ns"]["rank 3"], 600'000);
  EXPECT_TRUE(Contains(RenderReport(*report, OutputFormat::kText), "Kernels across ranks"));
}

TEST(ReportBuilderTest, DiffSortsByTheAbsoluteChange) {
  ScratchDir dir;
  WriteLog(dir.File("before.capnp"), -1, 100'000, 4);
  WriteLog(dir.File("after.capnp"), -1, 150'000, 6);
  auto report = BuildDiff({dir.File("before.capnp")}, {dir.File("after.capnp")}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json j = ReportToJson(*report);
  const auto& first = j["diff"][0];
  EXPECT_EQ(first["name"], "gemm");
  EXPECT_EQ(first["side"], "device");
  EXPECT_EQ(first["calls_delta"], 2);
  EXPECT_EQ(first["total_delta_ns"], 900'000 - 400'000);
  EXPECT_DOUBLE_EQ(first["average_delta_ns"].get<double>(), 50'000);
  EXPECT_TRUE(Contains(RenderReport(*report, OutputFormat::kText), "Change from BEFORE to AFTER"));
}

// Text signs a change both ways: an increase "+", a decrease "-", no change bare; CSV and JSON
// keep signed numbers.
TEST(ReportBuilderTest, DiffSignsIncreasesAndDecreases) {
  ScratchDir dir;
  WriteLog(dir.File("before.capnp"), -1, 100'000, 4);
  WriteLog(dir.File("after.capnp"), -1, 150'000, 6);
  auto grew = BuildDiff({dir.File("before.capnp")}, {dir.File("after.capnp")}, {});
  auto shrank = BuildDiff({dir.File("after.capnp")}, {dir.File("before.capnp")}, {});
  ASSERT_TRUE(grew.ok() && shrank.ok());
  // The gemm row: calls, total and average changes, the figures aligned right.
  auto gemm_row = [](const std::string& text) {
    const size_t at = text.find("device  gemm");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  const std::string up = gemm_row(RenderReport(*grew, OutputFormat::kText));
  const std::string down = gemm_row(RenderReport(*shrank, OutputFormat::kText));
  EXPECT_TRUE(Contains(up, " +2 ")) << up;
  EXPECT_TRUE(Contains(up, " +500.00 us ")) << up;
  EXPECT_TRUE(up.ends_with(" +50.00 us")) << up;
  EXPECT_TRUE(Contains(down, " -2 ")) << down;
  EXPECT_TRUE(Contains(down, " -500.00 us ")) << down;
  EXPECT_TRUE(down.ends_with(" -50.00 us")) << down;
  // An unchanged row has no sign.
  const std::string text = RenderReport(*grew, OutputFormat::kText);
  const size_t copy = text.find("device  zeCommandListAppendMemoryCopy");
  ASSERT_NE(copy, std::string::npos) << text;
  const std::string unchanged = text.substr(copy, text.find('\n', copy) - copy);
  EXPECT_FALSE(Contains(unchanged, "+")) << unchanged;

  const nlohmann::json up_json = ReportToJson(*grew)["diff"][0];
  const nlohmann::json down_json = ReportToJson(*shrank)["diff"][0];
  EXPECT_TRUE(up_json["total_delta_ns"].is_number_integer());
  EXPECT_EQ(up_json["calls_delta"], 2);
  EXPECT_EQ(down_json["calls_delta"], -2);
  EXPECT_EQ(down_json["total_delta_ns"], -500'000);
  EXPECT_TRUE(Contains(RenderReport(*shrank, OutputFormat::kCsv), "device,gemm,6,4,-2,900000,400000,-500000,"));
  EXPECT_TRUE(Contains(RenderReport(*grew, OutputFormat::kCsv), "device,gemm,4,6,2,400000,900000,500000,"));
}

TEST(ReportBuilderTest, CategoriesNameFilterAndTop) {
  ScratchDir dir;
  WriteLog(dir.File("run.capnp"), -1, 100'000);
  auto categories = Categories::Parse("math equals gemm\n", "cats");
  ASSERT_TRUE(categories.ok());
  ReportOptions options;
  options.tables.categories = &*categories;
  options.tables.top = 1;
  auto report = BuildReport({dir.File("run.capnp")}, options);
  ASSERT_TRUE(report.ok());
  nlohmann::json j = ReportToJson(*report);
  const auto& tables = j["sections"][0]["tables"];
  ASSERT_EQ(tables["device_ops"].size(), 1u);
  EXPECT_EQ(tables["device_ops"][0]["category"], "math");
  EXPECT_EQ(Row(tables["device_categories"], "math")["total_ns"], 400'000);

  options.tables.top = 0;
  options.tables.name = std::regex("Copy");
  report = BuildReport({dir.File("run.capnp")}, options);
  ASSERT_TRUE(report.ok());
  j = ReportToJson(*report);
  ASSERT_EQ(j["sections"][0]["tables"]["device_ops"].size(), 1u);
  EXPECT_EQ(j["sections"][0]["tables"]["device_ops"][0]["category"], "other");
}

// A SYCL kernel on an immediate command list: its name demangled (as captured with
// --mangled and in JSON's mangled_name), its engine named by device and ordinal.index with the
// handle kept in JSON.
TEST(ReportBuilderTest, KernelNamesDemangledAndEnginesNamed) {
  ScratchDir dir;
  const std::string sycl = "_ZTSZZ9run_layerRN4sycl3_V15queueEENKUlRNS0_7handlerEE_clES4_EUlNS0_"
                           "7nd_itemILi1EEEE_";
  {
    LogHeader header = test_util::SampleHeader();
    auto writer = LogWriter::Create(dir.File("run.capnp"), header);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    StringTable& s = (*writer)->strings();
    const uint64_t t0 = header.start_clock.monotonic_ns;
    (*writer)->Append(DeviceQueue{.pid = 100, .device = 0, .handle = 0x7facd0000cf0,
                                  .immediate = true, .ordinal = 0, .index = 1, .track = 1});
    // Device 1's queue groups are known: ordinal 1 copies only.
    (*writer)->Append(DeviceInfo{.device = 1, .name = s.Intern("GPU B"), .timer_hz = 1000,
                                 .kernel_timestamp_bits = 32, .queue_group_flags = {0xf, 0x2}});
    (*writer)->Append(DeviceQueue{.pid = 100, .device = 1, .handle = 0x7fac00000100,
                                  .immediate = false, .ordinal = 1, .index = 0, .track = 1});
    for (int k = 0; k < 2; ++k) {
      DeviceOp op;
      op.pid = 100;
      op.device = 0;
      op.queue = 0x7facd0000cf0;
      op.name = s.Intern(sycl);
      op.start_ns = t0 + 1000 + k * 10'000;
      op.end_ns = op.start_ns + 5000;
      op.measured = k == 0;
      (*writer)->Append(op);
    }
    DeviceOp copy;
    copy.pid = 100;
    copy.device = 1;
    copy.queue = 0x7fac00000100;
    copy.kind = DeviceOpKind::kCopy;
    copy.name = s.Intern("zeCommandListAppendMemoryCopy");
    copy.start_ns = t0 + 1000;
    copy.end_ns = t0 + 2000;
    copy.measured = true;
    (*writer)->Append(copy);
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
  auto report = BuildReport({dir.File("run.capnp")}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  nlohmann::json j = ReportToJson(*report);
  const std::string shown = "run_layer(sycl::_V1::queue&)::{lambda(sycl::_V1::handler&)#1}::"
                            "operator()(sycl::_V1::handler&) const::{lambda(sycl::_V1::nd_item<1>)#1}";
  const auto& row = Row(j["sections"][0]["tables"]["device_ops"], shown);
  EXPECT_EQ(row["mangled_name"], sycl);
  ASSERT_EQ(j["sections"][0]["tables"]["engines"].size(), 2u);
  const auto& copy_engine = j["sections"][0]["tables"]["engines"][1];
  EXPECT_EQ(copy_engine["engine"], "GPU 1 copy 1.0");
  EXPECT_EQ(copy_engine["engine_type"], "copy");
  const auto& engine = j["sections"][0]["tables"]["engines"][0];
  EXPECT_EQ(engine["engine"], "GPU 0 engine 0.1 immediate (type unknown)");
  EXPECT_EQ(engine["queue"], "0x7facd0000cf0");
  EXPECT_EQ(engine["device"], "0");
  EXPECT_EQ(engine["immediate"], true);
  EXPECT_TRUE(engine["engine_type"].is_null());
  EXPECT_EQ(engine["estimated_operations"], 1);
  // Two thirds of its span lie around the estimated operation: no verdict from the third.
  EXPECT_EQ(engine["verdict"], kVerdictMostlyEstimated);
  const std::string text = RenderReport(*report, OutputFormat::kText, {.width = 80});
  EXPECT_TRUE(Contains(text, "GPU 0 engine 0.1 immediate (type unknown)")) << text;
  EXPECT_TRUE(Contains(text, "run_layer(sycl::_V1::")) << text;
  EXPECT_TRUE(Contains(text, std::string(kCutMark))) << text;
  EXPECT_FALSE(Contains(text, "0x7facd0000cf0")) << text;
  EXPECT_FALSE(Contains(text, "does not say which engine")) << text;  // every queue described
  // --name finds the name as shown or as captured.
  ReportOptions by_name;
  by_name.tables.name = std::regex("9run_layer");
  report = BuildReport({dir.File("run.capnp")}, by_name);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(ReportToJson(*report)["sections"][0]["tables"]["device_ops"].size(), 1u);

  ReportOptions mangled;
  mangled.tables.mangled = true;
  report = BuildReport({dir.File("run.capnp")}, mangled);
  ASSERT_TRUE(report.ok());
  j = ReportToJson(*report);
  EXPECT_EQ(j["sections"][0]["tables"]["device_ops"][0]["name"], sycl);
}

// With Python frames in the log, each largest idle gap names the user's line that submitted
// the operation ending it (library frames, torch/, skipped), in the text and the JSON.
TEST(ReportBuilderTest, IdleGapsNameThePythonLineThatEndedThem) {
  ScratchDir dir;
  {
    LogHeader header = test_util::SampleHeader();
    auto writer = LogWriter::Create(dir.File("run.capnp"), header);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    StringTable& s = (*writer)->strings();
    const uint64_t t0 = header.start_clock.monotonic_ns;
    auto frame = [&](const char* file, const char* function, uint32_t line) {
      return PythonFrame{s.Intern(file), s.Intern(function), line};
    };
    (*writer)->Append(PythonStack{.pid = 100, .tid = 101, .start_ns = t0 + 900, .end_ns = t0 + 950,
                                  .frames = {frame("/srv/train.py", "step", 12)}});
    (*writer)->Append(PythonStack{
        .pid = 100, .tid = 101, .start_ns = t0 + 20'000, .end_ns = t0 + 20'050,
        .frames = {frame("/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "_call_impl", 1750),
                   frame("/srv/model.py", "Model.forward", 40), frame("/srv/train.py", "step", 13)}});
    for (int k = 0; k < 2; ++k) {
      DeviceOp op;
      op.pid = 100;
      op.device = 0;
      op.queue = 0x1000;
      op.name = s.Intern("gemm");
      op.submit_tid = 101;
      op.submit_ns = k == 0 ? t0 + 900 : t0 + 20'000;
      op.start_ns = k == 0 ? t0 + 1000 : t0 + 30'000;
      op.end_ns = op.start_ns + 1000;
      op.measured = true;
      (*writer)->Append(op);
    }
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
  auto report = BuildReport({dir.File("run.capnp")}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const nlohmann::json j = ReportToJson(*report);
  const auto& gaps = j["sections"][0]["tables"]["gaps"];
  ASSERT_EQ(gaps.size(), 1u) << gaps.dump();
  EXPECT_EQ(gaps[0]["python_line"], "/srv/model.py(40): Model.forward");
  EXPECT_EQ(gaps[0]["duration_ns"], 28'000);
  const std::string text = RenderReport(*report, OutputFormat::kText, {.width = 200});
  EXPECT_TRUE(Contains(text, "Python line")) << text;
  EXPECT_TRUE(Contains(text, "model.py(40): Model.forward")) << text;
}

// A log whose capture lost records warns that the tables miss them, with the remedy that fits
// the ring that lost them.
TEST(ReportBuilderTest, ALogWithDropsWarnsWithTheRemedyOfTheRingThatLostThem) {
  ScratchDir dir;
  const uint64_t t0 = test_util::SampleHeader().start_clock.monotonic_ns;
  auto warnings_of = [&](const std::string& name, const RecordsDropped& drops) {
    const std::string path = dir.File(name);
    auto writer = LogWriter::Create(path, test_util::SampleHeader());
    EXPECT_TRUE(writer.ok());
    if (!writer.ok()) return std::vector<std::string>{};
    (*writer)->Append(ProcessInfo{.pid = 100, .comm = (*writer)->strings().Intern("trainer")});
    RecordsDropped window = drops;
    window.start_ns = t0 + 1000;
    window.end_ns = t0 + 2000;
    (*writer)->Append(window);
    EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
    auto report = BuildReport({path}, {});
    EXPECT_TRUE(report.ok()) << report.status().message();
    std::vector<std::string> of_drops;  // not the sample summary's note
    for (const std::string& w : report.ok() ? report->warnings : std::vector<std::string>{})
      if (Contains(w, " dropped ")) of_drops.push_back(w);
    return of_drops;
  };
  EXPECT_EQ(warnings_of("bpf.capnp", {.level_zero = 7, .drm = 2}),
            std::vector<std::string>{dir.File("bpf.capnp") +
                                     ": the capture dropped 9 events (Level Zero 7, DRM 2), "
                                     "missing from these tables; raise --buffer-size"});
  EXPECT_EQ(warnings_of("itt.capnp", {.itt = 30, .itt_rings = 30}),
            std::vector<std::string>{
                dir.File("itt.capnp") +
                ": the capture dropped 30 events (ITT 30), missing from these tables; all in the "
                "programs' own ITT rings: raise --itt-ring-size or give xtrace a CPU the program "
                "does not use"});
  EXPECT_EQ(warnings_of("both.capnp", {.level_zero = 5, .itt = 12, .itt_rings = 9}),
            std::vector<std::string>{
                dir.File("both.capnp") +
                ": the capture dropped 17 events (Level Zero 5, ITT 12), missing from these "
                "tables; raise --buffer-size; 9 of them in the programs' own ITT rings: raise "
                "--itt-ring-size or give xtrace a CPU the program does not use"});
  EXPECT_TRUE(warnings_of("none.capnp", {}).empty()) << "an empty window is no loss";
}

TEST(ReportBuilderTest, DamagedAndCutShortLogs) {
  ScratchDir dir;
  WriteLog(dir.File("cut.capnp"), -1, 100'000, 4, /*finish=*/false);
  auto cut = BuildReport({dir.File("cut.capnp")}, {});
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  ASSERT_EQ(cut->warnings.size(), 1u);
  EXPECT_TRUE(Contains(cut->warnings[0], "did not finish cleanly"));

  WriteLog(dir.File("run.capnp"), -1, 100'000);
  const std::string bytes = test_util::ReadFileBytes(dir.File("run.capnp"));
  test_util::WriteFileBytes(dir.File("torn.capnp"), bytes.substr(0, bytes.size() - 40));
  auto torn = BuildReport({dir.File("torn.capnp")}, {});
  ASSERT_FALSE(torn.ok());
  EXPECT_TRUE(Contains(torn.status().message(), "torn.capnp"));
  ReportOptions salvage;
  salvage.read.salvage = true;
  auto salvaged = BuildReport({dir.File("torn.capnp")}, salvage);
  ASSERT_TRUE(salvaged.ok()) << salvaged.status().message();
  ASSERT_EQ(salvaged->warnings.size(), 1u);

  auto missing = BuildReport({dir.File("missing.capnp")}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "missing.capnp"));
  std::filesystem::create_directory(dir.File("empty"));
  auto empty = ExpandLogInputs({dir.File("empty")});
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(Contains(empty.status().message(), "no *.capnp logs"));
}

}  // namespace
}  // namespace xtrace::report
