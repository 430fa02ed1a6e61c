// Fences, event pools and events: host-side views of completion state that queue workers
// publish through sync.h, with Level Zero's timeout semantics.
#include "api.h"
#include "objects.h"
#include "sync.h"

namespace simze::api {

ze_result_t FenceCreate(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t* desc,
                        ze_fence_handle_t* phFence) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phFence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto* f = new Fence;
  f->queue = q;
  f->signaled.store((desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0);
  *phFence = to_handle<ze_fence_handle_t>(f);
  return ZE_RESULT_SUCCESS;
}

ze_result_t FenceDestroy(ze_fence_handle_t hFence) {
  Fence* f = from_handle<Fence>(hFence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete f;
  return ZE_RESULT_SUCCESS;
}

ze_result_t FenceHostSynchronize(ze_fence_handle_t hFence, uint64_t timeout) {
  Fence* f = from_handle<Fence>(hFence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return sync::wait(timeout, [f] { return f->signaled.load(); }) ? ZE_RESULT_SUCCESS
                                                                 : ZE_RESULT_NOT_READY;
}

ze_result_t FenceQueryStatus(ze_fence_handle_t hFence) {
  Fence* f = from_handle<Fence>(hFence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return f->signaled.load() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t FenceReset(ze_fence_handle_t hFence) {
  Fence* f = from_handle<Fence>(hFence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  sync::publish([f] { f->signaled.store(false); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t* desc,
                            uint32_t numDevices, ze_device_handle_t* phDevices,
                            ze_event_pool_handle_t* phEventPool) {
  Context* ctx = from_handle<Context>(hContext);
  if (ctx == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phEventPool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < numDevices; ++i) {
    if (phDevices == nullptr || from_handle<Device>(phDevices[i]) == nullptr) {
      return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
  }
  auto* pool = new EventPool;
  pool->context = ctx;
  pool->flags = desc->flags;
  pool->count = desc->count;
  pool->events = std::make_unique<Event[]>(desc->count);
  for (uint32_t i = 0; i < desc->count; ++i) {
    pool->events[i].pool = pool;
    pool->events[i].index = i;
    pool->events[i].tag = 0;  // a slot is not an event until zeEventCreate
  }
  *phEventPool = to_handle<ze_event_pool_handle_t>(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventPoolDestroy(ze_event_pool_handle_t hEventPool) {
  EventPool* pool = from_handle<EventPool>(hEventPool);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete pool;
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t* desc,
                        ze_event_handle_t* phEvent) {
  EventPool* pool = from_handle<EventPool>(hEventPool);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phEvent == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  Event& e = pool->events[desc->index];
  sync::publish([&] {
    e.tag = Event::kTag;
    e.signaled.store(false);
    e.has_timestamps = false;
    e.start_ticks = e.end_ticks = 0;
  });
  *phEvent = to_handle<ze_event_handle_t>(&e);
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventDestroy(ze_event_handle_t hEvent) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  e->tag = 0;  // the slot goes back to the pool
  if (e->pool->counter_based) delete e->pool;
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventCounterBasedCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                    const CounterBasedEventDesc* desc, ze_event_handle_t* phEvent) {
  Context* ctx = from_handle<Context>(hContext);
  if (ctx == nullptr || from_handle<Device>(hDevice) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (desc == nullptr || phEvent == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto* pool = new EventPool;
  pool->context = ctx;
  pool->counter_based = true;
  pool->flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  if (desc->flags & kCounterBasedTimestampFlags) pool->flags |= ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
  pool->count = 1;
  pool->events = std::make_unique<Event[]>(1);
  Event& e = pool->events[0];
  e.pool = pool;
  e.index = 0;
  // A new counter-based event counts as signalled: nothing it waits for is pending.
  sync::publish([&] {
    e.tag = Event::kTag;
    e.signaled.store(true);
  });
  *phEvent = to_handle<ze_event_handle_t>(&e);
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventHostSignal(ze_event_handle_t hEvent) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  sync::publish([e] { e->signaled.store(true); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return sync::wait(timeout, [e] { return e->signaled.load(); }) ? ZE_RESULT_SUCCESS
                                                                 : ZE_RESULT_NOT_READY;
}

ze_result_t EventQueryStatus(ze_event_handle_t hEvent) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return e->signaled.load() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t EventHostReset(ze_event_handle_t hEvent) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  sync::publish([e] {
    e->signaled.store(false);
    e->has_timestamps = false;
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventQueryKernelTimestamp(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t* dstptr) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (dstptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Only pools created with ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP hold timestamps.
  if (!e->pool->timestamps()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(sync::mutex());
  if (!e->signaled.load()) return ZE_RESULT_NOT_READY;
  *dstptr = e->kernel_timestamp();
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventQueryTimestampsExp(ze_event_handle_t hEvent, ze_device_handle_t hDevice,
                                    uint32_t* pCount, ze_kernel_timestamp_result_t* pTimestamps) {
  Event* e = from_handle<Event>(hEvent);
  if (e == nullptr || from_handle<Device>(hDevice) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (pCount == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!e->pool->timestamps()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(sync::mutex());
  if (!e->signaled.load()) return ZE_RESULT_NOT_READY;
  // No sub-devices: exactly one timestamp, the same one zeEventQueryKernelTimestamp reports.
  if (*pCount == 0 || pTimestamps == nullptr) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  pTimestamps[0] = e->kernel_timestamp();
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

}  // namespace simze::api

ze_result_t simze::api::ExCounterBasedEventCreate2(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent) {
  return simze::api::EventCounterBasedCreate(hContext, hDevice, desc, phEvent);
}

ze_result_t simze::api::CoreEventCounterBasedCreate(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent) {
  return simze::api::EventCounterBasedCreate(hContext, hDevice, desc, phEvent);
}
