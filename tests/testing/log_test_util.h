// Helpers shared by the log and exporter unit tests: a scratch directory, sample headers and
// events, field-by-field event comparison, and raw file access for damaging logs on purpose.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>

#include "model/event.h"
#include "model/log_header.h"
#include "ze_event_test_util.h"

namespace xtrace::test_util {

// A fresh directory under $TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xtrace_test_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// EXPECT_TRUE(Contains(message, "batch 2")) prints both strings when it fails (gmock's
// HasSubstr would do, but the unit tests link gtest only).
inline ::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

// /dev/full fails every write with ENOSPC: a disk-full stand-in. Tests check it is really
// the device first, because opening a missing /dev/full with O_CREAT would create a file.
inline bool HaveDevFull() { return std::filesystem::is_character_file("/dev/full"); }
#define XTRACE_REQUIRE_DEV_FULL()          \
  if (!::xtrace::test_util::HaveDevFull()) \
  GTEST_SKIP() << "/dev/full is not a character device here"

inline LogHeader SampleHeader() {
  LogHeader h;
  h.xtrace_version = "0.1.0-test";
  h.host = "gpu-node-7";
  h.kernel_release = "6.18.0-test";
  h.boot_id = "0f3c1d2e-aaaa-bbbb-cccc-0123456789ab";
  h.command_line = "xtrace record -o run.capnp -- python train.py";
  h.start_clock = {.monotonic_ns = 1'000'000'000'123,
                   .monotonic_raw_ns = 1'000'000'500'456,
                   .realtime_ns = 1'763'000'000'000'000'789};
  return h;
}

inline LogSummary SampleSummary() {
  LogSummary s;
  s.end_clock = {.monotonic_ns = 1'000'900'000'000,
                 .monotonic_raw_ns = 1'000'900'000'500,
                 .realtime_ns = 1'763'000'900'000'000'000};
  s.events = 12345;
  s.dropped = 7;
  s.processes = 3;
  s.process_stats = {{.pid = 4242,
                      .comm = "python3",
                      .records_by_source = {{"Level Zero", 1200}, {"ITT", 30}},
                      .dropped = 5},
                     {.pid = 4243, .comm = "", .records_by_source = {}, .dropped = 2}};
  s.notes = {"/usr/lib/libze_loader.so.1 does not export zeCommandListHostSynchronize (an older "
             "Level Zero loader), and the Level Zero driver hands it out by pointer "
             "(zeDriverGetExtensionFunctionAddress): a call through such a pointer, past the "
             "loader, is not traced"};
  return s;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Field-by-field equality with a readable failure message.
inline void ExpectSameEvent(const Event& expected, const Event& actual) {
  ASSERT_EQ(expected.index(), actual.index()) << "different event kinds";
  if (const auto* e = std::get_if<KernelLaunch>(&expected)) {
    const auto& a = std::get<KernelLaunch>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->command_list, a.command_list);
    EXPECT_EQ(e->kernel, a.kernel);
    EXPECT_EQ(e->signal_event, a.signal_event);
    EXPECT_EQ(e->group_count[0], a.group_count[0]);
    EXPECT_EQ(e->group_count[1], a.group_count[1]);
    EXPECT_EQ(e->group_count[2], a.group_count[2]);
    EXPECT_EQ(e->num_wait_events, a.num_wait_events);
    EXPECT_EQ(e->result, a.result);
    EXPECT_EQ(e->kernel_name, a.kernel_name);
    EXPECT_EQ(e->name_known, a.name_known);
    EXPECT_EQ(e->group_count_unreadable, a.group_count_unreadable);
    EXPECT_EQ(e->launch_kind, a.launch_kind);
  } else if (const auto* e = std::get_if<KernelCreate>(&expected)) {
    const auto& a = std::get<KernelCreate>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->module, a.module);
    EXPECT_EQ(e->kernel, a.kernel);
    EXPECT_EQ(e->name, a.name);
    EXPECT_EQ(e->result, a.result);
    EXPECT_EQ(e->name_truncated, a.name_truncated);
    EXPECT_EQ(e->learned, a.learned);
  } else if (const auto* e = std::get_if<ProcessInfo>(&expected)) {
    const auto& a = std::get<ProcessInfo>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->ns_pid, a.ns_pid);
    EXPECT_EQ(e->comm, a.comm);
    EXPECT_EQ(e->command_line, a.command_line);
    EXPECT_EQ(e->cgroup, a.cgroup);
    EXPECT_EQ(e->container_id, a.container_id);
    EXPECT_EQ(e->rank, a.rank);
    EXPECT_EQ(e->exec_ns, a.exec_ns);
  } else if (const auto* e = std::get_if<ThreadInfo>(&expected)) {
    const auto& a = std::get<ThreadInfo>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->name, a.name);
  } else {
    ExpectSameZeEvent(expected, actual);
  }
}

// A launch as a correlator would produce it: handles from a small pool of heap addresses,
// launches a few µs apart, a few hundred groups. Index `i` varies everything plausibly.
inline KernelLaunch RealisticLaunch(uint64_t i, StringId first_name, uint32_t names) {
  KernelLaunch e;
  e.pid = 48213;
  e.tid = 48213 + static_cast<uint32_t>(i % 4);
  e.start_ns = 5'000'000'000'000 + i * 7'300 + (i * 7919) % 1'500;
  e.end_ns = e.start_ns + 1'800 + (i * 104'729) % 9'000;
  e.command_list = 0x5555'5a3c'1e00 + (i % 2) * 0x2000;
  e.kernel = 0x5555'5a40'0000 + (i % names) * 0x1c0;
  e.signal_event = 0x5555'5b00'0000 + (i % 64) * 0x40;
  e.group_count[0] = 256u << (i % 3);
  e.group_count[1] = 1;
  e.group_count[2] = 1;
  e.num_wait_events = static_cast<uint32_t>(i % 2);
  e.kernel_name = first_name + static_cast<StringId>(i % names);
  e.name_known = true;
  return e;
}

}  // namespace xtrace::test_util
