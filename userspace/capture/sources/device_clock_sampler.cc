// Level Zero through dlopen for device facts and clock readings; see device_clock_sampler.h.
#include "capture/sources/device_clock_sampler.h"

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <time.h>

#include <cstring>

#include "model/ze_api.h"

namespace xtrace {
namespace {

constexpr const char* kLoader = "libze_loader.so.1";
// Host clock readings: tries, and a bracket tight enough to stop at (four clock_gettime calls
// through the vDSO take well under a microsecond).
constexpr int kHostClockAttempts = 8;
constexpr uint64_t kTightBracketNs = 1'000;

uint64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)": the name a user can look up, and the code.
std::string ResultText(ze_result_t r) {
  char code[32];
  std::snprintf(code, sizeof(code), "0x%x", static_cast<unsigned>(r));
  const std::string_view name = ZeResultName(static_cast<int32_t>(r));
  return name.empty() ? std::string(code) : std::string(name) + " (" + code + ")";
}

// What a loader that found no driver for xtrace's own process means, and what to do: the
// traced programs may load one the loader does not search by default.
constexpr const char* kNoDriverHint =
    "Level Zero found no GPU driver for xtrace's own process; if the traced programs use one "
    "from elsewhere (ZE_ENABLE_ALT_DRIVERS), give xtrace the same";

}  // namespace

// The entry points used, resolved from the loader (only types come from ze_api.h: nothing
// links against Level Zero).
struct DeviceClockSampler::Api {
  decltype(&zeInit) init = nullptr;
  decltype(&zeDriverGet) driver_get = nullptr;
  decltype(&zeDeviceGet) device_get = nullptr;
  decltype(&zeDeviceGetProperties) device_properties = nullptr;
  decltype(&zeDeviceGetGlobalTimestamps) global_timestamps = nullptr;
  // Optional: without it engines are named without their type.
  decltype(&zeDeviceGetCommandQueueGroupProperties) queue_group_properties = nullptr;
  // Optional: where the drivers' extension functions are (see ExtensionFunctions).
  decltype(&zeDriverGetExtensionFunctionAddress) extension_function = nullptr;
};

DeviceClockSampler::~DeviceClockSampler() {
  // Not dlclosed: the loader and its drivers keep threads and atexit handlers of their own.
}

