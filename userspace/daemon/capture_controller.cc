// The daemon's capture thread and its state.
#include "daemon/capture_controller.h"

#include <time.h>

#include <cstdio>
#include <memory>

#include "base/thread_nice.h"
#include "capture/discovery/capture_scope.h"
#include "capture/discovery/process_owner.h"
#include "daemon/fs_identity.h"
#include "report/top_kernels.h"

namespace xtrace {
namespace {

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

std::string DescribeDaemonCapture(const CaptureOptions& request) {
  std::string line = "xtrace ctl start";
  for (uint32_t pid : request.pids) line += " --pid " + std::to_string(pid);
  if (!request.slurm_job.empty()) line += " --slurm-job " + request.slurm_job;
  if (!request.slurm_node.empty()) line += " --slurm-node " + request.slurm_node;
  if (!request.slurm_cluster.empty()) line += " --slurm-cluster " + request.slurm_cluster;
  if (!request.output_dir.empty()) line += " -o " + request.output_dir;
  if (request.client_pid) line += " (asked the daemon from pid " + std::to_string(request.client_pid) + ")";
  return line;
}

CaptureController::CaptureController(DaemonConfig config) : config_(std::move(config)) {}

CaptureController::~CaptureController() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void CaptureController::JoinFinished() {
  if (!running_ && thread_.joinable()) thread_.join();
}

Status CaptureController::Start(const CaptureOptions& request, const Requester& who) {
  CaptureOptions wanted = request;
  if (!who.privileged) {
    const std::string self = DescribeUser(who.uid);
    if (!request.user.empty()) {
      auto uid = ResolveUser(request.user);
      if (!uid.ok() || *uid != who.uid)
        return Status::Error("permission denied: " + self + " may capture only its own "
                             "processes, not those of user " + request.user);
    }
    // The capture's threads are the daemon's, run as root: a user may have them yield more
    // (a higher value), not take more than a capture takes by default.
    if (request.nice && *request.nice < kCaptureNice)
      return Status::Error("permission denied: " + self + " may not ask for --nice " +
                           std::to_string(*request.nice) + " (" + std::to_string(kCaptureNice) +
                           " at the lowest, what captures take by default)");
    wanted.user = std::to_string(who.uid);
    if (request.output_dir.empty())
      return Status::Error("a capture for " + self + " needs --output-dir DIR: its files are "
                           "written there as " + self + " (the daemon's own directory is root's)");
  }
  if (!wanted.output_dir.empty() && wanted.output_dir.front() != '/')
    return Status::Error("--output-dir " + wanted.output_dir + ": give an absolute path (the "
                         "daemon does not share the client's working directory)");
  wanted.client_pid = who.pid;
  if (wanted.xtrace_command_line.empty()) wanted.xtrace_command_line = DescribeDaemonCapture(wanted);

  std::unique_lock lock(mu_);
  JoinFinished();
  if (running_)
    return Status::Error("a capture is already running (" +
                         (who.privileged || status_.owner_uid == who.uid ? status_.describe
                                                                         : "another user's") +
                         "); stop it first");
  auto scope = ResolveCaptureScope(wanted);
  if (!scope.ok()) return scope.status();

  options_ = wanted;
  options_.command.clear();
  options_.output_path.clear();
  if (options_.output_dir.empty()) options_.output_dir = config_.output_dir;
  last_dir_[who.uid] = options_.output_dir;
  options_.rotation = config_.rotation;
  options_.quiet = config_.quiet;
  options_.stop_requested = &stop_;
  options_.summary_tap = [] { return std::make_unique<report::TopKernels>(); };
  options_.on_progress = [this](const CaptureProgress& p) {
    std::lock_guard guard(mu_);
    status_.progress = p;
    started_ = true;
    changed_.notify_all();
  };
  stop_ = false;
  running_ = true;
  started_ = false;
  status_ = ControllerStatus();
  status_.capturing = true;
  status_.owner_uid = who.uid;
  status_.request = wanted;
  status_.describe = scope->Describe();
  status_.started_realtime_ns = RealtimeNs();
  // Root's files stay root's, and the daemon's own directory is written as root; anybody
  // else's capture into a directory they named is written as them.
  const bool as_requester = !wanted.output_dir.empty() && who.uid != 0;
  thread_ = std::thread([this, who, as_requester] { Run(who, as_requester); });
  changed_.wait(lock, [this] { return started_ || !running_; });
  if (!running_) {
    thread_.join();
    return Status::Error(status_.last_result);
  }
  return Status::Ok();
}

void CaptureController::Run(const Requester& who, bool as_requester) {
  Result<CaptureReport> report = Status::Error("not started");
  if (Status st = as_requester ? AssumeFsIdentity(who.uid, who.gid, who.groups) : Status::Ok();
      !st.ok())
    report = st;
  else
    report = RunCapture(options_);
  // A capture that fails on its own (a full disk) is said at once, not only to `ctl status`.
  if (!report.ok()) std::fprintf(stderr, "xtrace daemon: %s\n", report.status().message().c_str());
  std::lock_guard guard(mu_);
  status_.capturing = false;
  status_.last_result = report.ok() ? report->summary_text : report.status().message();
  if (report.ok()) status_.progress.per_process = report->per_process;
  running_ = false;
  changed_.notify_all();
}

Result<ControllerStatus> CaptureController::Stop(const Requester& who) {
  std::unique_lock lock(mu_);
  if (!running_) {
    JoinFinished();
    return Status::Error("no capture is running");
  }
  if (!who.privileged && status_.owner_uid != who.uid)
    return Status::Error("permission denied: the running capture is not " +
                         DescribeUser(who.uid) + "'s");
  stop_ = true;
  changed_.wait(lock, [this] { return !running_; });
  JoinFinished();
  return status_;
}

ControllerStatus CaptureController::Snapshot() {
  std::lock_guard guard(mu_);
  JoinFinished();
  return status_;
}

std::vector<CaptureFileInfo> CaptureController::Files(const Requester& who) {
  if (who.privileged) return ListCaptureFiles(config_.output_dir);
  std::string dir;
  {
    std::lock_guard guard(mu_);
    auto it = last_dir_.find(who.uid);
    if (it == last_dir_.end()) return {};
    dir = it->second;
  }
  return ListCaptureFiles(dir);
}

}  // namespace xtrace
