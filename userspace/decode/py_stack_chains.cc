// Whole Python stacks from the ring's chain of shared frames; see py_stack_chains.h.
#include "decode/py_stack_chains.h"

namespace xtrace {

DecodedPyStack PyStackChains::Expand(const DecodedPyStack& stack) {
  std::vector<xt_py_frame>& last = last_[uint64_t{stack.hdr.pid} << 32 | stack.hdr.tid];
  if (stack.shared > stack.frames || stack.shared > last.size()) {
    last.clear();
    ++broken_;
    return DecodedPyStack{stack.hdr, 0, nullptr, 0};
  }
  std::vector<xt_py_frame> whole(stack.frames);
  const uint32_t inner = stack.frames - stack.shared;
  for (uint32_t i = 0; i < inner; ++i) whole[i] = stack.frame(i);
  // The last stack's outermost `shared` frames are the new one's outermost.
  for (uint32_t j = 0; j < stack.shared; ++j) whole[inner + j] = last[last.size() - stack.shared + j];
  last = std::move(whole);
  counts_.frames += stack.frames;
  counts_.shared += stack.shared;
  return DecodedPyStack{stack.hdr, stack.frames, reinterpret_cast<const std::byte*>(last.data()),
                        0};
}

void PyStackChains::ForgetProcess(uint32_t pid) {
  std::erase_if(last_, [pid](const auto& entry) { return entry.first >> 32 == pid; });
}

}  // namespace xtrace
