// Tests for correlate/process_identities: a process is introduced once and again at each exec
// after that, in order and with the exec's time; stale exec records change nothing.
#include "correlate/process_identities.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xtrace {
namespace {

class LiveProcesses : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    if (comm.empty()) return std::nullopt;
    return ProcessDetails{comm, comm + " --live", pid, "/pods/a", "cid"};
  }
  void Named(uint32_t pid, std::string_view name) override {
    named.push_back(std::to_string(pid) + " " + std::string(name));
  }
  std::string comm;
  std::vector<std::string> named;  // what the inspector was told, in order
};

class Written : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (const auto* p = std::get_if<ProcessInfo>(&e)) infos.push_back(*p);
  }
  std::vector<ProcessInfo> infos;
};

ProcessDetails Exec(std::string comm) { return ProcessDetails{comm, comm + " arg", 0, "", ""}; }

struct ProcessIdentitiesTest : ::testing::Test {
  StringTable strings;
  Written sink;
  LiveProcesses live;
  uint64_t now = 1'000;
  ProcessIdentities ids{strings, sink, live, [this] { return now; }};

  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const ProcessInfo& p : sink.infos)
      out.push_back(std::string(strings.Get(p.comm)) + "@" + std::to_string(p.exec_ns));
    return out;
  }
};

TEST_F(ProcessIdentitiesTest, AGivenProcessIsIntroducedByItsExecAndFollowsEveryLaterOne) {
  live.comm = "python3";  // /proc may already show a later exec: the record says who it was
  EXPECT_TRUE(ids.Execed(7, 100, Exec("env"), true));
  EXPECT_EQ(strings.Get(sink.infos[0].cgroup), "/pods/a") << "the cgroup, which exec keeps, from /proc";
  EXPECT_FALSE(ids.Introduce(7)) << "already introduced by its exec record";
  EXPECT_FALSE(ids.Execed(7, 200, Exec("python3"), true));
  EXPECT_EQ(Names(), (std::vector<std::string>{"env@0", "python3@200"}));
  EXPECT_EQ(strings.Get(sink.infos[1].command_line), "python3 arg");
  EXPECT_EQ(sink.infos[1].ns_pid, 7u) << "a record without a namespace pid keeps the pid";
}

TEST_F(ProcessIdentitiesTest, AnExecBeforeTheProcReadIsAlreadyInIt) {
  live.comm = "python3";
  now = 500;
  EXPECT_TRUE(ids.Introduce(7));
  ids.Execed(7, 100, Exec("env"), false);      // before the read: stale
  ids.Execed(7, 400, Exec("python3"), false);  // likewise
  ids.Execed(7, 600, Exec("worker"), false);
  EXPECT_EQ(Names(), (std::vector<std::string>{"python3@0", "worker@600"}));
  EXPECT_EQ(strings.Get(sink.infos[1].cgroup), "/pods/a") << "an exec keeps the cgroup";
  EXPECT_EQ(strings.Get(sink.infos[1].container_id), "cid");
}

TEST_F(ProcessIdentitiesTest, AnExecIntoTheSameIdentityWritesNothing) {
  live.comm = "env";
  ids.Introduce(7);
  ids.Execed(7, 2'000, ProcessDetails{"env", "env --live", 7, "", ""}, false);
  EXPECT_EQ(Names(), (std::vector<std::string>{"env@0"}));
}

TEST_F(ProcessIdentitiesTest, AnUnknownProcessIsLeftToItsFirstRecordUnlessGiven) {
  EXPECT_FALSE(ids.Execed(8, 100, Exec("ls"), false));
  EXPECT_TRUE(sink.infos.empty()) << "discovery sees every exec on the machine";
  EXPECT_FALSE(ids.Known(8));
}

TEST_F(ProcessIdentitiesTest, AForgottenPidIsIntroducedAfresh) {
  live.comm = "app";
  ids.Introduce(7);
  ids.Forget(7);
  live.comm = "";
  EXPECT_TRUE(ids.Introduce(7, "shell"));
  EXPECT_EQ(Names(), (std::vector<std::string>{"app@0", "shell@0"}));
}

TEST_F(ProcessIdentitiesTest, EveryNameWrittenIsToldToTheInspector) {
  live.comm = "bash";
  EXPECT_TRUE(ids.Introduce(7));
  EXPECT_FALSE(ids.Execed(7, 2'000, Exec("python3"), true));
  live.comm = "";
  EXPECT_TRUE(ids.Introduce(8, "gone"));
  EXPECT_EQ(live.named, (std::vector<std::string>{"7 bash", "7 python3", "8 gone"}));
  EXPECT_EQ(Names(), (std::vector<std::string>{"bash@0", "python3@2000", "gone@0"}));
}

}  // namespace
}  // namespace xtrace
