// The ITT static part's structures as a collector sees them: what __itt_api_init receives and
// the handles a collector gives back. Declared here (Debian ships no ittnotify.h); the x86-64
// layouts are those of DESIGN.md, checked against Debian's oneDNN and TBB.
#pragma once

#include <cstddef>

#include "xtrace/itt_ring.h"
#include "xtrace/records.h"

namespace xtrace::itt {

// One entry of the client's API list (__itt_api_info); the list ends at name == nullptr.
struct ApiInfo {
  const char* name;  // "__itt_task_begin"
  void** func_ptr;   // the client's function pointer, for the collector to fill
  void* init_func;   // the client's lazy-initialisation stub
  void* null_func;   // what the pointer holds when the collector does not implement it:
                     // the client's own fallback, or nullptr (the call is then skipped)
  int group;         // __itt_group_id
};

// The static part's descriptor (__itt_global), one per client library.
struct Global {
  unsigned char magic[8];
  unsigned long version_major;
  unsigned long version_minor;
  unsigned long version_build;
  volatile long api_initialized;
  volatile long mutex_initialized;
  volatile long atomic_counter;
  unsigned char mutex[40];  // pthread_mutex_t
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  ApiInfo* api_list_ptr;
  Global* next;
  void* thread_list;
  void* domain_list;
  void* string_list;
  int state;  // __itt_collection_state
};

// __itt_domain: clients test `flags` before every call and skip the call when it is 0.
struct Domain {
  volatile int flags;
  const char* nameA;
  const void* nameW;  // Windows only
  int extra1;
  void* extra2;
  Domain* next;
};

// __itt_string_handle.
struct StringHandle {
  const char* strA;
  const void* strW;  // Windows only
  int extra1;
  void* extra2;
  StringHandle* next;
};

// __itt_id: passed by value (on the stack: it is 24 bytes).
struct Id {
  unsigned long long d1, d2, d3;
};

static_assert(offsetof(Global, version_major) == 8);
static_assert(offsetof(Global, api_initialized) == 32);
static_assert(offsetof(Global, mutex) == 56);
static_assert(offsetof(Global, lib) == 96);
static_assert(offsetof(Global, dll_path_ptr) == 112);
static_assert(offsetof(Global, api_list_ptr) == 120);
static_assert(offsetof(Global, next) == 128);
static_assert(offsetof(Global, domain_list) == 144);
static_assert(offsetof(Global, string_list) == 152);
static_assert(offsetof(Global, state) == 160);
static_assert(sizeof(ApiInfo) == 40);
static_assert(offsetof(Domain, nameA) == 8);
static_assert(offsetof(StringHandle, strA) == 0);
static_assert(sizeof(Id) == 24);

// The BPF program reads names at these offsets (xtrace/records.h).
static_assert(offsetof(Domain, nameA) == XT_ITT_DOMAIN_NAME_OFFSET);
static_assert(offsetof(StringHandle, strA) == XT_ITT_STRING_TEXT_OFFSET);
// xtrace switches domains on at these offsets (xtrace/itt_ring.h).
static_assert(offsetof(Domain, flags) == XT_ITT_DOMAIN_FLAGS_OFFSET);
static_assert(offsetof(Domain, next) == XT_ITT_DOMAIN_NEXT_OFFSET);
static_assert(sizeof(Domain) == XT_ITT_DOMAIN_SIZE);

}  // namespace xtrace::itt
