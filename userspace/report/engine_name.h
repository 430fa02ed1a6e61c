// Engines named as a user knows them: "GPU 0 compute 0.1" (device, engine group type,
// ordinal.index), from what the log says about the queue or immediate command list a process
// submitted to. Where the log does not say, the name says so rather than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/ze_events.h"

namespace xtrace::report {

// What the log knows about one engine (a command queue or an immediate command list).
struct EngineIdentity {
  uint32_t device = kUnknownDevice;
  // Its DeviceQueue was seen and says its engine: ordinal and index are known.
  bool described = false;
  bool immediate = false;
  uint32_t ordinal = 0;  // command queue group
  uint32_t index = 0;    // queue within the group
  // ze_command_queue_group_property_flags_t of the group `ordinal`, when the log holds the
  // device's queue group properties; nullopt when it does not.
  std::optional<uint32_t> group_flags;

  static EngineIdentity Of(const DeviceQueue& queue);
  // Fills what this one does not know from `o` (the same engine seen in another log).
  void Merge(const EngineIdentity& o);
};

// "compute" (a group that runs kernels, whether or not it also copies), "copy" (copies and
// fills only), "other" (neither, e.g. media); "" when the flags are not known.
std::string EngineGroupType(std::optional<uint32_t> group_flags);

// "GPU 0 compute 0.1", "GPU 0 compute 0.1 immediate", "GPU 0 engine 0.1 (type unknown)";
// "GPU 0 queue 0x7fac..." ("GPU 0 immediate list 0x7fac...") when the engine was never
// described; "GPU ?" when its device is not known.
std::string EngineName(const EngineIdentity& engine, uint64_t handle);

}  // namespace xtrace::report
