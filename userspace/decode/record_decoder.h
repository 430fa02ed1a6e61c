// Turns raw ring-buffer records (bytes written by the BPF programs, layouts in
// include/xtrace/records.h) into typed records, checking every size before reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "base/status.h"
#include "decode/itt_records.h"
#include "xtrace/drm_records.h"
#include "xtrace/python.h"
#include "xtrace/records.h"
#include "xtrace/thread_state.h"

namespace xtrace {

struct DecodedKernelCreate {
  xt_record_header hdr;
  uint64_t module;
  uint64_t kernel;
  int32_t result;
  std::string_view name;  // points into the decoded buffer: copy or intern before it is reused
};

struct DecodedLaunchKernel {
  xt_record_header hdr;
  uint64_t command_list;
  uint64_t kernel;
  uint64_t signal_event;
  uint32_t group_count[3];
  uint32_t num_wait_events;
  int32_t result;
  uint32_t kind;  // enum xt_launch_kind
};

// A generic Level Zero call (struct xt_ze_call); model/ze_api.h says what the words mean.
struct DecodedZeCall {
  xt_record_header hdr;
  uint16_t fn;
  int32_t result;
  uint64_t arg[XT_ZE_CALL_ARGS];
  uint64_t data[XT_ZE_CALL_DATA_WORDS];
};

// zeCommandQueueExecuteCommandLists with the command lists it submitted.
struct DecodedZeExecute {
  xt_record_header hdr;
  // zeCommandQueueExecuteCommandLists, or zeCommandListImmediateAppendCommandListsExp (queue:
  // its immediate list; fence: its signal event).
  uint16_t fn = XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS;
  uint32_t num_wait_events = 0;
  uint64_t queue;
  uint64_t fence;
  uint32_t num_lists;      // as passed
  int32_t result;
  uint32_t lists_copied;   // handles in the record (fewer than num_lists if truncated)
  const std::byte* lists;  // lists_copied unaligned __u64s in the decoded buffer
  uint64_t list(uint32_t i) const;
};

// A thread exited inside a recorded call (struct xt_call_unfinished).
struct DecodedCallUnfinished {
  xt_record_header hdr;  // start_ns: the call's entry; end_ns: the thread's exit
  uint32_t fn;           // enum xt_ze_fn or enum xt_ze_pairing_fn
  int32_t exit_code;     // the thread's, as wait(2) reports it
  // Not from BPF: the thread was still inside the call when the capture stopped
  // (capture/sources/pending_calls.h); end_ns is the stop, exit_code means nothing.
  bool capture_ended = false;
};

struct DecodedThreadName {
  xt_record_header hdr;
  std::string_view comm;          // points into the decoded buffer
  std::string_view process_comm;  // likewise
};

// ioctl(2) with a DRM command; the argument bytes point into the decoded buffer.
struct DecodedDrmIoctl {
  xt_record_header hdr;
  int64_t result;
  uint64_t arg;
  uint32_t fd;
  uint32_t cmd;
  uint32_t rdev;  // kernel encoding; see XT_KDEV_MAJOR/MINOR
  uint16_t mode;  // 0: the fd was not found
  std::span<const std::byte> in;   // the struct as passed in (empty: none or unreadable)
  std::span<const std::byte> out;  // the struct as written back (empty: none, or the call failed)
};

struct DecodedDrmFence {
  xt_record_header hdr;
  uint64_t ioctl_start_ns;
  uint64_t context;
  uint64_t seqno;
  uint32_t source;  // enum xt_fence_source
};

// The Python frames of a traced call's thread (struct xt_py_stack).
struct DecodedPyStack {
  xt_record_header hdr;  // the call's times; XT_FLAG_TRUNCATED: deeper than the frames read
  uint32_t frames;       // the stack's frames, innermost first
  const std::byte* data; // its `frames - shared` inner frames, unaligned struct xt_py_frame
  uint32_t shared = 0;   // its outer frames that are the thread's previous stack's
                         // (PyStackChains makes the stack whole)
  xt_py_frame frame(uint32_t i) const;  // i < frames - shared
};

using DecodedRecord = std::variant<DecodedKernelCreate, DecodedLaunchKernel, DecodedThreadName,
                                   DecodedIttName, DecodedIttEvent, DecodedIttState,
                                   DecodedDrmIoctl, DecodedDrmFence, DecodedZeCall,
                                   DecodedZeExecute, DecodedCallUnfinished, DecodedPyStack>;

// Decodes one record. A short, oversized or unknown record yields an error naming the type
// and the sizes involved; it never reads past `data`.
Result<DecodedRecord> DecodeRecord(std::span<const std::byte> data);

// The call a thread is inside when the capture stops, as its BPF thread state holds it
// (xtrace/thread_state.h: `slot` of thread `tid` of `pid`): decoded as the record BPF writes
// when a thread exits inside a call (XT_REC_CALL_UNFINISHED), by the same decoder and its
// checks, ending at `now_ns` and flagged capture_ended. nullopt when there is none to show:
// no call pending, one entered while the process was paused (recorded for its name alone),
// or one entered after `now_ns`. An error as for the record: an unknown function id.
Result<std::optional<DecodedCallUnfinished>> DecodePendingCall(const xt_call_slot& slot,
                                                               uint32_t pid, uint32_t tid,
                                                               uint64_t now_ns);

// One ring sample as the records it holds, in order: one record, or a call's Python frames
// (XT_REC_PY_STACK, whose header gives its size) followed by the call's own record, which
// BPF writes in one ring write (bpf/python_frames.bpf.h, xt_py_output_with). Returns the
// first record and leaves the rest in `sample` (empty after the last).
std::span<const std::byte> NextRecordOfSample(std::span<const std::byte>& sample);

// The header every record starts with (for callers that only need type, pid or times).
const xt_record_header& HeaderOf(const DecodedRecord& record);

}  // namespace xtrace
