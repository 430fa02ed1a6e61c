// Integration test of a capture made from inside a pid namespace of its own, as in a
// container: every record the BPF programs emit must number the traced process as that
// namespace does, so the process is one process in the log whichever source saw it.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>

#include "capture_reader.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::RootTest;
using testing::RunCommand;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
const std::string kUnshare = "/usr/bin/unshare";  // util-linux; Subprocess does no PATH search

// Events per pid and kind ("ApiCall", "DrmIoctl", ...), for every event that names a process.
struct PidsInLog {
  std::map<uint32_t, std::map<std::string, int>> kinds_by_pid;
  std::map<uint32_t, uint32_t> ns_pid_by_pid;  // from ProcessInfo
  bool complete = false;
};

template <typename T>
const char* KindName() {
  if constexpr (std::is_same_v<T, ProcessInfo>) return "ProcessInfo";
  else if constexpr (std::is_same_v<T, ThreadInfo>) return "ThreadInfo";
  else if constexpr (std::is_same_v<T, KernelCreate>) return "KernelCreate";
  else if constexpr (std::is_same_v<T, KernelLaunch>) return "KernelLaunch";
  else if constexpr (std::is_same_v<T, ApiCall>) return "ApiCall";
  else if constexpr (std::is_same_v<T, DrmIoctl>) return "DrmIoctl";
  else if constexpr (std::is_same_v<T, DrmFile>) return "DrmFile";
  else if constexpr (std::is_same_v<T, DrmFenceSignal>) return "DrmFenceSignal";
  else return "other";
}

PidsInLog ReadPids(const std::string& path) {
  const testing::Capture capture = testing::ReadWholeCapture(path);
  PidsInLog log;
  for (const Event& e : capture.all) {
    std::visit(
        [&](const auto& ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (requires { ev.pid; }) {
            // Device memory totals belong to no process (pid 0).
            if (ev.pid != 0) ++log.kinds_by_pid[ev.pid][KindName<T>()];
          }
          if constexpr (std::is_same_v<T, ProcessInfo>) log.ns_pid_by_pid[ev.pid] = ev.ns_pid;
        },
        e);
  }
  log.complete = capture.complete;
  return log;
}

std::string Describe(const PidsInLog& log) {
  std::ostringstream s;
  for (const auto& [pid, kinds] : log.kinds_by_pid) {
    s << "pid " << pid << ":";
    for (const auto& [kind, n] : kinds) s << " " << kind << "=" << n;
    s << "\n";
  }
  return s.str();
}

class PidNamespaceIntegrationTest : public RootTest {
 protected:
  PidNamespaceIntegrationTest() : RootTest("pid namespace capture", "pidns") {}
};

// xtrace runs as pid 1 of a new pid namespace and records the workload it starts there: the
// workload's Level Zero calls (generic and dedicated programs), its DRM ioctls and its thread
// names all carry the pid the workload has in that namespace, never its pid on the host.
TEST_F(PidNamespaceIntegrationTest, TracedProcessIsOneProcessNumberedAsTheNamespaceDoes) {
  const std::string out = Path("pidns.capnp");
  auto r = RunCommand({kUnshare, "--pid", "--fork", "--mount-proc", kXtrace, "record", "-o", out,
                       "--", kWorkload, "--iterations", "4", "--threads", "2"},
                      {kSimDriver}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("captured 40 kernel launches"), std::string::npos) << r.err;

  // The workload says its own pid, as getpid() gives it inside the namespace.
  const auto ready = r.out.find("ready ");
  ASSERT_NE(ready, std::string::npos) << r.out;
  const uint32_t pid = static_cast<uint32_t>(std::stoul(r.out.substr(ready + 6)));
  ASSERT_GT(pid, 1u);
  ASSERT_LT(pid, 100u) << "the workload should have a small pid in a fresh namespace";

  const PidsInLog log = ReadPids(out);
  EXPECT_TRUE(log.complete);
  ASSERT_EQ(log.kinds_by_pid.size(), 1u) << "the workload appears as several processes:\n"
                                         << Describe(log);
  ASSERT_EQ(log.kinds_by_pid.begin()->first, pid) << Describe(log);
  const auto& kinds = log.kinds_by_pid.begin()->second;
  for (const char* kind :
       {"ProcessInfo", "ThreadInfo", "KernelCreate", "KernelLaunch", "ApiCall", "DrmIoctl"})
    EXPECT_GT(kinds.count(kind) ? kinds.at(kind) : 0, 0) << kind << " missing:\n" << Describe(log);
  EXPECT_EQ(kinds.at("KernelLaunch"), 40) << Describe(log);
  ASSERT_EQ(log.ns_pid_by_pid.count(pid), 1u);
  EXPECT_EQ(log.ns_pid_by_pid.at(pid), pid);
}

}  // namespace
}  // namespace xtrace
