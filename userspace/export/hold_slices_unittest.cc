// Tests of export/hold_slices: xtrace's holds drawn by `convert`, one slice per hold.
#include "export/hold_slices.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "export/converter.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "trace_checks.h"
#include "trace_json_util.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using test_util::Find;
using test_util::ParseFile;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

constexpr uint32_t kPid = 4242;
constexpr uint32_t kMainTid = 4242;
constexpr uint32_t kWorkerTid = 4250;

// A capture attached mid-run: a launch on the worker held while xtrace learned a kernel and
// two objects (their creations marked learned, with the hold's span, then the hold's record),
// a launch on the main thread held for nothing (every query failed), and a library load that
// held the whole process. `with_holds` false: a log written before hold records.
void WriteHeldCapture(const std::string& path, bool with_holds) {
  auto writer = LogWriter::Create(path, SampleHeader());
  ASSERT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  LogWriter& w = **writer;
  w.Append(ProcessInfo{.pid = kPid, .ns_pid = kPid, .comm = s.Intern("python3")});
  w.Append(ThreadInfo{.pid = kPid, .tid = kMainTid, .name = s.Intern("python3")});
  w.Append(ThreadInfo{.pid = kPid, .tid = kWorkerTid, .name = s.Intern("ze-worker")});
  const uint64_t t = 1'000'100'000'000;
  KernelCreate kernel{.pid = kPid, .tid = kWorkerTid, .start_ns = t + 1'000, .end_ns = t + 9'000,
                      .kernel = 0x7777, .name = s.Intern("gemm_f32"), .learned = true};
  w.Append(kernel);
  w.Append(ApiCall{.pid = kPid, .tid = kWorkerTid, .start_ns = t + 1'000, .end_ns = t + 9'000,
                   .fn = XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, .learned = true});
  w.Append(ApiCall{.pid = kPid, .tid = kWorkerTid, .start_ns = t + 1'000, .end_ns = t + 9'000,
                   .fn = XT_ZE_EVENT_CREATE, .learned = true});
  if (with_holds) {
    w.Append(XtraceHold{.pid = kPid, .tid = kWorkerTid, .start_ns = t + 1'000, .end_ns = t + 9'000,
                        .process_end_ns = t + 1'300, .cause = HoldCause::kAttachQueries,
                        .learned = 3, .failed = 0});
    w.Append(XtraceHold{.pid = kPid, .tid = kMainTid, .start_ns = t + 20'000, .end_ns = t + 26'000,
                        .process_end_ns = t + 20'500, .cause = HoldCause::kAttachQueries,
                        .learned = 0, .failed = 2});
    w.Append(XtraceHold{.pid = kPid, .tid = kMainTid, .start_ns = t + 40'000, .end_ns = t + 41'000,
                        .process_end_ns = t + 41'000, .cause = HoldCause::kLibraryLoad});
  }
  KernelLaunch launch{.pid = kPid, .tid = kWorkerTid, .start_ns = t + 500, .end_ns = t + 9'500,
                      .command_list = 0x3000, .kernel = 0x7777, .kernel_name = kernel.name,
                      .name_known = true};
  w.Append(launch);
  launch.tid = kMainTid;
  launch.start_ns = t + 19'000;
  launch.end_ns = t + 27'000;
  w.Append(launch);
  ASSERT_TRUE(w.Finish(SampleSummary()).ok());
}

// One slice per hold, on the held thread's track, named by why, with what it learned: five
// objects learned in one hold used to be five identical slices stacked, and a hold that learned
// nothing (or held at a library load) was not drawn at all. A log written before hold records
// keeps its one slice per learned object.
TEST(HoldSlices, EachHoldIsOneSliceOnItsThreadWithWhatItLearned) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteHeldCapture(in, /*with_holds=*/true);
  ASSERT_TRUE(ConvertLog(in, dir.File("run.json"), {}, nullptr).ok());
  ConvertOptions perfetto;
  perfetto.format = TraceFormat::kPerfetto;
  ASSERT_TRUE(ConvertLog(in, dir.File("run.pftrace"), perfetto, nullptr).ok());
  for (const std::string& problem : test_util::CheckEveryFormat(dir.File("run.json"), dir.File("run.pftrace")))
    ADD_FAILURE() << problem;
  const nlohmann::json trace = ParseFile(dir.File("run.json"));
  const auto queries = Find(trace, "X", "xtrace: held (attach queries)");
  ASSERT_EQ(queries.size(), 2u);
  const nlohmann::json& learned = queries[0]["tid"] == kWorkerTid ? queries[0] : queries[1];
  const nlohmann::json& failed = queries[0]["tid"] == kWorkerTid ? queries[1] : queries[0];
  EXPECT_EQ(learned["cat"], "xtrace");
  EXPECT_DOUBLE_EQ(learned["ts"].get<double>(), 1'000'100'001.000);
  EXPECT_DOUBLE_EQ(learned["dur"].get<double>(), 8.0);
  EXPECT_EQ(learned["args"]["learned"], 3);
  EXPECT_EQ(learned["args"]["failed"], 0);
  EXPECT_EQ(learned["args"]["learned_objects"],
            "kernel gemm_f32, zeCommandListCreateImmediate, zeEventCreate");
  EXPECT_EQ(learned["args"]["process_held_ns"], 300);
  EXPECT_EQ(failed["tid"], kMainTid);
  EXPECT_EQ(failed["args"]["learned"], 0);
  EXPECT_EQ(failed["args"]["failed"], 2);
  EXPECT_FALSE(failed["args"].contains("learned_objects"));
  const auto library = Find(trace, "X", "xtrace: held (library load)");
  ASSERT_EQ(library.size(), 1u);
  EXPECT_EQ(library[0]["tid"], kMainTid);
  EXPECT_EQ(library[0]["args"]["whole_process"], true);
  size_t per_object = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    per_object += name.find("made before the attach") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(per_object, 0u) << "no slice per learned object beside the hold's";

  // Older logs: as before, a slice per learned object.
  WriteHeldCapture(in, /*with_holds=*/false);
  ASSERT_TRUE(ConvertLog(in, dir.File("old.json"), {}, nullptr).ok());
  const nlohmann::json old = ParseFile(dir.File("old.json"));
  EXPECT_TRUE(Find(old, "X", "xtrace: held (attach queries)").empty());
  EXPECT_EQ(Find(old, "X", "xtrace: kernel made before the attach, named by zeKernelGetName").size(), 1u);
  EXPECT_EQ(Find(old, "X", "xtrace: made before the attach, learned as zeEventCreate").size(), 1u);
}

}  // namespace
}  // namespace xtrace
