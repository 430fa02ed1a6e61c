// Integration tests of `xtrace slurm` over a job whose processes change during the capture:
// processes and steps that join it (the owner check as they join, the deployed epilog), and
// node daemons started by the deployed prolog, stopped on every node by Ctrl-C. Shares its
// cluster and helpers with cluster_integration_test.cc. Real BPF; needs root (skips
// elsewhere, fails under CI).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster_test_support.h"

namespace xtrace {
namespace {

using namespace cluster_test;  // NOLINT(google-build-using-namespace): the shared helpers

// The owner check holds for processes that join the job after the capture began, not only
// for those found at its start: a job's shell, captured through `xtrace slurm`, starts two
// programs once the capture runs. One of the user's own is captured from its first call; the
// other is another user's set-user-ID program (a process of the job, in its scope, whose
// effective uid is that user's): it runs and launches, and nothing of it is recorded. A step
// the user starts in the job meanwhile (no child of anything captured: its tasks are known
// by their SLURM_JOB_ID alone) is captured too. The capture ends by the deployed epilog
// (scripts/deploy/slurm/epilog.sh), run as slurmd runs it: for another job it leaves the
// capture alone, for this one it stops it.
TEST_F(ClusterTest, ProcessesJoiningASlurmJobDuringTheCaptureAreCheckedAsTheyJoin) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ScratchUser other_user("xtrace-test-other");
  ASSERT_EQ(other_user.error(), "");
  ScratchSlurmCluster cluster(dir_ + "/slurm");
  ASSERT_EQ(cluster.error(), "");
  std::filesystem::create_directories(dir_ + "/run");
  const std::string node = cluster.node(0);
  const std::string socket = dir_ + "/run/" + node + ".sock";
  Subprocess daemon({kXtrace, "daemon", "--allow-users", "--socket", socket,
                     "--output-dir", dir_ + "/daemon"},
                    {kSimDriver});
  ASSERT_TRUE(daemon.WaitStderr("listening on", 30s)) << daemon.stderr_text();
  const std::string home = dir_ + "/home";
  std::filesystem::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), kUser, kUser), 0);
  // Where both programs say what they launched: writable by both users.
  const std::string launches = dir_ + "/launches";
  std::filesystem::create_directories(launches);
  ASSERT_EQ(::chmod(launches.c_str(), 01777), 0);
  // The user's program, and another user's copy of it that runs as that user.
  const std::string mine = dir_ + "/late-workload", theirs = dir_ + "/setuid-workload";
  std::filesystem::copy_file(kZeWorkload, mine);
  std::filesystem::copy_file(kZeWorkload, theirs);
  ASSERT_EQ(::chmod(mine.c_str(), 0755), 0);
  ASSERT_EQ(::chown(theirs.c_str(), other_user.uid(), other_user.uid()), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 04755), 0);  // after chown, which clears the bit

  // The job: a shell on the first node that waits for GO, then starts both and waits for them.
  const std::string go = dir_ + "/go";
  const std::string args = " --duration 120 --sleep-us 20000 --launch-log " + launches;
  const std::string script = "echo shell $$; while [ ! -e " + go + " ]; do sleep 0.1; done; " + mine +
                             args + "/mine.tsv & echo mine $!; " + theirs + args +
                             "/theirs.tsv & echo theirs $!; wait";
  Subprocess job(As(kUser, {"/usr/bin/srun", "--nodes=1", "--ntasks=1", "--nodelist=" + node,
                            "--chdir=" + home, "/bin/sh", "-c", script}),
                 {cluster.Env(), kSimDriver, "HOME=" + home});
  ASSERT_TRUE(job.WaitStdout("shell", 60s)) << job.stderr_text() << cluster.Logs();
  const std::string job_ids = cluster.Squeue();
  ASSERT_FALSE(job_ids.empty());
  const std::string jid = job_ids.substr(0, job_ids.find('\n'));

  // The capture: long enough never to end by itself; stopped below once all is seen.
  const std::string out = home + "/trace";
  Subprocess traced(As(kUser, {kXtrace, "slurm", jid, "--duration", "600s", "--start-in", "1s",
                               "-o", out, "--socket", dir_ + "/run/%n.sock"}),
                    {cluster.Env(), "HOME=" + home});
  ASSERT_TRUE(traced.WaitStderr(node + ": capturing job " + jid, 120s))
      << traced.stderr_text() << daemon.stderr_text();

  // Both programs join the job now, and launch.
  std::ofstream(go).close();
  const auto pid_after = [&](const std::string& word) -> uint32_t {
    const auto line = job.WaitStdout(word + " ", 60s);
    return line ? static_cast<uint32_t>(std::stoul(line->substr(line->find(' ') + 1))) : 0;
  };
  const uint32_t mine_pid = pid_after("mine"), theirs_pid = pid_after("theirs");
  ASSERT_GT(mine_pid, 0u) << job.stdout_text() << job.stderr_text();
  ASSERT_GT(theirs_pid, 0u) << job.stdout_text() << job.stderr_text();
  ASSERT_TRUE(WaitFor([&] { return LinesIn(launches + "/mine.tsv") >= 20; }, 120s))
      << job.stdout_text() << job.stderr_text();
  ASSERT_TRUE(WaitFor([&] { return LinesIn(launches + "/theirs.tsv") >= 20; }, 120s))
      << job.stdout_text() << job.stderr_text();
  // The other one is that user's: its effective (and saved) uid.
  std::ifstream status_file("/proc/" + std::to_string(theirs_pid) + "/status");
  std::string line, uids;
  while (std::getline(status_file, line))
    if (line.rfind("Uid:", 0) == 0) uids = line;
  EXPECT_NE(uids.find("\t" + std::to_string(other_user.uid()) + "\t"), std::string::npos) << uids;
  // The user's late program is in the capture, launches and all, before it is stopped.
  const std::regex mine_traced("pid " + std::to_string(mine_pid) + " \\(.*Level Zero [0-9]+");
  std::string status;
  ASSERT_TRUE(WaitFor(
      [&] {
        status = RunCommand(As(kUser, {kXtrace, "ctl", "--socket", socket, "status"}), {}, 60s).out;
        return std::regex_search(status, mine_traced);
      },
      120s))
      << status;
  EXPECT_EQ(status.find("pid " + std::to_string(theirs_pid)), std::string::npos) << status;

  // A new step of the job, on the same node: found by its SLURM_JOB_ID, and traced.
  Subprocess step(As(kUser, {"/usr/bin/srun", "--jobid=" + jid, "--overlap", "--nodes=1", "--ntasks=1",
                             "--nodelist=" + node, "--chdir=" + home, mine, "--duration", "120",
                             "--sleep-us", "20000"}),
                  {cluster.Env(), kSimDriver, "HOME=" + home});
  const uint32_t step_pid = testing::PidFromReadyLine(step.WaitStdout("ready", 120s));
  ASSERT_GT(step_pid, 0u) << step.stderr_text() << cluster.Logs();
  // Its parent is the step's own slurmstepd, root's: no fork rule could have brought it in.
  std::ifstream stat_file("/proc/" + std::to_string(step_pid) + "/stat");
  std::string stat_text((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const std::string after_comm = stat_text.substr(stat_text.rfind(')') + 2);  // "S PPID ..."
  const std::string parent = std::to_string(std::stoul(after_comm.substr(2)));
  std::ifstream parent_comm("/proc/" + parent + "/comm");
  std::string parent_name;
  std::getline(parent_comm, parent_name);
  EXPECT_EQ(parent_name, "slurmstepd") << stat_text;
  const std::regex step_traced("pid " + std::to_string(step_pid) + " \\(.*Level Zero [0-9]+");
  ASSERT_TRUE(WaitFor(
      [&] {
        status = RunCommand(As(kUser, {kXtrace, "ctl", "--socket", socket, "status"}), {}, 60s).out;
        return std::regex_search(status, step_traced);
      },
      120s))
      << status << daemon.stderr_text();

  // The epilog of another job leaves the capture running, as does the epilog of a job of the
  // same id in another cluster; this job's stops it.
  const auto epilog = [&](const std::string& job, const std::string& cluster_name) {
    return RunCommand({"/bin/sh", SLURM_EPILOG},
                      {"SLURM_JOB_ID=" + job, "SLURM_JOB_USER=nobody", "SLURM_CLUSTER_NAME=" + cluster_name,
                       "XTRACE_SOCKET=" + socket,
                       "PATH=" + std::filesystem::path(kXtrace).parent_path().string() +
                           ":/usr/sbin:/usr/bin:/sbin:/bin"},
                      120s);
  };
  const auto capturing = [&] {
    return RunCommand({kXtrace, "ctl", "--socket", socket, "status"}, {}, 60s).out.find("capturing") !=
           std::string::npos;
  };
  EXPECT_EQ(epilog("9" + jid, cluster.name()).exit_code(), 0);
  EXPECT_TRUE(capturing());
  EXPECT_EQ(epilog(jid, cluster.name() + "-other").exit_code(), 0);
  EXPECT_TRUE(capturing());
  EXPECT_EQ(epilog(jid, cluster.name()).exit_code(), 0);
  const auto ended = traced.Wait(180s);
  ASSERT_TRUE(ended.has_value()) << traced.stderr_text();
  EXPECT_TRUE(WIFEXITED(*ended) && WEXITSTATUS(*ended) == 0) << traced.stderr_text();

  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out + "/" + node)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const LogContents c = ReadLogContents(files[0]);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
  EXPECT_GT(c.launches.count(mine_pid) ? c.launches.at(mine_pid).size() : 0, 0u);
  EXPECT_GT(c.launches.count(step_pid) ? c.launches.at(step_pid).size() : 0, 0u);
  EXPECT_EQ(c.launches.count(theirs_pid), 0u);
  EXPECT_EQ(c.api_calls.count(theirs_pid), 0u);
  // It was the user's shell's child until its exec, and may be named as that; never as the
  // program it became.
  if (c.identities.count(theirs_pid)) {
    for (const auto& id : c.identities.at(theirs_pid))
      EXPECT_EQ(id.command_line.find("setuid-workload"), std::string::npos) << id.command_line;
  }
  // Left out, and said so: by the daemon when it happened, in the summary the node's step
  // printed, and in the log's notes, which `xtrace report` shows.
  const std::regex left_out("pid " + std::to_string(theirs_pid) + "( \\([^)]*\\))? (left out: it )?runs as " +
                            other_user.name() + " \\(uid " + std::to_string(other_user.uid()) + "\\)");
  ASSERT_TRUE(daemon.WaitStderr("xtrace: captured", 60s)) << daemon.stderr_text();
  EXPECT_TRUE(std::regex_search(daemon.stderr_text(), left_out)) << daemon.stderr_text();
  EXPECT_TRUE(std::regex_search(traced.stderr_text(), std::regex("1 process left out as another user's: .*" +
                                                                 std::to_string(theirs_pid))))
      << traced.stderr_text();
  ASSERT_TRUE(c.summary.has_value());
  bool noted = false;
  for (const std::string& note : c.summary->notes) noted = noted || std::regex_search(note, left_out);
  EXPECT_TRUE(noted) << ::testing::PrintToString(c.summary->notes);
}

