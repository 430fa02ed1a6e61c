// Shared maps: creation, sharing with probe objects, ring reading, counters.
#include "capture/bpf/capture_maps.h"

#include <bpf/libbpf.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "decode/record_decoder.h"

#include "shared_maps.skel.h"

namespace xtrace {

std::string BpfErrorText(int err) { return std::strerror(err < 0 ? -err : err); }

namespace {

int PrintLibbpfVerbose(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  return std::vfprintf(stderr, format, args);
}

int PrintLibbpfQuiet(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

void SetLibbpfVerbosity(bool verbose) {
  libbpf_set_print(verbose ? PrintLibbpfVerbose : PrintLibbpfQuiet);
}

void CaptureMaps::SkeletonDeleter::operator()(::shared_maps* skel) const {
  shared_maps__destroy(skel);
}
void CaptureMaps::RingDeleter::operator()(ring_buffer* ring) const { ring_buffer__free(ring); }

CaptureMaps::~CaptureMaps() {
  ring_.reset();
  skel_.reset();
}

Result<std::unique_ptr<CaptureMaps>> CaptureMaps::Create(uint64_t ring_bytes) {
  std::unique_ptr<CaptureMaps> self(new CaptureMaps());
  self->ring_bytes_ = ring_bytes;
  self->skel_.reset(shared_maps__open());
  if (!self->skel_) return Status::Error("opening BPF maps object: " + BpfErrorText(errno));
  auto* skel = self->skel_.get();
  if (int err = bpf_map__set_max_entries(skel->maps.events, static_cast<__u32>(ring_bytes)))
    return Status::Error("sizing ring buffer to " + std::to_string(ring_bytes) +
                         " bytes: " + BpfErrorText(err));
  if (int err = shared_maps__load(skel)) {
    std::string hint;
    if (err == -EPERM || errno == EPERM)
      hint = " (capturing needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)";
    return Status::Error("creating BPF maps: " + BpfErrorText(err) + hint);
  }
  self->ring_.reset(ring_buffer__new(bpf_map__fd(skel->maps.events), &CaptureMaps::OnSample,
                                     self.get(), nullptr));
  if (!self->ring_) return Status::Error("creating ring buffer reader: " + BpfErrorText(errno));
  return self;
}

Status CaptureMaps::Share(bpf_object* obj) const {
  const std::pair<const char*, bpf_map*> shared[] = {
      {"events", skel_->maps.events},
      {"counters", skel_->maps.counters},
      {"traced_pids", skel_->maps.traced_pids},
      {"thread_state", skel_->maps.thread_state},
      {"collection_state", skel_->maps.collection_state},
      {"capture_config", skel_->maps.capture_config},
      {"scope_cgroup", skel_->maps.scope_cgroup},
      {"drops_by_pid", skel_->maps.drops_by_pid},
      {"filter_epoch", skel_->maps.filter_epoch},
      {"held", skel_->maps.held},
      {"hold_parents", skel_->maps.hold_parents},
      {"itt_rings", skel_->maps.itt_rings},
      {"query_pids", skel_->maps.query_pids},
      {"known_handles", skel_->maps.known_handles},
      {"asked_handles", skel_->maps.asked_handles},
      {"python_procs", skel_->maps.python_procs},
      {"py_threads", skel_->maps.py_threads},
  };
  for (const auto& [name, ours] : shared) {
    bpf_map* theirs = bpf_object__find_map_by_name(obj, name);
    if (!theirs) continue;  // an object need not use every shared map
    if (int err = bpf_map__reuse_fd(theirs, bpf_map__fd(ours)))
      return Status::Error(std::string("sharing map ") + name + ": " + BpfErrorText(err));
  }
  return Status::Ok();
}

// BPF threads keep their last filter answer until filter_epoch moves: every change to
// traced_pids, collection_state or the scope from here is followed by this.
void CaptureMaps::FilterChanged() {
  const __u32 user_slot = 0;
  ++filter_epoch_;
  bpf_map__update_elem(skel_->maps.filter_epoch, &user_slot, sizeof(user_slot), &filter_epoch_,
                       sizeof(filter_epoch_), BPF_ANY);
}

Status CaptureMaps::SetPythonLayout(uint32_t pid, const xt_py_layout& layout) {
  if (bpf_map__update_elem(skel_->maps.python_procs, &pid, sizeof(pid), &layout, sizeof(layout),
                           BPF_ANY))
    return Status::Error("setting the Python layout of pid " + std::to_string(pid) + ": " +
                         BpfErrorText(errno));
  return Status::Ok();
}

void CaptureMaps::ForgetPython(uint32_t pid) {
  bpf_map__delete_elem(skel_->maps.python_procs, &pid, sizeof(pid), 0);
}

int CaptureMaps::held_fd() const { return bpf_map__fd(skel_->maps.held); }
int CaptureMaps::hold_parents_fd() const { return bpf_map__fd(skel_->maps.hold_parents); }
int CaptureMaps::thread_state_fd() const { return bpf_map__fd(skel_->maps.thread_state); }

Status CaptureMaps::WatchIttRings(uint32_t pid, uint64_t control_address) {
  const xt_itt_rings_seen seen{control_address, 0, 0, 0, 0};
  if (bpf_map__update_elem(skel_->maps.itt_rings, &pid, sizeof(pid), &seen, sizeof(seen), BPF_ANY))
    return Status::Error("watching the ITT rings of pid " + std::to_string(pid) + ": " +
                         BpfErrorText(errno));
  return Status::Ok();
}

std::optional<xt_itt_rings_seen> CaptureMaps::TakeIttRings(uint32_t pid) {
  xt_itt_rings_seen seen{};
  if (bpf_map__lookup_and_delete_elem(skel_->maps.itt_rings, &pid, sizeof(pid), &seen,
                                      sizeof(seen), 0))
    return std::nullopt;
  return seen;
}

Status CaptureMaps::TracePid(uint32_t pid) {
  const __u8 one = 1;
  if (bpf_map__update_elem(skel_->maps.traced_pids, &pid, sizeof(pid), &one, sizeof(one),
                           BPF_ANY))
    return Status::Error("adding pid " + std::to_string(pid) + " to the filter: " +
                         BpfErrorText(errno));
  FilterChanged();
  return Status::Ok();
}

void CaptureMaps::ForgetPid(uint32_t pid) {
  bpf_map__delete_elem(skel_->maps.traced_pids, &pid, sizeof(pid), 0);
  bpf_map__delete_elem(skel_->maps.collection_state, &pid, sizeof(pid), 0);
  FilterChanged();
}

Status CaptureMaps::SetCollectionState(uint32_t pid, uint32_t state) {
  if (bpf_map__update_elem(skel_->maps.collection_state, &pid, sizeof(pid), &state,
                           sizeof(state), BPF_ANY))
    return Status::Error("setting the collection state of pid " + std::to_string(pid) + ": " +
                         BpfErrorText(errno));
  FilterChanged();
  return Status::Ok();
}

std::vector<uint32_t> CaptureMaps::TracedPids() const {
  std::vector<uint32_t> pids;
  uint32_t key = 0, next = 0;
  const uint32_t* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.traced_pids, prev, &next, sizeof(next)) == 0) {
    pids.push_back(next);
    key = next;
    prev = &key;
  }
  return pids;
}

Status CaptureMaps::SetScope(const xt_capture_config& config) {
  const uint32_t zero = 0;
  if (bpf_map__update_elem(skel_->maps.capture_config, &zero, sizeof(zero), &config,
                           sizeof(config), BPF_ANY))
    return Status::Error("setting the capture scope: " + BpfErrorText(errno));
  FilterChanged();
  return Status::Ok();
}

Status CaptureMaps::SetScopeCgroup(int cgroup_dir_fd) {
  const uint32_t zero = 0;
  const uint32_t fd = static_cast<uint32_t>(cgroup_dir_fd);
  if (bpf_map__update_elem(skel_->maps.scope_cgroup, &zero, sizeof(zero), &fd, sizeof(fd),
                           BPF_ANY))
    return Status::Error("setting the capture cgroup: " + BpfErrorText(errno) +
                         " (is it a cgroup v2 directory?)");
  FilterChanged();
  return Status::Ok();
}

Status CaptureMaps::SetQueryPid(uint32_t pid, uint32_t kinds) {
  const bool on = kinds != 0;
  if (on ? bpf_map__update_elem(skel_->maps.query_pids, &pid, sizeof(pid), &kinds, sizeof(kinds), BPF_ANY)
         : bpf_map__delete_elem(skel_->maps.query_pids, &pid, sizeof(pid), 0)) {
    if (!on) return Status::Ok();  // was not there
    return Status::Error("marking pid " + std::to_string(pid) + " for queries: " + BpfErrorText(errno));
  }
  FilterChanged();
  return Status::Ok();
}

namespace {

// Every key of a handle map whose process is `pid`.
std::vector<xt_query_key> HandleKeys(bpf_map* map, uint32_t pid) {
  std::vector<xt_query_key> keys;
  xt_query_key key{}, next{};
  const xt_query_key* prev = nullptr;
  while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
    if (next.pid == pid) keys.push_back(next);
    key = next;
    prev = &key;
  }
  return keys;
}

}  // namespace

