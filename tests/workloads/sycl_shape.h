// What the two SYCL-shaped workloads (ze_sycl_v2, ze_sycl_legacy) share: their common options,
// the "ready" handshake with a tracer, and the device, context, module and kernels they make
// (through the loader's exports or through tables the workload took: the caller says which).
#pragma once

#include <level_zero/ze_api.h>
#include <signal.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_catalog.h"
#include "launch_log.h"

namespace xtrace::workloads {

struct SyclShapeOptions {
  uint32_t iterations = 4;                // --iterations N (1..100000)
  std::unique_ptr<LaunchLog> launch_log;  // --launch-log FILE, opened; null without
  bool wait_for_signal = false;
};

// A workload's own option that takes no value.
struct SyclShapeSwitch {
  std::string_view name;
  bool* on;
};

// Parses --iterations, --launch-log, --wait-for-signal and `switches`: --help (-h) prints
// `usage` and exits 0, anything else is a usage error.
SyclShapeOptions ParseSyclShapeOptions(int argc, char** argv, const char* usage,
                                       std::initializer_list<SyclShapeSwitch> switches);

// "ready <pid>" on standard output, and the tracer's SIGUSR1 to go on.
class ReadyHandshake {
 public:
  // With `will_wait`, SIGUSR1 is blocked from here on, so that one sent as soon as "ready" is
  // read is kept for the wait.
  explicit ReadyHandshake(bool will_wait);
  void SayReady() const;
  void SayReadyAndWait() const;

 private:
  sigset_t usr1_{};
};

// The set-up calls, as the workload makes them.
struct SetUpCalls {
  decltype(&zeDeviceGet) DeviceGet;
  decltype(&zeContextCreate) ContextCreate;
  decltype(&zeModuleCreate) ModuleCreate;
  decltype(&zeKernelCreate) KernelCreate;
};

struct SimulatedModule {
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_module_handle_t module = nullptr;
};

// The driver's first device, a context on it and the module of the simulated GPU's kernels
// (simulated_module_text()).
SimulatedModule OpenSimulatedModule(const SetUpCalls& ze, ze_driver_handle_t driver);

// A kernel of that module.
ze_kernel_handle_t MakeKernel(const SetUpCalls& ze, ze_module_handle_t module, Kernel kernel);
std::vector<ze_kernel_handle_t> MakeKernels(const SetUpCalls& ze, ze_module_handle_t module,
                                            std::span<const Kernel> kernels);

}  // namespace xtrace::workloads
