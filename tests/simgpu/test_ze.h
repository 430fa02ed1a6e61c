// Test helpers: a Level Zero session through the real loader (with the simulated driver
// selected by ZE_ENABLE_ALT_DRIVERS), small object factories, and the ground-truth reader.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

namespace simgpu_test {

// Throws (failing the current test with the call's text) unless r is ZE_RESULT_SUCCESS.
void ze_check(ze_result_t r, const char* what);
#define ZE_CHECK(call) ::simgpu_test::ze_check((call), #call)

uint64_t clock_ns(clockid_t id);

struct Session {
  ze_driver_handle_t driver = nullptr;
  std::vector<ze_device_handle_t> devices;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t device() const { return devices.at(0); }
};

// zeInit and discovery, once per process. The environment must be set up before the first call.
Session& session();

ze_module_handle_t make_module(const std::string& text);
ze_kernel_handle_t make_kernel(ze_module_handle_t module, const std::string& name);
ze_command_queue_handle_t make_queue(uint32_t ordinal);
ze_command_list_handle_t make_list(uint32_t ordinal);
ze_command_list_handle_t make_immediate(uint32_t ordinal);
ze_event_pool_handle_t make_event_pool(uint32_t count, bool kernel_timestamps);
ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index);
ze_fence_handle_t make_fence(ze_command_queue_handle_t queue);

inline constexpr ze_group_count_t kOneGroup{1, 1, 1};

// One line of the simulator's ground-truth file (format in tests/simgpu/README.md).
struct Truth {
  std::string kind, name;
  uint64_t start_mono = 0, end_mono = 0, start_ticks = 0, end_ticks = 0;
  uint64_t queue = 0, submission = 0;
  int pid = 0;
  uint32_t device = 0;
  uint64_t cmdlist = 0, submit_mono = 0;
  int submit_tid = 0;
  uint64_t bytes = 0;
};
std::vector<Truth> read_ground_truth(const std::string& path);

template <typename Handle>
uint64_t handle_value(Handle h) {
  return reinterpret_cast<uintptr_t>(h);
}

}  // namespace simgpu_test
