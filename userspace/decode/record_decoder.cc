// Record decoding: one switch over the record type, size checks before every read.
#include "decode/record_decoder.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

namespace xtrace {
namespace {

// Records arrive 8-byte aligned from the ring buffer, but tests and salvage paths may hand
// over any buffer: copy fixed parts out with memcpy rather than casting.
template <typename T>
T Load(std::span<const std::byte> data) {
  T value;
  std::memcpy(&value, data.data(), sizeof(T));
  return value;
}

Status SizeError(const char* what, size_t need, size_t have) {
  return Status::Error(std::string(what) + " record too short: need " + std::to_string(need) +
                       " bytes, have " + std::to_string(have));
}

Result<DecodedRecord> DecodeKernelCreate(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_kernel_create))
    return SizeError("kernel-create", sizeof(xt_kernel_create), data.size());
  const auto rec = Load<xt_kernel_create>(data);
  if (rec.name_len > XT_MAX_NAME || sizeof(rec) + rec.name_len > data.size()) {
    return Status::Error("kernel-create record: name length " + std::to_string(rec.name_len) +
                         " does not fit the record (" + std::to_string(data.size()) + " bytes)");
  }
  const char* name = reinterpret_cast<const char*>(data.data() + sizeof(rec));
  return DecodedRecord(DecodedKernelCreate{rec.hdr, rec.module, rec.kernel, rec.result,
                                           std::string_view(name, rec.name_len)});
}

Result<DecodedRecord> DecodeLaunchKernel(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_launch_kernel))
    return SizeError("launch-kernel", sizeof(xt_launch_kernel), data.size());
  const auto rec = Load<xt_launch_kernel>(data);
  DecodedLaunchKernel out{};
  out.hdr = rec.hdr;
  out.command_list = rec.command_list;
  out.kernel = rec.kernel;
  out.signal_event = rec.signal_event;
  std::memcpy(out.group_count, rec.group_count, sizeof(out.group_count));
  out.num_wait_events = rec.num_wait_events;
  out.result = rec.result;
  out.kind = rec.kind;
  return DecodedRecord(out);
}

Result<DecodedRecord> DecodeZeCall(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_ze_call)) return SizeError("Level Zero call", sizeof(xt_ze_call), data.size());
  const auto rec = Load<xt_ze_call>(data);
  if (rec.fn == 0 || rec.fn >= XT_ZE_FN_COUNT) {
    return Status::Error("Level Zero call record: unknown function id " + std::to_string(rec.fn));
  }
  DecodedZeCall out{};
  out.hdr = rec.hdr;
  out.fn = static_cast<uint16_t>(rec.fn);
  out.result = rec.result;
  std::memcpy(out.arg, rec.arg, sizeof(out.arg));
  std::memcpy(out.data, rec.data, sizeof(out.data));
  return DecodedRecord(out);
}

Result<DecodedRecord> DecodeZeExecute(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_ze_execute))
    return SizeError("execute-command-lists", sizeof(xt_ze_execute), data.size());
  const auto rec = Load<xt_ze_execute>(data);
  const size_t tail = (data.size() - sizeof(rec)) / sizeof(uint64_t);
  const uint32_t expected = std::min<uint32_t>(rec.num_lists, XT_MAX_EXEC_LISTS);
  const bool unreadable = (rec.hdr.flags & XT_FLAG_ARG_UNREADABLE) != 0;
  if (tail != (unreadable ? 0 : expected) || (data.size() - sizeof(rec)) % sizeof(uint64_t) != 0) {
    return Status::Error("execute-command-lists record: " + std::to_string(data.size()) +
                         " bytes do not hold the " + std::to_string(expected) +
                         " command list handles it announces");
  }
  DecodedZeExecute out{};
  out.hdr = rec.hdr;
  out.queue = rec.queue;
  out.fence = rec.fence;
  out.num_lists = rec.num_lists;
  out.result = rec.result;
  out.lists_copied = static_cast<uint32_t>(tail);
  out.lists = data.data() + sizeof(rec);
  // A record without a function (0) is an execution, the first user of this record.
  if (rec.fn == XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP) out.fn = static_cast<uint16_t>(rec.fn);
  out.num_wait_events = rec.num_wait_events;
  return DecodedRecord(out);
}

