// Integration test of `xtrace convert` on real captures of the simulated GPU: two captures,
// the second moved to another (faked) machine by rewriting its header, made one timeline in
// both formats and checked by tests/testing/trace_checks.h and the independent Perfetto
// reader; a window keeps exactly the slices that reach into it; and the errors of windows,
// directories and logs of a newer format are one line naming what was wrong.
#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <kj/io.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "capture_reader.h"
#include "log/log_writer.h"
#include "log/xtrace_log.capnp.h"
#include "perfetto_trace_reader.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trace_checks.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::RootTest;
using testing::RunCommand;

const std::string kXtrace = XTRACE_BIN;

// Copies the log at `in` to `out` under another header: the log format has no other way to
// say a capture came from another machine, and the test has one machine.
void RewriteWithHeader(const std::string& in, const std::string& out, const LogHeader& header) {
  const testing::Capture c = testing::ReadWholeCapture(in);
  ASSERT_TRUE(c.complete);
  auto writer = LogWriter::Create(out, header);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  // The copy's table gets the same strings in the same order: the events' ids hold.
  for (StringId id = 1; id < c.strings.size(); ++id)
    ASSERT_EQ((*writer)->strings().Intern(c.strings.Get(id)), id);
  for (const Event& e : c.all) (*writer)->Append(e);
  LogSummary summary;
  summary.end_clock = header.start_clock;
  ASSERT_TRUE((*writer)->Finish(summary).ok());
}

nlohmann::json ParseJsonFile(const std::string& path) {
  return nlohmann::json::parse(test_util::ReadWholeFile(path), nullptr, /*allow_exceptions=*/false);
}

// A slice as the JSON has it, in ns (ts and dur are µs with three decimals).
using SliceKey = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;  // name, pid, ts, dur
SliceKey KeyOf(const nlohmann::json& e) {
  return {e["name"].get<std::string>(), e["pid"].get<uint64_t>(),
          uint64_t(std::llround(e["ts"].get<double>() * 1000)),
          uint64_t(std::llround(e.value("dur", 0.0) * 1000))};
}

class ConvertIntegrationTest : public RootTest {
 protected:
  ConvertIntegrationTest() : RootTest("capture", "convert") {}