std::vector<CaptureMaps::AskedHandle> CaptureMaps::AskedHandles(uint32_t pid) const {
  std::vector<AskedHandle> handles;
  for (const xt_query_key& k : HandleKeys(skel_->maps.asked_handles, pid)) {
    uint8_t kind = 0;
    // Settled or dropped since the walk: nothing to ask.
    if (bpf_map__lookup_elem(skel_->maps.asked_handles, &k, sizeof(k), &kind, sizeof(kind), 0)) continue;
    handles.push_back({k.handle, kind});
  }
  return handles;
}

void CaptureMaps::SettleHandles(uint32_t pid, const std::vector<uint64_t>& handles) {
  const uint8_t learned = XT_HANDLE_LEARNED;
  for (uint64_t h : handles) {
    xt_query_key key{};
    key.pid = pid;
    key.handle = h;
    // Known first, then no longer asked: a launch in between finds it known.
    bpf_map__update_elem(skel_->maps.known_handles, &key, sizeof(key), &learned, sizeof(learned), BPF_ANY);
    bpf_map__delete_elem(skel_->maps.asked_handles, &key, sizeof(key), 0);
  }
}

void CaptureMaps::DropAsked(uint32_t pid) {
  for (const xt_query_key& k : HandleKeys(skel_->maps.asked_handles, pid))
    bpf_map__delete_elem(skel_->maps.asked_handles, &k, sizeof(k), 0);
}

