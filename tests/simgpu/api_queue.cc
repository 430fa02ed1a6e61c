// Command queues: each owns a worker engine and a kernel-driver context; an execution is one
// submission (one exec ioctl on the calling thread, then the lists run in order on the engine).
#include <sys/syscall.h>
#include <unistd.h>

#include "api.h"
#include "objects.h"

namespace simze::api {

ze_result_t CommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                               const ze_command_queue_desc_t* desc,
                               ze_command_queue_handle_t* phCommandQueue) {
  Context* ctx = from_handle<Context>(hContext);
  Device* dev = from_handle<Device>(hDevice);
  if (ctx == nullptr || dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phCommandQueue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->ordinal >= kOrdinalCount) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto* q = new CommandQueue(ctx, dev, desc->ordinal);
  q->index = desc->index;
  q->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  q->engine = std::make_unique<Engine>(dev->clock, dev->index, reinterpret_cast<uintptr_t>(q));
  *phCommandQueue = to_handle<ze_command_queue_handle_t>(q);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueDestroy(ze_command_queue_handle_t hCommandQueue) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete q;  // the engine finishes what was submitted, then stops
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
                                            uint32_t numCommandLists,
                                            ze_command_list_handle_t* phCommandLists,
                                            ze_fence_handle_t hFence) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phCommandLists == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numCommandLists == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  Fence* fence = nullptr;
  if (hFence != nullptr) {
    fence = from_handle<Fence>(hFence);
    if (fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (fence->queue != q) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }

  // Validate everything before anything is submitted: a failed call submits nothing.
  Batch batch;
  size_t num_commands = 0;
  for (uint32_t i = 0; i < numCommandLists; ++i) {
    CommandList* list = from_handle<CommandList>(phCommandLists[i]);
    if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (list->immediate || !list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (list->ordinal != q->ordinal) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    batch.recordings.push_back(list->snapshot());
    num_commands += batch.recordings.back()->commands.size();
  }
  batch.fence = fence;
  batch.submission = next_submission_number();
  batch.submit_tid = static_cast<int>(syscall(SYS_gettid));
  batch.submit_mono_ns = mono_now_ns();
  // The kernel driver hears about the work before the hardware can start it.
  kmd_submit(q->kmd, numCommandLists, num_commands);
  q->engine->submit(std::move(batch));
  if (q->synchronous) q->engine->wait_idle(UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return q->engine->wait_idle(timeout) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

}  // namespace simze::api
