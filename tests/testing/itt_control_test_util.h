// For unit tests that play xtrace's part against the real collector loaded into the test
// process: loads libxtrace_itt.so through the test-side ITT client and finds its fast-path
// control block by its exported symbol, as xtrace does in a traced process.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>

#include "capture/sources/itt_domains.h"
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

// What a capture does right after it attaches: switches on every domain of the collector
// (xtrace/itt_ring.h), with the capture's own code, here on the process's own memory.
inline void SwitchOnCollectorDomains() {
  void* lib = dlopen(XTRACE_ITT_COLLECTOR, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  const void* list = dlsym(lib, XT_ITT_DOMAINS_SYMBOL);
  ASSERT_NE(list, nullptr);
  auto switched = SwitchOnIttDomains(RemoteMemory(static_cast<uint32_t>(getpid())),
                                     reinterpret_cast<uintptr_t>(list));
  ASSERT_TRUE(switched.ok()) << switched.status().message();
}

}  // namespace xtrace::testing
