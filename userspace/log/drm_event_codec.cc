// DRM events in the log; see drm_event_codec.h. Times are offsets from the batch base and
// durations, wrapping (mod 2^64) like every other event, so any value round-trips.
#include "log/drm_event_codec.h"

namespace xtrace::log_codec {
namespace {

using Kind = log_schema::DrmNodeKind;

Kind EncodeKind(DrmNodeKind k) {
  switch (k) {
    case DrmNodeKind::kUnknown:
      return Kind::UNKNOWN;
    case DrmNodeKind::kNotDrm:
      return Kind::NOT_DRM;
    case DrmNodeKind::kPrimary:
      return Kind::PRIMARY;
    case DrmNodeKind::kRender:
      return Kind::RENDER;
    case DrmNodeKind::kOtherDrm:
      return Kind::OTHER_DRM;
  }
  return Kind::UNKNOWN;
}

DrmNodeKind DecodeKind(Kind k) {
  switch (k) {
    case Kind::UNKNOWN:
      return DrmNodeKind::kUnknown;
    case Kind::NOT_DRM:
      return DrmNodeKind::kNotDrm;
    case Kind::PRIMARY:
      return DrmNodeKind::kPrimary;
    case Kind::RENDER:
      return DrmNodeKind::kRender;
    case Kind::OTHER_DRM:
      return DrmNodeKind::kOtherDrm;
  }
  return DrmNodeKind::kUnknown;  // a kind a newer xtrace added
}

// Writes the decoded arguments; `args` is only called for a decoded struct.
class ArgsEncoder {
 public:
  explicit ArgsEncoder(log_schema::Event::DrmIoctl::Builder ioctl) : ioctl_(ioctl) {}
  void operator()(const std::monostate&) {}
  void operator()(const I915ExecbufferArgs& a) {
    auto g = Args().initI915Execbuffer();
    g.setFlags(a.flags);
    g.setContextId(a.context_id);
    g.setEngine(a.engine);
    g.setBufferCount(a.buffer_count);
    g.setBatchStartOffset(a.batch_start_offset);
    g.setBatchLen(a.batch_len);
  }
  void operator()(const I915GemCreateArgs& a) {
    auto g = Args().initI915GemCreate();
    g.setSize(a.size);
    g.setHandle(a.handle);
    g.setFlags(a.flags);
    g.setExtended(a.extended);
  }
  void operator()(const I915MmapOffsetArgs& a) {
    auto g = Args().initI915MmapOffset();
    g.setOffset(a.offset);
    g.setFlags(a.flags);
    g.setHandle(a.handle);
  }
  void operator()(const I915GemWaitArgs& a) {
    auto g = Args().initI915GemWait();
    g.setTimeoutNs(a.timeout_ns);
    g.setHandle(a.handle);
    g.setFlags(a.flags);
  }
  void operator()(const I915ContextCreateArgs& a) {
    auto g = Args().initI915ContextCreate();
    g.setContextId(a.context_id);
    g.setFlags(a.flags);
  }
  void operator()(const XeExecArgs& a) {
    auto g = Args().initXeExec();
    g.setAddress(a.address);
    g.setExecQueueId(a.exec_queue_id);
    g.setNumSyncs(a.num_syncs);
    g.setNumBatchBuffer(a.num_batch_buffer);
  }
  void operator()(const XeVmBindArgs& a) {
    auto g = Args().initXeVmBind();
    g.setObjOffset(a.obj_offset);
    g.setRange(a.range);
    g.setAddr(a.addr);
    g.setVmId(a.vm_id);
    g.setExecQueueId(a.exec_queue_id);
    g.setNumBinds(a.num_binds);
    g.setNumSyncs(a.num_syncs);
    g.setOp(a.op);
    g.setObj(a.obj);
    g.setBindFlags(a.bind_flags);
  }
  void operator()(const XeGemCreateArgs& a) {
    auto g = Args().initXeGemCreate();
    g.setSize(a.size);
    g.setPlacement(a.placement);
    g.setFlags(a.flags);
    g.setVmId(a.vm_id);
    g.setHandle(a.handle);
    g.setCpuCaching(a.cpu_caching);
  }
  void operator()(const XeExecQueueCreateArgs& a) {
    auto g = Args().initXeExecQueueCreate();
    g.setWidth(a.width);
    g.setNumPlacements(a.num_placements);
    g.setVmId(a.vm_id);
    g.setFlags(a.flags);
    g.setExecQueueId(a.exec_queue_id);
  }
  void operator()(const XeWaitUserFenceArgs& a) {
    auto g = Args().initXeWaitUserFence();
    g.setAddr(a.addr);
    g.setValue(a.value);
    g.setMask(a.mask);
    g.setTimeoutNs(a.timeout_ns);
    g.setOp(a.op);
    g.setFlags(a.flags);
    g.setExecQueueId(a.exec_queue_id);
  }