// The node daemons are started by the deployed Slurm prolog (scripts/deploy/slurm/prolog.sh),
// run by slurmd as the job starts on each node: no systemd here, so the prolog starts each
// daemon itself, in a session of its own. Then Ctrl-C on `xtrace slurm` stops the capture on
// every node at once, rather than leaving each to run its --duration: the terminal's SIGINT
// reaches the command (srun runs apart from it), which has every node's step stop the capture
// it started. Each node's log is complete, each daemon idle again, long before the duration.
TEST_F(ClusterTest, ThePrologStartsTheNodeDaemonsAndCtrlCStopsTheCaptureOnEveryNode) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  std::filesystem::create_directories(dir_ + "/run");
  // The site's settings, as a wrapper that runs the deployed prolog (slurmd gives a prolog an
  // environment of its own making).
  const std::string prolog = dir_ + "/prolog";
  std::ofstream(prolog) << "#!/bin/sh\nexport XTRACE=" << kXtrace << " XTRACE_SOCKET=" << dir_
                        << "/run/%n.sock XTRACE_OUTPUT_DIR=" << dir_ << "/daemon-%n XTRACE_GROUP= XTRACE_LOG="
                        << dir_ << "/daemon-%n.log " << kSimDriver << "\nexec /bin/sh " << SLURM_PROLOG << "\n";
  ASSERT_EQ(::chmod(prolog.c_str(), 0755), 0);
  ScratchSlurmCluster cluster(dir_ + "/slurm", "Prolog=" + prolog + "\n");
  ASSERT_EQ(cluster.error(), "");
  const std::vector<std::string> nodes = {cluster.node(0), cluster.node(1)};
  DaemonsByPidFile daemons({dir_ + "/run/" + nodes[0] + ".pid", dir_ + "/run/" + nodes[1] + ".pid"});
  const std::string home = dir_ + "/home";
  std::filesystem::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), kUser, kUser), 0);
  Subprocess job(As(kUser, {"/usr/bin/srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                            "--chdir=" + home, kZeWorkload, "--duration", "300", "--sleep-us", "20000"}),
                 {cluster.Env(), kSimDriver, "HOME=" + home});
  for (int task = 0; task < 2; ++task)
    ASSERT_TRUE(job.WaitStdout("ready", 60s)) << job.stdout_text() << job.stderr_text() << cluster.Logs();
  const std::string job_ids = cluster.Squeue();
  ASSERT_FALSE(job_ids.empty());
  const std::string jid = job_ids.substr(0, job_ids.find('\n'));
  // The prolog ran before the tasks: a daemon answers on each node's socket, in a session of
  // its own (it outlives the prolog), known by its pid file.
  for (const std::string& node : nodes) {
    const pid_t pid = DaemonsByPidFile::Pid(dir_ + "/run/" + node + ".pid");
    ASSERT_GT(pid, 0) << node << "\n" << cluster.Logs();
    EXPECT_EQ(::getsid(pid), pid) << node;
    const RunResult status = RunCommand({kXtrace, "ctl", "--socket", dir_ + "/run/" + node + ".sock", "status"}, {}, 60s);
    EXPECT_EQ(status.out.rfind("idle", 0), 0u) << node << ": " << status.out << status.err;
  }

  const std::string out = home + "/trace";
  Subprocess traced(As(kUser, {kXtrace, "slurm", jid, "--duration", "600s", "--start-in", "1s", "-o", out,
                               "--socket", dir_ + "/run/%n.sock"}),
                    {cluster.Env(), "HOME=" + home});
  // One line per node, in whichever order they come.
  for (size_t n = 0; n < nodes.size(); ++n)
    ASSERT_TRUE(traced.WaitStderr(": capturing job " + jid, 120s)) << traced.stderr_text();
  for (const std::string& node : nodes)
    ASSERT_NE(traced.stderr_text().find(node + ": capturing job " + jid), std::string::npos) << traced.stderr_text();
  // Mid-capture: each node's task has calls in it.
  for (const std::string& node : nodes) {
    std::string status;
    ASSERT_TRUE(WaitFor(
        [&] {
          status = RunCommand(As(kUser, {kXtrace, "ctl", "--socket", dir_ + "/run/" + node + ".sock", "status"}),
                              {}, 60s).out;
          return std::regex_search(status, std::regex("Level Zero [1-9]"));
        },
        120s))
        << node << ": " << status;
  }
  // As a terminal sends it: to the command's whole process group.
  const auto interrupted = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(-traced.pid(), SIGINT), 0);
  const auto ended = traced.Wait(180s);
  ASSERT_TRUE(ended.has_value()) << traced.stderr_text();
  const auto took = std::chrono::steady_clock::now() - interrupted;
  EXPECT_TRUE(WIFEXITED(*ended) && WEXITSTATUS(*ended) == 0) << traced.stderr_text();
  EXPECT_LT(took, 170s);  // the 600 s duration, cut short
  const std::string& said = traced.stderr_text();
  EXPECT_NE(said.find("xtrace slurm: Interrupt: stopping the capture on every node"), std::string::npos) << said;
  EXPECT_NE(said.find("2 log(s) from 2 node(s) in " + out + ", stopped early on every node"), std::string::npos)
      << said;
  for (const std::string& node : nodes) {
    EXPECT_NE(said.find("xtrace slurm: " + node + ": stopped early: xtrace: captured"), std::string::npos) << said;
    const RunResult status =
        RunCommand(As(kUser, {kXtrace, "ctl", "--socket", dir_ + "/run/" + node + ".sock", "status"}), {}, 60s);
    EXPECT_EQ(status.out.rfind("idle", 0), 0u) << status.out;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(out + "/" + node)) files.push_back(e.path());
    ASSERT_EQ(files.size(), 1u) << node;
    const LogContents c = ReadLogContents(files[0]);
    ASSERT_TRUE(c.readable) << c.error;
    EXPECT_TRUE(c.complete) << files[0];
    size_t launches = 0;
    for (const auto& [pid, l] : c.launches) launches += l.size();
    EXPECT_GT(launches, 0u) << files[0];
  }
}

}  // namespace
}  // namespace xtrace
