// Control socket creation and the RPC server.
#include "daemon/control_server.h"

#include <capnp/rpc-twoparty.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "daemon/control_codec.h"
#include "daemon/xtrace_control.capnp.h"

namespace xtrace {
namespace {

using control_schema::Control;

// An error the client prints as it is (KJ_EXCEPTION would prefix the expression's text).
kj::Exception Failure(const std::string& message) {
  return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(message));
}

// One peer's view of the daemon: a privileged one (root, --group) sees and controls every
// capture; anybody else only their own, and of another's learns no more than that it runs.
class ControlImpl final : public Control::Server {
 public:
  ControlImpl(CaptureController& controller, Requester who)
      : controller_(controller), who_(std::move(who)) {}

  kj::Promise<void> start(StartContext context) override {
    const CaptureOptions request = control_codec::DecodeRequest(context.getParams().getRequest());
    if (Status st = controller_.Start(request, who_); !st.ok()) return Failure(st.message());
    std::fprintf(stderr, "xtrace daemon: capture started for uid %u\n", who_.uid);
    Encode(controller_.Snapshot(), context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> stop(StopContext context) override {
    auto status = controller_.Stop(who_);
    if (!status.ok()) return Failure(status.status().message());
    std::fprintf(stderr, "xtrace daemon: capture stopped by uid %u\n", who_.uid);
    Encode(*status, context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> status(StatusContext context) override {
    Encode(controller_.Snapshot(), context.getResults().initStatus());
    return kj::READY_NOW;
  }

  kj::Promise<void> list(ListContext context) override {
    const auto files = controller_.Files(who_);
    control_codec::EncodeFiles(files,
                               context.getResults().initFiles(static_cast<unsigned>(files.size())));
    return kj::READY_NOW;
  }

 private:
  void Encode(const ControllerStatus& status, control_schema::CaptureStatus::Builder out) {
    if (who_.privileged || status.owner_uid == who_.uid) {
      control_codec::EncodeStatus(status, controller_.config().output_dir, out);
      return;
    }
    ControllerStatus other;
    other.capturing = status.capturing;
    other.owner_uid = status.owner_uid;
    other.describe = "for another user";
    other.started_realtime_ns = status.started_realtime_ns;
    control_codec::EncodeStatus(other, "(not yours)", out);
  }

  CaptureController& controller_;
  const Requester who_;
};

// What a peer that may not control captures talks to.
class RefusingControl final : public Control::Server {
 public:
  explicit RefusingControl(std::string message) : message_(std::move(message)) {}
  kj::Promise<void> start(StartContext) override { return Refuse(); }
  kj::Promise<void> stop(StopContext) override { return Refuse(); }
  kj::Promise<void> status(StatusContext) override { return Refuse(); }
  kj::Promise<void> list(ListContext) override { return Refuse(); }

 private:
  kj::Promise<void> Refuse() { return Failure(message_); }
  std::string message_;
};

capnp::ReaderOptions ReceiveLimits() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = kMaxControlMessageBytes / sizeof(capnp::word);
  options.nestingLimit = 16;  // the deepest control message nests 4 structs
  return options;
}

// One client: its stream and the RPC system speaking over it.
class Connection {
 public:
  Connection(kj::Own<kj::AsyncIoStream> stream, Control::Client bootstrap)
      : stream_(kj::mv(stream)),
        network_(*stream_, capnp::rpc::twoparty::Side::SERVER, ReceiveLimits()),
        rpc_(capnp::makeRpcServer(network_, kj::mv(bootstrap))) {}
  kj::Promise<void> OnDisconnect() { return network_.onDisconnect(); }

 private:
  kj::Own<kj::AsyncIoStream> stream_;
  capnp::TwoPartyVatNetwork network_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc_;
};

struct PeerCredentials {
  uint32_t pid = 0;
  uid_t uid = UINT32_MAX;  // nobody we know, should the kernel not say
  gid_t gid = UINT32_MAX;
  std::vector<gid_t> groups;
};

PeerCredentials ReadPeerCredentials(kj::AsyncIoStream& stream, bool want_groups) {
  PeerCredentials peer;
  try {
    struct ucred cred {};
    uint length = sizeof(cred);
    stream.getsockopt(SOL_SOCKET, SO_PEERCRED, &cred, &length);
    peer.pid = static_cast<uint32_t>(cred.pid);
    peer.uid = cred.uid;
    peer.gid = cred.gid;
    if (want_groups) {
      peer.groups.resize(NGROUPS_MAX);
      uint bytes = static_cast<uint>(peer.groups.size() * sizeof(gid_t));
      stream.getsockopt(SOL_SOCKET, SO_PEERGROUPS, peer.groups.data(), &bytes);
      peer.groups.resize(bytes / sizeof(gid_t));
    }
  } catch (const kj::Exception&) {
    peer.groups.clear();  // what could not be read grants nothing
  }
  return peer;
}

// Accepts connections, admits or refuses each by its credentials, and keeps at most
// kMaxControlConnections, closing the oldest to make room.
class ControlServer final : private kj::TaskSet::ErrorHandler {
 public:
  ControlServer(kj::ConnectionReceiver& listener, kj::Timer& timer, CaptureController& controller,
                const ControlAccess& access)
      : listener_(listener),
        timer_(timer),
        access_(access),
        controller_(controller),
        tasks_(*this) {}

  kj::Promise<void> Loop() {
    return listener_.accept().then(
        [this](kj::Own<kj::AsyncIoStream>&& stream) {
          Admit(kj::mv(stream));
          return Loop();
        },
        [this](kj::Exception&& e) {
          // Out of descriptors, say: the daemon keeps serving once the cause is gone.
          std::fprintf(stderr, "xtrace daemon: accepting a control connection: %s\n",
                       e.getDescription().cStr());
          return timer_.afterDelay(100 * kj::MILLISECONDS).then([this] { return Loop(); });
        });
  }

 private:
  void Admit(kj::Own<kj::AsyncIoStream> stream) {
    // A capture written as its requester takes their supplementary groups along.
    const bool want_groups = access_.group.has_value() || access_.users;
    const PeerCredentials peer = ReadPeerCredentials(*stream, want_groups);
    const bool privileged = PeerAllowed(access_, peer.uid, peer.gid, peer.groups);
    Control::Client bootstrap = kj::heap<ControlImpl>(
        controller_, Requester{peer.uid, peer.gid, peer.groups, peer.pid, privileged});
    if (!privileged && !access_.users) {
      std::fprintf(stderr, "xtrace daemon: refused a control connection from uid %u (pid %u)\n",
                   peer.uid, peer.pid);
      bootstrap = kj::heap<RefusingControl>(PermissionDeniedMessage(access_, peer.uid));
    }
    if (connections_.size() >= kMaxControlConnections) {
      if (!warned_full_)
        std::fprintf(stderr, "xtrace daemon: more than %zu control connections: closing the "
                             "oldest to make room (reported once)\n", kMaxControlConnections);
      warned_full_ = true;
      connections_.erase(connections_.begin());
    }
    const uint64_t id = next_id_++;
    auto& connection = connections_[id] = kj::heap<Connection>(kj::mv(stream), kj::mv(bootstrap));
    tasks_.add(connection->OnDisconnect().then([this, id]() -> kj::Promise<void> {
      auto it = connections_.find(id);
      if (it == connections_.end()) return kj::READY_NOW;
      // Destroyed on the next turn, not inside a callback of its own RPC system.
      auto done = kj::evalLater([connection = kj::mv(it->second)] {});
      connections_.erase(it);
      return done;
    }));
  }

  // A connection ended by an error of its own (garbage, an oversized message, a peer gone
  // mid-message) or closed to make room: only that connection is affected.
  void taskFailed(kj::Exception&&) override {}

  kj::ConnectionReceiver& listener_;
  kj::Timer& timer_;
  const ControlAccess access_;
  CaptureController& controller_;
  std::map<uint64_t, kj::Own<Connection>> connections_;  // by age: ids only grow
  uint64_t next_id_ = 0;
  bool warned_full_ = false;
  kj::TaskSet tasks_;  // last: its tasks refer to the members above
};

}  // namespace

Result<UniqueFd> ListenOnControlSocket(const std::string& path, const ControlAccess& access) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Status::Error("control socket path '" + path + "' is empty or too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  addr.sun_family = AF_UNIX;

  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const gid_t group = access.group.value_or(0);
  if (!dir.empty()) {
    if (::mkdir(dir.c_str(), 0700) == 0) {
      // The group (or, with --allow-users, everybody) may pass through to the socket but not
      // list or add entries.
      const mode_t mode = access.users ? 0711 : 0710;
      if ((access.group || access.users) &&
          (::chown(dir.c_str(), 0, group) != 0 || ::chmod(dir.c_str(), mode) != 0))
        return Status::Error(dir.string() + ": cannot open it to " + access.Who() + ": " +
                             std::strerror(errno));
    } else if (errno != EEXIST) {
      return Status::Error(dir.string() + ": cannot create: " + std::strerror(errno));
    }
  }

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
  const mode_t mode = access.users ? 0666 : access.group ? 0660 : 0600;
  if (::chown(path.c_str(), 0, group) != 0 || ::chmod(path.c_str(), mode) != 0)
    return Status::Error(path + ": cannot make it " + access.Who() + "'s: " + std::strerror(errno));
  if (::listen(fd.get(), 16) != 0) return Status::Error(path + ": listen: " + std::strerror(errno));
  return fd;
}

kj::Promise<void> ServeControl(kj::ConnectionReceiver& listener, kj::Timer& timer,
                               CaptureController& controller, const ControlAccess& access) {
  auto server = kj::heap<ControlServer>(listener, timer, controller, access);
  auto loop = server->Loop();
  return loop.attach(kj::mv(server));
}

}  // namespace xtrace
