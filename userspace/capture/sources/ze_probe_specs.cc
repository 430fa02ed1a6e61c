// The Level Zero entry points xtrace probes, with their programs and cookies (ze_probe_specs.h).
#include "capture/sources/ze_probe_specs.h"

#include "model/ze_api.h"
#include "xtrace/ze_tables.h"
#include "ze_probes.skel.h"

namespace xtrace {
namespace {

constexpr std::string_view kTableGetters[] = {
    "zeGetGlobalProcAddrTable",        "zeGetDriverProcAddrTable",
    "zeGetDriverExpProcAddrTable",     "zeGetDeviceProcAddrTable",
    "zeGetDeviceExpProcAddrTable",     "zeGetContextProcAddrTable",
    "zeGetCommandQueueProcAddrTable",  "zeGetCommandListProcAddrTable",
    "zeGetCommandListExpProcAddrTable", "zeGetEventProcAddrTable",
    "zeGetEventExpProcAddrTable",      "zeGetEventPoolProcAddrTable",
    "zeGetFenceProcAddrTable",         "zeGetImageProcAddrTable",
    "zeGetImageExpProcAddrTable",      "zeGetKernelProcAddrTable",
    "zeGetKernelExpProcAddrTable",     "zeGetMemProcAddrTable",
    "zeGetMemExpProcAddrTable",        "zeGetModuleProcAddrTable",
    "zeGetModuleBuildLogProcAddrTable", "zeGetPhysicalMemProcAddrTable",
    "zeGetSamplerProcAddrTable",       "zeGetVirtualMemProcAddrTable",
    "zeGetFabricEdgeExpProcAddrTable", "zeGetFabricVertexExpProcAddrTable",
    "zeGetRTASBuilderExpProcAddrTable", "zeGetRTASParallelOperationExpProcAddrTable",
};

constexpr DriverTableSlot kDriverTableSlots[] = {
    {"zeInitDrivers", "zeGetGlobalProcAddrTable", 1},                           // 1.10
    {"zeCommandListHostSynchronize", "zeGetCommandListProcAddrTable", 28},      // 1.6
    {"zeCommandListAppendLaunchKernelWithParameters", "zeGetCommandListProcAddrTable", 36},  // 1.14
    {"zeCommandListAppendLaunchKernelWithArguments", "zeGetCommandListProcAddrTable", 37},   // 1.14
    {"zeCommandListAppendHostFunction", "zeGetCommandListProcAddrTable", 51},   // 1.17
    {"zeEventCounterBasedCreate", "zeGetEventProcAddrTable", 11},               // 1.15
    {"zeCommandListImmediateAppendCommandListsExp", "zeGetCommandListExpProcAddrTable", 1},  // 1.9
};

// The dedicated programs read these arguments (ze_probes.bpf.c).
constexpr ArgRegisterMask kKernelCreateArgs = 0b111;
constexpr ArgRegisterMask kLaunchArgs = 0b11111;
// A launch with arguments: rdi, rsi, and the group counts in rdx and rcx (the rest is on the
// stack, which a stub leaves as it is until its jump).
constexpr ArgRegisterMask kLaunchWithArgumentsArgs = 0b1111;
// A launch with parameters: rdi, rsi, the group counts' pointer in rdx, the signal event and
// wait count in r8 and r9 (pNext, in rcx, is not read).
constexpr ArgRegisterMask kLaunchWithParametersArgs = 0b110111;

// The argument registers a generic probe's words come from, per the table.
ArgRegisterMask RegistersRead(const ZeApiInfo& api) {
  ArgRegisterMask mask = 0;
  for (const ZeArgInfo& arg : api.args)
    if (arg.name && arg.source.kind == ZeArgSource::kArg && arg.source.index < 6)
      mask |= ArgRegisterMask(1u << arg.source.index);
  for (const ZeRead& r : api.reads)
    if (r.size && r.arg < 6) mask |= ArgRegisterMask(1u << r.arg);
  return mask;
}

bpf_program* KernelCreateEntry(const ze_probes* s) { return s->progs.ze_kernel_create_entry; }
bpf_program* KernelCreateReturn(const ze_probes* s) { return s->progs.ze_kernel_create_return; }
bpf_program* LaunchEntry(const ze_probes* s) { return s->progs.ze_append_launch_kernel_entry; }
bpf_program* LaunchReturn(const ze_probes* s) { return s->progs.ze_append_launch_kernel_return; }
bpf_program* CallEntry(const ze_probes* s) { return s->progs.ze_call_entry; }
bpf_program* CallReturn(const ze_probes* s) { return s->progs.ze_call_return; }
bpf_program* ExecuteReturn(const ze_probes* s) { return s->progs.ze_execute_return; }

}  // namespace

std::span<const std::string_view> ZeTableGetters() { return kTableGetters; }

std::span<const DriverTableSlot> ZeDriverTableSlots() { return kDriverTableSlots; }

const std::vector<ProbeSpec>& ZeProbeSpecs() {
  static const std::vector<ProbeSpec> probes = [] {
    std::vector<ProbeSpec> v = {
        {"zeKernelCreate", KernelCreateEntry, KernelCreateReturn, 0, kKernelCreateArgs},
        {"zeCommandListAppendLaunchKernel", LaunchEntry, LaunchReturn, XT_LAUNCH_PLAIN,
         kLaunchArgs},
        {"zeCommandListAppendLaunchCooperativeKernel", LaunchEntry, LaunchReturn,
         XT_LAUNCH_COOPERATIVE, kLaunchArgs},
        {"zeCommandListAppendLaunchKernelIndirect", LaunchEntry, LaunchReturn, XT_LAUNCH_INDIRECT,
         kLaunchArgs},
        // SYCL's adapter looks it up through zeDriverGetExtensionFunctionAddress where the
        // loader does not export it (before loader 1.25, Level Zero 1.14): probed in both files.
        {"zeCommandListAppendLaunchKernelWithArguments", LaunchEntry, LaunchReturn,
         XT_LAUNCH_WITH_ARGUMENTS, kLaunchWithArgumentsArgs, 0, true, true},
        // The same for its sibling, which Intel's driver hands out too.
        {"zeCommandListAppendLaunchKernelWithParameters", LaunchEntry, LaunchReturn,
         XT_LAUNCH_WITH_PARAMETERS, kLaunchWithParametersArgs, 0, true, true},
    };
    for (const ZeApiInfo& api : ZeApiTable())
      v.push_back({api.symbol, CallEntry, api.dedicated_return ? ExecuteReturn : CallReturn,
                   ZeProbeCookie(api), RegistersRead(api), RegistersRead(api), !api.driver_only,
                   api.driver_only || api.also_in_driver});
    return v;
  }();
  return probes;
}

}  // namespace xtrace