void CaptureMaps::ForgetQueries(uint32_t pid) {
  (void)SetQueryPid(pid, 0);
  DropAsked(pid);
  for (const xt_query_key& k : HandleKeys(skel_->maps.known_handles, pid))
    bpf_map__delete_elem(skel_->maps.known_handles, &k, sizeof(k), 0);
}

std::map<uint32_t, uint64_t> CaptureMaps::ReadDropsByPid() const {
  std::map<uint32_t, uint64_t> drops;
  uint32_t key = 0, next = 0;
  const uint32_t* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.drops_by_pid, prev, &next, sizeof(next)) == 0) {
    uint64_t n = 0;
    if (bpf_map__lookup_elem(skel_->maps.drops_by_pid, &next, sizeof(next), &n, sizeof(n), 0) == 0)
      drops[next] = n;
    key = next;
    prev = &key;
  }
  for (const auto& [pid, n] : user_drops_) drops[pid] += n;
  return drops;
}

void CaptureMaps::AddUserCount(xt_counter counter, uint32_t pid, uint64_t n) {
  if (!n || counter >= XT_CNT_MAX) return;
  user_counts_[counter] += n;
  if (counter == XT_CNT_DROPPED) user_drops_[pid] += n;
}

uint32_t CaptureMaps::CollectionState(uint32_t pid) const {
  uint32_t state = XT_COLLECT_ON;
  if (bpf_map__lookup_elem(skel_->maps.collection_state, &pid, sizeof(pid), &state, sizeof(state), 0))
    return XT_COLLECT_ON;
  return state;
}

int CaptureMaps::OnSample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<CaptureMaps*>(ctx);
  std::span<const std::byte> sample(static_cast<const std::byte*>(data), size);
  while (!sample.empty()) {
    const std::span<const std::byte> record = NextRecordOfSample(sample);
    if (self->side_) self->side_->BeforeRingRecord(record, {*self->callback_, self->decoded_});
    (*self->callback_)(record);
  }
  return 0;
}

void CaptureMaps::SetSideStream(SideStream* side) {
  const int epoll_fd = ring_buffer__epoll_fd(ring_.get());
  if (side_ && side_->wake_fd() >= 0) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, side_->wake_fd(), nullptr);
  side_ = side;
  if (side_ && side_->wake_fd() >= 0) {
    // Never handed to libbpf's own poll (Poll waits itself, then consumes): data.fd tells
    // nobody anything, the wait's end is all it is for.
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = side_->wake_fd();
    (void)epoll_ctl(epoll_fd, EPOLL_CTL_ADD, side_->wake_fd(), &event);
  }
}

Result<int> CaptureMaps::Poll(int timeout_ms, const RecordCallback& callback) {
  // Records written with BPF_RB_NO_WAKEUP never make epoll report the ring ready, so the
  // wait only shortens the timeout and the ring is consumed on every return.
  epoll_event ready{};
  const int waited = epoll_wait(ring_buffer__epoll_fd(ring_.get()), &ready, 1, timeout_ms);
  if (waited < 0 && errno != EINTR) return Status::Error("waiting for the ring buffer: " + BpfErrorText(errno));
  return Drain(callback);
}

Result<int> CaptureMaps::Drain(const RecordCallback& callback) {
  callback_ = &callback;
  if (side_) side_->Collect();
  const int n = ring_buffer__consume(ring_.get());
  if (side_) side_->AfterRing({callback, decoded_});
  callback_ = nullptr;
  if (n < 0) return Status::Error("draining ring buffer: " + BpfErrorText(n));
  return n;
}

Result<int> CaptureMaps::DrainLast(const RecordCallback& callback) {
  if (side_) side_->Finish();
  return Drain(callback);
}

Counters CaptureMaps::ReadCounters() const {
  Counters total{};
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return total;
  std::vector<__u64> per_cpu(static_cast<size_t>(ncpu));
  for (__u32 i = 0; i < XT_CNT_MAX; ++i) {
    if (bpf_map__lookup_elem(skel_->maps.counters, &i, sizeof(i), per_cpu.data(),
                             per_cpu.size() * sizeof(__u64), 0))
      continue;
    for (__u64 v : per_cpu) total[i] += v;
  }
  for (size_t i = 0; i < total.size(); ++i) total[i] += user_counts_[i];
  return total;
}

}  // namespace xtrace
