// The objects behind Level Zero handles. A handle is the object's address (stable for its
// lifetime); each object starts with a tag so a handle of the wrong kind is rejected.
#pragma once

#include <level_zero/ze_api.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commands.h"
#include "device_clock.h"
#include "engine.h"
#include "kmd_stub.h"
#include "module_format.h"

namespace simze {

template <uint32_t Tag>
struct Tagged {
  static constexpr uint32_t kTag = Tag;
  uint32_t tag = Tag;
};

struct Driver;

struct Device : Tagged<0x5a444556> {  // "ZDEV"
  Device(Driver* owner, uint32_t idx, const DeviceClock& c) : driver(owner), index(idx), clock(c) {}
  Driver* driver;
  uint32_t index;
  DeviceClock clock;
  ze_device_uuid_t uuid{};
};

struct Driver : Tagged<0x5a445256> {  // "ZDRV"
  std::vector<std::unique_ptr<Device>> devices;
  ze_driver_uuid_t uuid{};
};

struct Context : Tagged<0x5a435458> {  // "ZCTX"
  Driver* driver = nullptr;
};

// Command queue group ordinals this device exposes.
inline constexpr uint32_t kComputeOrdinal = 0;
inline constexpr uint32_t kCopyOrdinal = 1;
inline constexpr uint32_t kOrdinalCount = 2;
inline EngineClass engine_class_of(uint32_t ordinal) {
  return ordinal == kCopyOrdinal ? EngineClass::kCopy : EngineClass::kCompute;
}

struct CommandQueue : Tagged<0x5a43514b> {  // "ZCQK"
  CommandQueue(Context* c, Device* d, uint32_t ord)
      : context(c), device(d), ordinal(ord), kmd(engine_class_of(ord)) {}
  Context* context;
  Device* device;
  uint32_t ordinal;
  uint32_t index = 0;  // within its ordinal's group, as created
  bool synchronous = false;
  KmdContext kmd;
  std::unique_ptr<Engine> engine;
};

struct Graph;

struct CommandList : Tagged<0x5a434d4c> {  // "ZCML"
  CommandList(Context* c, Device* d, uint32_t ord, bool imm)
      : context(c), device(d), ordinal(ord), immediate(imm), kmd(engine_class_of(ord)) {}
  Context* context;
  Device* device;
  uint32_t ordinal;
  bool immediate;
  uint32_t index = 0;        // immediate lists: the queue index of their descriptor
  bool synchronous = false;  // immediate lists created with ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS
  bool closed = false;
  std::vector<Command> commands;              // regular lists: what has been appended
  std::shared_ptr<const Recording> recording;  // snapshot for execution, rebuilt after appends
  KmdContext kmd;                              // immediate lists submit on their own
  std::unique_ptr<Engine> engine;              // immediate lists only
  // Between zeCommandListBegin...CaptureExp and zeCommandListEndGraphCaptureExp: the graph its
  // appends are recorded into (they run nothing then).
  Graph* capture = nullptr;

  // What an execution of this (closed) list runs; built once per recording, then shared.
  std::shared_ptr<const Recording> snapshot() {
    if (!recording) {
      auto r = std::make_shared<Recording>();
      r->commands = commands;
      r->list_handle = reinterpret_cast<uintptr_t>(this);
      recording = std::move(r);
    }
    return recording;
  }
};

// Intel's record-and-replay graphs (ZE_experimental_record_replay_graph): a graph holds the
// commands a capture recorded; an executable graph, instantiated from one, is what
// zeCommandListAppendGraphExp runs, as often as it is appended.
struct Graph : Tagged<0x5a475246> {  // "ZGRF"
  Context* context = nullptr;
  std::vector<Command> commands;
  uintptr_t recorded_on = 0;  // the list that recorded it (ground truth's cmdlist column)
};

struct ExecutableGraph : Tagged<0x5a584752> {  // "ZXGR"
  std::shared_ptr<const Recording> recording;
};

struct Fence : Tagged<0x5a464e43> {  // "ZFNC"
  CommandQueue* queue = nullptr;
  std::atomic<bool> signaled{false};  // changed under sync::mutex()
};

struct EventPool;

struct Event : Tagged<0x5a45564e> {  // "ZEVN"
  EventPool* pool = nullptr;
  uint32_t index = 0;
  std::atomic<bool> signaled{false};  // changed under sync::mutex()
  // Device ticks (full 64 bits) of the signalling command's start and end; guarded by
  // sync::mutex(). Reported masked to kernelTimestampValidBits, as the hardware stores them.
  bool has_timestamps = false;
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;

  // What zeEventQueryKernelTimestamp reports; call under sync::mutex().
  ze_kernel_timestamp_result_t kernel_timestamp() const {
    ze_kernel_timestamp_result_t r{};
    r.global.kernelStart = start_ticks & DeviceClock::kKernelMask;
    r.global.kernelEnd = end_ticks & DeviceClock::kKernelMask;
    r.context = r.global;  // the simulated device runs one context at a time
    return r;
  }
};

struct EventPool : Tagged<0x5a45504c> {  // "ZEPL"
  Context* context = nullptr;
  ze_event_pool_flags_t flags = 0;
  uint32_t count = 0;
  // Events live in the pool, like Intel's events are slots of the pool's memory: their
  // handles stay valid and distinct for the pool's lifetime.
  std::unique_ptr<Event[]> events;
  // A counter-based event's own one-slot pool (zeEventCounterBasedCreate): it goes with the
  // event, and every append that signals the event makes it unsignalled again.
  bool counter_based = false;
  bool timestamps() const { return (flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0; }
};

struct Module : Tagged<0x5a4d4f44> {  // "ZMOD"
  Context* context = nullptr;
  Device* device = nullptr;
  bool simulated = false;
  std::vector<uint8_t> binary;  // as given, for zeModuleGetNativeBinary
  std::mutex mu;                // blob modules add kernel specs on demand
  std::map<std::string, std::shared_ptr<const KernelSpec>, std::less<>> kernels;
  std::vector<const char*> names;  // simulated modules, file order (zeModuleGetKernelNames)
};

struct BuildLog : Tagged<0x5a424c47> {  // "ZBLG"
  std::string text;
};

struct Kernel : Tagged<0x5a4b524e> {  // "ZKRN"
  Module* module = nullptr;
  std::shared_ptr<const KernelSpec> spec;
  uint32_t group_size[3] = {1, 1, 1};
  ze_kernel_indirect_access_flags_t indirect_access = 0;
};

// Handle <-> object. from_handle returns nullptr for a null handle or one of another kind.
template <typename Handle, typename T>
Handle to_handle(T* object) {
  return reinterpret_cast<Handle>(object);
}

template <typename T, typename Handle>
T* from_handle(Handle handle) {
  T* object = reinterpret_cast<T*>(handle);
  if (object == nullptr || object->tag != T::kTag) return nullptr;
  return object;
}

// The driver singleton, created by the first zeInit.
Driver& driver();

}  // namespace simze
