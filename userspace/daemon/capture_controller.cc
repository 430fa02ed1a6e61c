// The daemon's capture thread and its state.
#include "daemon/capture_controller.h"

#include <time.h>

#include <cstdio>

#include "capture/capture_scope.h"

namespace xtrace {
namespace {

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

CaptureController::CaptureController(DaemonConfig config) : config_(std::move(config)) {}

CaptureController::~CaptureController() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void CaptureController::JoinFinished() {
  if (!running_ && thread_.joinable()) thread_.join();
}

Status CaptureController::Start(const CaptureOptions& request) {
  std::unique_lock lock(mu_);
  JoinFinished();
  if (running_) return Status::Error("a capture is already running (" + status_.describe + "); stop it first");
  auto scope = ResolveCaptureScope(request);
  if (!scope.ok()) return scope.status();

  options_ = request;
  options_.command.clear();
  options_.output_path.clear();
  options_.output_dir = config_.output_dir;
  options_.rotation = config_.rotation;
  options_.quiet = config_.quiet;
  options_.stop_requested = &stop_;
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
  status_.request = request;
  status_.describe = scope->Describe();
  status_.started_realtime_ns = RealtimeNs();
  thread_ = std::thread([this] { Run(); });
  changed_.wait(lock, [this] { return started_ || !running_; });
  if (!running_) {
    thread_.join();
    return Status::Error(status_.last_result);
  }
  return Status::Ok();
}

void CaptureController::Run() {
  auto report = RunCapture(options_);
  // A capture that fails on its own (a full disk) is said at once, not only to `ctl status`.
  if (!report.ok()) std::fprintf(stderr, "xtrace daemon: %s\n", report.status().message().c_str());
  std::lock_guard guard(mu_);
  status_.capturing = false;
  status_.last_result = report.ok() ? report->summary_text : report.status().message();
  if (report.ok()) status_.progress.per_process = report->per_process;
  running_ = false;
  changed_.notify_all();
}

Result<ControllerStatus> CaptureController::Stop() {
  std::unique_lock lock(mu_);
  if (!running_) {
    JoinFinished();
    return Status::Error("no capture is running");
  }
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

std::vector<CaptureFileInfo> CaptureController::Files() const {
  return ListCaptureFiles(config_.output_dir);
}

}  // namespace xtrace
