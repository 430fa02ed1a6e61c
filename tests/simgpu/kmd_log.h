// The kernel-driver stand-in's own account of every exec ioctl it issued — the argument
// fields it passed and when — so tests can check a tracer's decoding against it.
// Format (tab-separated, one line per ioctl, appended; documented in README.md):
//   i915  pid tid before_ns after_ns cmd fd context_id engine flags buffer_count
//         batch_start_offset batch_len
//   xe    pid tid before_ns after_ns cmd fd exec_queue_id num_syncs address num_batch_buffer
#pragma once

#include <cstdint>

#include "kmd_stub.h"

namespace simze {

// `before_ns`/`after_ns`: CLOCK_MONOTONIC read just before and just after the ioctl.
void kmd_log_i915(int fd, uint64_t before_ns, uint64_t after_ns, const I915ExecBuffer2& eb);
void kmd_log_xe(int fd, uint64_t before_ns, uint64_t after_ns, const XeExec& exec);

}  // namespace simze
