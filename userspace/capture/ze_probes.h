// The Level Zero probe set: owns the loaded BPF skeleton, its ring buffer and every uprobe
// link (RAII: destroying a ZeProbes detaches everything and closes every fd).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "capture/proc_maps.h"
#include "xtrace/records.h"

struct ze_probes;      // generated skeleton (build/bpf/ze_probes.skel.h)
struct ring_buffer;    // libbpf
struct bpf_link;       // libbpf

namespace xtrace {

struct ZeProbesOptions {
  uint64_t ring_bytes = 16 << 20;  // power of two, multiple of the page size
  bool filter_by_pid = false;      // true when probes attach to every process mapping a library
};

using RecordCallback = std::function<void(std::span<const std::byte>)>;
using Counters = std::array<uint64_t, XT_CNT_MAX>;

class ZeProbes {
 public:
  static Result<std::unique_ptr<ZeProbes>> Load(const ZeProbesOptions& options);
  ~ZeProbes();
  ZeProbes(const ZeProbes&) = delete;
  ZeProbes& operator=(const ZeProbes&) = delete;

  // Attaches every Level Zero probe to `library` in process `pid` (-1: every process that
  // maps it). Entry points the library does not export are skipped and listed in `skipped`;
  // it fails only when nothing could be attached.
  Status AttachLibrary(int pid, const MappedLibrary& library, std::vector<std::string>* skipped);

  // Adds a process to the BPF-side filter (used with filter_by_pid).
  Status TracePid(uint32_t pid);

  // Waits up to `timeout_ms` for records (the BPF side only wakes us when the ring fills past
  // a threshold, so this mostly returns on the timeout) and passes each one to `callback`.
  // Returns the number of records consumed.
  Result<int> Poll(int timeout_ms, const RecordCallback& callback);

  // Consumes whatever is in the ring without waiting.
  Result<int> Drain(const RecordCallback& callback);

  // Sums the per-CPU counters (enum xt_counter).
  Counters ReadCounters() const;

  size_t link_count() const { return links_.size(); }

 private:
  ZeProbes() = default;
  static int OnSample(void* ctx, void* data, size_t size);

  struct LinkDeleter {
    void operator()(bpf_link* link) const;
  };
  struct SkeletonDeleter {
    void operator()(::ze_probes* skel) const;
  };
  struct RingDeleter {
    void operator()(ring_buffer* ring) const;
  };

  std::unique_ptr<::ze_probes, SkeletonDeleter> skel_;
  std::unique_ptr<ring_buffer, RingDeleter> ring_;
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links_;
  const RecordCallback* callback_ = nullptr;  // valid only during Poll/Drain
};

}  // namespace xtrace
