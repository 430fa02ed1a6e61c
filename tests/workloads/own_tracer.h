// A program's own Level Zero tracer, as a profiler in the process registers one (PyTorch's XPU
// profiler and PTI through the loader's tracing layer): zelTracerCreate, an epilogue for each
// call counted here, zelTracerSetEnabled. The tracing layer runs it: ZE_ENABLE_TRACING_LAYER=1,
// or, where the loader has it (1.9 and later), zelEnableTracingLayer, which this calls then.
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/layers/zel_tracing_api.h>

#include <array>
#include <atomic>
#include <string>

namespace xtrace::workloads {

// The calls the tracer counts, in the order OwnTracer::Said lists them.
inline constexpr std::array<const char*, 8> kTracedByOwnTracer = {
    "zeKernelCreate",
    "zeCommandListAppendLaunchKernel",
    "zeCommandListAppendLaunchCooperativeKernel",
    "zeCommandListAppendLaunchMultipleKernelsIndirect",
    "zeCommandQueueExecuteCommandLists",
    "zeFenceHostSynchronize",
    "zeEventHostSynchronize",
    "zeEventQueryKernelTimestamp",
};

class OwnTracer {
 public:
  // Enables the tracing layer if it is not on and the loader can, creates the tracer and
  // turns it on; exits with a message naming what failed (after zeInit).
  OwnTracer();
  ~OwnTracer();
  OwnTracer(const OwnTracer&) = delete;
  OwnTracer& operator=(const OwnTracer&) = delete;

  // "own_tracer zeKernelCreate=4 zeCommandListAppendLaunchKernel=6 ... enabled_by=env": the
  // epilogues each call ran, and how the layer was turned on (env or zelEnableTracingLayer).
  std::string Said() const;

  std::array<std::atomic<unsigned>, kTracedByOwnTracer.size()> counts{};

 private:
  zel_tracer_handle_t tracer_ = nullptr;
  const char* enabled_by_ = "env";
};

}  // namespace xtrace::workloads
