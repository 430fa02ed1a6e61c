// Driver tracks in Chrome JSON; see driver_track_writer.h.
#include "export/driver_track_writer.h"

#include <string_view>

namespace xtrace {
namespace {

constexpr std::string_view kDrmCategory = "drm";

// i915_drm.h execbuffer flags worth showing by name.
constexpr uint64_t kI915ExecFenceIn = 1u << 16;
constexpr uint64_t kI915ExecFenceOut = 1u << 17;
constexpr uint64_t kI915ExecFenceArray = 1u << 19;
constexpr uint64_t kI915ExecFenceSubmit = 1u << 20;

std::string DeviceLabel(const StringTable& s, const DrmFile& f) {
  const std::string path(s.Get(f.path));
  switch (f.kind) {
    case DrmNodeKind::kUnknown:
      return "unknown (gone before it was looked at)";
    case DrmNodeKind::kNotDrm:
      return (path.empty() ? std::string("a file") : path) + " (not a DRM device)";
    default: {
      const std::string_view driver = s.Get(f.driver);
      return driver.empty() ? path : path + " (" + std::string(driver) + ")";
    }
  }
}

// Adds the decoded fields of one argument struct.
struct ArgsAppender {
  std::vector<TraceArg>& args;

  void operator()(const std::monostate&) {}
  void operator()(const I915ExecbufferArgs& a) {
    args.push_back(TraceArg::Uint("context_id", a.context_id));
    args.push_back(TraceArg::Uint("engine", a.engine));
    args.push_back(TraceArg::Uint("buffer_count", a.buffer_count));
    args.push_back(TraceArg::Hex("batch_start_offset", a.batch_start_offset));
    args.push_back(TraceArg::Uint("batch_len", a.batch_len));
    args.push_back(TraceArg::Hex("flags", a.flags));
    if (a.flags & kI915ExecFenceIn) args.push_back(TraceArg::Bool("fence_in", true));
    if (a.flags & kI915ExecFenceOut) args.push_back(TraceArg::Bool("fence_out", true));
    if (a.flags & kI915ExecFenceArray) args.push_back(TraceArg::Bool("fence_array", true));
    if (a.flags & kI915ExecFenceSubmit) args.push_back(TraceArg::Bool("fence_submit", true));
  }
  void operator()(const I915GemCreateArgs& a) {
    args.push_back(TraceArg::Uint("size", a.size));
    args.push_back(TraceArg::Uint("handle", a.handle));
    if (a.extended) args.push_back(TraceArg::Hex("flags", a.flags));
  }
  void operator()(const I915MmapOffsetArgs& a) {
    args.push_back(TraceArg::Uint("handle", a.handle));
    args.push_back(TraceArg::Hex("offset", a.offset));
    args.push_back(TraceArg::Uint("mmap_type", a.flags));
  }
  void operator()(const I915GemWaitArgs& a) {
    args.push_back(TraceArg::Uint("handle", a.handle));
    args.push_back(TraceArg::Int("timeout_ns", a.timeout_ns));
  }
  void operator()(const I915ContextCreateArgs& a) {
    args.push_back(TraceArg::Uint("context_id", a.context_id));
    args.push_back(TraceArg::Hex("flags", a.flags));
  }
  void operator()(const XeExecArgs& a) {
    args.push_back(TraceArg::Uint("exec_queue_id", a.exec_queue_id));
    args.push_back(TraceArg::Hex("address", a.address));
    args.push_back(TraceArg::Uint("num_batch_buffer", a.num_batch_buffer));
    args.push_back(TraceArg::Uint("num_syncs", a.num_syncs));
  }
  void operator()(const XeVmBindArgs& a) {
    args.push_back(TraceArg::Uint("vm_id", a.vm_id));
    args.push_back(TraceArg::Uint("exec_queue_id", a.exec_queue_id));
    args.push_back(TraceArg::Uint("num_binds", a.num_binds));
    args.push_back(TraceArg::Uint("num_syncs", a.num_syncs));
    if (a.num_binds == 1) {
      args.push_back(TraceArg::Uint("op", a.op));
      args.push_back(TraceArg::Uint("obj", a.obj));
      args.push_back(TraceArg::Hex("obj_offset", a.obj_offset));
      args.push_back(TraceArg::Uint("range", a.range));
      args.push_back(TraceArg::Hex("addr", a.addr));
      args.push_back(TraceArg::Hex("bind_flags", a.bind_flags));
    }
  }
  void operator()(const XeGemCreateArgs& a) {
    args.push_back(TraceArg::Uint("size", a.size));
    args.push_back(TraceArg::Uint("handle", a.handle));
    args.push_back(TraceArg::Hex("placement", a.placement));
    args.push_back(TraceArg::Hex("flags", a.flags));
    args.push_back(TraceArg::Uint("vm_id", a.vm_id));
    args.push_back(TraceArg::Uint("cpu_caching", a.cpu_caching));
  }
  void operator()(const XeExecQueueCreateArgs& a) {
    args.push_back(TraceArg::Uint("exec_queue_id", a.exec_queue_id));
    args.push_back(TraceArg::Uint("vm_id", a.vm_id));
    args.push_back(TraceArg::Uint("width", a.width));
    args.push_back(TraceArg::Uint("num_placements", a.num_placements));
    args.push_back(TraceArg::Hex("flags", a.flags));
  }
  void operator()(const XeWaitUserFenceArgs& a) {
    args.push_back(TraceArg::Hex("addr", a.addr));
    args.push_back(TraceArg::Uint("op", a.op));
    args.push_back(TraceArg::Hex("value", a.value));
    args.push_back(TraceArg::Hex("mask", a.mask));
    args.push_back(TraceArg::Int("timeout_ns", a.timeout_ns));
    args.push_back(TraceArg::Uint("exec_queue_id", a.exec_queue_id));
    args.push_back(TraceArg::Hex("flags", a.flags));
  }
};

}  // namespace

DriverTrackWriter::DriverTrackWriter(const StringTable& strings, TraceWriter& out)
    : strings_(strings), out_(out) {}

uint32_t DriverTrackWriter::PlaceInLane(uint32_t pid, bool fences, uint64_t start, uint64_t end) {
  const LanePacking::Placement place = tracks_[{pid, fences}].lanes.Place(start, end);
  const uint32_t tid = (fences ? kFenceLaneTid : kDriverLaneTid) + static_cast<uint32_t>(place.lane);
  if (place.opened) {
    std::string name = fences ? "GPU fences" : "driver";
    if (place.lane > 0) name += " " + std::to_string(place.lane + 1);
    out_.ThreadName(pid, tid, name);
  }
  return tid;
}

void DriverTrackWriter::Write(const DrmFile& e) {
  device_by_fd_[{e.pid, e.fd}] = DeviceLabel(strings_, e);
}

void DriverTrackWriter::Write(const DrmIoctl& e) {
  const uint64_t end = e.end_ns >= e.start_ns ? e.end_ns : e.start_ns;
  const uint32_t lane = PlaceInLane(e.pid, false, e.start_ns, end);
  args_.clear();
  auto device = device_by_fd_.find({e.pid, e.fd});
  args_.push_back(TraceArg::String(
      "device", device != device_by_fd_.end() ? std::string_view(device->second) : "unknown"));
  args_.push_back(TraceArg::Uint("fd", e.fd));
  args_.push_back(TraceArg::Uint("tid", e.tid));
  args_.push_back(TraceArg::Hex("cmd", e.cmd));
  args_.push_back(TraceArg::Int("result", e.result));
  args_.push_back(TraceArg::Hex("arg", e.arg));
  if (e.arg_unreadable) args_.push_back(TraceArg::Bool("arg_unreadable", true));
  std::visit(ArgsAppender{args_}, e.args);
  const std::string_view cause = strings_.Get(e.cause);
  if (!cause.empty()) args_.push_back(TraceArg::String("api_call", cause));
  out_.Complete(strings_.Get(e.name), kDrmCategory, e.pid, lane, e.start_ns, end - e.start_ns,
                args_);
  if (cause.empty()) return;
  // The arrow starts inside the API call on the calling thread (the ioctl began after the
  // call did) and ends inside this slice, clear of its edges so the binding is unambiguous.
  const uint64_t id = next_flow_id_++;
  out_.Flow(TraceWriter::FlowPhase::kStart, cause, kDrmCategory, e.pid, e.tid, e.start_ns,
            id);
  out_.Flow(TraceWriter::FlowPhase::kEnd, cause, kDrmCategory, e.pid, lane,
            e.start_ns + (end - e.start_ns) / 2, id);
}

void DriverTrackWriter::Write(const DrmFenceSignal& e) {
  const uint64_t end = e.signaled_ns >= e.created_ns ? e.signaled_ns : e.created_ns;
  const uint32_t lane = PlaceInLane(e.pid, true, e.created_ns, end);
  args_.clear();
  args_.push_back(TraceArg::Uint("context", e.context));
  args_.push_back(TraceArg::Uint("seqno", e.seqno));
  args_.push_back(TraceArg::Uint("tid", e.tid));
  args_.push_back(TraceArg::String("signaled_by", strings_.Get(e.source)));
  std::string name = "fence " + std::to_string(e.context) + ":" + std::to_string(e.seqno);
  out_.Complete(name, kDrmCategory, e.pid, lane, e.created_ns, end - e.created_ns, args_);
}

}  // namespace xtrace
