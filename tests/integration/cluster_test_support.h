// What the cluster tests share (cluster_integration_test.cc, cluster_slurm_integration_test.cc):
// the programs they run, reading reports, a scratch user and a Slurm cluster of the test's
// own, and the fixture.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "log_contents.h"
#include "process_resources.h"
#include "root_fixture.h"
#include "subprocess.h"


namespace xtrace::cluster_test {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::LogContents;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kMpiJob = MPI_GPU_JOB_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
const std::string kZeWorkload = ZE_WORKLOAD_BIN;
// The ITT collector in the ranks' environment from their start, as an ITT client needs it.
const std::string kWithCollector = "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB;

// `xtrace report ARGS --format json`, parsed.
inline json ReportJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kXtrace, "report"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const RunResult r = RunCommand(argv, {}, 120s);
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

// The row for `name` of a spread table across ranks: "ranks" (per kernel) or "range_ranks"
// (per ITT range, named domain/name); null if none.
inline json SpreadRow(const json& report, const std::string& name, const std::string& table = "ranks") {
  if (!report.contains("across_logs") || !report["across_logs"].contains(table)) return nullptr;
  for (const json& row : report["across_logs"][table])
    if (row.value("name", "") == name) return row;
  return nullptr;
}

// The ranges the MPI job's ranks annotate each step with (mpi_gpu_job.cc), as range_ranks
// names them.
const std::string kComputeRange = "mpi_gpu_job/compute";
const std::string kBroadcastRange = "mpi_gpu_job/broadcast";

// The per-range straggler of a job whose rank `slow` computes longer: its "compute" range
// (which waits for its kernels) is the slowest, by more than the median. Its size is no
// assertion, for the reason the kernels' is none (see the Slurm test); the rank named is.
inline void ExpectRangeStraggler(const json& report, const std::string& slow, size_t ranks) {
  const json compute = SpreadRow(report, kComputeRange, "range_ranks");
  ASSERT_FALSE(compute.is_null()) << report["across_logs"].dump();
  EXPECT_EQ(compute["logs"], ranks) << compute.dump();
  EXPECT_EQ(compute["slowest"], slow) << compute.dump();
  EXPECT_EQ(compute["outlier"], slow) << compute.dump();
  EXPECT_GT(compute["excess_ns"].get<double>(), 0.0) << compute.dump();
  const json broadcast = SpreadRow(report, kBroadcastRange, "range_ranks");
  ASSERT_FALSE(broadcast.is_null()) << report["across_logs"].dump();
  EXPECT_EQ(broadcast["logs"], ranks) << broadcast.dump();
}

// `xtrace convert LOGS -o OUT` (Chrome JSON), then: each GPU queue track of the trace holds
// the operations of one process and is named once, and there are `queues` of them. Captures
// of one machine number their queue tracks each from 1: a merged trace that took two of them
// for one capture drew two ranks' queues on one track, overlapping, under the last one's name.
inline void ExpectAGpuTrackPerQueue(const std::vector<std::string>& logs, const std::string& out,
                                    size_t queues) {
  std::vector<std::string> argv = {kXtrace, "convert"};
  argv.insert(argv.end(), logs.begin(), logs.end());
  argv.insert(argv.end(), {"-o", out});
  const RunResult r = RunCommand(argv, {}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  std::ifstream in(out);
  const json trace = json::parse(in, nullptr, false);
  ASSERT_TRUE(trace.is_object()) << out;
  constexpr uint32_t kFirstGpuPid = 0x40000000;
  std::map<std::pair<uint32_t, uint32_t>, std::set<std::string>> names;
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> submitters;
  for (const json& e : trace["traceEvents"]) {
    if (!e.contains("pid") || e["pid"].get<uint32_t>() < kFirstGpuPid || !e.contains("tid")) continue;
    const std::pair<uint32_t, uint32_t> track{e["pid"].get<uint32_t>(), e["tid"].get<uint32_t>()};
    if (e["ph"] == "M" && e["name"] == "thread_name") names[track].insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X" && e["args"].contains("pid")) submitters[track].insert(e["args"]["pid"].get<uint32_t>());
  }
  EXPECT_EQ(names.size(), queues);
  for (const auto& [track, named] : names)
    EXPECT_EQ(named.size(), 1u) << "GPU track " << track.first << "/" << track.second << " named "
                                << ::testing::PrintToString(named);
  EXPECT_EQ(submitters.size(), queues);
  for (const auto& [track, pids] : submitters)
    EXPECT_EQ(pids.size(), 1u) << "GPU track " << track.first << "/" << track.second
                               << " holds the operations of pids " << ::testing::PrintToString(pids);
}

constexpr uid_t kUser = 65534;  // nobody: the job's owner, who traces it

// Another user, with a job of their own: slurmd runs only tasks of users it can look up, so a
// real account, made for the test and removed with the object.
class ScratchUser {
 public:
  explicit ScratchUser(const std::string& name) : name_(name) {
    RunCommand({"/usr/sbin/userdel", name_});  // left by a test that was killed
    const RunResult made = RunCommand({"/usr/sbin/useradd", "--system", "--no-create-home",
                                       "--shell", "/usr/sbin/nologin", name_});
    if (made.exit_code() != 0) {
      error_ = "useradd " + name_ + ": " + made.err;
      return;
    }
    uid_ = static_cast<uid_t>(std::stoul(RunCommand({"/usr/bin/id", "-u", name_}).out));
  }
  ~ScratchUser() {
    if (error_.empty()) RunCommand({"/usr/sbin/userdel", name_});
  }
  uid_t uid() const { return uid_; }
  const std::string& name() const { return name_; }
  const std::string& error() const { return error_; }

 private:
  std::string name_, error_;
  uid_t uid_ = 0;
};

// argv run as `uid` (its own group, no supplementary groups).
inline std::vector<std::string> As(uid_t uid, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                             "--regid=" + std::to_string(uid), "--clear-groups"});
  return argv;
}

