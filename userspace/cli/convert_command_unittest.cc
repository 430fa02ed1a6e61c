// Tests of `xtrace convert` as a command: what it says on stderr when a selection leaves
// nothing of the traced processes, and its exit status then.
#include "cli/convert_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/read_file.h"

#include "log/log_writer.h"
#include "log_test_util.h"
#include "trace_checks.h"

namespace xtrace {
namespace {

struct Outcome {
  int status = 0;
  std::string err;
};

Outcome Convert(std::vector<std::string> args) {
  args.insert(args.begin(), "convert");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int status = RunConvertCommand(static_cast<int>(argv.size()), argv.data());
  return {status, testing::internal::GetCapturedStderr()};
}

// A log of two processes, one of rank 3, each launching a kernel a second after the start.
std::string WriteLog(const test_util::ScratchDir& dir) {
  const std::string path = dir.File("run.capnp");
  auto writer = LogWriter::Create(path, test_util::SampleHeader());
  EXPECT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  (*writer)->Append(ProcessInfo{.pid = 4242, .comm = s.Intern("trainer"), .rank = 3});
  (*writer)->Append(ProcessInfo{.pid = 4300, .comm = s.Intern("python3")});
  for (uint32_t pid : {4242u, 4300u}) {
    KernelLaunch launch;
    launch.pid = launch.tid = pid;
    launch.start_ns = test_util::SampleHeader().start_clock.monotonic_ns + 1'000'000'000;
    launch.end_ns = launch.start_ns + 500;
    launch.kernel_name = s.Intern("gemm");
    (*writer)->Append(launch);
  }
  EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  return path;
}

TEST(ConvertCommand, ASelectionThatLeavesNothingSaysSoAndWhatTheLogHolds) {
  test_util::ScratchDir dir;
  const std::string log = WriteLog(dir);
  const std::string out = dir.File("out.json");

  const Outcome pid = Convert({log, "-q", "-o", out, "--pid", "999999"});
  EXPECT_EQ(pid.status, 0) << "an empty selection is an answer, as for report";
  EXPECT_EQ(pid.err, "xtrace convert: warning: nothing selected: --pid 999999 left no event of the "
                     "traced processes of " + log + "; " + out + " holds none of them. " + log +
                     " holds pids 4242 (trainer, rank 3), 4300 (python3).\n");

  // A window says how long the log ran; --name and --rank are named as typed.
  const Outcome window = Convert({log, "-q", "-o", out, "--from", "2m", "--to", "3m"});
  EXPECT_EQ(window.status, 0);
  EXPECT_NE(window.err.find("nothing selected: --from 2m --to 3m left no event"), std::string::npos) << window.err;
  EXPECT_NE(window.err.find("4300 (python3), over the 0.900 s from its start."), std::string::npos)
      << window.err;
  const Outcome name = Convert({log, "-q", "-o", out, "--name", "conv|relu", "--rank", "3"});
  EXPECT_NE(name.err.find("nothing selected: --rank 3 --name 'conv|relu' left no event"), std::string::npos)
      << name.err;

  // What selects something says nothing.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--pid", "4242"}, {"--rank", "3"}, {"--name", "gemm"}, {"--from", "0.5", "--to", "1.5"}}) {
    std::vector<std::string> all = {log, "-q", "-o", out};
    all.insert(all.end(), args.begin(), args.end());
    const Outcome some = Convert(all);
    EXPECT_EQ(some.status, 0);
    EXPECT_EQ(some.err, "") << args[0];
  }
}

// A trace large enough that a browser may not open it says so, and what to do instead: the
// smaller format for JSON, trace_processor for Perfetto, a part of the capture for both.
TEST(ConvertCommand, ATraceTooLargeForABrowserSaysWhatToDoInstead) {
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_EQ(LargeTraceNote(TraceFormat::kChromeJson, 900 * mib, "run.json"), "");
  EXPECT_EQ(LargeTraceNote(TraceFormat::kPerfetto, 400 * mib, "run.pftrace"), "");
  EXPECT_EQ(LargeTraceNote(TraceFormat::kChromeJson, 1536 * mib, "run.json.gz"),
            "run.json.gz holds 1.50 GiB (uncompressed) of trace: ui.perfetto.dev may fail to open "
            "it in a browser, whose memory is limited (about 2 GB) and holds a trace at several "
            "times its size. The Perfetto format (-o FILE.pftrace) holds the same in about a "
            "sixth of the bytes; or convert it in parts: --split DURATION (one trace per "
            "DURATION), --from/--to, --pid, --rank or --name.");
  EXPECT_EQ(LargeTraceNote(TraceFormat::kPerfetto, 600 * mib, "run.pftrace"),
            "run.pftrace holds 600.0 MiB of trace: ui.perfetto.dev may fail to open it in a "
            "browser, whose memory is limited (about 2 GB) and holds a trace at several times its "
            "size. Perfetto's trace_processor opens it outside the browser (trace_processor "
            "--httpd run.pftrace, then the UI offers to use it); or convert it in parts: --split "
            "DURATION (one trace per DURATION), --from/--to, --pid, --rank or --name.");
  EXPECT_NE(LargeTraceNote(TraceFormat::kPerfetto, 600 * mib, "-").find("--httpd FILE"),
            std::string::npos);
}

// The trace's size before compression is what is measured: a gzip-compressed trace counts as
// the viewer will load it.
TEST(ConvertCommand, TraceBytesAreCountedBeforeCompression) {
  test_util::ScratchDir dir;
  const std::string log = WriteLog(dir);
  ConvertStats plain, gz;
  ASSERT_TRUE(ConvertLog(log, dir.File("run.json"), {}, &plain).ok());
  ASSERT_TRUE(ConvertLog(log, dir.File("run.json.gz"), {}, &gz).ok());
  EXPECT_EQ(plain.trace_bytes, plain.bytes_written);
  EXPECT_EQ(gz.trace_bytes, plain.trace_bytes);
  EXPECT_LT(gz.bytes_written, gz.trace_bytes);
}

TEST(ConvertCommand, PartsAreNamedBeforeTheExtensionAndSortInOrder) {
  EXPECT_EQ(PartPath("day.pftrace", 1, 12), "day.part01.pftrace");
  EXPECT_EQ(PartPath("day.pftrace", 12, 12), "day.part12.pftrace");
  EXPECT_EQ(PartPath("/tmp/run.json.gz", 3, 3), "/tmp/run.part3.json.gz");
  EXPECT_EQ(PartPath("/tmp/v1.2/trace", 7, 100), "/tmp/v1.2/trace.part007");
  EXPECT_EQ(PartPath("out/.trace", 1, 1), "out/.trace.part1");
  EXPECT_EQ(PartPath("trace.gz", 2, 2), "trace.part2.gz");
}

// A log whose kernels k0, k1, k2 run 0.5, 1.5 and 2.5 s after its start; finished with its
// summary (which says it ended at 0.9 s: the spans reach further) or cut short without one.
std::string WriteThreeSeconds(const test_util::ScratchDir& dir, const std::string& name,
                              bool finished) {
  const std::string path = dir.File(name);
  auto writer = LogWriter::Create(path, test_util::SampleHeader());
  EXPECT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  (*writer)->Append(ProcessInfo{.pid = 4242, .comm = s.Intern("trainer")});
  for (uint32_t k = 0; k < 3; ++k) {
    KernelLaunch launch;
    launch.pid = launch.tid = 4242;
    launch.start_ns = test_util::SampleHeader().start_clock.monotonic_ns + 500'000'000 +
                      uint64_t{k} * 1'000'000'000;
    launch.end_ns = launch.start_ns + 500;
    launch.kernel_name = s.Intern("k" + std::to_string(k));
    (*writer)->Append(launch);
    EXPECT_TRUE((*writer)->Flush().ok());  // a batch each
  }
  if (finished) {
    EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
  return path;
}

// Which of k0, k1, k2 a trace holds.
std::string KernelsIn(const std::string& trace) {
  const auto text = ReadWholeFile(trace);
  EXPECT_TRUE(text.has_value()) << trace;
  std::string kernels;
  for (const char* k : {"\"k0\"", "\"k1\"", "\"k2\""})
    if (text && text->find(k) != std::string::npos) kernels += std::string(k).substr(1, 2);
  return kernels;
}

TEST(ConvertCommand, SplitWritesOneTracePerPartOfTheCapture) {
  for (bool finished : {true, false}) {
    SCOPED_TRACE(finished ? "finished log" : "log cut short");
    test_util::ScratchDir dir;
    const std::string log = WriteThreeSeconds(dir, "run.capnp", finished);
    const std::string out = dir.File("run.json");
    const Outcome three = Convert({log, "-o", out, "--split", "1s"});
    EXPECT_EQ(three.status, 0) << three.err;
    EXPECT_EQ(KernelsIn(dir.File("run.part1.json")), "k0");
    EXPECT_EQ(KernelsIn(dir.File("run.part2.json")), "k1");
    EXPECT_EQ(KernelsIn(dir.File("run.part3.json")), "k2");
    EXPECT_FALSE(std::filesystem::exists(dir.File("run.part4.json")));
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_NE(three.err.find("part 2 of 3 (1s to 2s from the start) -> " +
                             dir.File("run.part2.json") + ": "),
              std::string::npos)
        << three.err;
    EXPECT_NE(three.err.find(" -> 3 of 3 parts of 1s (" + dir.File("run.part1.json") + " ... " +
                             dir.File("run.part3.json") + "): "),
              std::string::npos)
        << three.err;
    EXPECT_EQ(three.err.find("has no summary") == std::string::npos, finished) << three.err;
    // Each part is a trace of its own that a viewer draws: checked in both formats.
    ASSERT_EQ(Convert({log, "-q", "-o", dir.File("run.pftrace"), "--split", "1s"}).status, 0);
    for (const char* part : {"part1", "part2", "part3"})
      for (const std::string& problem : test_util::CheckEveryFormat(
               dir.File(std::string("run.") + part + ".json"), dir.File(std::string("run.") + part + ".pftrace")))
        ADD_FAILURE() << part << ": " << problem;

    // Parts with nothing of the traced processes are said, in runs, and not written.
    const Outcome six = Convert({log, "-o", dir.File("half.json"), "--split", "500ms"});
    EXPECT_EQ(six.status, 0) << six.err;
    for (int part = 1; part <= 6; ++part)
      EXPECT_EQ(std::filesystem::exists(dir.File("half.part" + std::to_string(part) + ".json")),
                part % 2 == 0)
          << part;
    EXPECT_NE(six.err.find("part 3 of 6 (1s to 1.500s from the start): nothing of the traced "
                           "processes, not written\n"),
              std::string::npos)
        << six.err;
    EXPECT_NE(six.err.find(" -> 3 of 6 parts of 0.500s (" + dir.File("half.part2.json") + " ... " +
                           dir.File("half.part6.json") +
                           "; 3 with nothing of the traced processes not written): "),
              std::string::npos)
        << six.err;

    // Within a window: its own length cut, from its start.
    const std::string windowed = dir.File("w.pftrace");
    const Outcome two = Convert({log, "-q", "-o", windowed, "--split", "0.75s", "--from", "1.2"});
    EXPECT_EQ(two.status, 0) << two.err;
    EXPECT_TRUE(std::filesystem::exists(dir.File("w.part1.pftrace")));
    EXPECT_TRUE(std::filesystem::exists(dir.File("w.part2.pftrace")));
    EXPECT_FALSE(std::filesystem::exists(dir.File("w.part3.pftrace")));
  }
}

TEST(ConvertCommand, SplitNeedsFilesToWrite) {
  test_util::ScratchDir dir;
  const std::string log = WriteThreeSeconds(dir, "run.capnp", true);
  const Outcome to_stdout = Convert({log, "-o", "-", "--split", "1s"});
  EXPECT_EQ(to_stdout.status, 2);
  EXPECT_NE(to_stdout.err.find("--split writes one file per part"), std::string::npos) << to_stdout.err;
  const Outcome device = Convert({log, "-o", "/dev/null", "--split", "1s"});
  EXPECT_EQ(device.status, 2);
  EXPECT_NE(device.err.find("/dev/null is not a regular file"), std::string::npos) << device.err;
  EXPECT_FALSE(std::filesystem::exists("/dev/null.part1"));
  const Outcome zero = Convert({log, "-o", dir.File("x.json"), "--split", "0"});
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("--split: '0' is not a duration"), std::string::npos) << zero.err;
}

}  // namespace
}  // namespace xtrace
