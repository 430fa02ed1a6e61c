// SPDX-License-Identifier: GPL-2.0
/* Completion side of DRM submissions: fences created while a traced thread is inside a DRM
 * ioctl are remembered, and reported when they signal, so a submission's GPU work gets a
 * measured end. Every program is a raw tracepoint attached only where the kernel has it
 * (dma_fence everywhere dma-buf is built in; i915's request tracepoints with i915 loaded,
 * xe's hardware fence tracepoints with xe loaded). */
#include "drm.bpf.h"
#include "output.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Fences awaited at once. LRU: a fence that never signals (or whose signal was missed) must
 * not hold its slot. */
#define XT_MAX_WATCHED_FENCES 16384

/* errno.h is not available to BPF programs. */
#define XT_EEXIST 17

struct xt_fence_key {
	__u64 context;
	__u64 seqno;
};

struct xt_fence_watch {
	__u64 created_ns;
	__u64 ioctl_start_ns;
	__u32 pid; /* the process and thread whose ioctl made it, as the collector numbers them */
	__u32 tid;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_WATCHED_FENCES);
	__type(key, struct xt_fence_key);
	__type(value, struct xt_fence_watch);
} watched_fences SEC(".maps");

static __always_inline void xt_fence_key_of(const struct dma_fence *fence, struct xt_fence_key *key)
{
	key->context = BPF_CORE_READ(fence, context);
	key->seqno = BPF_CORE_READ(fence, seqno);
}

/* A fence is being created: watch it if the current thread is inside a traced DRM ioctl. */
static __always_inline int xt_fence_created(const struct dma_fence *fence)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct xt_drm_pending *ioctl = bpf_map_lookup_elem(&drm_pending, &pid_tgid);
	struct xt_fence_watch watch = {};
	struct xt_fence_key key = {};
	long err;

	if (!ioctl)
		return 0;
	xt_fence_key_of(fence, &key);
	watch.created_ns = bpf_ktime_get_ns();
	watch.ioctl_start_ns = ioctl->start_ns;
	/* The thread as the collector numbers it, for the record. */
	xt_current_ids(xt_config(), &watch.tid, &watch.pid);
	/* Already watched: i915 requests are seen both at dma_fence_init and at
	 * i915_request_add. */
	err = bpf_map_update_elem(&watched_fences, &key, &watch, BPF_NOEXIST);
	if (err && err != -XT_EEXIST)
		xt_count(XT_CNT_DRM_FENCE_UNWATCHED);
	return 0;
}

/* A fence signaled (in any context): report it if watched, once. */
static __always_inline int xt_fence_signaled(const struct dma_fence *fence, __u32 source)
{
	struct xt_fence_watch *watch;
	struct xt_drm_fence rec = {};
	struct xt_fence_key key = {};

	xt_fence_key_of(fence, &key);
	watch = bpf_map_lookup_elem(&watched_fences, &key);
	if (!watch)
		return 0;
	/* About the thread whose ioctl made the fence, not whichever task signals it. */
	xt_fill_header_of(&rec.hdr, XT_REC_DRM_FENCE, sizeof(rec), 0, watch->created_ns,
			  bpf_ktime_get_ns(), watch->pid, watch->tid);
	rec.ioctl_start_ns = watch->ioctl_start_ns;
	rec.context = key.context;
	rec.seqno = key.seqno;
	rec.source = source;
	xt_output(&rec, sizeof(rec));
	bpf_map_delete_elem(&watched_fences, &key);
	return 0;
}

SEC("raw_tp/dma_fence_init")
int BPF_PROG(drm_dma_fence_init, struct dma_fence *fence)
{
	return xt_fence_created(fence);
}

SEC("raw_tp/dma_fence_signaled")
int BPF_PROG(drm_dma_fence_signaled, struct dma_fence *fence)
{
	return xt_fence_signaled(fence, XT_FENCE_SRC_DMA_FENCE);
}

/* i915 tracepoints pass a struct i915_request *, whose first member is its dma_fence: the
 * pointer is the fence's, no i915 BTF needed. */
SEC("raw_tp/i915_request_add")
int BPF_PROG(drm_i915_request_add, struct dma_fence *request_fence)
{
	return xt_fence_created(request_fence);
}

SEC("raw_tp/i915_request_retire")
int BPF_PROG(drm_i915_request_retire, struct dma_fence *request_fence)
{
	return xt_fence_signaled(request_fence, XT_FENCE_SRC_I915_RETIRE);
}

/* xe tracepoints pass a struct xe_hw_fence *, whose first member is its dma_fence: as for
 * i915, the pointer is the fence's and no xe module BTF is needed. xe initialises the
 * hardware fence of a job while arming it inside the exec ioctl. */
SEC("raw_tp/xe_hw_fence_create")
int BPF_PROG(drm_xe_hw_fence_create, struct dma_fence *hw_fence)
{
	return xt_fence_created(hw_fence);
}

SEC("raw_tp/xe_hw_fence_signal")
int BPF_PROG(drm_xe_hw_fence_signal, struct dma_fence *hw_fence)
{
	return xt_fence_signaled(hw_fence, XT_FENCE_SRC_XE_HW_FENCE);
}
