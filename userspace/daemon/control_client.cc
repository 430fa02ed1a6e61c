// The control client and the text it prints.
#include "daemon/control_client.h"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <time.h>

#include <cstdio>
#include <sstream>

#include "daemon/control_codec.h"
#include "daemon/xtrace_control.capnp.h"

namespace xtrace {
namespace {

using control_schema::CaptureStatus;
using control_schema::Control;

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n < 1024) std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(n));
  else if (n < (1u << 20)) std::snprintf(buf, sizeof(buf), "%.1f KiB", n / 1024.0);
  else std::snprintf(buf, sizeof(buf), "%.1f MiB", n / 1048576.0);
  return buf;
}

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

}  // namespace

Result<std::string> CallDaemon(const std::string& socket_path, ControlVerb verb,
                               const CaptureOptions& request) {
  try {
    auto io = kj::setupAsyncIo();
    kj::Own<kj::AsyncIoStream> connection;
    try {
      auto address = io.provider->getNetwork().parseAddress(("unix:" + socket_path).c_str()).wait(io.waitScope);
      connection = address->connect().wait(io.waitScope);
    } catch (const kj::Exception& e) {
      return Status::Error("cannot reach the xtrace daemon at " + socket_path + ": " +
                           e.getDescription().cStr() + " (is it running, and are you root?)");
    }
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
          out << f.getName().cStr() << "\t" << Bytes(f.getBytes()) << "\t"
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