 private:
  log_schema::DrmIoctlArgs::Builder Args() { return ioctl_.initArgs(); }
  log_schema::Event::DrmIoctl::Builder ioctl_;
};

DrmIoctlArgs DecodeArgs(log_schema::DrmIoctlArgs::Reader in) {
  using A = log_schema::DrmIoctlArgs;
  switch (in.which()) {
    case A::NONE:
      return std::monostate();
    case A::I915_EXECBUFFER: {
      auto g = in.getI915Execbuffer();
      return I915ExecbufferArgs{.context_id = g.getContextId(),
                                .engine = g.getEngine(),
                                .flags = g.getFlags(),
                                .buffer_count = g.getBufferCount(),
                                .batch_start_offset = g.getBatchStartOffset(),
                                .batch_len = g.getBatchLen()};
    }
    case A::I915_GEM_CREATE: {
      auto g = in.getI915GemCreate();
      return I915GemCreateArgs{.size = g.getSize(),
                               .handle = g.getHandle(),
                               .flags = g.getFlags(),
                               .extended = g.getExtended()};
    }
    case A::I915_MMAP_OFFSET: {
      auto g = in.getI915MmapOffset();
      return I915MmapOffsetArgs{
          .handle = g.getHandle(), .offset = g.getOffset(), .flags = g.getFlags()};
    }
    case A::I915_GEM_WAIT: {
      auto g = in.getI915GemWait();
      return I915GemWaitArgs{
          .handle = g.getHandle(), .flags = g.getFlags(), .timeout_ns = g.getTimeoutNs()};
    }
    case A::I915_CONTEXT_CREATE: {
      auto g = in.getI915ContextCreate();
      return I915ContextCreateArgs{.context_id = g.getContextId(), .flags = g.getFlags()};
    }
    case A::XE_EXEC: {
      auto g = in.getXeExec();
      return XeExecArgs{.exec_queue_id = g.getExecQueueId(),
                        .num_syncs = g.getNumSyncs(),
                        .address = g.getAddress(),
                        .num_batch_buffer = g.getNumBatchBuffer()};
    }
    case A::XE_VM_BIND: {
      auto g = in.getXeVmBind();
      return XeVmBindArgs{.vm_id = g.getVmId(),
                          .exec_queue_id = g.getExecQueueId(),
                          .num_binds = g.getNumBinds(),
                          .num_syncs = g.getNumSyncs(),
                          .op = g.getOp(),
                          .obj = g.getObj(),
                          .obj_offset = g.getObjOffset(),
                          .range = g.getRange(),
                          .addr = g.getAddr(),
                          .bind_flags = g.getBindFlags()};
    }
    case A::XE_GEM_CREATE: {
      auto g = in.getXeGemCreate();
      return XeGemCreateArgs{.size = g.getSize(),
                             .placement = g.getPlacement(),
                             .flags = g.getFlags(),
                             .vm_id = g.getVmId(),
                             .handle = g.getHandle(),
                             .cpu_caching = g.getCpuCaching()};
    }
    case A::XE_EXEC_QUEUE_CREATE: {
      auto g = in.getXeExecQueueCreate();
      return XeExecQueueCreateArgs{.width = g.getWidth(),
                                   .num_placements = g.getNumPlacements(),
                                   .vm_id = g.getVmId(),
                                   .flags = g.getFlags(),
                                   .exec_queue_id = g.getExecQueueId()};
    }
    case A::XE_WAIT_USER_FENCE: {
      auto g = in.getXeWaitUserFence();
      return XeWaitUserFenceArgs{.addr = g.getAddr(),
                                 .op = g.getOp(),
                                 .flags = g.getFlags(),
                                 .value = g.getValue(),
                                 .mask = g.getMask(),
                                 .timeout_ns = g.getTimeoutNs(),
                                 .exec_queue_id = g.getExecQueueId()};
    }
  }
  return std::monostate();  // a struct a newer xtrace decodes
}

}  // namespace

void EncodeDrmFile(const DrmFile& e, log_schema::Event::Builder out) {
  auto g = out.initDrmFile();
  g.setPid(e.pid);
  g.setFd(e.fd);
  g.setKind(EncodeKind(e.kind));
  g.setPath(e.path);
  g.setMajor(e.major);
  g.setMinor(e.minor);
  g.setDriver(e.driver);
}

void EncodeDrmIoctl(const DrmIoctl& e, uint64_t base_ns, log_schema::Event::Builder out) {
  auto g = out.initDrmIoctl();
  g.setPid(e.pid);
  g.setTid(e.tid);
  g.setStartOffsetNs(e.start_ns - base_ns);
  g.setDurationNs(e.end_ns - e.start_ns);
  g.setFd(e.fd);
  g.setCmd(e.cmd);
  g.setResult(e.result);
  g.setName(e.name);
  g.setArg(e.arg);
  g.setArgUnreadable(e.arg_unreadable);
  g.setCause(e.cause);
  if (e.cause != kEmptyString) g.setCauseLeadNs(e.start_ns - e.cause_start_ns);
  std::visit(ArgsEncoder(g), e.args);
}

void EncodeDrmFenceSignal(const DrmFenceSignal& e, uint64_t base_ns,
                          log_schema::Event::Builder out) {
  auto g = out.initDrmFenceSignal();
  g.setPid(e.pid);
  g.setTid(e.tid);
  g.setStartOffsetNs(e.created_ns - base_ns);
  g.setDurationNs(e.signaled_ns - e.created_ns);
  g.setIoctlLeadNs(e.created_ns - e.ioctl_start_ns);
  g.setContext(e.context);
  g.setSeqno(e.seqno);
  g.setSource(e.source);
}

bool DecodeDrmEvent(log_schema::Event::Reader in, uint64_t base_ns, Event* out) {
  switch (in.which()) {
    case log_schema::Event::DRM_FILE: {
      auto g = in.getDrmFile();
      *out = DrmFile{.pid = g.getPid(),
                     .fd = g.getFd(),
                     .kind = DecodeKind(g.getKind()),
                     .path = g.getPath(),
                     .major = g.getMajor(),
                     .minor = g.getMinor(),
                     .driver = g.getDriver()};
      return true;
    }
    case log_schema::Event::DRM_IOCTL: {
      auto g = in.getDrmIoctl();
      DrmIoctl e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.fd = g.getFd();
      e.cmd = g.getCmd();
      e.result = g.getResult();
      e.name = g.getName();
      e.arg = g.getArg();
      e.arg_unreadable = g.getArgUnreadable();
      e.cause = g.getCause();
      if (e.cause != kEmptyString) e.cause_start_ns = e.start_ns - g.getCauseLeadNs();
      if (g.hasArgs()) e.args = DecodeArgs(g.getArgs());
      *out = e;
      return true;
    }
    case log_schema::Event::DRM_FENCE_SIGNAL: {
      auto g = in.getDrmFenceSignal();
      DrmFenceSignal e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.created_ns = base_ns + g.getStartOffsetNs();
      e.signaled_ns = e.created_ns + g.getDurationNs();
      e.ioctl_start_ns = e.created_ns - g.getIoctlLeadNs();
      e.context = g.getContext();
      e.seqno = g.getSeqno();
      e.source = g.getSource();
      *out = e;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace xtrace::log_codec
