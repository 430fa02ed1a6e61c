// Control socket creation and the RPC server.
#include "daemon/control_server.h"

#include <capnp/rpc-twoparty.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "daemon/control_codec.h"
#include "daemon/xtrace_control.capnp.h"

namespace xtrace {
namespace {

using control_schema::Control;

kj::Exception Failure(const std::string& message) {
  return KJ_EXCEPTION(FAILED, message.c_str());
}

class ControlImpl final : public Control::Server {
 public:
  explicit ControlImpl(CaptureController& controller) : controller_(controller) {}

  kj::Promise<void> start(StartContext context) override {
    const CaptureOptions request = control_codec::DecodeRequest(context.getParams().getRequest());
    if (Status st = controller_.Start(request); !st.ok()) return Failure(st.message());
    std::fprintf(stderr, "xtrace daemon: capture started\n");
    control_codec::EncodeStatus(controller_.Snapshot(), controller_.config().output_dir,
                                context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> stop(StopContext context) override {
    auto status = controller_.Stop();
    if (!status.ok()) return Failure(status.status().message());
    std::fprintf(stderr, "xtrace daemon: capture stopped\n");
    control_codec::EncodeStatus(*status, controller_.config().output_dir,
                                context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> status(StatusContext context) override {
    control_codec::EncodeStatus(controller_.Snapshot(), controller_.config().output_dir,
                                context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> list(ListContext context) override {
    const auto files = controller_.Files();
    control_codec::EncodeFiles(files,
                               context.getResults().initFiles(static_cast<unsigned>(files.size())));
    return kj::READY_NOW;
  }

 private:
  CaptureController& controller_;
};

// What a peer that is not root talks to.
class RefusingControl final : public Control::Server {
 public:
  kj::Promise<void> start(StartContext) override { return Refuse(); }
  kj::Promise<void> stop(StopContext) override { return Refuse(); }
  kj::Promise<void> status(StatusContext) override { return Refuse(); }
  kj::Promise<void> list(ListContext) override { return Refuse(); }

 private:
  static kj::Promise<void> Refuse() {
    return Failure("permission denied: only root may control xtrace captures");
  }
};

// Serves each connection with a Control for root, a refusal for anyone else.
class ControlServer {
 public:
  ControlServer(kj::ConnectionReceiver& listener, CaptureController& controller)
      : listener_(listener),
        trusted_(kj::heap<ControlImpl>(controller)),
        refused_(kj::heap<RefusingControl>()) {}

  kj::Promise<void> Loop() {
    return listener_.accept().then([this](kj::Own<kj::AsyncIoStream>&& stream) {
      struct ucred cred {};
      uint length = sizeof(cred);
      uint32_t uid = UINT32_MAX;
      try {
        stream->getsockopt(SOL_SOCKET, SO_PEERCRED, &cred, &length);
        uid = cred.uid;
      } catch (const kj::Exception&) {
      }
      if (uid != 0)
        std::fprintf(stderr, "xtrace daemon: refused a control connection from uid %u\n", uid);
      (uid == 0 ? trusted_ : refused_).accept(kj::mv(stream));
      return Loop();
    });
  }

 private:
  kj::ConnectionReceiver& listener_;
  capnp::TwoPartyServer trusted_;
  capnp::TwoPartyServer refused_;
};

}  // namespace

Result<UniqueFd> ListenOnControlSocket(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Status::Error("control socket path '" + path + "' is empty or too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  addr.sun_family = AF_UNIX;

  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::Error(dir.string() + ": cannot create: " + std::strerror(errno));

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return Status::Error(path + " exists and is not a socket");
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe.valid() && ::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0)
      return Status::Error("another xtrace daemon is listening on " + path);
    ::unlink(path.c_str());  // stale: its daemon is gone
  }

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::Error(std::string("socket: ") + std::strerror(errno));
  // The socket file is created by bind with the umask applied: make it 0600 from its first
  // moment, not after a chmod that a fast client could race.
  const mode_t old_umask = ::umask(0177);
  const int bound = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  ::umask(old_umask);
  if (bound != 0) return Status::Error(path + ": bind: " + std::strerror(bind_errno));
  if (::chown(path.c_str(), 0, 0) != 0 || ::chmod(path.c_str(), 0600) != 0)
    return Status::Error(path + ": cannot make it root's alone: " + std::strerror(errno));
  if (::listen(fd.get(), 16) != 0) return Status::Error(path + ": listen: " + std::strerror(errno));
  return fd;
}

kj::Promise<void> ServeControl(kj::ConnectionReceiver& listener, CaptureController& controller) {
  auto server = kj::heap<ControlServer>(listener, controller);
  auto loop = server->Loop();
  return loop.attach(kj::mv(server));
}

}  // namespace xtrace
