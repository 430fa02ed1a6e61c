// libxtrace_itt.so, xtrace's ITT collector. A process started with
// INTEL_LIBITTNOTIFY64=<path of this library> routes the ITT calls of every library in it
// (oneDNN primitives, TBB algorithms, PyTorch ranges, its own labels) here. Each call is
// appended to its thread's ring when a capture attached through the fast path (fast_path.h),
// and otherwise handed to the probe site, where a capture's uprobe records it; with no
// capture attached its domains are switched off, so clients skip their calls as they do
// without a collector (xtrace/itt_ring.h says how a capture switches them on).
//
// How clients load it (the ITT "static part" compiled into each client library): on its
// first ITT call the client reads INTEL_LIBITTNOTIFY64 once, dlopens the library it names,
// and, because this library exports __itt_api_init, calls it with the client's API list; the
// collector fills the function pointers it implements. Every other pointer is set to the
// entry's null function: the client's own fallback where it has one (domain and string-handle
// creation, pause/resume), otherwise nullptr, which makes the client skip the call entirely.
//
// Observed with Debian bookworm's clients (libdnnl2 2.6.3, libtbb12 2021.8):
//   - without INTEL_LIBITTNOTIFY64 neither library calls anything: labels need the variable
//     in the environment when the process starts (see `xtrace env`);
//   - each client library initialises its own API list, so __itt_api_init runs once per
//     client (libtbb even twice: libtbb and libtbbmalloc each carry a static part); handles
//     are shared by name across all of them;
//   - oneDNN creates domain "dnnl::primitive::execute" and, for every primitive execution,
//     __itt_task_begin/end named after the primitive kind ("convolution", "reorder",
//     "eltwise", "matmul", ...) on the calling thread, and again on each OpenMP worker
//     that runs part of it;
//   - TBB creates domains "tbb", "tbb.flow", "tbb.algorithm", one task
//     ("tbb_parallel_for", "tbb_parallel_reduce", ...) per algorithm call on the calling
//     thread and one on each worker that joins in, __itt_task_group for its contexts, and
//     names its workers with __itt_thread_set_name("TBB Worker Thread").
#include <cstring>

#include "itt/fast_path.h"
#include "itt/handle_registry.h"
#include "itt/itt_abi.h"
#include "itt/probe_site.h"
#include "xtrace/records.h"

