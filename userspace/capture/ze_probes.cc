// Loading the Level Zero BPF programs and attaching them to a loader library.
#include "capture/ze_probes.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ze_probes.skel.h"

namespace xtrace {
namespace {

// One probed entry point: its symbol and the programs on its entry and return.
// (The skeleton's program table is an anonymous struct, hence accessors, not member pointers.)
struct ProbeSpec {
  const char* symbol;
  bpf_program* (*entry)(const ze_probes*);
  bpf_program* (*ret)(const ze_probes*);
};

constexpr ProbeSpec kProbes[] = {
    {"zeKernelCreate", [](const ze_probes* s) { return s->progs.ze_kernel_create_entry; },
     [](const ze_probes* s) { return s->progs.ze_kernel_create_return; }},
    {"zeCommandListAppendLaunchKernel",
     [](const ze_probes* s) { return s->progs.ze_append_launch_kernel_entry; },
     [](const ze_probes* s) { return s->progs.ze_append_launch_kernel_return; }},
};

std::string ErrnoText(int err) { return std::strerror(err < 0 ? -err : err); }

}  // namespace

void ZeProbes::LinkDeleter::operator()(bpf_link* link) const { bpf_link__destroy(link); }
void ZeProbes::SkeletonDeleter::operator()(::ze_probes* skel) const { ze_probes__destroy(skel); }
void ZeProbes::RingDeleter::operator()(ring_buffer* ring) const { ring_buffer__free(ring); }

ZeProbes::~ZeProbes() {
  // Links first, then the ring, then the programs and maps they refer to.
  links_.clear();
  ring_.reset();
  skel_.reset();
}

Result<std::unique_ptr<ZeProbes>> ZeProbes::Load(const ZeProbesOptions& options) {
  std::unique_ptr<ZeProbes> self(new ZeProbes());
  self->skel_.reset(ze_probes__open());
  if (!self->skel_) return Status::Error("opening BPF object: " + ErrnoText(errno));
  auto* skel = self->skel_.get();

  // Configuration goes in between open and load.
  skel->rodata->filter_by_pid = options.filter_by_pid ? 1 : 0;
  // Wake the reader once a quarter of the ring is pending: well before it can overflow at
  // the poll interval, yet rare enough that wakeups cost nothing measurable.
  skel->rodata->wakeup_bytes = options.ring_bytes / 4;
  if (int err = bpf_map__set_max_entries(skel->maps.events, static_cast<__u32>(options.ring_bytes)))
    return Status::Error("sizing ring buffer to " + std::to_string(options.ring_bytes) +
                         " bytes: " + ErrnoText(err));

  if (int err = ze_probes__load(skel)) {
    std::string hint;
    if (err == -EPERM || errno == EPERM)
      hint = " (capturing needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)";
    return Status::Error("loading BPF programs: " + ErrnoText(err) + hint);
  }

  self->ring_.reset(ring_buffer__new(bpf_map__fd(skel->maps.events), &ZeProbes::OnSample,
                                     self.get(), nullptr));
  if (!self->ring_) return Status::Error("creating ring buffer reader: " + ErrnoText(errno));
  return self;
}

Status ZeProbes::AttachLibrary(int pid, const MappedLibrary& library,
                               std::vector<std::string>* skipped) {
  size_t attached = 0;
  std::string first_error;
  for (const ProbeSpec& spec : kProbes) {
    bool ok = true;
    std::vector<std::unique_ptr<bpf_link, LinkDeleter>> pair;
    for (bool retprobe : {false, true}) {
      LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .func_name = spec.symbol);
      bpf_program* prog = (retprobe ? spec.ret : spec.entry)(skel_.get());
      bpf_link* link =
          bpf_program__attach_uprobe_opts(prog, pid, library.host_path.c_str(), 0, &opts);
      if (!link) {
        if (first_error.empty())
          first_error = std::string(spec.symbol) + ": " + ErrnoText(errno);
        ok = false;
        break;
      }
      pair.emplace_back(link);
    }
    if (!ok) {
      if (skipped) skipped->push_back(spec.symbol);
      continue;
    }
    for (auto& l : pair) links_.push_back(std::move(l));
    ++attached;
  }
  if (attached == 0)
    return Status::Error("no Level Zero probe could be attached to " + library.host_path +
                         " (" + first_error + ")");
  return Status::Ok();
}

Status ZeProbes::TracePid(uint32_t pid) {
  const __u8 one = 1;
  if (bpf_map__update_elem(skel_->maps.traced_pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY))
    return Status::Error("adding pid " + std::to_string(pid) + " to the filter: " +
                         ErrnoText(errno));
  return Status::Ok();
}

int ZeProbes::OnSample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<ZeProbes*>(ctx);
  (*self->callback_)(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
  return 0;
}

Result<int> ZeProbes::Poll(int timeout_ms, const RecordCallback& callback) {
  callback_ = &callback;
  int n = ring_buffer__poll(ring_.get(), timeout_ms);
  // Records written with BPF_RB_NO_WAKEUP never make epoll report the ring ready, so poll
  // alone would leave them until the wakeup threshold: consume on every timeout too.
  if (n >= 0 || n == -EINTR) {
    const int more = ring_buffer__consume(ring_.get());
    n = more < 0 ? more : std::max(n, 0) + more;
  }
  callback_ = nullptr;
  if (n < 0) return Status::Error("reading ring buffer: " + ErrnoText(n));
  return n;
}

Result<int> ZeProbes::Drain(const RecordCallback& callback) {
  callback_ = &callback;
  const int n = ring_buffer__consume(ring_.get());
  callback_ = nullptr;
  if (n < 0) return Status::Error("draining ring buffer: " + ErrnoText(n));
  return n;
}

Counters ZeProbes::ReadCounters() const {
  Counters total{};
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return total;
  std::vector<__u64> per_cpu(ncpu);
  for (__u32 i = 0; i < XT_CNT_MAX; ++i) {
    if (bpf_map__lookup_elem(skel_->maps.counters, &i, sizeof(i), per_cpu.data(),
                             per_cpu.size() * sizeof(__u64), 0))
      continue;
    for (__u64 v : per_cpu) total[i] += v;
  }
  return total;
}

}  // namespace xtrace