  void Record(const std::string& name) {
    auto rec = RunCommand({kXtrace, "record", "-q", "-o", Path(name), "--", ZE_TIMELINE_BIN,
                           "--threads", "2", "--rounds", "2", "--executions", "3", "--immediate",
                           "4", "--query-every", "2"},
                          {"ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB}, 240s);
    ASSERT_EQ(rec.exit_code(), 0) << rec.err;
  }

  testing::RunResult Convert(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kXtrace, "convert", "-q"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {}, 120s);
  }
};

TEST_F(ConvertIntegrationTest, TwoMachinesMakeOneTimelineInBothFormats) {
  ASSERT_NO_FATAL_FAILURE(Record("a.capnp"));
  ASSERT_NO_FATAL_FAILURE(Record("b-here.capnp"));
  auto a = LogReader::Open(Path("a.capnp"));
  ASSERT_TRUE(a.ok());
  const LogHeader here = a->header();
  LogHeader there = here;
  there.host = "faked-node";
  there.boot_id = "00000000-1111-2222-3333-444444444444";
  // Its header says its machine booted 1000 s after this one: at the same wall-clock time its
  // monotonic clock reads 1000 s less, so its events belong 1000 s later on this clock.
  there.start_clock.monotonic_ns -= 1000'000'000'000;
  ASSERT_NO_FATAL_FAILURE(RewriteWithHeader(Path("b-here.capnp"), Path("b.capnp"), there));

  for (const std::string out : {"job.json", "job.pftrace"}) {
    auto conv = Convert({Path("a.capnp"), Path("b.capnp"), "-o", Path(out)});
    ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  }
  for (const std::string& problem : test_util::CheckEveryFormat(Path("job.json"), Path("job.pftrace")))
    ADD_FAILURE() << problem;

  const nlohmann::json json = ParseJsonFile(Path("job.json"));
  ASSERT_FALSE(json.is_discarded());
  // The workload's process on each machine, apart, named with its host; the moved one keeps
  // its real pid in its name.
  std::map<uint64_t, std::string> processes;
  for (const auto& e : json["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
  const testing::Capture ca = testing::ReadWholeCapture(Path("a.capnp"));
  const testing::Capture cb = testing::ReadWholeCapture(Path("b.capnp"));
  ASSERT_FALSE(ca.launches.empty());
  ASSERT_FALSE(cb.launches.empty());
  const uint32_t pid_a = ca.launches[0].pid, pid_b = cb.launches[0].pid;
  ASSERT_TRUE(processes.count(pid_a));
  EXPECT_NE(processes[pid_a].find("[" + here.host + "]"), std::string::npos) << processes[pid_a];
  const uint64_t moved = (uint64_t{1} << 22) | pid_b;
  ASSERT_TRUE(processes.count(moved));
  EXPECT_NE(processes[moved].find("[faked-node] (pid " + std::to_string(pid_b) + ")"), std::string::npos)
      << processes[moved];
  // Every slice of each capture is there, on its process's or GPU's new pid, at the same
  // place relative to its capture's start as when the capture is converted alone.
  auto slices_by_pid = [](const nlohmann::json& trace) {
    std::map<uint64_t, std::multiset<std::pair<std::string, uint64_t>>> out;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X") out[e["pid"]].insert({e["name"], std::get<2>(KeyOf(e))});
    return out;
  };
  const auto merged = slices_by_pid(json);
  for (const auto& [log, moved_host] : {std::pair{std::string("a.capnp"), false}, {std::string("b.capnp"), true}}) {
    auto alone = Convert({Path(log), "-o", Path(log + ".json")});
    ASSERT_EQ(alone.exit_code(), 0) << alone.err;
    for (const auto& [pid, slices] : slices_by_pid(ParseJsonFile(Path(log + ".json")))) {
      const uint64_t new_pid = !moved_host ? pid : pid >= 0x40000000 ? pid + 0x10000 : (1u << 22) | pid;
      const int64_t shift = moved_host ? 1000'000'000'000 : 0;
      std::multiset<std::pair<std::string, uint64_t>> expected;
      for (const auto& [name, ts] : slices) expected.insert({name, ts + shift});
      ASSERT_TRUE(merged.count(new_pid)) << log << " pid " << pid;
      EXPECT_EQ(merged.at(new_pid), expected) << log << " pid " << pid;
    }
  }
  EXPECT_TRUE(json["otherData"]["clock_alignment"].get<std::string>().find(
                  "faked-node (boot 00000000-1111-2222-3333-444444444444): moved by 1000000000000 ns") !=
              std::string::npos)
      << json["otherData"]["clock_alignment"];
  // The independent Perfetto reader sees the moved process under its new pid and host label.
  test_util::PerfettoTraceReader pf(test_util::ReadWholeFile(Path("job.pftrace")));
  EXPECT_TRUE(pf.errors.empty());
  bool found = false;
  for (const auto& [uuid, t] : pf.tracks) {
    if (!t.is_process || t.pid != int64_t(moved)) continue;
    found = true;
    EXPECT_NE(std::find(t.labels.begin(), t.labels.end(), "host=faked-node"), t.labels.end());
    EXPECT_NE(std::find(t.labels.begin(), t.labels.end(), "pid=" + std::to_string(pid_b)), t.labels.end());
  }
  EXPECT_TRUE(found) << "no process track with pid " << moved;
}

TEST_F(ConvertIntegrationTest, AWindowKeepsExactlyTheSlicesReachingIntoIt) {
  ASSERT_NO_FATAL_FAILURE(Record("run.capnp"));
  auto conv = Convert({Path("run.capnp"), "-o", Path("whole.json")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  const nlohmann::json whole = ParseJsonFile(Path("whole.json"));
  ASSERT_FALSE(whole.is_discarded());
  auto reader = LogReader::Open(Path("run.capnp"));
  ASSERT_TRUE(reader.ok());
  const uint64_t start = reader->header().start_clock.monotonic_ns;

  // The middle third of the slices' time range.
  uint64_t first = UINT64_MAX, last = 0;
  for (const auto& e : whole["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const auto [name, pid, ts, dur] = KeyOf(e);
    first = std::min(first, ts);
    last = std::max(last, ts + dur);
  }
  ASSERT_LT(first, last);
  const uint64_t from = first + (last - first) / 3, to = first + 2 * (last - first) / 3;
  auto seconds = [&](uint64_t ns) {
    char text[32];
    std::snprintf(text, sizeof(text), "%llu.%09llu", (unsigned long long)((ns - start) / 1'000'000'000),
                  (unsigned long long)((ns - start) % 1'000'000'000));
    return std::string(text);
  };
  conv = Convert({Path("run.capnp"), "--from", seconds(from), "--to", "+" + seconds(to) + "s", "-o",
                  Path("window.json")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  conv = Convert({Path("run.capnp"), "--from", seconds(from), "--to", seconds(to), "-o",
                  Path("window.pftrace")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  const nlohmann::json window = ParseJsonFile(Path("window.json"));
  ASSERT_FALSE(window.is_discarded());

  std::multiset<SliceKey> expected, kept;
  for (const auto& e : whole["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const SliceKey k = KeyOf(e);
    const uint64_t ts = std::get<2>(k), dur = std::get<3>(k);
    if (ts < to && ts + dur >= from) expected.insert(k);
  }
  std::set<uint64_t> pids_with_slices, named;
  for (const auto& e : window["traceEvents"]) {
    if (e["ph"] == "X") {
      kept.insert(KeyOf(e));
      pids_with_slices.insert(e["pid"].get<uint64_t>());
    }
    if (e["ph"] == "M" && e["name"] == "process_name") named.insert(e["pid"].get<uint64_t>());
    if (e["ph"] == "s" || e["ph"] == "f") {
      const uint64_t ts = uint64_t(std::llround(e["ts"].get<double>() * 1000));
      EXPECT_TRUE(ts >= from && ts < to) << "a flow end outside the window: " << e.dump();
    }
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_LT(expected.size(), whole["traceEvents"].size());
  EXPECT_EQ(kept, expected);
  for (uint64_t pid : pids_with_slices) EXPECT_TRUE(named.count(pid)) << "pid " << pid << " unnamed";
  for (const std::string& problem : test_util::CheckEveryFormat(Path("window.json"), Path("window.pftrace")))
    ADD_FAILURE() << problem;
}

TEST_F(ConvertIntegrationTest, ErrorsAreOneLineNamingWhatWasWrong) {
  ASSERT_NO_FATAL_FAILURE(Record("run.capnp"));
  auto one_line = [](const testing::RunResult& r) {
    return r.err.find('\n') == r.err.size() - 1;
  };
  auto bad_window = Convert({Path("run.capnp"), "--from", "5", "--to", "1", "-o", Path("x.json")});
  EXPECT_EQ(bad_window.exit_code(), 2);
  EXPECT_NE(bad_window.err.find("--to must be after --from"), std::string::npos) << bad_window.err;
  auto bad_time = Convert({Path("run.capnp"), "--from", "yesterday", "-o", Path("x.json")});
  EXPECT_EQ(bad_time.exit_code(), 2);
  EXPECT_NE(bad_time.err.find("--from: 'yesterday' is not"), std::string::npos) << bad_time.err;

  std::filesystem::create_directory(Path("empty"));
  auto empty = Convert({Path("empty"), "-o", Path("x.json")});
  EXPECT_EQ(empty.exit_code(), 1);
  EXPECT_EQ(empty.err, "xtrace convert: no *.capnp logs in the directory " + Path("empty") + "\n");

  // A log of a newer format: its header says a version this build does not read.
  {
    capnp::MallocMessageBuilder message;
    auto h = message.initRoot<log_schema::LogFrame>().initHeader();
    h.setMagic(log_schema::LOG_MAGIC);
    h.setFormatVersion(99);
    h.setXtraceVersion("99.0");
    kj::AutoCloseFd fd(::open(Path("newer.capnp").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    capnp::writePackedMessageToFd(fd.get(), message);
  }
  auto newer = Convert({Path("run.capnp"), Path("newer.capnp"), "-o", Path("x.json")});
  EXPECT_EQ(newer.exit_code(), 1);
  EXPECT_NE(newer.err.find(Path("newer.capnp") + ": log format version 99 is not supported"),
            std::string::npos)
      << newer.err;
  for (const auto* r : {&empty, &newer}) EXPECT_TRUE(one_line(*r)) << r->err;
  // Usage errors: the one line, then the pointer to --help every command prints.
  for (const auto* r : {&bad_window, &bad_time}) {
    EXPECT_EQ(r->err.substr(r->err.find('\n') + 1), "Try 'xtrace convert --help'.\n") << r->err;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("x.json")));
}

}  // namespace
}  // namespace xtrace
