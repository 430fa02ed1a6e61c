// Fuzzes the control protocol's codec (daemon/control_codec.h) on what a client can send: a
// CaptureRequest as a Cap'n Proto message. Decoding must never crash, and encoding what was
// decoded must decode to the same options (the daemon echoes requests back in its status).
// Kept to the codec's public functions so it follows the protocol as it changes.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "daemon/control_codec.h"

namespace {

using xtrace::CaptureOptions;
using xtrace::control_schema::CaptureRequest;

bool SameRequest(const CaptureOptions& a, const CaptureOptions& b) {
  return a.system == b.system && a.pids == b.pids && a.comm == b.comm && a.cgroup == b.cgroup &&
         a.container == b.container && a.follow_children == b.follow_children &&
         a.duration_ns == b.duration_ns && a.ring_bytes == b.ring_bytes &&
         a.library_grace_ns == b.library_grace_ns && a.probes_per_process == b.probes_per_process &&
         a.probes_per_file == b.probes_per_file &&
         a.hold == b.hold && a.hold_max_ns == b.hold_max_ns;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Cap'n Proto reads whole words from word-aligned memory, as the RPC layer hands it over.
  std::vector<capnp::word> words(size / sizeof(capnp::word));
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * sizeof(capnp::word));
  CaptureOptions decoded;
  try {
    capnp::FlatArrayMessageReader message(kj::arrayPtr(words.data(), words.size()));
    decoded = xtrace::control_codec::DecodeRequest(message.getRoot<CaptureRequest>());
  } catch (const kj::Exception&) {
    return 0;  // a malformed message is refused, as the RPC layer refuses it
  }

  capnp::MallocMessageBuilder builder;
  xtrace::control_codec::EncodeRequest(decoded, builder.initRoot<CaptureRequest>());
  const CaptureOptions again =
      xtrace::control_codec::DecodeRequest(builder.getRoot<CaptureRequest>().asReader());
  if (!SameRequest(decoded, again)) __builtin_trap();  // the codec lost or changed a field

  xtrace::ControllerStatus status;
  status.request = decoded;
  status.describe = decoded.comm;
  capnp::MallocMessageBuilder status_builder;
  xtrace::control_codec::EncodeStatus(status, decoded.cgroup,
                                      status_builder.initRoot<xtrace::control_schema::CaptureStatus>());
  return 0;
}