Result<DecodedRecord> DecodeCallUnfinished(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_call_unfinished))
    return SizeError("unfinished-call", sizeof(xt_call_unfinished), data.size());
  const auto rec = Load<xt_call_unfinished>(data);
  const bool known = (rec.fn > 0 && rec.fn < XT_ZE_FN_COUNT) || rec.fn == XT_ZE_PAIR_KERNEL_CREATE ||
                     rec.fn == XT_ZE_PAIR_APPEND_LAUNCH_KERNEL;
  if (!known)
    return Status::Error("unfinished-call record: unknown function id " + std::to_string(rec.fn));
  if (rec.hdr.end_ns < rec.hdr.start_ns)
    return Status::Error("unfinished-call record: the thread exited before the call began");
  return DecodedRecord(DecodedCallUnfinished{rec.hdr, rec.fn, rec.exit_code});
}

// A comm field: up to XT_COMM_LEN bytes, NUL-terminated unless it fills the field.
std::string_view CommField(const std::byte* field) {
  const char* p = reinterpret_cast<const char*>(field);
  return std::string_view(p, strnlen(p, XT_COMM_LEN));
}

Result<DecodedRecord> DecodeThreadName(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_thread_name))
    return SizeError("thread-name", sizeof(xt_thread_name), data.size());
  const auto hdr = Load<xt_record_header>(data);
  const std::byte* base = data.data();
  return DecodedRecord(DecodedThreadName{hdr, CommField(base + offsetof(xt_thread_name, comm)),
                                         CommField(base + offsetof(xt_thread_name, process_comm))});
}

template <typename T>
Result<DecodedRecord> Wrap(Result<T> decoded) {
  if (!decoded.ok()) return decoded.status();
  return DecodedRecord(std::move(*decoded));
}

Result<DecodedRecord> DecodeDrmIoctl(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_drm_ioctl))
    return SizeError("drm-ioctl", sizeof(xt_drm_ioctl), data.size());
  const auto rec = Load<xt_drm_ioctl>(data);
  if (rec.in_len > XT_DRM_MAX_ARG || rec.out_len > XT_DRM_MAX_ARG ||
      sizeof(rec) + rec.in_len + rec.out_len > data.size()) {
    return Status::Error("drm-ioctl record: argument bytes (" + std::to_string(rec.in_len) +
                         " in, " + std::to_string(rec.out_len) + " out) do not fit the record (" +
                         std::to_string(data.size()) + " bytes)");
  }
  const auto tail = data.subspan(sizeof(rec));
  return DecodedRecord(DecodedDrmIoctl{rec.hdr, rec.ret, rec.arg, rec.fd, rec.cmd, rec.rdev,
                                       rec.mode, tail.first(rec.in_len),
                                       tail.subspan(rec.in_len, rec.out_len)});
}

Result<DecodedRecord> DecodeDrmFence(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_drm_fence))
    return SizeError("drm-fence", sizeof(xt_drm_fence), data.size());
  const auto rec = Load<xt_drm_fence>(data);
  return DecodedRecord(
      DecodedDrmFence{rec.hdr, rec.ioctl_start_ns, rec.context, rec.seqno, rec.source});
}

Result<DecodedRecord> DecodePyStack(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_py_stack))
    return SizeError("python-stack", sizeof(xt_py_stack), data.size());
  const auto rec = Load<xt_py_stack>(data);
  if (rec.frames > XT_PY_MAX_FRAMES || rec.shared > rec.frames ||
      sizeof(rec) + uint64_t{rec.frames - rec.shared} * sizeof(xt_py_frame) > data.size()) {
    return Status::Error("python-stack record: " + std::to_string(rec.frames) + " frames (" +
                         std::to_string(rec.shared) + " shared) do not fit the record (" +
                         std::to_string(data.size()) + " bytes)");
  }
  return DecodedRecord(
      DecodedPyStack{rec.hdr, rec.frames, data.data() + sizeof(rec), rec.shared});
}

}  // namespace

