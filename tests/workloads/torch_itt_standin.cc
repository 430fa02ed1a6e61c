// A stand-in for libtorch's ITT range functions, for tests (PyTorch itself is not installable
// here): a shared library exporting exactly the functions PyTorch builds with ITT export,
// under their real mangled names, which PyTorch calls for every operator under emit_itt():
//   torch::profiler::itt_range_push(const char*)  _ZN5torch8profiler14itt_range_pushEPKc
//   torch::profiler::itt_range_pop()              _ZN5torch8profiler13itt_range_popEv
//   torch::profiler::itt_mark(const char*)        _ZN5torch8profiler8itt_markEPKc
// PyTorch's bodies forward to ITT; these keep a per-thread depth instead, which is all a
// uprobe on their entry needs. Built a second time with XT_STANDIN_WITHOUT_MARK to stand for
// a build that lacks itt_mark.
#include <cstddef>

namespace {
thread_local long depth = 0;
[[maybe_unused]] thread_local long marks = 0;
}  // namespace

namespace torch::profiler {

__attribute__((visibility("default"), noinline)) void itt_range_push(const char* msg) {
  if (msg) ++depth;
}

__attribute__((visibility("default"), noinline)) void itt_range_pop() {
  if (depth > 0) --depth;
}

#ifndef XT_STANDIN_WITHOUT_MARK
__attribute__((visibility("default"), noinline)) void itt_mark(const char* msg) {
  if (msg) ++marks;
}
#endif

}  // namespace torch::profiler
