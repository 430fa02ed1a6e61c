// The daemon's event loop: control socket, signals, shutdown.
#include "daemon/daemon.h"

#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "daemon/control_server.h"

namespace xtrace {

int RunDaemon(const DaemonOptions& options) {
  if (geteuid() != 0) {
    std::fprintf(stderr, "xtrace daemon: must run as root (it loads BPF programs, and its "
                         "control socket is root's)\n");
    return 1;
  }
  // A control client that hangs up while its answer is written must not end the daemon.
  ::signal(SIGPIPE, SIG_IGN);
  // The daemon outlives its captures, and its memory should come back to what it was after
  // each. glibc raises its mmap threshold to the size of any large block freed (up to 32 MB),
  // after which a capture's large buffers come from the heap and stay resident once freed:
  // the daemon's RSS rose ~20 MiB at whichever capture that happened in (and stayed there).
  // Fixed thresholds turn that adjustment off: blocks above 256 KiB are mapped and unmapped
  // each time, and the heap gives back what lies free above 1 MiB at its top.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 20);
  // Before any thread exists, so that every thread has them blocked and the event loop alone
  // receives them.
  kj::UnixEventPort::captureSignal(SIGTERM);
  kj::UnixEventPort::captureSignal(SIGINT);
  auto access = ResolveControlAccess(options.group);
  if (!access.ok()) {
    std::fprintf(stderr, "xtrace daemon: %s\n", access.status().message().c_str());
    return 1;
  }
  access->users = options.allow_users;
  auto listening = ListenOnControlSocket(options.socket_path, *access);
  if (!listening.ok()) {
    std::fprintf(stderr, "xtrace daemon: %s\n", listening.status().message().c_str());
    return 1;
  }
  const int exit_code = [&] {
    CaptureController controller(options.config);
    try {
      auto io = kj::setupAsyncIo();
      auto listener = io.lowLevelProvider->wrapListenSocketFd(
          listening->get(), kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC |
                                kj::LowLevelAsyncIoProvider::ALREADY_NONBLOCK);
      std::fprintf(stderr, "xtrace daemon: listening on %s (%s may connect); captures go to %s\n",
                   options.socket_path.c_str(), access->Who().c_str(),
                   options.config.output_dir.c_str());
      if (options.start_with) {
        if (Status st = controller.Start(*options.start_with); !st.ok()) {
          std::fprintf(stderr, "xtrace daemon: cannot start the capture: %s\n", st.message().c_str());
          return 1;
        }
        std::fprintf(stderr, "xtrace daemon: capture started\n");
      }
      auto serving = ServeControl(*listener, io.provider->getTimer(), controller, *access).eagerlyEvaluate([](kj::Exception&& e) {
        std::fprintf(stderr, "xtrace daemon: control socket failed: %s\n", e.getDescription().cStr());
      });
      const int sig = io.unixEventPort.onSignal(SIGTERM)
                          .exclusiveJoin(io.unixEventPort.onSignal(SIGINT))
                          .wait(io.waitScope)
                          .si_signo;
      std::fprintf(stderr, "xtrace daemon: %s: shutting down\n", strsignal(sig));
    } catch (const kj::Exception& e) {
      std::fprintf(stderr, "xtrace daemon: %s\n", e.getDescription().cStr());
      return 1;
    }
    auto stopped = controller.Stop();  // finishes the open file (no-op when idle)
    if (stopped.ok()) std::fprintf(stderr, "xtrace daemon: capture stopped\n");
    return 0;
  }();
  ::unlink(options.socket_path.c_str());
  return exit_code;
}

}  // namespace xtrace
