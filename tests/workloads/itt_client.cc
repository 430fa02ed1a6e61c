// The minimal ITT client: API list and collector loading (the calls are inline in the header).
#include "itt_client.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace xtrace::itt_client {
namespace {

// The client's own fallbacks for entries a collector may leave unimplemented (the static
// part creates domains and string handles itself; calls on them are then skipped because
// no collector pointer is set).
Domain* FallbackDomainCreate(const char* name) {
  auto* d = new Domain{};
  d->flags = 1;
  d->nameA = strdup(name);
  return d;
}
StringHandle* FallbackStringHandleCreate(const char* name) {
  auto* s = new StringHandle{};
  s->strA = strdup(name);
  return s;
}
void* FallbackCounterCreate(const char*, const char*) { return nullptr; }

// Every pointer starts at this "initialise first" stub, as in the real static part;
// __itt_api_init must replace each of them.
void NotInitialized() {}

template <typename F>
void** Slot(F& f) {
  return reinterpret_cast<void**>(&f);
}
template <typename F>
void* Fn(F f) {
  return reinterpret_cast<void*>(f);
}

#define XT_ENTRY(field, fallback) \
  {"__itt_" #field, Slot(api.field), Fn(&NotInitialized), fallback, 0}

itt::ApiInfo api_list[] = {
    {"__itt_domain_create", Slot(api.domain_create), Fn(&NotInitialized), Fn(&FallbackDomainCreate), 0},
    XT_ENTRY(string_handle_create, Fn(&FallbackStringHandleCreate)),
    XT_ENTRY(task_begin, nullptr),
    XT_ENTRY(task_end, nullptr),
    XT_ENTRY(task_begin_overlapped, nullptr),
    XT_ENTRY(task_end_overlapped, nullptr),
    XT_ENTRY(region_begin, nullptr),
    XT_ENTRY(region_end, nullptr),
    {"__itt_frame_begin_v3", Slot(api.frame_begin), Fn(&NotInitialized), nullptr, 0},
    {"__itt_frame_end_v3", Slot(api.frame_end), Fn(&NotInitialized), nullptr, 0},
    XT_ENTRY(marker, nullptr),
    XT_ENTRY(thread_set_name, nullptr),
    XT_ENTRY(pause, nullptr),
    XT_ENTRY(resume, nullptr),
    XT_ENTRY(detach, nullptr),
    XT_ENTRY(counter_create, Fn(&FallbackCounterCreate)),
    XT_ENTRY(sync_create, nullptr),
    {nullptr, nullptr, nullptr, nullptr, 0},
};

#undef XT_ENTRY

itt::Global MakeGlobal() {
  itt::Global g{};
  std::memcpy(g.magic, "\xED\xAB\xAB\xEC\x0D\xEE\xDA\x30", sizeof(g.magic));
  g.version_major = 3;
  g.api_list_ptr = api_list;
  return g;
}

itt::Global global = MakeGlobal();

}  // namespace

Api api = [] {
  Api a{};
  for (void** p = reinterpret_cast<void**>(&a); p < reinterpret_cast<void**>(&a + 1); ++p)
    *p = Fn(&NotInitialized);
  return a;
}();

const std::string& Initialize() {
  static std::once_flag once;
  static std::string outcome;
  std::call_once(once, [] {
    const char* path = std::getenv("INTEL_LIBITTNOTIFY64");
    void* lib = nullptr;
    void (*init)(itt::Global*, int) = nullptr;
    if (!path || !*path) {
      outcome = "INTEL_LIBITTNOTIFY64 is not set";
    } else if (!(lib = dlopen(path, RTLD_LAZY))) {
      outcome = std::string("cannot load ") + path + ": " + dlerror();
    } else if (!(init = reinterpret_cast<void (*)(itt::Global*, int)>(dlsym(lib, "__itt_api_init")))) {
      outcome = std::string(path) + " has no __itt_api_init";
    }
    if (init) {
      init(&global, ~0);
    } else {
      // No collector: every pointer takes its null function (the static part's
      // __itt_nullify_all_pointers).
      for (itt::ApiInfo* entry = api_list; entry->name; ++entry) *entry->func_ptr = entry->null_func;
    }
    global.api_initialized = 1;
  });
  return outcome;
}

int ApiEntryCount() { return static_cast<int>(sizeof(api_list) / sizeof(api_list[0])) - 1; }

ApiEntryView ApiEntry(int index) {
  const itt::ApiInfo& entry = api_list[index];
  return ApiEntryView{entry.name, *entry.func_ptr, entry.null_func, entry.init_func};
}

}  // namespace xtrace::itt_client
