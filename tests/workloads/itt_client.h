// A minimal ITT client, built the way the ITT static part inside oneDNN, TBB and PyTorch is:
// an API list of function pointers, the collector named by INTEL_LIBITTNOTIFY64 loaded once
// and handed the list through __itt_api_init, and every call made only when its domain is
// enabled and its pointer set (otherwise skipped at the cost of two tests). Tests and the
// overhead benchmark use it to drive libxtrace_itt.so exactly as a real client would.
#pragma once

#include <string>

#include "itt/itt_abi.h"

namespace xtrace::itt_client {

using itt::Domain;
using itt::Id;
using itt::StringHandle;

// __itt_scope values for Marker.
inline constexpr int kScopeGlobal = 1;
inline constexpr int kScopeThread = 3;

// Loads the collector named by INTEL_LIBITTNOTIFY64 (once; later calls return the first
// answer). Returns what happened: "" when a collector was loaded, otherwise why not. Without
// a collector every call below is a no-op, as in a real client.
const std::string& Initialize();

// Entries of the client's API list, for tests of the collector's contract: how many there
// are, and each one's name, current pointer, and the null function it was declared with.
struct ApiEntryView {
  const char* name;
  void* current;
  void* null_func;
  void* init_func;
};
int ApiEntryCount();
ApiEntryView ApiEntry(int index);

// The client's function pointers (the static part's __itt_<name>_ptr variables).
struct Api {
  Domain* (*domain_create)(const char*);
  StringHandle* (*string_handle_create)(const char*);
  void (*task_begin)(const Domain*, Id, Id, StringHandle*);
  void (*task_end)(const Domain*);
  void (*task_begin_overlapped)(const Domain*, Id, Id, StringHandle*);
  void (*task_end_overlapped)(const Domain*, Id);
  void (*region_begin)(const Domain*, Id, Id, StringHandle*);
  void (*region_end)(const Domain*, Id);
  void (*frame_begin)(const Domain*, Id*);
  void (*frame_end)(const Domain*, Id*);
  void (*marker)(const Domain*, Id, StringHandle*, int);
  void (*thread_set_name)(const char*);
  void (*pause)();
  void (*resume)();
  void (*detach)();
  // Two entries the collector does not implement: one with a fallback, one without.
  void* (*counter_create)(const char*, const char*);
  void (*sync_create)(void*, const char*, const char*, int);
};
extern Api api;

inline constexpr Id kNullId{0, 0, 0};

// The calls, guarded as ittnotify.h's macros guard them at every call site: a disabled domain
// or an unset pointer skips the call.
inline Domain* DomainCreate(const char* name) {
  return api.domain_create ? api.domain_create(name) : nullptr;
}
inline StringHandle* StringHandleCreate(const char* name) {
  return api.string_handle_create ? api.string_handle_create(name) : nullptr;
}
inline void TaskBegin(const Domain* d, StringHandle* name) {
  if (d->flags && api.task_begin) api.task_begin(d, kNullId, kNullId, name);
}
inline void TaskEnd(const Domain* d) {
  if (d->flags && api.task_end) api.task_end(d);
}
inline void TaskBeginOverlapped(const Domain* d, Id id, StringHandle* name) {
  if (d->flags && api.task_begin_overlapped) api.task_begin_overlapped(d, id, kNullId, name);
}
inline void TaskEndOverlapped(const Domain* d, Id id) {
  if (d->flags && api.task_end_overlapped) api.task_end_overlapped(d, id);
}
inline void RegionBegin(const Domain* d, Id id, StringHandle* name) {
  if (d->flags && api.region_begin) api.region_begin(d, id, kNullId, name);
}
inline void RegionEnd(const Domain* d, Id id) {
  if (d->flags && api.region_end) api.region_end(d, id);
}
inline void FrameBegin(const Domain* d, Id* id) {
  if (d->flags && api.frame_begin) api.frame_begin(d, id);
}
inline void FrameEnd(const Domain* d, Id* id) {
  if (d->flags && api.frame_end) api.frame_end(d, id);
}
inline void Marker(const Domain* d, StringHandle* name, int scope) {
  if (d->flags && api.marker) api.marker(d, kNullId, name, scope);
}
inline void ThreadSetName(const char* name) {
  if (api.thread_set_name) api.thread_set_name(name);
}
inline void Pause() {
  if (api.pause) api.pause();
}
inline void Resume() {
  if (api.resume) api.resume();
}
inline void Detach() {
  if (api.detach) api.detach();
}

// An id as __itt_id_make(address, extra) builds it.
inline Id MakeId(const void* address, unsigned long long extra) {
  return Id{reinterpret_cast<unsigned long long>(address), extra, 0};
}

}  // namespace xtrace::itt_client