// Kills every process whose environment holds `entry` (e.g. SLURM_CONF=...): what a cluster of
// the test's own left running (slurmstepd, job tasks), whatever became of their parents.
inline void KillProcessesWithEnv(const std::string& entry) {
  for (int round = 0; round < 3; ++round) {
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (pid == getpid()) continue;
      std::ifstream in(e.path() / "environ", std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const std::string env = text.str();
      size_t at = 0;
      while (at < env.size()) {
        const size_t end = std::min(env.find('\0', at), env.size());
        if (env.compare(at, end - at, entry) == 0) kill(pid, SIGKILL);
        at = end + 1;
      }
    }
    std::this_thread::sleep_for(200ms);
  }
}

// Whether a TCP port can be bound now: nothing listens on it, and no connection, not even one
// in TIME_WAIT, has it as its local port.
inline bool PortFree(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool free = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return free;
}

// The first of three consecutive free ports for slurmctld and the two slurmd, starting from
// one that depends on this test run's pid (two runs at once start apart). All below the
// kernel's ephemeral range (ip_local_port_range, 32768-60999 by default): a port in it is one
// any outgoing connection on the machine may take at any time (an MPI job's TCP, another
// test's client), and slurmctld then dies at its start with "Address already in use". Away
// from a real cluster's 6817-6819 too.
inline int FreeSlurmPortBase() {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  constexpr int kFirst = 10000;
  const int slots = std::max(1, (ephemeral_low - kFirst) / 3);
  for (int i = 0; i < slots; ++i) {
    const int base = kFirst + static_cast<int>((static_cast<unsigned>(getpid()) + i) % slots) * 3;
    if (PortFree(base) && PortFree(base + 1) && PortFree(base + 2)) return base;
  }
  return kFirst + static_cast<int>(static_cast<unsigned>(getpid()) % slots) * 3;
}

