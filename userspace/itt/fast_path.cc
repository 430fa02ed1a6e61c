// The fast path's rings: the control block, per-thread ring adoption, record appends, and
// what happens at fork and at exit. C library only, like the rest of the collector.
#include "itt/fast_path.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

// Zero-initialised (so in .bss: no page of it is touched until used); the constructor below
// fills the fixed fields.
extern "C" {
__attribute__((visibility("protected"))) xt_itt_control xtrace_itt_control = {};
}

namespace xtrace::itt {
namespace {

xt_itt_control& control = xtrace_itt_control;

// The calling thread's ring. Trivially constructible: no TLS guard on the hot path.
struct ThreadRing {
  xt_itt_ring* ring;
  unsigned char* data;
  uint64_t limit;  // the producer may write below this position (read_pos + data_bytes when read)
  uint64_t mask;
  uint32_t tid;
};
thread_local ThreadRing t_ring;

pthread_once_t key_once = PTHREAD_ONCE_INIT;
pthread_key_t ring_key;

template <typename T>
T Load(const T* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <typename T>
void Store(T* p, T v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

uint64_t Now(uint32_t clock) {
  if (clock == XT_ITT_CLOCK_TSC) return __rdtsc();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// A thread that exits gives its ring back; another thread takes it once xtrace drained it.
void ReleaseRing(void* ring) {
  if (ring) Store(&static_cast<xt_itt_ring*>(ring)->owner_tid, 0u);
}

void CreateKey() { (void)pthread_key_create(&ring_key, ReleaseRing); }

// The data bytes the capture attached asked rings to have (XT_ITT_RING_BYTES if it asked
// for none, or for a size out of bounds).
uint32_t WantedRingBytes() {
  const uint32_t bytes = Load(&control.ring_bytes_wanted);
  const bool fits = bytes >= XT_ITT_RING_MIN_BYTES && bytes <= XT_ITT_RING_MAX_BYTES &&
                    (bytes & (bytes - 1)) == 0;
  return fits ? bytes : XT_ITT_RING_BYTES;
}

// A drained ring of an exited thread, of the size asked for now: a capture that asks for
// another size gets it for new threads, not an earlier capture's rings.
xt_itt_ring* ReuseRing(uint32_t tid, uint32_t bytes) {
  uint32_t n = Load(&control.ring_count);
  if (n > XT_ITT_MAX_RINGS) n = XT_ITT_MAX_RINGS;
  for (uint32_t i = 0; i < n; ++i) {
    auto* ring = reinterpret_cast<xt_itt_ring*>(Load(&control.rings[i]));
    if (!ring || Load(&ring->owner_tid) != 0 || ring->data_bytes != bytes) continue;
    // Undrained records of an exited thread stay its own until xtrace has them.
    if (Load(&ring->read_pos) != Load(&ring->write_pos)) continue;
    uint32_t free_owner = 0;
    if (__atomic_compare_exchange_n(&ring->owner_tid, &free_owner, tid, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      return ring;
  }
  return nullptr;
}

xt_itt_ring* NewRing(uint32_t tid, uint32_t bytes) {
  const uint32_t slot = __atomic_fetch_add(&control.ring_count, 1u, __ATOMIC_ACQ_REL);
  if (slot >= XT_ITT_MAX_RINGS) return nullptr;
  void* memory = mmap(nullptr, sizeof(xt_itt_ring) + bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;  // the slot stays 0: xtrace skips it
  auto* ring = static_cast<xt_itt_ring*>(memory);
  ring->magic = XT_ITT_RING_MAGIC;
  ring->data_bytes = bytes;
  ring->owner_tid = tid;
  Store(&control.rings[slot], static_cast<__u64>(reinterpret_cast<uintptr_t>(ring)));
  return ring;
}

// The calling thread's first record while attached: a ring of its own (once per thread).
bool AdoptRing() {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  const uint32_t bytes = WantedRingBytes();
  xt_itt_ring* ring = ReuseRing(tid, bytes);
  if (!ring) ring = NewRing(tid, bytes);
  if (!ring) return false;
  pthread_once(&key_once, CreateKey);
  (void)pthread_setspecific(ring_key, ring);
  t_ring.ring = ring;
  t_ring.data = reinterpret_cast<unsigned char*>(ring + 1);
  t_ring.mask = ring->data_bytes - 1;
  t_ring.limit = Load(&ring->read_pos) + ring->data_bytes;
  t_ring.tid = tid;
  return true;
}

// Stores one word at position `pos` of the ring (records may wrap around its end).
inline void Put(const ThreadRing& t, uint64_t pos, uint64_t word) {
  std::memcpy(t.data + (pos & t.mask), &word, sizeof(word));
}

}  // namespace

bool Append(const FastEvent& e) {
  const uint64_t generation = __atomic_load_n(&control.generation, __ATOMIC_ACQUIRE);
  if (generation == 0) return false;
  const uint32_t clock = control.clock;
  const uint64_t now = Now(clock);
  if (static_cast<int64_t>(now - Load(&control.heartbeat)) > static_cast<int64_t>(control.lease)) {
    // Nobody has read for longer than the lease: stop, and cost what no capture costs.
    uint64_t expected = generation;
    if (__atomic_compare_exchange_n(&control.generation, &expected, 0, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      __atomic_fetch_add(&control.lapses, 1, __ATOMIC_RELAXED);
    return false;
  }
  ThreadRing& t = t_ring;
  if (!t.ring && !AdoptRing()) {
    __atomic_fetch_add(&control.no_ring_dropped, 1, __ATOMIC_RELAXED);
    return true;
  }
  uint32_t fields = 0;
  uint64_t words[6];
  size_t n = 0;
  if (e.domain) fields |= XT_ITT_RF_DOMAIN, words[n++] = reinterpret_cast<uintptr_t>(e.domain);
  if (e.name) fields |= XT_ITT_RF_NAME, words[n++] = reinterpret_cast<uintptr_t>(e.name);
  if (e.id_d1 | e.id_d2) fields |= XT_ITT_RF_ID, words[n++] = e.id_d1, words[n++] = e.id_d2;
  if (e.has_extra) fields |= XT_ITT_RF_EXTRA, words[n++] = e.extra;
  size_t text_len = 0;
  if (e.text) {
    text_len = strnlen(e.text, XT_ITT_RING_MAX_TEXT);
    fields |= XT_ITT_RF_TEXT;
    words[n++] = text_len;
  }
  const uint64_t size = 16 + 8 * n + ((text_len + 7) & ~size_t{7});
  const uint64_t pos = t.ring->write_pos;  // this thread is its only writer
  if (pos + size > t.limit) {
    t.limit = Load(&t.ring->read_pos) + t.ring->data_bytes;
    if (pos + size > t.limit) {
      __atomic_store_n(&t.ring->dropped, t.ring->dropped + 1, __ATOMIC_RELAXED);
      return true;
    }
  }
  const uint64_t head = uint64_t{size} | uint64_t{e.op & 0xff} << 16 | uint64_t{fields} << 24 |
                        uint64_t{t.tid} << 32;
  Put(t, pos, head);
  Put(t, pos + 8, now);
  for (size_t i = 0; i < n; ++i) Put(t, pos + 16 + 8 * i, words[i]);
  for (size_t off = 0; off < text_len; off += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, e.text + off, text_len - off < 8 ? text_len - off : 8);
    Put(t, pos + 16 + 8 * n + off, chunk);
  }
  // Counted before it is published: a thread killed between the two made the call, and
  // xtrace, which reads this count at the process's end, counts its record dropped.
  __atomic_store_n(&t.ring->records, t.ring->records + 1, __ATOMIC_RELAXED);
  Store(&t.ring->write_pos, static_cast<__u64>(pos + size));
  return true;
}

namespace {

// A forked child has one thread and copies of its parent's rings that nobody drains: it
// starts detached, every ring free, and is attached (or not) on its own.
void AfterForkInChild() {
  control.generation = 0;
  control.heartbeat = 0;
  uint32_t n = control.ring_count;
  if (n > XT_ITT_MAX_RINGS) n = XT_ITT_MAX_RINGS;
  for (uint32_t i = 0; i < n; ++i)
    if (auto* ring = reinterpret_cast<xt_itt_ring*>(control.rings[i])) {
      ring->owner_tid = 0;
      ring->read_pos = ring->write_pos;
    }
  t_ring = ThreadRing{};
}

// True once xtrace has taken every record and, if any call was dropped, every drop count:
// records show as read_pos reaching write_pos, but a full ring's drops move no position, so
// they are known to be counted only by a drain begun after `exit_time` (xtrace stamps the
// heartbeat before it reads the counts). Without that, the drops of a ring that stayed full
// to the end would go with the process, lost and never counted.
bool Drained(uint64_t exit_time) {
  bool dropped = Load(&control.no_ring_dropped) != 0;
  uint32_t n = Load(&control.ring_count);
  if (n > XT_ITT_MAX_RINGS) n = XT_ITT_MAX_RINGS;
  for (uint32_t i = 0; i < n; ++i) {
    auto* ring = reinterpret_cast<xt_itt_ring*>(Load(&control.rings[i]));
    if (!ring) continue;
    if (Load(&ring->read_pos) != Load(&ring->write_pos)) return false;
    dropped = dropped || Load(&ring->dropped) != 0;
  }
  return !dropped || static_cast<int64_t>(Load(&control.heartbeat) - exit_time) > 0;
}

// How long an exiting process waits for xtrace to take its last records: a few of xtrace's
// 100 ms drain periods, and only while attached.
constexpr int kExitWaitMs = 300;

__attribute__((constructor)) void InitControl() {
  control.version = XT_ITT_LAYOUT_VERSION;
  control.max_rings = XT_ITT_MAX_RINGS;
  control.ring_bytes = XT_ITT_RING_BYTES;
  const char* opt = std::getenv("XTRACE_ITT_FAST_PATH");
  control.refused = opt && std::strcmp(opt, "0") == 0;
  control.self = reinterpret_cast<uintptr_t>(&control);
  pthread_atfork(nullptr, nullptr, AfterForkInChild);
  Store(&control.magic, static_cast<__u64>(XT_ITT_CONTROL_MAGIC));
}

// At exit (exit() or dlclose), records and drop counts still in the rings would be lost with
// the process: give an attached xtrace a bounded time to read them.
__attribute__((destructor)) void WaitForLastDrain() {
  const uint64_t exit_time = Now(control.clock);
  for (int waited = 0; waited < kExitWaitMs && FastPathAttached() && !Drained(exit_time);
       ++waited) {
    timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
}

}  // namespace
}  // namespace xtrace::itt
