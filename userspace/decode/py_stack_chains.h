// A thread's Python stacks arrive as a chain: BPF writes only the inner frames that differ
// from the thread's previous stack record and says how many outer frames it shares with it
// (struct xt_py_stack.shared). PyStackChains keeps each thread's last whole stack and turns
// every stack record back into the whole stack, in ring order.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "decode/record_decoder.h"

namespace xtrace {

class PyStackChains {
 public:
  // `stack` whole (shared 0), its data valid until the thread's next stack. A stack that
  // shares more frames than the thread's last stack holds (the record before it was lost
  // or never seen) comes back with no frames, and so do the thread's next stacks until one
  // is written whole: never frames of another stack.
  DecodedPyStack Expand(const DecodedPyStack& stack);

  // The process's last thread exited: its threads' chains go (a process that lives on keeps
  // one chain per thread it ever had, about 1 KiB each at depth 64).
  void ForgetProcess(uint32_t pid);
  size_t threads() const { return last_.size(); }

  // Stacks that could not be made whole.
  uint64_t broken() const { return broken_; }

  // The frames of the stacks made whole, and how many of them came from their thread's last
  // stack rather than the ring.
  struct FrameCounts {
    uint64_t frames = 0;
    uint64_t shared = 0;
  };
  const FrameCounts& frame_counts() const { return counts_; }

 private:
  FrameCounts counts_;
  std::unordered_map<uint64_t, std::vector<xt_py_frame>> last_;  // by pid << 32 | tid
  uint64_t broken_ = 0;
};

}  // namespace xtrace
