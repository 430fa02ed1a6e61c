// The trace's synthetic pid/tid layout, in one place: which ids are real processes and
// threads, and where xtrace puts what is not (GPUs, their engines' lanes, the driver lanes,
// further hosts and captures of a merged trace). Linux pids and tids stay below 2^22
// (PID_MAX_LIMIT); everything synthetic is above.
//
//   pid  0 .. 2^22                      a process of the first host
//        N << 22 | pid                  a process of host N of a merged trace (N < kMaxHosts)
//        kDevicePidBase + D             GPU D (0xffff: unknown device); host N's GPUs are
//                                       kDevicesPerHost * N further
//   tid  (on a process) 0 .. 2^22       a thread; N << 22 | tid on host N
//        kFenceLaneTid + n, kDriverLaneTid + n
//                                       lane n of the process's "GPU fences" and "driver"
//                                       tracks
//   tid  (on a GPU) track               an engine, numbered from 1 per device
//        track | n << kLaneShift        lane n (from 1) beside it (export/device_lanes.h)
//        capture << kCaptureShift | ... the same in capture N of the machine
#pragma once

#include <cstdint>

namespace xtrace {

// Linux ids stay below 2^22 (PID_MAX_LIMIT): the bits above say which host.
inline constexpr uint32_t kHostShift = 22;

// Pids from here up are not processes but other timelines drawn like one (a GPU); tids from
// kFirstSyntheticTid up are not threads but tracks of their process (the driver lanes).
inline constexpr uint32_t kFirstSyntheticPid = 0x40000000;
inline constexpr uint32_t kFirstSyntheticTid = 0x7f000000;

// GPUs: device D of the first host is kDevicePidBase + D.
inline constexpr uint32_t kDevicePidBase = kFirstSyntheticPid;
inline constexpr uint32_t kDevicesPerHost = 0x10000;
inline constexpr uint32_t kUnknownDeviceSlot = kDevicesPerHost - 1;

// Lanes of a process's driver (DRM ioctl) and fence tracks.
inline constexpr uint32_t kDriverLaneTid = 0x7fff0000;
inline constexpr uint32_t kFenceLaneTid = 0x7ffe0000;

// On a GPU: lane n (from 1) beside engine track t is t | n << kLaneShift (engine tracks are
// small numbers); capture N of a machine moves its tracks to N << kCaptureShift | track.
inline constexpr uint32_t kLaneShift = 20;
inline constexpr uint32_t kCaptureShift = 24;

// Hosts and captures per host a merged trace can hold apart.
inline constexpr uint32_t kMaxHosts = kFirstSyntheticPid >> kHostShift;
inline constexpr uint32_t kMaxCapturesPerHost = kFirstSyntheticTid >> kCaptureShift;

static_assert(kFenceLaneTid >= kFirstSyntheticTid && kDriverLaneTid >= kFirstSyntheticTid);
static_assert(kDriverLaneTid - kFenceLaneTid >= (1u << 16), "fence lanes stay below driver lanes");
static_assert(kDevicePidBase >= kFirstSyntheticPid, "devices are drawn as track trees of their own");
static_assert(kLaneShift < kCaptureShift, "lanes stay inside a capture's track numbers");

}  // namespace xtrace
