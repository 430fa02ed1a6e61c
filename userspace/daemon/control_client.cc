// The control client and the text it prints.
#include "daemon/control_client.h"

#include <capnp/rpc-twoparty.h>
#include <grp.h>
#include <kj/async-io.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/human_bytes.h"
#include "base/unique_fd.h"

#include "daemon/control_codec.h"
#include "daemon/xtrace_control.capnp.h"

namespace xtrace {
namespace {

using control_schema::CaptureStatus;
using control_schema::Control;


std::string LocalTime(uint64_t realtime_ns) {
  const time_t t = static_cast<time_t>(realtime_ns / 1000000000ull);
  struct tm local {};
  localtime_r(&t, &local);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

std::string Render(CaptureStatus::Reader s) {
  std::ostringstream out;
  if (s.getCapturing()) {
    out << "capturing " << s.getDescribe().cStr() << " since " << LocalTime(s.getStartedRealtimeNs())
        << "\n";
  } else {
    out << "idle (no capture running; output directory " << s.getOutputDir().cStr() << ")\n";
    if (s.getLastResult().size()) out << "last capture: " << s.getLastResult().cStr() << "\n";
    return out.str();
  }
  out << "  file: " << s.getCurrentFile().cStr() << " (" << s.getFilesFinished()
      << " finished before it)\n";
  out << "  events " << s.getEvents() << ", dropped " << s.getDropped() << ", processes "
      << s.getProcessesTracked() << " followed now, " << s.getProcessesTraced()
      << " traced so far, links " << s.getLinks() << ", filter entries " << s.getFilterEntries()
      << "\n";
  for (auto p : s.getPerProcess()) {
    out << "  pid " << p.getPid() << " (" << (p.getComm().size() ? p.getComm().cStr() : "?") << "):";
    for (auto c : p.getRecordsBySource()) out << " " << c.getSource().cStr() << " " << c.getRecords() << ",";
    out << " dropped " << p.getDropped() << "\n";
  }
  return out.str();
}

std::string RemoteMessage(const kj::Exception& e) {
  std::string text = e.getDescription().cStr();
  // kj prefixes errors that crossed the connection; the daemon's own words are what matter.
  static constexpr std::string_view kRemote = "remote exception: ";
  if (const size_t at = text.find(kRemote); at != std::string::npos) text = text.substr(at + kRemote.size());
  return text;
}

// Who the daemon at `path` admits, as the modes say: its socket's group may write to it,
// or, when the socket cannot even be looked at, its directory's group may pass through.
std::string WhoTheSocketAdmits(const std::string& path) {
  struct stat st {};
  gid_t group = 0;
  if (::stat(path.c_str(), &st) == 0) {
    if (st.st_mode & S_IWGRP) group = st.st_gid;
  } else if (::stat(std::filesystem::path(path).parent_path().c_str(), &st) == 0) {
    if (st.st_mode & S_IXGRP) group = st.st_gid;
  } else {
    return "only root or the daemon's --group";
  }
  if (group == 0) return "only root";
  struct group entry {};
  struct group* found = nullptr;
  char buffer[4096];
  getgrgid_r(group, &entry, buffer, sizeof(buffer), &found);
  return "only root or group " + (found ? std::string(found->gr_name) : std::to_string(group));
}

// A blocking connect: a Unix socket connects at once or fails, and its errno says why.
Result<UniqueFd> ConnectToDaemon(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Status::Error("control socket path '" + path + "' is empty or too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::Error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
  const int err = errno;
  if (err == EACCES || err == EPERM)
    return Status::Error("permission denied: cannot connect to " + path + ": " +
                         WhoTheSocketAdmits(path) + " may control the xtrace daemon");
  return Status::Error("cannot reach the xtrace daemon at " + path + ": " + std::strerror(err) +
                       " (is it running?)");
}

}  // namespace

Result<DaemonCaptureState> AskCaptureState(const std::string& socket_path) {
  try {
    auto connected = ConnectToDaemon(socket_path);
    if (!connected.ok()) return connected.status();
    auto io = kj::setupAsyncIo();
    auto connection = io.lowLevelProvider->wrapSocketFd(
        connected->Release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP |
                                  kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC);
    capnp::TwoPartyClient client(*connection);
    auto control = client.bootstrap().castAs<Control>();
    auto reply = control.statusRequest().send().wait(io.waitScope);
    const auto s = reply.getStatus();
    return DaemonCaptureState{s.getCapturing(), s.getStartedRealtimeNs(), s.getOwnerUid(),
                              s.getRequest().getSlurmJob().cStr(), s.getLastResult().cStr()};
  } catch (const kj::Exception& e) {
    return Status::Error(RemoteMessage(e));
  }
}

Result<std::string> WaitForCaptureEnd(const std::string& socket_path, uint64_t timeout_ns) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  while (true) {
    auto state = AskCaptureState(socket_path);
    if (!state.ok()) return state.status();
    if (!state->capturing) {
      // A capture ends with its summary ("xtrace: captured ..."); anything else is its error.
      if (state->last_result.rfind("xtrace:", 0) != 0) return Status::Error(state->last_result);
      return state->last_result.substr(0, state->last_result.find('\n'));
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::Error("the capture still runs after the time it was given");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

Result<std::string> CallDaemon(const std::string& socket_path, ControlVerb verb,
                               const CaptureOptions& request) {
  try {
    auto connected = ConnectToDaemon(socket_path);
    if (!connected.ok()) return connected.status();
    auto io = kj::setupAsyncIo();
    auto connection = io.lowLevelProvider->wrapSocketFd(
        connected->Release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP |
                                  kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC);
    capnp::TwoPartyClient client(*connection);
    auto control = client.bootstrap().castAs<Control>();
    switch (verb) {
      case ControlVerb::kStart: {
        auto call = control.startRequest();
        control_codec::EncodeRequest(request, call.initRequest());
        auto reply = call.send().wait(io.waitScope);
        return "started: " + Render(reply.getStatus());
      }
      case ControlVerb::kStop: {
        auto reply = control.stopRequest().send().wait(io.waitScope);
        const auto s = reply.getStatus();
        return std::string("stopped: ") + s.getLastResult().cStr() + "\n";
      }
      case ControlVerb::kStatus:
        return Render(control.statusRequest().send().wait(io.waitScope).getStatus());
      case ControlVerb::kList: {
        auto reply = control.listRequest().send().wait(io.waitScope);
        std::ostringstream out;
        for (auto f : reply.getFiles())
          out << f.getName().cStr() << "\t" << HumanBytes(f.getBytes()) << "\t"
              << (f.getComplete() ? "complete" : "being written") << "\t"
              << LocalTime(f.getModifiedRealtimeNs()) << "\n";
        return out.str();
      }
    }
    return Status::Error("unknown control verb");
  } catch (const kj::Exception& e) {
    return Status::Error(RemoteMessage(e));
  }
}

}  // namespace xtrace
