// Python frames as slices; see python_slices.h.
#include "export/python_slices.h"

#include <algorithm>

namespace xtrace {

void PythonSliceWriter::Close(uint32_t pid, uint32_t tid, Thread& t, size_t keep) {
  // Innermost first: each closed slice ends within the one around it.
  while (t.open.size() > keep) {
    const Open& o = t.open.back();
    out_.Complete(PythonFrameName(o.frame, strings_), "python_function", pid, tid, o.start_ns,
                  o.end_ns - o.start_ns);
    ++slices_;
    t.open.pop_back();
  }
}

void PythonSliceWriter::Write(const PythonStack& e) {
  if (e.frames.empty()) return;
  Thread& t = threads_[{e.pid, e.tid}];
  // The frames outermost first, as the open slices are kept.
  const size_t n = e.frames.size();
  size_t same = 0;
  while (same < t.open.size() && same < n && t.open[same].frame == e.frames[n - 1 - same]) ++same;
  Close(e.pid, e.tid, t, same);
  for (size_t i = 0; i < same; ++i) t.open[i].end_ns = std::max(t.open[i].end_ns, e.end_ns);
  for (size_t i = same; i < n; ++i) t.open.push_back({e.frames[n - 1 - i], e.start_ns, e.end_ns});

  if (const PythonFrame* user = InnermostUserFrame(e, strings_, skips_)) {
    const CallKey key{e.pid, e.tid, e.start_ns};
    auto [it, added] = user_frames_.try_emplace(key, PythonFrameName(*user, strings_));
    if (added) {
      call_order_.push_back(key);
      if (call_order_.size() > kRememberedCalls) {
        user_frames_.erase(call_order_.front());
        call_order_.pop_front();
      }
    }
  }
}

void PythonSliceWriter::FinishProcess(uint32_t pid) {
  for (auto it = threads_.lower_bound({pid, 0}); it != threads_.end() && it->first.first == pid;)
  {
    Close(pid, it->first.second, it->second, 0);
    it = threads_.erase(it);
  }
}

void PythonSliceWriter::Finish() {
  for (auto& [key, t] : threads_) Close(key.first, key.second, t, 0);
  threads_.clear();
}

std::string_view PythonSliceWriter::UserFrameOfCall(uint32_t pid, uint32_t tid,
                                                    uint64_t start_ns) const {
  auto it = user_frames_.find({pid, tid, start_ns});
  return it == user_frames_.end() ? std::string_view{} : std::string_view(it->second);
}

}  // namespace xtrace