namespace xtrace::itt {
namespace {

// True while a capture probes the site in this process. The site's first instruction is the
// 5-byte NOP it was built with (0f 1f 44 00 00) until a uprobe is installed in this process's
// copy of the page: then its first byte is a breakpoint (cc), or the call into the kernel's
// trampoline (e8) once the kernel optimized it. Reading that byte costs a load from a line
// the call would have fetched anyway; not making the call saves the call and its return on
// every ITT call of a process nobody traces.
inline bool ProbeSiteProbed() {
  return *reinterpret_cast<const volatile uint8_t*>(&xtrace_itt_probe) != 0x0f;
}

// Hands one ITT call to whoever records it: the fast path's ring while xtrace is attached
// through it, otherwise the probe site while a capture probes it. Out of line, so that the
// check every call makes (below) needs no stack frame.
[[gnu::noinline]] void Deliver(uint64_t op, const void* domain, const void* name, uint64_t d1,
                               uint64_t d2, uint64_t extra, bool has_extra, const char* text) {
  if (FastPathAttached() &&
      Append(FastEvent{static_cast<uint32_t>(op), domain, name, d1, d2, extra, has_extra, text}))
    return;
  if (ProbeSiteProbed()) xtrace_itt_probe(op, domain, text ? text : name, d1, d2, extra);
}

inline bool Traced() { return FastPathAttached() || ProbeSiteProbed(); }

// A call on `domain` while nobody traces the process: its clients stop calling for it (they
// check its flags first) until a capture switches it on again (xtrace/itt_ring.h). A domain
// already off is not written, so clients that call without checking share its line.
// A domain xtrace could not find again (neither the collector's nor adopted) stays on.
[[gnu::noinline]] void SwitchOff(const void* domain) {
  auto* d = const_cast<Domain*>(static_cast<const Domain*>(domain));
  if (d->flags && !xtrace_itt_domains.always_on && HandleRegistry::Switchable(d)) d->flags = 0;
}

// Every ITT call: two loads and two branches while nobody traces the process, which happens
// once per domain after a capture ends (SwitchOff), or on every call of a client that
// ignores its domain's flags.
inline void Report(uint64_t op, const void* domain, const void* name, uint64_t d1 = 0,
                   uint64_t d2 = 0, uint64_t extra = 0, bool has_extra = false,
                   const char* text = nullptr) {
  if (!Traced()) [[likely]] {
    if (domain) SwitchOff(domain);
    return;
  }
  Deliver(op, domain, name, d1, d2, extra, has_extra, text);
}

// The ITT entry points this collector implements. Signatures are ITT's (ittnotify.h).

// A domain made (or asked for again) while a capture traces the process is switched on here;
// otherwise the capture switches it on when it walks the list. The fence orders the domain's
// publication (a store) before the check (loads): either this check sees the capture's
// probe or fast path, or the capture's walk, which comes after those, sees the domain.
Domain* DomainCreate(const char* name) {
  Domain* d = Handles().DomainNamed(name);
  if (d && !d->flags) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (Traced()) d->flags = 1;
  }
  return d;
}

StringHandle* StringHandleCreate(const char* name) { return Handles().StringNamed(name); }

void TaskBegin(const Domain* domain, Id id, Id /*parent*/, StringHandle* name) {
  Report(XT_ITT_TASK_BEGIN, domain, name, id.d1, id.d2);
}

void TaskBeginFn(const Domain* domain, Id id, Id /*parent*/, void* fn) {
  Report(XT_ITT_TASK_BEGIN_FN, domain, nullptr, id.d1, id.d2, reinterpret_cast<uintptr_t>(fn),
         true);
}

void TaskEnd(const Domain* domain) { Report(XT_ITT_TASK_END, domain, nullptr); }

void TaskBeginOverlapped(const Domain* domain, Id id, Id /*parent*/, StringHandle* name) {
  Report(XT_ITT_TASK_BEGIN_OVERLAPPED, domain, name, id.d1, id.d2);
}

void TaskEndOverlapped(const Domain* domain, Id id) {
  Report(XT_ITT_TASK_END_OVERLAPPED, domain, nullptr, id.d1, id.d2);
}

void RegionBegin(const Domain* domain, Id id, Id /*parent*/, StringHandle* name) {
  Report(XT_ITT_REGION_BEGIN, domain, name, id.d1, id.d2);
}

void RegionEnd(const Domain* domain, Id id) {
  Report(XT_ITT_REGION_END, domain, nullptr, id.d1, id.d2);
}

void FrameBegin(const Domain* domain, Id* id) {
  Report(XT_ITT_FRAME_BEGIN, domain, nullptr, id ? id->d1 : 0, id ? id->d2 : 0);
}

void FrameEnd(const Domain* domain, Id* id) {
  Report(XT_ITT_FRAME_END, domain, nullptr, id ? id->d1 : 0, id ? id->d2 : 0);
}

void Marker(const Domain* domain, Id id, StringHandle* name, int scope) {
  Report(XT_ITT_MARKER, domain, name, id.d1, id.d2, static_cast<uint64_t>(scope), true);
}

// The name is the caller's buffer, gone or reused after the call: the fast path copies it.
void ThreadSetName(const char* name) {
  Report(XT_ITT_THREAD_NAME, nullptr, nullptr, 0, 0, 0, false, name);
}

// Collection changes always go through the probe site: BPF keeps the process's collection
// state, which every source's probes (Level Zero's too) obey.
void Pause() { xtrace_itt_probe(XT_ITT_PAUSE, nullptr, nullptr, 0, 0, 0); }
void Resume() { xtrace_itt_probe(XT_ITT_RESUME, nullptr, nullptr, 0, 0, 0); }
void Detach() { xtrace_itt_probe(XT_ITT_DETACH, nullptr, nullptr, 0, 0, 0); }

struct Implemented {
  const char* name;
  void* function;
};

template <typename F>
void* Fn(F* f) {
  return reinterpret_cast<void*>(f);
}

const Implemented kImplemented[] = {
    {"__itt_domain_create", Fn(DomainCreate)},
    {"__itt_string_handle_create", Fn(StringHandleCreate)},
    {"__itt_task_begin", Fn(TaskBegin)},
    {"__itt_task_begin_fn", Fn(TaskBeginFn)},
    {"__itt_task_end", Fn(TaskEnd)},
    {"__itt_task_begin_overlapped", Fn(TaskBeginOverlapped)},
    {"__itt_task_end_overlapped", Fn(TaskEndOverlapped)},
    {"__itt_region_begin", Fn(RegionBegin)},
    {"__itt_region_end", Fn(RegionEnd)},
    {"__itt_frame_begin_v3", Fn(FrameBegin)},
    {"__itt_frame_end_v3", Fn(FrameEnd)},
    {"__itt_marker", Fn(Marker)},
    {"__itt_thread_set_name", Fn(ThreadSetName)},
    {"__itt_pause", Fn(Pause)},
    {"__itt_resume", Fn(Resume)},
    {"__itt_detach", Fn(Detach)},
};

void* ImplementationOf(const char* name) {
  for (const Implemented& entry : kImplemented)
    if (std::strcmp(entry.name, name) == 0) return entry.function;
  return nullptr;
}

}  // namespace
}  // namespace xtrace::itt

// Called by each client's static part with its descriptor. Pointers are filled whatever
// groups the client asked for: a client that names fewer groups may still call the others,
// and a pointer left unfilled would drop those calls for the life of the process.
extern "C" __attribute__((visibility("default"))) void __itt_api_init(xtrace::itt::Global* global,
                                                                      int /*init_groups*/) {
  if (!global) return;
  for (xtrace::itt::ApiInfo* api = global->api_list_ptr; api && api->name; ++api) {
    if (!api->func_ptr) continue;
    void* implementation = xtrace::itt::ImplementationOf(api->name);
    *api->func_ptr = implementation ? implementation : api->null_func;
  }
  // Domains the client made before it loaded the collector: off unless traced now (the same
  // order as DomainCreate's: published, fence, then the check).
  const auto [first, end] = xtrace::itt::Handles().AdoptClientDomains(global);
  if (first == end) return;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (!xtrace::itt::Traced()) return;
  for (uint32_t i = first; i < end; ++i)
    reinterpret_cast<xtrace::itt::Domain*>(xtrace_itt_domains.adopted[i])->flags = 1;
}
