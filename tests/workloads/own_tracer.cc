// The program's own tracer, through the loader's tracing layer; see own_tracer.h.
#include "own_tracer.h"

#include <dlfcn.h>
#include <level_zero/layers/zel_tracing_register_cb.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ze_result.h"

namespace xtrace::workloads {
namespace {

// One epilogue per counted call: every Level Zero callback has this shape (its parameters,
// the result, the tracer's user data, the instance's).
template <size_t I, typename Params>
void ZE_APICALL Counted(Params*, ze_result_t, void* user, void**) {
  static_cast<OwnTracer*>(user)->counts[I].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

OwnTracer::OwnTracer() {
  const char* env = std::getenv("ZE_ENABLE_TRACING_LAYER");
  if (!env || std::strcmp(env, "1") != 0) {
    using Enable = ze_result_t (*)();
    auto enable = reinterpret_cast<Enable>(dlsym(RTLD_DEFAULT, "zelEnableTracingLayer"));
    if (!enable) {
      std::fprintf(stderr,
                   "%s: --own-tracer needs the tracing layer: this loader has no "
                   "zelEnableTracingLayer (before 1.9); set ZE_ENABLE_TRACING_LAYER=1\n",
                   program_name());
      std::exit(2);
    }
    ZE_CHECK(enable());
    enabled_by_ = "zelEnableTracingLayer";
  }
  zel_tracer_desc_t desc{ZEL_STRUCTURE_TYPE_TRACER_DESC, nullptr, this};
  ZE_CHECK(zelTracerCreate(&desc, &tracer_));
  const zel_tracer_reg_t kEpilogue = ZEL_REGISTER_EPILOGUE;
  ZE_CHECK(zelTracerKernelCreateRegisterCallback(tracer_, kEpilogue,
                                                 Counted<0, ze_kernel_create_params_t>));
  ZE_CHECK(zelTracerCommandListAppendLaunchKernelRegisterCallback(
      tracer_, kEpilogue, Counted<1, ze_command_list_append_launch_kernel_params_t>));
  ZE_CHECK(zelTracerCommandListAppendLaunchCooperativeKernelRegisterCallback(
      tracer_, kEpilogue, Counted<2, ze_command_list_append_launch_cooperative_kernel_params_t>));
  ZE_CHECK(zelTracerCommandListAppendLaunchMultipleKernelsIndirectRegisterCallback(
      tracer_, kEpilogue,
      Counted<3, ze_command_list_append_launch_multiple_kernels_indirect_params_t>));
  ZE_CHECK(zelTracerCommandQueueExecuteCommandListsRegisterCallback(
      tracer_, kEpilogue, Counted<4, ze_command_queue_execute_command_lists_params_t>));
  ZE_CHECK(zelTracerFenceHostSynchronizeRegisterCallback(
      tracer_, kEpilogue, Counted<5, ze_fence_host_synchronize_params_t>));
  ZE_CHECK(zelTracerEventHostSynchronizeRegisterCallback(
      tracer_, kEpilogue, Counted<6, ze_event_host_synchronize_params_t>));
  ZE_CHECK(zelTracerEventQueryKernelTimestampRegisterCallback(
      tracer_, kEpilogue, Counted<7, ze_event_query_kernel_timestamp_params_t>));
  ZE_CHECK(zelTracerSetEnabled(tracer_, true));
}

OwnTracer::~OwnTracer() {
  if (!tracer_) return;
  zelTracerSetEnabled(tracer_, false);
  zelTracerDestroy(tracer_);
}

std::string OwnTracer::Said() const {
  std::string text = "own_tracer";
  for (size_t i = 0; i < counts.size(); ++i)
    text += std::string(" ") + kTracedByOwnTracer[i] + "=" + std::to_string(counts[i].load());
  return text + " enabled_by=" + enabled_by_;
}

}  // namespace xtrace::workloads
