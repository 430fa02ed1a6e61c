// Command lists. Regular lists record Commands for later execution; immediate lists submit
// each append at once (one exec ioctl per append) to their own engine and return without
// waiting, as Intel's driver does by default.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "api.h"
#include "objects.h"
#include "sync.h"

namespace simze::api {
namespace {

}  // namespace

void unsignal_counter_based(Event* e) {
  if (e == nullptr || !e->pool->counter_based) return;
  sync::publish([e] {
    e->signaled.store(false);
    e->has_timestamps = false;
  });
}

namespace {

// Resolves wait events into the command; fails on any bad handle. `submitted`: the command
// runs from now (not recorded into a graph).
ze_result_t resolve_events(ze_event_handle_t hSignal, uint32_t numWaits, ze_event_handle_t* phWaits,
                           Command& cmd, bool submitted = true) {
  if (hSignal != nullptr) {
    cmd.signal = from_handle<Event>(hSignal);
    if (cmd.signal == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    // A counter-based event stands for its latest signalling command from its submission on.
    if (submitted) unsignal_counter_based(cmd.signal);
  }
  if (numWaits > 0 && phWaits == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < numWaits; ++i) {
    Event* e = from_handle<Event>(phWaits[i]);
    if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    cmd.waits.push_back(e);
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace

// Records (regular list) or submits (immediate list) one command.
ze_result_t append(CommandList* list, CommandBody body, ze_event_handle_t hSignal,
                   uint32_t numWaits, ze_event_handle_t* phWaits) {
  Command cmd{std::move(body), {}, nullptr};
  const bool recorded = list->capture != nullptr;
  if (ze_result_t r = resolve_events(hSignal, numWaits, phWaits, cmd, !recorded);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  if (recorded) {
    list->capture->commands.push_back(std::move(cmd));
    return ZE_RESULT_SUCCESS;
  }
  if (!list->immediate) {
    list->commands.push_back(std::move(cmd));
    list->recording.reset();  // the next execution must see this command too
    return ZE_RESULT_SUCCESS;
  }
  auto rec = std::make_shared<Recording>();
  rec->commands.push_back(std::move(cmd));
  rec->list_handle = reinterpret_cast<uintptr_t>(list);
  Batch batch;
  batch.recordings.push_back(std::move(rec));
  batch.submission = next_submission_number();
  batch.submit_tid = static_cast<int>(syscall(SYS_gettid));
  batch.submit_mono_ns = mono_now_ns();
  kmd_submit(list->kmd, 1, 1);
  list->engine->submit(std::move(batch));
  if (list->synchronous) list->engine->wait_idle(UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

namespace {

bool is_copy_only(const CommandList& list) { return list.ordinal == kCopyOrdinal; }

size_t max_fill_pattern(const CommandList& list) { return is_copy_only(list) ? 4 : 128; }

ze_result_t launch(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
                   const ze_group_count_t* groups, bool indirect, bool cooperative,
                   ze_event_handle_t hSignal, uint32_t numWaits, ze_event_handle_t* phWaits) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  Kernel* k = from_handle<Kernel>(hKernel);
  if (list == nullptr || k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (groups == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (is_copy_only(*list)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // copy engines run no kernels
  LaunchKernel body;
  body.kernel = k->spec;
  body.cooperative = cooperative;
  if (indirect) {
    body.indirect_groups = groups;  // the device reads it when the launch executes
  } else {
    body.groups = *groups;
  }
  return append(list, std::move(body), hSignal, numWaits, phWaits);
}

}  // namespace

ze_result_t CommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                              const ze_command_list_desc_t* desc,
                              ze_command_list_handle_t* phCommandList) {
  Context* ctx = from_handle<Context>(hContext);
  Device* dev = from_handle<Device>(hDevice);
  if (ctx == nullptr || dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phCommandList == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->commandQueueGroupOrdinal >= kOrdinalCount) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto* list = new CommandList(ctx, dev, desc->commandQueueGroupOrdinal, /*immediate=*/false);
  *phCommandList = to_handle<ze_command_list_handle_t>(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListCreateImmediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                       const ze_command_queue_desc_t* altdesc,
                                       ze_command_list_handle_t* phCommandList) {
  Context* ctx = from_handle<Context>(hContext);
  Device* dev = from_handle<Device>(hDevice);
  if (ctx == nullptr || dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (altdesc == nullptr || phCommandList == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (altdesc->ordinal >= kOrdinalCount) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto* list = new CommandList(ctx, dev, altdesc->ordinal, /*immediate=*/true);
  list->index = altdesc->index;
  list->synchronous = altdesc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  list->engine =
      std::make_unique<Engine>(dev->clock, dev->index, reinterpret_cast<uintptr_t>(list));
  *phCommandList = to_handle<ze_command_list_handle_t>(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListDestroy(ze_command_list_handle_t hCommandList) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete list;  // an immediate list's engine finishes its work first
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListClose(ze_command_list_handle_t hCommandList) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!list->immediate) {
    list->closed = true;
    list->snapshot();
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListReset(ze_command_list_handle_t hCommandList) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->immediate) {
    // Intel's driver waits for an immediate list's outstanding work on reset.
    list->engine->wait_idle(UINT64_MAX);
    return ZE_RESULT_SUCCESS;
  }
  list->commands.clear();
  list->recording.reset();  // executions still in flight keep their own snapshot
  list->closed = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t hCommandList,
                                                  uint64_t* dstptr, ze_event_handle_t hSignalEvent,
                                                  uint32_t numWaitEvents,
                                                  ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (dstptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(list, WriteGlobalTimestamp{dstptr}, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendBarrier(ze_command_list_handle_t hCommandList,
                                     ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                     ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(list, Barrier{}, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryRangesBarrier(ze_command_list_handle_t hCommandList,
                                                 uint32_t numRanges, const size_t* pRangeSizes,
                                                 const void** pRanges,
                                                 ze_event_handle_t hSignalEvent,
                                                 uint32_t numWaitEvents,
                                                 ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (numRanges > 0 && (pRangeSizes == nullptr || pRanges == nullptr)) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  return append(list, Barrier{}, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void* dstptr,
                                        const void* srcptr, size_t size,
                                        ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                        ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (dstptr == nullptr || srcptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(list, MemoryCopy{dstptr, srcptr, size, "zeCommandListAppendMemoryCopy"},
                hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryFill(ze_command_list_handle_t hCommandList, void* ptr,
                                        const void* pattern, size_t pattern_size, size_t size,
                                        ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                        ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (ptr == nullptr || pattern == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pattern_size == 0 || (pattern_size & (pattern_size - 1)) != 0 ||
      pattern_size > max_fill_pattern(*list)) {
    return ZE_RESULT_ERROR_INVALID_SIZE;
  }
  MemoryFill body{ptr, {}, size};
  const auto* bytes = static_cast<const uint8_t*>(pattern);
  body.pattern.assign(bytes, bytes + pattern_size);
  return append(list, std::move(body), hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryCopyRegion(
    ze_command_list_handle_t hCommandList, void* dstptr, const ze_copy_region_t* dstRegion,
    uint32_t dstPitch, uint32_t dstSlicePitch, const void* srcptr,
    const ze_copy_region_t* srcRegion, uint32_t srcPitch, uint32_t srcSlicePitch,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (dstptr == nullptr || srcptr == nullptr || dstRegion == nullptr || srcRegion == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  if (dstRegion->width != srcRegion->width || dstRegion->height != srcRegion->height ||
      dstRegion->depth != srcRegion->depth) {
    return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;  // what Intel's driver answers for mismatched sizes
  }
  MemoryCopyRegion body{dstptr, *dstRegion, dstPitch, dstSlicePitch,
                        srcptr, *srcRegion, srcPitch, srcSlicePitch};
  return append(list, body, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryCopyFromContext(ze_command_list_handle_t hCommandList,
                                                   void* dstptr, ze_context_handle_t hContextSrc,
                                                   const void* srcptr, size_t size,
                                                   ze_event_handle_t hSignalEvent,
                                                   uint32_t numWaitEvents,
                                                   ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr || from_handle<Context>(hContextSrc) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (dstptr == nullptr || srcptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(list, MemoryCopy{dstptr, srcptr, size, "zeCommandListAppendMemoryCopyFromContext"},
                hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendMemoryPrefetch(ze_command_list_handle_t hCommandList, const void* ptr,
                                            size_t) {
  // Memory is host memory and never migrates: a hint with nothing to do, and no submission.
  if (from_handle<CommandList>(hCommandList) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ptr == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
}

ze_result_t CommandListAppendMemAdvise(ze_command_list_handle_t hCommandList,
                                       ze_device_handle_t hDevice, const void* ptr, size_t,
                                       ze_memory_advice_t) {
  if (from_handle<CommandList>(hCommandList) == nullptr || from_handle<Device>(hDevice) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  return ptr == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
}

ze_result_t CommandListAppendSignalEvent(ze_command_list_handle_t hCommandList,
                                         ze_event_handle_t hEvent) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr || hEvent == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(list, SignalEvent{}, hEvent, 0, nullptr);
}

ze_result_t CommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                          ze_event_handle_t* phEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phEvents == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(list, Barrier{}, nullptr, numEvents, phEvents);
}

ze_result_t CommandListAppendEventReset(ze_command_list_handle_t hCommandList,
                                        ze_event_handle_t hEvent) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  Event* e = from_handle<Event>(hEvent);
  if (list == nullptr || e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(list, ResetEvent{e}, nullptr, 0, nullptr);
}

ze_result_t CommandListAppendQueryKernelTimestamps(ze_command_list_handle_t hCommandList,
                                                   uint32_t numEvents, ze_event_handle_t* phEvents,
                                                   void* dstptr, const size_t* pOffsets,
                                                   ze_event_handle_t hSignalEvent,
                                                   uint32_t numWaitEvents,
                                                   ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phEvents == nullptr || dstptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  QueryKernelTimestamps body{{}, dstptr, {}};
  for (uint32_t i = 0; i < numEvents; ++i) {
    Event* e = from_handle<Event>(phEvents[i]);
    if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    body.events.push_back(e);
  }
  if (pOffsets != nullptr) body.offsets.assign(pOffsets, pOffsets + numEvents);
  return append(list, std::move(body), hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                          ze_kernel_handle_t hKernel,
                                          const ze_group_count_t* pLaunchFuncArgs,
                                          ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                          ze_event_handle_t* phWaitEvents) {
  return launch(hCommandList, hKernel, pLaunchFuncArgs, /*indirect=*/false, /*cooperative=*/false,
                hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendLaunchCooperativeKernel(ze_command_list_handle_t hCommandList,
                                                     ze_kernel_handle_t hKernel,
                                                     const ze_group_count_t* pLaunchFuncArgs,
                                                     ze_event_handle_t hSignalEvent,
                                                     uint32_t numWaitEvents,
                                                     ze_event_handle_t* phWaitEvents) {
  return launch(hCommandList, hKernel, pLaunchFuncArgs, /*indirect=*/false, /*cooperative=*/true,
                hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListAppendLaunchKernelIndirect(ze_command_list_handle_t hCommandList,
                                                  ze_kernel_handle_t hKernel,
                                                  const ze_group_count_t* pLaunchArgumentsBuffer,
                                                  ze_event_handle_t hSignalEvent,
                                                  uint32_t numWaitEvents,
                                                  ze_event_handle_t* phWaitEvents) {
  return launch(hCommandList, hKernel, pLaunchArgumentsBuffer, /*indirect=*/true,
                /*cooperative=*/false, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t CommandListHostSynchronize(ze_command_list_handle_t hCommandList, uint64_t timeout) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!list->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // only immediate lists run
  return list->engine->wait_idle(timeout) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t CommandListImmediateAppendCommandListsExp(ze_command_list_handle_t hCommandListImmediate,
                                                      uint32_t numCommandLists,
                                                      ze_command_list_handle_t* phCommandLists,
                                                      ze_event_handle_t hSignalEvent,
                                                      uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents) {
  CommandList* imm = from_handle<CommandList>(hCommandListImmediate);
  if (imm == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!imm->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (phCommandLists == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::vector<std::shared_ptr<const Recording>> recordings;
  for (uint32_t i = 0; i < numCommandLists; ++i) {
    CommandList* list = from_handle<CommandList>(phCommandLists[i]);
    if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (list->immediate || !list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (list->ordinal != imm->ordinal) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    recordings.push_back(list->snapshot());
  }
  return submit_recordings(imm, std::move(recordings), hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t submit_recordings(CommandList* imm,
                              std::vector<std::shared_ptr<const Recording>> recordings,
                              ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                              ze_event_handle_t* phWaitEvents) {
  // One submission, as zeCommandQueueExecuteCommandLists makes one: the waits first, then
  // every list's commands, then the signal once all of them are done.
  Command wait{Barrier{}, {}, nullptr};
  if (ze_result_t r = resolve_events(nullptr, numWaitEvents, phWaitEvents, wait);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  Command signal{SignalEvent{}, {}, nullptr};
  if (ze_result_t r = resolve_events(hSignalEvent, 0, nullptr, signal); r != ZE_RESULT_SUCCESS) {
    return r;
  }
  Batch batch;
  auto first = std::make_shared<Recording>();
  first->commands.push_back(std::move(wait));
  first->list_handle = reinterpret_cast<uintptr_t>(imm);
  batch.recordings.push_back(std::move(first));
  size_t num_commands = 0;
  const auto num_lists = static_cast<uint32_t>(recordings.size());
  for (auto& rec : recordings) {
    num_commands += rec->commands.size();
    batch.recordings.push_back(std::move(rec));
  }
  if (signal.signal != nullptr) {
    auto last = std::make_shared<Recording>();
    last->commands.push_back(std::move(signal));
    last->list_handle = reinterpret_cast<uintptr_t>(imm);
    batch.recordings.push_back(std::move(last));
  }
  batch.submission = next_submission_number();
  batch.submit_tid = static_cast<int>(syscall(SYS_gettid));
  batch.submit_mono_ns = mono_now_ns();
  kmd_submit(imm->kmd, num_lists, num_commands);
  imm->engine->submit(std::move(batch));
  if (imm->synchronous) imm->engine->wait_idle(UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_handle_t hCommandList, uint32_t numKernels, ze_kernel_handle_t* phKernels,
    const uint32_t* pCountBuffer, const ze_group_count_t* pLaunchArgumentsBuffer,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phKernels == nullptr || pCountBuffer == nullptr || pLaunchArgumentsBuffer == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  if (is_copy_only(*list)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  LaunchMultipleKernels body;
  for (uint32_t i = 0; i < numKernels; ++i) {
    Kernel* k = from_handle<Kernel>(phKernels[i]);
    if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    body.kernels.push_back(k->spec);
  }
  body.count = pCountBuffer;
  body.arguments = pLaunchArgumentsBuffer;
  return append(list, std::move(body), hSignalEvent, numWaitEvents, phWaitEvents);
}

}  // namespace simze::api

// A host function the list runs in order (compute-runtime's zex_cmdlist.h): the simulated
// engine calls it on its own thread, as Intel's driver calls it from its host-function thread.
namespace {

// Both names' body: each export calls it, not the other export (whose probe would fire too).
ze_result_t AppendHostFunction(ze_command_list_handle_t hCommandList, void* pHostFunction,
                               void* pUserData, void* pNext, ze_event_handle_t hSignalEvent,
                               uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  using namespace simze;
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pHostFunction == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pNext != nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return api::append(list, HostFunction{reinterpret_cast<void (*)(void*)>(pHostFunction), pUserData},
                     hSignalEvent, numWaitEvents, phWaitEvents);
}

}  // namespace

ze_result_t simze::api::CommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return AppendHostFunction(hCommandList, pHostFunction, pUserData, pNext, hSignalEvent,
                            numWaitEvents, phWaitEvents);
}

ze_result_t simze::api::ExCommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return AppendHostFunction(hCommandList, pHostFunction, pUserData, pNext, hSignalEvent,
                            numWaitEvents, phWaitEvents);
}

// A launch that carries its group size and arguments (Level Zero 1.14): the simulated kernels
// read no arguments, and the group size is the kernel's from then on, as zeKernelSetGroupSize
// would have made it.
ze_result_t simze::api::CommandListAppendLaunchKernelWithArguments(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel, ze_group_count_t groupCounts,
    simze::api::GroupSize groupSizes, void** /*pArguments*/, const void* /*pNext*/,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  using namespace simze::api;
  if (ze_result_t r = KernelSetGroupSize(hKernel, groupSizes.x, groupSizes.y, groupSizes.z);
      r != ZE_RESULT_SUCCESS) {
    return r;
  }
  return CommandListAppendLaunchKernel(hCommandList, hKernel, &groupCounts, hSignalEvent,
                                       numWaitEvents, phWaitEvents);
}

// The launch that takes its group counts by pointer and its extensions (cooperative, ...) in
// pNext (Level Zero 1.14): the simulated kernels run the same whatever the extension says.
ze_result_t simze::api::CommandListAppendLaunchKernelWithParameters(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
    const ze_group_count_t* pGroupCounts, const void* /*pNext*/, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::CommandListAppendLaunchKernel(hCommandList, hKernel, pGroupCounts,
                                                   hSignalEvent, numWaitEvents, phWaitEvents);
}
