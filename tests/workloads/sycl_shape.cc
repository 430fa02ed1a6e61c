// The set-up the SYCL-shaped workloads share; see sycl_shape.h.
#include "sycl_shape.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {

SyclShapeOptions ParseSyclShapeOptions(int argc, char** argv, const char* usage,
                                       std::initializer_list<SyclShapeSwitch> switches) {
  SyclShapeOptions o;
  std::string log_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (a == "--iterations") {
      o.iterations = static_cast<uint32_t>(
          parse_count("--iterations", option_value(argc, argv, i), 1, 100000));
    } else if (a == "--launch-log") {
      log_path = option_value(argc, argv, i);
    } else if (a == "--wait-for-signal") {
      o.wait_for_signal = true;
    } else {
      bool known = false;
      for (const SyclShapeSwitch& s : switches)
        if (a == s.name) known = *s.on = true;
      if (!known) usage_error("unknown option " + a);
    }
  }
  if (!log_path.empty()) o.launch_log = std::make_unique<LaunchLog>(log_path);
  return o;
}

ReadyHandshake::ReadyHandshake(bool will_wait) {
  sigemptyset(&usr1_);
  sigaddset(&usr1_, SIGUSR1);
  if (will_wait) sigprocmask(SIG_BLOCK, &usr1_, nullptr);
}

void ReadyHandshake::SayReady() const {
  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
}

void ReadyHandshake::SayReadyAndWait() const {
  SayReady();
  int sig = 0;
  sigwait(&usr1_, &sig);
}

SimulatedModule OpenSimulatedModule(const SetUpCalls& ze, ze_driver_handle_t driver) {
  SimulatedModule m;
  uint32_t count = 1;
  ZE_CHECK(ze.DeviceGet(driver, &count, &m.device));
  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ZE_CHECK(ze.ContextCreate(driver, &context_desc, &m.context));
  const std::string text = simulated_module_text();
  ze_module_desc_t module_desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE,
                               text.size(), reinterpret_cast<const uint8_t*>(text.data()), "",
                               nullptr};
  ZE_CHECK(ze.ModuleCreate(m.context, m.device, &module_desc, &m.module, nullptr));
  return m;
}

ze_kernel_handle_t MakeKernel(const SetUpCalls& ze, ze_module_handle_t module, Kernel kernel) {
  ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, kernel_spec(kernel).name.c_str()};
  ze_kernel_handle_t h = nullptr;
  ZE_CHECK(ze.KernelCreate(module, &desc, &h));
  return h;
}

std::vector<ze_kernel_handle_t> MakeKernels(const SetUpCalls& ze, ze_module_handle_t module,
                                            std::span<const Kernel> kernels) {
  std::vector<ze_kernel_handle_t> made;
  for (Kernel k : kernels) made.push_back(MakeKernel(ze, module, k));
  return made;
}

}  // namespace xtrace::workloads