// A Slurm cluster of the test's own on this machine: munge, slurmctld and two node names
// (slurmd -N NODE, each on its own port, as Debian's slurmd allows), with PMIx for MPI jobs.
// Its cluster name and node names are this test run's own (its pid is in them): another run
// of the test at the same time has jobs of the same ids on this host, and neither may capture
// the other's, whether it tells jobs apart by cluster (SLURM_CLUSTER_NAME) or, as older
// builds did, by job id and node name alone. Everything runs as a child of the test and is stopped by the destructor: jobs are
// cancelled, the daemons terminated, and whatever still carries this cluster's SLURM_CONF in
// its environment killed. error() is empty once the nodes are idle.
class ScratchSlurmCluster {
 public:
  // `extra_conf`: lines added to slurm.conf (a Prolog=...).
  explicit ScratchSlurmCluster(const std::string& dir, const std::string& extra_conf = "")
      : dir_(dir),
        extra_conf_(extra_conf),
        conf_(dir + "/slurm.conf"),
        name_("xt-" + std::to_string(getpid())),
        nodes_{"x" + std::to_string(getpid()) + "n1", "x" + std::to_string(getpid()) + "n2"} {
    error_ = Start();
  }
  ~ScratchSlurmCluster() {
    if (slurmctld_) {
      RunCommand({"/usr/bin/scancel", "--quiet", "--partition=xt"}, {Env()}, 30s);
      for (int i = 0; i < 50 && !Squeue().empty(); ++i) std::this_thread::sleep_for(200ms);
    }
    for (auto* p : {&slurmd_[1], &slurmd_[0], &slurmctld_, &munged_}) {
      if (!*p) continue;
      (*p)->Signal(SIGTERM);
      (*p)->Wait(10s);
      p->reset();
    }
    KillProcessesWithEnv(Env());
  }
  const std::string& error() const { return error_; }
  std::string Env() const { return "SLURM_CONF=" + conf_; }
  const std::string& name() const { return name_; }
  // The first node, or the second.
  const std::string& node(int n) const { return nodes_[n]; }
  std::string Squeue(const std::string& format = "%i") const {
    return RunCommand({"/usr/bin/squeue", "--noheader", "--format=" + format}, {Env()}, 30s).out;
  }
  std::string Logs() const {
    std::string all;
    for (const std::string& f : {std::string("slurmctld.log"), "slurmd-" + nodes_[0] + ".log",
                                 "slurmd-" + nodes_[1] + ".log", std::string("munged.log")}) {
      std::ifstream in(dir_ + "/" + f);
      std::stringstream text;
      text << in.rdbuf();
      all += std::string("--- ") + f + "\n" + text.str();
    }
    return all;
  }