Result<DecodedRecord> DecodeRecord(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_record_header))
    return SizeError("a", sizeof(xt_record_header), data.size());
  const auto hdr = Load<xt_record_header>(data);
  if (hdr.size < sizeof(xt_record_header) || hdr.size > data.size()) {
    return Status::Error("record of type " + std::to_string(hdr.type) + " says it has " +
                         std::to_string(hdr.size) + " bytes but " + std::to_string(data.size()) +
                         " were delivered");
  }
  const auto body = data.first(hdr.size);
  switch (hdr.type) {
    case XT_REC_KERNEL_CREATE:
      return DecodeKernelCreate(body);
    case XT_REC_LAUNCH_KERNEL:
      return DecodeLaunchKernel(body);
    case XT_REC_THREAD_NAME:
      return DecodeThreadName(body);
    case XT_REC_ITT_NAME:
      return Wrap(DecodeIttName(body));
    case XT_REC_ITT_EVENT:
      return Wrap(DecodeIttEvent(body));
    case XT_REC_ITT_STATE:
      return Wrap(DecodeIttState(body));
    case XT_REC_DRM_IOCTL:
      return DecodeDrmIoctl(body);
    case XT_REC_DRM_FENCE:
      return DecodeDrmFence(body);
    case XT_REC_ZE_CALL:
      return DecodeZeCall(body);
    case XT_REC_ZE_EXECUTE:
      return DecodeZeExecute(body);
    case XT_REC_CALL_UNFINISHED:
      return DecodeCallUnfinished(body);
    case XT_REC_PY_STACK:
      return DecodePyStack(body);
  }
  return Status::Error("unknown record type " + std::to_string(hdr.type) + " (" +
                       std::to_string(hdr.size) + " bytes)");
}

uint64_t DecodedZeExecute::list(uint32_t i) const {
  uint64_t handle = 0;
  if (i < lists_copied) std::memcpy(&handle, lists + i * sizeof(handle), sizeof(handle));
  return handle;
}

xt_py_frame DecodedPyStack::frame(uint32_t i) const {
  xt_py_frame f{};
  if (i + shared < frames) std::memcpy(&f, data + i * sizeof(f), sizeof(f));
  return f;
}

Result<std::optional<DecodedCallUnfinished>> DecodePendingCall(const xt_call_slot& slot,
                                                               uint32_t pid, uint32_t tid,
                                                               uint64_t now_ns) {
  if (slot.start_ns == 0 || (slot.flags & XT_FLAG_PAUSED) || slot.start_ns > now_ns)
    return std::optional<DecodedCallUnfinished>();
  // The record BPF would write had the thread exited now, so that it is checked as that is.
  xt_call_unfinished rec{};
  rec.hdr.type = XT_REC_CALL_UNFINISHED;
  rec.hdr.size = sizeof(rec);
  rec.hdr.pid = pid;
  rec.hdr.tid = tid;
  rec.hdr.start_ns = slot.start_ns;
  rec.hdr.end_ns = now_ns;
  rec.fn = slot.fn;
  std::byte bytes[sizeof(rec)];
  std::memcpy(bytes, &rec, sizeof(rec));
  auto decoded = DecodeCallUnfinished(bytes);
  if (!decoded.ok()) return decoded.status().WithContext("pending call of thread " + std::to_string(tid));
  auto call = std::get<DecodedCallUnfinished>(*decoded);
  call.capture_ended = true;
  return std::optional<DecodedCallUnfinished>(call);
}

std::span<const std::byte> NextRecordOfSample(std::span<const std::byte>& sample) {
  std::span<const std::byte> first = sample;
  if (sample.size() >= sizeof(xt_record_header)) {
    const auto hdr = Load<xt_record_header>(sample);
    // Only frames lead another record; their size is a multiple of 8 (the ring's alignment,
    // so the record after them is aligned as BPF wrote it). Anything else is one record,
    // whose own checks (DecodeRecord) judge its size.
    if (hdr.type == XT_REC_PY_STACK && hdr.size >= sizeof(xt_py_stack) && hdr.size % 8 == 0 &&
        hdr.size + sizeof(xt_record_header) <= sample.size())
      first = sample.first(hdr.size);
  }
  sample = sample.subspan(first.size());
  return first;
}

const xt_record_header& HeaderOf(const DecodedRecord& record) {
  return std::visit([](const auto& r) -> const xt_record_header& { return r.hdr; }, record);
}

}  // namespace xtrace
