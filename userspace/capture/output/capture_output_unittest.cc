// Tests for capture/output/capture_output: a rotated directory of logs, each complete on its own
// (header, the strings its events use, summary), named *.capnp.part while written, oldest
// pruned beyond max_files.
#include "capture/output/capture_output.h"

#include <gtest/gtest.h>

#include <time.h>

#include <filesystem>

#include "log/log_reader.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

KernelLaunch Launch(StringId name, uint64_t t) {
  KernelLaunch l;
  l.pid = 7;
  l.tid = 8;
  l.start_ns = t;
  l.end_ns = t + 5;
  l.kernel_name = name;
  l.name_known = true;
  return l;
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& f : ListCaptureFiles(dir)) names.push_back(f.name);
  return names;
}

TEST(CaptureOutput, EveryRotatedFileReadsOnItsOwnWithTheSameStrings) {
  ScratchDir scratch;
  const std::string dir = scratch.File("captures");
  auto out = CaptureOutput::ToDirectory(dir, RotationPolicy{.max_file_bytes = 1}, SampleHeader(), 0);
  ASSERT_TRUE(out.ok()) << out.status().message();
  LogWriter& w = (*out)->writer();
  const StringId gemm = w.strings().Intern("gemm");
  w.Append(ProcessInfo{.pid = 7, .ns_pid = 7, .comm = w.strings().Intern("app")});
  w.Append(Launch(gemm, 100));
  ASSERT_TRUE(w.Flush().ok());
  auto files = ListCaptureFiles(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_FALSE(files[0].complete);
  EXPECT_TRUE(files[0].name.ends_with(".capnp.part")) << files[0].name;
  EXPECT_TRUE((*out)->RotationDue(0));

  ASSERT_TRUE((*out)->Rotate(SampleSummary(), SampleHeader(), 10).ok());
  // The new file gets the launch by string id alone: the table must come along.
  w.Append(Launch(gemm, 200));
  ASSERT_TRUE((*out)->Finish(SampleSummary()).ok());

  files = ListCaptureFiles(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(f.complete);
    auto reader = LogReader::Open(dir + "/" + f.name);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    Event e;
    std::vector<std::string> launched;
    while (true) {
      auto more = reader->Next(&e);
      ASSERT_TRUE(more.ok()) << more.status().message();
      if (!*more) break;
      if (auto* l = std::get_if<KernelLaunch>(&e))
        launched.emplace_back(reader->strings().Get(l->kernel_name));
    }
    EXPECT_TRUE(reader->complete());
    EXPECT_EQ(launched, std::vector<std::string>{"gemm"});
  }
  EXPECT_EQ((*out)->finished().size(), 2u);
  EXPECT_GT((*out)->total_bytes(), (*out)->writer().bytes_written());
  // Every event of every file, the last batch a rotation wrote included; every byte too.
  EXPECT_EQ((*out)->total_events(), 3u);
  uint64_t bytes = 0;
  for (const auto& f : files) bytes += f.bytes;
  EXPECT_EQ((*out)->total_bytes(), bytes);
}

TEST(CaptureOutput, ARotationThatCannotMakeItsNextFileKeepsTheFinishedOneAndSaysSo) {
  ScratchDir scratch;
  const std::string dir = scratch.File("captures");
  auto out = CaptureOutput::ToDirectory(dir, RotationPolicy{.max_file_bytes = 1}, SampleHeader(), 0);
  ASSERT_TRUE(out.ok()) << out.status().message();
  LogWriter& w = (*out)->writer();
  const StringId gemm = w.strings().Intern("gemm");
  w.Append(Launch(gemm, 100));
  w.Append(Launch(gemm, 200));
  const auto files = ListCaptureFiles(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string part = dir + "/" + files[0].name;
  // The next file (sequence 0002, this second or the next) cannot be created, as on a
  // read-only disk: its name is a link into a directory that does not exist.
  for (time_t t = time(nullptr); t <= time(nullptr) + 1; ++t) {
    char stamp[32];
    struct tm local {};
    localtime_r(&t, &local);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
    std::filesystem::create_symlink(dir + "/missing/file",
                                    dir + "/xtrace-" + stamp + "-0002.capnp.part");
  }
  ASSERT_FALSE((*out)->Rotate(SampleSummary(), SampleHeader(), 10).ok());
  EXPECT_EQ((*out)->total_events(), 2u);
  auto reader = LogReader::Open(part);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  Event e;
  for (auto more = reader->Next(&e); more.ok() && *more; more = reader->Next(&e)) {
  }
  EXPECT_TRUE(reader->complete());
  EXPECT_NE((*out)->DescribeLoss(2).find(part + " is complete with 2 events and its summary"),
            std::string::npos)
      << (*out)->DescribeLoss(2);
}

TEST(CaptureOutput, AgeRotatesAndMaxFilesPrunesTheOldest) {
  ScratchDir scratch;
  const std::string dir = scratch.File("captures");
  auto out = CaptureOutput::ToDirectory(
      dir, RotationPolicy{.max_file_age_ns = 1000, .max_files = 2}, SampleHeader(), 0);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)->RotationDue(999));
  EXPECT_TRUE((*out)->RotationDue(1000));
  for (uint64_t now = 1000; now <= 4000; now += 1000)
    ASSERT_TRUE((*out)->Rotate(SampleSummary(), SampleHeader(), now).ok());
  ASSERT_TRUE((*out)->Finish(SampleSummary()).ok());
  const auto names = Names(dir);
  ASSERT_EQ(names.size(), 2u);
  // Five files were finished; the last two remain.
  EXPECT_EQ(names[0], std::filesystem::path((*out)->finished()[3]).filename().string());
  EXPECT_EQ(names[1], std::filesystem::path((*out)->finished()[4]).filename().string());
}

TEST(CaptureOutput, ASingleFileNeverRotates) {
  ScratchDir scratch;
  auto out = CaptureOutput::ToFile(scratch.File("run.capnp"), SampleHeader());
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)->RotationDue(UINT64_MAX));
  ASSERT_TRUE((*out)->Finish(SampleSummary()).ok());
  EXPECT_EQ((*out)->current_path(), scratch.File("run.capnp"));
}

TEST(CaptureOutput, ADirectoryThatCannotBeMadeIsAClearError) {
  auto out = CaptureOutput::ToDirectory("/proc/xtrace-no-such-place/x", {}, SampleHeader(), 0);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("cannot create the output directory"), std::string::npos);
}

}  // namespace
}  // namespace xtrace