 private:
  std::string Start() {
    const std::string munge = dir_ + "/munge", sock = dir_ + "/munge-sock";
    for (const std::string& d : {munge, sock, dir_ + "/state", dir_ + "/spool", dir_ + "/tmp/" + nodes_[0],
                                 dir_ + "/tmp/" + nodes_[1]})
      std::filesystem::create_directories(d);
    ::chmod(dir_.c_str(), 0755);
    for (const std::string& node : nodes_) ::chmod((dir_ + "/tmp/" + node).c_str(), 01777);
    const RunResult munge_user = RunCommand({"/usr/bin/id", "-u", "munge"});
    if (munge_user.exit_code() != 0) return "no munge user: is munge installed (scripts/install-deps.sh)?";
    const uid_t munge_uid = static_cast<uid_t>(std::stoul(munge_user.out));
    // munged wants a key of its own user's, readable by nobody else, in a directory of its own.
    std::string key(1024, '\0');
    std::random_device random;
    for (char& c : key) c = static_cast<char>(random());
    std::ofstream(munge + "/munge.key", std::ios::binary) << key;
    for (const std::string& p : {munge, sock, munge + "/munge.key"})
      if (::chown(p.c_str(), munge_uid, munge_uid) != 0) return p + ": chown: " + std::strerror(errno);
    ::chmod(munge.c_str(), 0700);
    ::chmod(sock.c_str(), 0755);
    ::chmod((munge + "/munge.key").c_str(), 0400);
    munged_ = std::make_unique<Subprocess>(std::vector<std::string>{
        "/usr/bin/setpriv", "--reuid=" + std::to_string(munge_uid), "--regid=" + std::to_string(munge_uid),
        "--clear-groups", "/usr/sbin/munged", "--foreground", "--force", "--key-file=" + munge + "/munge.key",
        "--socket=" + sock + "/munge.socket", "--pid-file=" + munge + "/munged.pid",
        "--log-file=" + dir_ + "/munged.log", "--seed-file=" + munge + "/seed"});
    for (int i = 0; i < 100 && !std::filesystem::exists(sock + "/munge.socket"); ++i)
      std::this_thread::sleep_for(100ms);
    if (!std::filesystem::exists(sock + "/munge.socket")) return "munged did not start";

    const int base = FreeSlurmPortBase();
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::ofstream conf(conf_);
    conf << "ClusterName=" << name_ << "\nSlurmctldHost=" << host << "(127.0.0.1)\n"
         << "SlurmctldPort=" << base << "\n"
         << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << sock << "/munge.socket\n"
         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
         << "SlurmUser=root\nSlurmdUser=root\nSelectType=select/cons_tres\n"
         // Cores alone: counting memory would give the first job all of it.
         << "SelectTypeParameters=CR_Core\n"
         << "SchedulerType=sched/builtin\nAccountingStorageType=accounting_storage/none\n"
         << "JobCompType=jobcomp/none\nMpiDefault=none\nReturnToService=2\n" << extra_conf_
         << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool/%n\n"
         // PMIx makes its client directory under TmpFS: one per node name, or the two slurmd
         // of this host would share (and refuse) it.
         << "TmpFS=" << dir_ << "/tmp/%n\n"
         << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd-%n.pid\n"
         << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_ << "/slurmd-%n.log\n"
         << "NodeName=" << nodes_[0] << " NodeHostname=" << host << " NodeAddr=127.0.0.1 Port=" << base + 1 << " CPUs=2\n"
         << "NodeName=" << nodes_[1] << " NodeHostname=" << host << " NodeAddr=127.0.0.1 Port=" << base + 2 << " CPUs=2\n"
         // FORCE: two users' jobs share the two nodes' CPUs, as on an oversubscribed node.
         << "PartitionName=xt Nodes=" << nodes_[0] << "," << nodes_[1] << " Default=YES OverSubscribe=FORCE:4 MaxTime=INFINITE State=UP\n";
    conf.close();
    slurmctld_ = std::make_unique<Subprocess>(
        std::vector<std::string>{"/usr/sbin/slurmctld", "-D", "-f", conf_}, std::vector<std::string>{Env()});
    for (int n = 0; n < 2; ++n)
      slurmd_[n] = std::make_unique<Subprocess>(
          std::vector<std::string>{"/usr/sbin/slurmd", "-D", "-N", nodes_[n], "-f", conf_},
          std::vector<std::string>{Env()});
    // Bounded by the clock, not by a count of looks: sinfo itself waits seconds for a
    // controller that does not answer. A daemon that exited is not waited for at all.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (slurmctld_->Wait(0ms)) return "slurmctld exited at its start:\n" + Logs();
      for (int n = 0; n < 2; ++n)
        if (slurmd_[n]->Wait(0ms)) return "slurmd " + nodes_[n] + " exited at its start:\n" + Logs();
      const RunResult nodes =
          RunCommand({"/usr/bin/sinfo", "--noheader", "--Node", "--format=%T"}, {Env()}, 20s);
      if (nodes.exit_code() == 0 && nodes.out == "idle\nidle\n") return "";
      std::this_thread::sleep_for(200ms);
    }
    return "the nodes did not become idle within 60 s:\n" + Logs();
  }

  std::string dir_, extra_conf_, conf_, name_;
  std::string nodes_[2];
  std::string error_;
  std::unique_ptr<Subprocess> munged_, slurmctld_, slurmd_[2];
};

class ClusterTest : public RootTest {
 protected:
  ClusterTest() : RootTest("cluster", "cluster") {}
};

// Lines in `path` (0 if it cannot be read yet).
inline size_t LinesIn(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Waits, at most `bound`, for `done()`; whether it came.
inline bool WaitFor(const std::function<bool()>& done, std::chrono::seconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
  return true;
}

// Daemons that a test did not start itself (the prolog did), known by their pid files: asked
// to stop (SIGTERM, which finishes the open capture file) when the object goes, then killed.
class DaemonsByPidFile {
 public:
  explicit DaemonsByPidFile(std::vector<std::string> pid_files) : pid_files_(std::move(pid_files)) {}
  ~DaemonsByPidFile() {
    for (const std::string& file : pid_files_) {
      const pid_t pid = Pid(file);
      if (pid <= 0) continue;
      ::kill(pid, SIGTERM);
      for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(100ms);
      ::kill(pid, SIGKILL);
    }
  }
  // The pid in `file`, 0 if there is none.
  static pid_t Pid(const std::string& file) {
    std::ifstream in(file);
    long pid = 0;
    in >> pid;
    return static_cast<pid_t>(pid);
  }

 private:
  std::vector<std::string> pid_files_;
};

}  // namespace xtrace::cluster_test
