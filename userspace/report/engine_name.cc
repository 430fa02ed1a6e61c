// Naming engines (engine_name.h).
#include "report/engine_name.h"

#include <cstdio>

namespace xtrace::report {
namespace {

// ze_command_queue_group_property_flag_t (level_zero/ze_api.h).
constexpr uint32_t kGroupCompute = 1u << 0;
constexpr uint32_t kGroupCopy = 1u << 1;

}  // namespace

EngineIdentity EngineIdentity::Of(const DeviceQueue& queue) {
  // A queue or list made before the attach whose loader could not be asked has no ordinal or
  // index anyone knows: named by its handle, as one never described.
  return {.device = queue.device,
          .described = !queue.engine_unknown,
          .immediate = queue.immediate,
          .ordinal = queue.ordinal,
          .index = queue.index,
          .group_flags = std::nullopt};
}

void EngineIdentity::Merge(const EngineIdentity& o) {
  if (device == kUnknownDevice) device = o.device;
  // An immediate list is one whether or not its engine is known.
  if (!described) immediate = immediate || o.immediate;
  if (!described && o.described) {
    described = true;
    immediate = o.immediate;
    ordinal = o.ordinal;
    index = o.index;
  }
  if (!group_flags) group_flags = o.group_flags;
}

std::string EngineGroupType(std::optional<uint32_t> group_flags) {
  if (!group_flags) return "";
  if (*group_flags & kGroupCompute) return "compute";
  if (*group_flags & kGroupCopy) return "copy";
  return "other";
}

std::string EngineName(const EngineIdentity& engine, uint64_t handle) {
  std::string name = engine.device == kUnknownDevice ? "GPU ?" : "GPU " + std::to_string(engine.device);
  if (!engine.described) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(handle));
    return name + (engine.immediate ? " immediate list " : " queue ") + hex;
  }
  const std::string type = EngineGroupType(engine.group_flags);
  name += " " + (type.empty() ? std::string("engine") : type) + " " + std::to_string(engine.ordinal) +
          "." + std::to_string(engine.index);
  if (engine.immediate) name += " immediate";
  if (type.empty()) name += " (type unknown)";
  return name;
}

}  // namespace xtrace::report