Result<std::unique_ptr<DeviceClockSampler>> DeviceClockSampler::Open(
    const std::function<void(const char*)>& before) {
  auto step = [&before](const char* call) {
    if (before) before(call);
  };
  std::unique_ptr<DeviceClockSampler> self(new DeviceClockSampler());
  self->library_ = dlopen(kLoader, RTLD_NOW | RTLD_LOCAL);
  if (!self->library_) return Status::Error(std::string("cannot load ") + kLoader + ": " + dlerror());
  auto api = std::make_unique<Api>();
  auto resolve = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(self->library_, name));
    return fn != nullptr;
  };
  if (!resolve(api->init, "zeInit") || !resolve(api->driver_get, "zeDriverGet") ||
      !resolve(api->device_get, "zeDeviceGet") ||
      !resolve(api->device_properties, "zeDeviceGetProperties") ||
      !resolve(api->global_timestamps, "zeDeviceGetGlobalTimestamps"))
    return Status::Error(std::string(kLoader) + " lacks a Level Zero entry point xtrace needs");
  resolve(api->queue_group_properties, "zeDeviceGetCommandQueueGroupProperties");
  resolve(api->extension_function, "zeDriverGetExtensionFunctionAddress");
  step("zeInit");
  if (ze_result_t r = api->init(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS)
    return Status::Error("zeInit: " + ResultText(r) +
                         (r == ZE_RESULT_ERROR_UNINITIALIZED ? std::string(": ") + kNoDriverHint
                                                             : std::string()));
  uint32_t drivers = 0;
  step("zeDriverGet");
  if (ze_result_t r = api->driver_get(&drivers, nullptr); r != ZE_RESULT_SUCCESS || drivers == 0)
    return Status::Error("no Level Zero driver (zeDriverGet: " + ResultText(r) + "): " +
                         kNoDriverHint);
  std::vector<ze_driver_handle_t> driver_handles(drivers);
  api->driver_get(&drivers, driver_handles.data());
  self->drivers_.assign(driver_handles.begin(), driver_handles.end());
  // Processes pick the first driver with a GPU, as runtimes' default selectors do. Device
  // numbers are positions in xtrace's list; a process's devices are matched to them by UUID.
  for (ze_driver_handle_t driver : driver_handles) {
    uint32_t count = 0;
    step("zeDeviceGet");
    if (api->device_get(driver, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) continue;
    std::vector<ze_device_handle_t> devices(count);
    if (api->device_get(driver, &count, devices.data()) != ZE_RESULT_SUCCESS) continue;
    for (ze_device_handle_t dev : devices) {
      // The 1.2 structure reports timerResolution in ticks per second; the original one in
      // nanoseconds per tick, truncated (52 at 19.2 MHz, 0.16% off).
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
      step("zeDeviceGetProperties");
      if (api->device_properties(dev, &props) != ZE_RESULT_SUCCESS) continue;
      SampledDevice d;
      d.name = props.name;
      d.timer_hz = props.timerResolution;
      d.kernel_timestamp_bits = props.kernelTimestampValidBits;
      static_assert(sizeof(d.uuid) == sizeof(props.uuid.id));
      std::memcpy(d.uuid, props.uuid.id, sizeof(d.uuid));
      step("zeDeviceGetCommandQueueGroupProperties");
      d.queue_group_flags = QueueGroupFlags(*api, dev);
      self->devices_.push_back(d);
      self->handles_.push_back(dev);
    }
    if (!self->devices_.empty()) break;
  }
  if (self->devices_.empty()) return Status::Error("Level Zero reports no GPU");
  self->api_ = std::move(api);
  return self;
}

std::vector<std::pair<std::string, uint64_t>> DeviceClockSampler::ExtensionFunctions(
    std::span<const std::string_view> names) const {
  std::vector<std::pair<std::string, uint64_t>> found;
  if (!api_ || !api_->extension_function) return found;
  for (void* driver : drivers_) {
    for (std::string_view name : names) {
      const std::string text(name);
      void* fn = nullptr;
      if (api_->extension_function(static_cast<ze_driver_handle_t>(driver), text.c_str(), &fn) ==
              ZE_RESULT_SUCCESS &&
          fn)
        found.emplace_back(text, reinterpret_cast<uint64_t>(fn));
    }
  }
  return found;
}

// What kind of engine each command queue group (ordinal) of `dev` runs on, so that a report
// can name a traced process's queues ("GPU 0 compute 0.1"); empty when the driver does not
// say.
std::vector<uint32_t> DeviceClockSampler::QueueGroupFlags(const Api& api, void* dev) {
  if (!api.queue_group_properties) return {};
  const auto device = static_cast<ze_device_handle_t>(dev);
  uint32_t count = 0;
  if (api.queue_group_properties(device, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) return {};
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  if (api.queue_group_properties(device, &count, groups.data()) != ZE_RESULT_SUCCESS) return {};
  std::vector<uint32_t> flags;
  for (uint32_t i = 0; i < count && i < groups.size(); ++i) flags.push_back(groups[i].flags);
  return flags;
}

std::vector<DeviceClockReading> DeviceClockSampler::Read() const {
  std::vector<DeviceClockReading> readings;
  for (uint32_t i = 0; i < handles_.size(); ++i) {
    // CLOCK_MONOTONIC on both sides of CLOCK_MONOTONIC_RAW and CLOCK_REALTIME, read back to
    // back; a thread preempted in between would misplace the reading by up to half the gap,
    // so the tightest of a few tries is kept.
    uint64_t m0 = 0, raw = 0, real = 0, m1 = UINT64_MAX / 2;
    for (int attempt = 0; attempt < kHostClockAttempts; ++attempt) {
      const uint64_t a0 = Now(CLOCK_MONOTONIC);
      const uint64_t r = Now(CLOCK_MONOTONIC_RAW);
      const uint64_t rt = Now(CLOCK_REALTIME);
      const uint64_t a1 = Now(CLOCK_MONOTONIC);
      if (a1 - a0 < m1 - m0) m0 = a0, raw = r, real = rt, m1 = a1;
      if (m1 - m0 <= kTightBracketNs) break;
    }
    uint64_t host = 0, ticks = 0;
    if (api_->global_timestamps(static_cast<ze_device_handle_t>(handles_[i]), &host, &ticks) !=
        ZE_RESULT_SUCCESS)
      continue;
    // The clocks advance at the same rate to within NTP's ppm corrections, so the RAW instant
    // the device call reports (microseconds later) maps to the others by the same difference.
    const uint64_t mono_at_raw = m0 + (m1 - m0) / 2;
    readings.push_back({i, ticks, host, mono_at_raw + (host - raw), real + (host - raw)});
  }
  return readings;
}

}  // namespace xtrace
