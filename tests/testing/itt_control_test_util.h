// For unit tests that play xtrace's part against the real collector loaded into the test
// process: loads libxtrace_itt.so through the test-side ITT client and finds its fast-path
// control block by its exported symbol, as xtrace does in a traced process.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>

#include "itt_client.h"
#include "xtrace/itt_ring.h"

namespace xtrace::testing {

inline xt_itt_control* LoadCollectorControl() {
  setenv("INTEL_LIBITTNOTIFY64", XTRACE_ITT_COLLECTOR, 1);
  EXPECT_EQ(itt_client::Initialize(), "");
  void* lib = dlopen(XTRACE_ITT_COLLECTOR, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr);
  return lib ? static_cast<xt_itt_control*>(dlsym(lib, XT_ITT_CONTROL_SYMBOL)) : nullptr;
}

// What a capture does right after it attaches: switches on every domain the collector made
// (xtrace/itt_ring.h), walking its exported list here in the process's own memory.
inline void SwitchOnCollectorDomains() {
  void* lib = dlopen(XTRACE_ITT_COLLECTOR, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto* list = static_cast<xt_itt_domains*>(dlsym(lib, XT_ITT_DOMAINS_SYMBOL));
  ASSERT_NE(list, nullptr);
  for (uintptr_t at = list->head; at != 0;
       at = *reinterpret_cast<const uintptr_t*>(at + XT_ITT_DOMAIN_NEXT_OFFSET))
    *reinterpret_cast<volatile int*>(at + XT_ITT_DOMAIN_FLAGS_OFFSET) = 1;
}

}  // namespace xtrace::testing
