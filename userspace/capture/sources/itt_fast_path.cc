// Attaching processes to the ITT fast path, draining them, and merging their records into
// the capture's record stream (itt_fast_path.h).
#include "capture/sources/itt_fast_path.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/read_file.h"
#include "base/thread_nice.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

std::string ProcPath(uint32_t pid, const std::string& rest) {
  return "/proc/" + std::to_string(pid) + "/" + rest;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

bool SamePidNamespace(uint32_t pid) {
  struct stat ours {}, theirs {};
  return stat("/proc/self/ns/pid", &ours) == 0 &&
         stat(ProcPath(pid, "ns/pid").c_str(), &theirs) == 0 && ours.st_ino == theirs.st_ino;
}

template <typename T>
void CopyComm(char (&out)[XT_COMM_LEN], const std::string& text) {
  std::memset(out, 0, sizeof(out));
  std::memcpy(out, text.data(), std::min(text.size(), sizeof(out) - 1));
}

}  // namespace

IttFastPath::IttFastPath(CaptureMaps& maps, Say say, uint32_t ring_bytes, std::optional<int> nice)
    : maps_(maps), say_(std::move(say)), ring_bytes_(ring_bytes), nice_(nice) {
  wake_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));  // none: the poll's timeout it is
  // A batch's room, reserved once: address space only until records fill it, and no batch
  // is moved to a larger copy while the capture runs (a drain adds at most a ring's worth
  // per thread past kMaxGathered; more than that is moved, once).
  for (std::vector<Raw>* batch : {&gathered_, &converting_}) batch->reserve(kBatchRoom);
  order_.reserve(kBatchRoom);
  pending_.reserve(kBatchRoom);
  maps_.SetSideStream(this);
  drainer_ = std::thread([this] { DrainLoop(); });
}

IttFastPath::~IttFastPath() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  drainer_.join();
  maps_.SetSideStream(nullptr);
  for (auto& [pid, proc] : processes_)
    if (proc.reader) proc.reader->Detach();
}

void IttFastPath::DrainLoop() {
  // Ahead of the programs on a shared core: a ring fills in tens of ms at full rate, and a
  // drain that waits out other threads' time slices loses what overflows. (The capture loop
  // says when the value cannot be set; it is the same value and the same reason.)
  const ThreadNice nice(nice_);
  pthread_setname_np(pthread_self(), "xtrace-drain");  // for top -H, ps -L
  std::unique_lock lock(mu_);
  std::chrono::milliseconds period = kDrainPeriod;
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    if (gathered_.size() >= kMaxGathered) continue;
    uint64_t fullest = 0;
    for (auto& [pid, proc] : processes_)
      if (proc.reader) fullest = std::max(fullest, DrainProcess(pid, proc));
    period = fullest > BusyBytes(ring_bytes_) ? kBusyDrainPeriod : kDrainPeriod;
    // A collector still to be attached is tried at each Collect: its process's calls take
    // the probe site meanwhile, some µs each, so the capture loop is not left to wait out
    // its poll (up to 100 ms of them). For a while only: a command that never maps the
    // collector it was given (a shell) leaves its entry until it ends.
    const bool attach_due = (!waiting_.empty() || !unmapped_.empty()) &&
                            TscClock::MonotonicNs() < eager_attach_until_ns_;
    if ((gathered_.size() >= kWakeRecords || attach_due) && !wake_sent_ && wake_fd_.valid()) {
      const uint64_t one = 1;
      wake_sent_ = write(wake_fd_.get(), &one, sizeof(one)) == sizeof(one);
    }
  }
}

IttRingReader::Clock IttFastPath::ClockNow() {
  if (!clock_) {
    std::string why;
    const uint32_t kind = TscClock::ChooseClock(&why);
    if (kind != XT_ITT_CLOCK_TSC) say_("ITT fast path timestamps use CLOCK_MONOTONIC: " + why);
    clock_ = std::make_unique<TscClock>(kind);
  }
  if (!lease_units_) lease_units_ = clock_->UnitsFor(kLeaseNs);
  return {clock_->clock(), clock_->Now(), lease_units_, ring_bytes_};
}

void IttFastPath::Warm() {
  if (warm_) return;
  warm_ = true;
  for (std::vector<Raw>* batch : {&gathered_, &converting_}) batch->resize(kBatchRoom), batch->clear();
  order_.resize(kBatchRoom), order_.clear();
  pending_.resize(kBatchRoom), pending_.clear();
  // The clock's calibration takes ~8 ms: here, not under the lock at the first attach, where
  // the drain thread would wait it out.
  (void)ClockNow();
}

void IttFastPath::Attach(uint32_t pid, const MappedLibrary& lib, std::optional<uint64_t> control,
                         const Status& read) {
  std::lock_guard lock(mu_);
  if (processes_.count(pid) || waiting_.count(pid) || unmapped_.count(pid)) return;
  // Before the first fast path starts writing (under `record`, before its command runs).
  if (read.ok() && control) Warm();
  auto refuse = [&](const std::string& why) {
    say_("pid " + std::to_string(pid) + ": ITT calls go through the probe site (no fast path: " +
         why + ")");
  };
  if (!read.ok()) return refuse(read.message());
  if (!control) return refuse(lib.path + " has no " XT_ITT_CONTROL_SYMBOL " (an older collector)");
  const auto base = LoadBase(pid, lib);
  if (!base) {
    // `record` attaches to the collector before its command execs: wait for the mapping.
    unmapped_[pid] = {lib, *control};
    eager_attach_until_ns_ = TscClock::MonotonicNs() + kEagerAttachNs;
    return;
  }
  const uint64_t address = *base + *control;
  if (!TryAttach(pid, address, false)) StartWaiting(pid, address);
  for (const std::string& line : said_) say_(line);
  said_.clear();
}

void IttFastPath::StartWaiting(uint32_t pid, uint64_t address) {
  const uint64_t now = TscClock::MonotonicNs();
  waiting_[pid] = {address, now};
  eager_attach_until_ns_ = now + kEagerAttachNs;
}

void IttFastPath::KeepOnProbeSiteIf(std::function<std::string(uint32_t pid)> why) {
  std::lock_guard lock(mu_);
  keep_on_probe_site_ = std::move(why);
}

bool IttFastPath::TryAttach(uint32_t pid, uint64_t address, bool last_try) {
  // Kept on the probe site: unless another capture drains its rings, where its calls go then.
  std::string keep;
  if (keep_on_probe_site_) keep = keep_on_probe_site_(pid);
  uint64_t magic = 0;
  const RemoteMemory memory(pid);
  Status st = memory.Read(address, &magic, sizeof(magic));
  // Not initialised yet: its constructors are still to run, or the loader is still mapping
  // it (it maps the whole file over the range first, then the data segment over that, so the
  // address can read as the file's bytes for a moment). Its collector writes the magic last.
  if ((!st.ok() || magic != XT_ITT_CONTROL_MAGIC) && !last_try) return false;
  std::unique_ptr<IttRingReader> reader;
  if (st.ok()) {
    auto attached = IttRingReader::Attach(pid, address, ClockNow(), !keep.empty());
    if (attached.ok()) reader = std::move(*attached);
    else st = attached.status();
  }
  if (!reader) {
    Tell("pid " + std::to_string(pid) + ": ITT calls go through the probe site (" +
         (keep.empty() ? "no fast path: " + st.message() : keep) + ")");
    return true;
  }
  Process& proc = processes_[pid];
  if (!proc.based) {
    proc.base = reader->at_attach();
    proc.based = true;
  }
  // BPF looks at its rings' counters as its threads exit and as it execs.
  if (Status watch = maps_.WatchIttRings(pid, address); !watch.ok())
    Tell("pid " + std::to_string(pid) + ": " + watch.message() +
         "; ITT records still in its rings if it ends during the capture cannot be counted");
  proc.reader = std::move(reader);
  proc.control_address = address;
  proc.attached_ns = TscClock::MonotonicNs();
  proc.own_pid_namespace = SamePidNamespace(pid);
  states_[pid] = {{0, maps_.CollectionState(pid)}};
  Tell("pid " + std::to_string(pid) + ": ITT calls go through the in-process fast path" +
       (!proc.reader->following() ? ""
        : keep.empty()            ? ", read alongside another capture that drains it"
                                  : ", read alongside another capture that drains it (so without " + keep + ")"));
  return true;
}

void IttFastPath::Release(uint32_t pid) {
  std::lock_guard lock(mu_);
  waiting_.erase(pid);
  unmapped_.erase(pid);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.ended) return;
  EndProcess(pid, it->second, true);
}

void IttFastPath::ReleaseImage(uint32_t pid, uint64_t exec_ns) {
  // `record`'s command waits for its collector across its first exec (unmapped_, waiting_).
  std::lock_guard lock(mu_);
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.ended || it->second.attached_ns > exec_ns) return;
  // The memory the rings were in is gone: nothing there is to be read or written.
  EndProcess(pid, it->second, false);
}

void IttFastPath::Finish() {
  std::lock_guard lock(mu_);
  // Every writer stops first, then one pause covers them all (see StopWriters).
  bool any = false;
  for (auto& [pid, proc] : processes_)
    if (!proc.ended && proc.reader) any = true, proc.reader->Detach();
  if (any) StopWriters();
  for (auto& [pid, proc] : processes_)
    if (!proc.ended) EndProcess(pid, proc, true, true);
}

// After the generation went to 0, a call that read it just before is still appending: such
// calls take tens of ns, so a millisecond is ample.
void IttFastPath::StopWriters() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

void IttFastPath::EndProcess(uint32_t pid, Process& proc, bool readable, bool detached) {
  proc.ended = true;
  std::optional<IttRingTotals> last;
  if (proc.reader && readable) {
    // Its calls go to the probe site from now on; those already in its rings are taken.
    if (!detached) {
      proc.reader->Detach();
      StopWriters();
    }
    DrainProcess(pid, proc, true);
    if (proc.reader)
      if (auto totals = proc.reader->ReadTotals(); totals.ok()) last = *totals;
  }
  proc.reader.reset();
  // Gone (or execed): what BPF read of its rings as its threads exited.
  const std::optional<xt_itt_rings_seen> seen = maps_.TakeIttRings(pid);
  if (!last && seen && seen->looks) last = IttRingTotals{seen->records, seen->dropped};
  if (!proc.based) return;
  if (!last) {
    Tell("pid " + std::to_string(pid) +
         ": its ITT rings could not be read at its end; records still in them then are not "
         "counted" + (seen && seen->unreadable ? " (its memory was unreadable as it exited)" : ""));
    return;
  }
  // Never read: records written but not consumed, and drops the target counted that never
  // reached a drain. Both are calls made while attached that the capture does not have.
  const uint64_t written = last->records - std::min(last->records, proc.base.records);
  const uint64_t lost = written - std::min(written, proc.consumed);
  const uint64_t known_drops = proc.base.dropped + proc.drops_counted;
  const uint64_t late_drops = last->dropped - std::min(last->dropped, known_drops);
  CountLost(pid, lost + late_drops, true);
  if (lost)
    Tell("pid " + std::to_string(pid) + ": " + std::to_string(lost) +
         " ITT records were still in its rings when its fast path ended; counted dropped");
}

// Calls the capture will never have, counted where every ITT drop is; `in_rings`: lost in
// the program's own rings (full, or still holding them at its end).
void IttFastPath::CountLost(uint32_t pid, uint64_t n, bool in_rings) {
  if (!n) return;
  maps_.AddUserCount(XT_CNT_DROPPED, pid, n);
  maps_.AddUserCount(XT_CNT_DROPPED_ITT, pid, n);
  if (in_rings) maps_.AddUserCount(XT_CNT_DROPPED_ITT_RINGS, pid, n);
}

uint64_t IttFastPath::DrainProcess(uint32_t pid, Process& proc, bool final) {
  const size_t first = gathered_.size();
  const IttDrainStats stats = proc.reader->Drain(clock_->Now(), [&](const IttRingRecord& r) {
    gathered_.push_back(Raw{r.time, r.domain, r.name, {r.id[0], r.id[1]}, r.extra, r.op, r.tid, pid,
                            static_cast<uint32_t>(gathered_text_.size()),
                            static_cast<uint32_t>(r.text.size())});
    gathered_text_.append(r.text);
  });
  // Before the target hears they were taken (it may exit then): what they name. A run of
  // records of one thread and handles is looked up once.
  const uint64_t now_ns = TscClock::MonotonicNs();
  NamesSeen seen;
  for (size_t i = first; i < gathered_.size(); ++i) {
    Raw& r = gathered_[i];
    if (!proc.own_pid_namespace) r.tid = CaptureTid(pid, proc, r.tid);
    // Most records repeat the thread and handles of the one before: nothing to look up.
    if (!seen.Repeats(r)) ReadNames(pid, proc, r, now_ns, seen);
  }
  proc.reader->Commit();
  proc.consumed += stats.records;
  proc.dropped += stats.dropped;
  proc.drops_counted += stats.dropped;
  if (stats.malformed && proc.malformed == 0)
    Tell("pid " + std::to_string(pid) + ": ITT fast path: skipped malformed records (" +
         stats.first_error + ")");
  proc.malformed += stats.malformed;
  if (stats.gone) {
    // Exited (its exit is handled elsewhere) or its control block stopped making sense.
    if (stats.malformed) Tell("pid " + std::to_string(pid) + ": ITT calls go through the probe site from now on");
    proc.reader->Detach();
    proc.reader.reset();
    return stats.fullest;
  }
  if (stats.overrun && proc.overruns++ == 0)
    Tell("pid " + std::to_string(pid) + ": ITT records were written over before they could be "
         "read alongside the capture that drains them; counted dropped at its end");
  if (stats.lapsed && !final) {
    // The collector let go (no drain within the lease), or the capture followed did: its
    // calls went to the probe site meanwhile, so nothing was lost. Take it back.
    const bool followed = proc.reader->following();
    auto again = IttRingReader::Attach(pid, proc.control_address, ClockNow());
    if (again.ok()) proc.reader = std::move(*again);
    Tell("pid " + std::to_string(pid) + ": " +
         (followed ? std::string("the capture whose ITT rings this one read alongside let go; ")
                   : "ITT fast path lapsed (no drain for " + std::to_string(kLeaseNs / 1'000'000'000) +
                         " s); ") +
         (!again.ok()                ? "staying on the probe site: " + again.status().message()
          : proc.reader->following()    ? "reading alongside another capture"
                                       : "attached again"));
    if (!again.ok()) proc.reader.reset();
  }
  return stats.fullest;
}

void IttFastPath::ReadNames(uint32_t pid, Process& proc, const Raw& r, uint64_t now,
                            NamesSeen& seen) {
  for (const auto& [kind, handle] : {std::pair<uint32_t, uint64_t>{XT_ITT_NAME_DOMAIN, r.domain},
                                     std::pair<uint32_t, uint64_t>{XT_ITT_NAME_STRING, r.name}}) {
    if (!handle || seen.handle[kind == XT_ITT_NAME_DOMAIN] == handle) continue;
    seen.handle[kind == XT_ITT_NAME_DOMAIN] = handle;
    if (proc.texts.count({kind, handle})) continue;
    HandleText& t = proc.texts[{kind, handle}];
    const uint64_t offset = kind == XT_ITT_NAME_DOMAIN ? XT_ITT_DOMAIN_NAME_OFFSET : XT_ITT_STRING_TEXT_OFFSET;
    uint64_t text_at = 0;
    bool truncated = false;
    Result<std::string> text = Status::Error("unread");
    if (proc.reader->memory().Read(handle + offset, &text_at, sizeof(text_at)).ok())
      text = proc.reader->memory().ReadString(text_at, XT_MAX_ITT_NAME, &truncated);
    if (text.ok()) t.text = std::move(*text);
    else t.flags |= XT_FLAG_ARG_UNREADABLE;
    if (truncated) t.flags |= XT_FLAG_TRUNCATED;
  }
  if (seen.tid == r.tid) return;
  seen.tid = r.tid;
  ThreadName& name = proc.threads[r.tid];
  if (name.checked_ns && now - name.checked_ns < kRenameCheckNs) return;
  name.checked_ns = now;
  if (auto comm = ReadWholeFile(ProcPath(pid, "task/" + std::to_string(r.tid) + "/comm")))
    name.comm = Trimmed(*comm);
}

void IttFastPath::Collect() {
  std::unique_lock lock(mu_);
  if (wake_sent_) {
    uint64_t count = 0;
    (void)!read(wake_fd_.get(), &count, sizeof(count));
    wake_sent_ = false;
  }
  for (auto it = unmapped_.begin(); it != unmapped_.end();) {
    const auto base = LoadBase(it->first, it->second.first);
    if (!base) {
      ++it;
      continue;
    }
    const uint64_t address = *base + it->second.second;
    if (!TryAttach(it->first, address, false)) StartWaiting(it->first, address);
    it = unmapped_.erase(it);
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const auto [address, since] = it->second;
    const bool done = TryAttach(it->first, address, TscClock::MonotonicNs() - since >= kMaxInitWaitNs);
    it = done ? waiting_.erase(it) : std::next(it);
  }
  // Whatever the drain thread has not taken yet, so the BPF ring, read next, is newer.
  for (auto& [pid, proc] : processes_)
    if (proc.reader) DrainProcess(pid, proc);
  for (auto& [pid, proc] : processes_) {
    CountLost(pid, proc.dropped, true);
    proc.dropped = 0;
  }
  for (const std::string& line : said_) say_(line);
  said_.clear();
  // converting_ is empty here: AfterRing, which follows every Collect (CaptureMaps::Drain),
  // passed its records on.
  converting_.swap(gathered_);
  converting_text_.swap(gathered_text_);
  lock.unlock();  // the drain thread goes on while these are converted
  ConvertGathered();
}

void IttFastPath::ForgetEnded() {
  std::lock_guard lock(mu_);
  for (auto it = processes_.begin(); it != processes_.end();) {
    const uint32_t pid = it->first;
    const bool unfinished =
        !it->second.ended || it->second.dropped != 0 ||
        std::any_of(gathered_.begin(), gathered_.end(), [pid](const Raw& r) { return r.pid == pid; });
    if (unfinished) {
      ++it;
      continue;
    }
    states_.erase(pid);
    it = processes_.erase(it);
  }
}

void IttFastPath::ConvertGathered() {
  std::vector<Raw>& raw = converting_;
  if (raw.empty()) return;
  // Every record read now lies before this reading: each is interpolated, not extrapolated.
  clock_->Sample();
  // In time order across threads, so a handle's text or a thread's name goes out before
  // the first event that uses it, whichever thread's ring was read first.
  // Each ring's records are in time order already: what is sorted is where they interleave,
  // and by index (a Raw is large to move).
  std::vector<std::pair<uint64_t, uint32_t>>& order = order_;
  order.resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i)
    order[i] = {clock_->ToMonotonic(raw[i].time).value_or(0), static_cast<uint32_t>(i)};
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());
  ConvertCache cache;
  for (const auto& [ns, i] : order) Convert(i, ns, cache);
  // The records stay until they are passed on (AfterRing), their texts are done with.
  converting_text_.clear();
  const auto by_time = [](const Pending& a, const Pending& b) { return a.ns < b.ns; };
  const auto unsent = pending_.begin() + static_cast<ptrdiff_t>(next_);
  if (!std::is_sorted(unsent, pending_.end(), by_time)) std::stable_sort(unsent, pending_.end(), by_time);
}

uint32_t IttFastPath::CaptureTid(uint32_t pid, Process& proc, uint32_t ns_tid) {
  if (proc.own_pid_namespace) return ns_tid;
  if (auto it = proc.tids.find(ns_tid); it != proc.tids.end()) return it->second;
  // NSpid lists the thread's id in each namespace from /proc's (the capture's) inward.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ProcPath(pid, "task"), ec)) {
    const std::string status = ReadWholeFile(entry.path().string() + "/status").value_or("");
    const size_t at = status.find("NSpid:");
    if (at == std::string::npos) continue;
    std::vector<uint32_t> ids;
    const char* p = status.c_str() + at + 6;
    char* end = nullptr;
    for (unsigned long v; (v = std::strtoul(p, &end, 10)), end != p && *p != '\n'; p = end)
      ids.push_back(static_cast<uint32_t>(v));
    if (ids.size() >= 2) proc.tids[ids.back()] = ids.front();
  }
  auto it = proc.tids.find(ns_tid);
  // A thread gone before it was looked up keeps its namespace's id.
  return it != proc.tids.end() ? it->second : (proc.tids[ns_tid] = ns_tid);
}

void IttFastPath::Push(uint32_t pid, uint64_t ns, bool is_event, const void* data, size_t size,
                       std::string_view tail) {
  const size_t offset = arena_used_;
  // Grown only past its room, which it keeps, and never cleared: a record is copied in once.
  if (offset + size + tail.size() > arena_room_) {
    const size_t room = std::max(2 * arena_room_, offset + size + tail.size() + 4096);
    auto grown = std::make_unique_for_overwrite<std::byte[]>(room);
    if (offset) std::memcpy(grown.get(), arena_.get(), offset);
    arena_ = std::move(grown);
    arena_room_ = room;
  }
  arena_used_ = offset + size + tail.size();
  std::memcpy(arena_.get() + offset, data, size);
  if (!tail.empty()) std::memcpy(arena_.get() + offset + size, tail.data(), tail.size());
  pending_.push_back(Pending{ns, pid, static_cast<uint32_t>(offset),
                             static_cast<uint32_t>(size + tail.size()), is_event, false});
}

void IttFastPath::NoteThread(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns) {
  std::unique_lock lock(mu_);
  ThreadName& t = proc.threads[tid];
  if (t.comm.empty() || t.comm == t.sent) return;
  t.sent = t.comm;
  lock.unlock();
  xt_thread_name rec{};
  rec.hdr = {XT_REC_THREAD_NAME, sizeof(rec), 0, pid, tid, ns, ns};
  CopyComm<char>(rec.comm, t.comm);
  CopyComm<char>(rec.process_comm, Trimmed(ReadWholeFile(ProcPath(pid, "comm")).value_or("")));
  Push(pid, ns, false, &rec, sizeof(rec));
}

void IttFastPath::NoteHandle(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns,
                             uint32_t kind, uint64_t handle) {
  if (!handle || !proc.named.insert({kind, handle}).second) return;
  HandleText t{{}, XT_FLAG_ARG_UNREADABLE};
  {
    std::lock_guard lock(mu_);
    if (const auto it = proc.texts.find({kind, handle}); it != proc.texts.end()) t = it->second;
  }
  xt_itt_name rec{};
  rec.hdr = {XT_REC_ITT_NAME, static_cast<uint16_t>(sizeof(rec) + t.text.size()), t.flags, pid,
             tid, ns, ns};
  rec.handle = handle;
  rec.kind = kind;
  rec.name_len = static_cast<uint32_t>(t.text.size());
  Push(pid, ns, false, &rec, sizeof(rec), t.text);
}

void IttFastPath::Convert(uint32_t index, uint64_t ns, ConvertCache& cache) {
  const Raw& raw = converting_[index];
  const std::string_view text = std::string_view(converting_text_).substr(raw.text_at, raw.text_len);
  if (!cache.proc || cache.pid != raw.pid) {
    auto it = processes_.find(raw.pid);
    if (it == processes_.end()) return CountLost(raw.pid, 1);  // not expected: processes outlive their records
    cache = {raw.pid, &it->second, {}};
  }
  Process& proc = *cache.proc;
  if (!ns) {
    // Stamped with a time outside the capture (a clock the target made up): a call the
    // capture cannot place, counted dropped.
    if (proc.outside++ == 0)
      say_("pid " + std::to_string(raw.pid) + ": ITT fast path: dropped a record whose time lies outside the capture");
    return CountLost(raw.pid, 1);
  }
  const uint32_t tid = raw.tid;
  // A thread's name is read again at most once a second: once per batch is as often as it
  // can have changed.
  if (std::find(cache.tids.begin(), cache.tids.end(), tid) == cache.tids.end()) {
    cache.tids.push_back(tid);
    NoteThread(raw.pid, proc, tid, ns);
  }
  if (raw.op == XT_ITT_THREAD_NAME) {
    xt_itt_name rec{};
    const size_t len = std::min<size_t>(text.size(), XT_MAX_ITT_NAME);
    rec.hdr = {XT_REC_ITT_NAME, static_cast<uint16_t>(sizeof(rec) + len), 0, raw.pid, tid, ns, ns};
    rec.kind = XT_ITT_NAME_THREAD;
    rec.name_len = static_cast<uint32_t>(len);
    Push(raw.pid, ns, true, &rec, sizeof(rec), text.substr(0, len));
    return;
  }
  if (raw.domain != cache.domain) NoteHandle(raw.pid, proc, tid, ns, XT_ITT_NAME_DOMAIN, cache.domain = raw.domain);
  if (raw.name != cache.name) NoteHandle(raw.pid, proc, tid, ns, XT_ITT_NAME_STRING, cache.name = raw.name);
  pending_.push_back(Pending{ns, raw.pid, index, 0, true, true});
}

bool IttFastPath::Collecting(uint32_t pid, uint64_t ns) const {
  auto it = states_.find(pid);
  if (it == states_.end()) return true;
  uint32_t state = XT_COLLECT_ON;
  for (const auto& [at, s] : it->second)
    if (at <= ns) state = s;
  return state == XT_COLLECT_ON;
}

void IttFastPath::Deliver(const Pending& p, const SideRoutes& routes) {
  if (p.is_event && !Collecting(p.pid, p.ns)) {
    maps_.AddUserCount(XT_CNT_PAUSED, p.pid, 1);
    return;
  }
  if (p.decoded) {
    // What DecodeRecord makes of the xt_itt_event the probe site writes for the same call.
    const Raw& r = converting_[p.offset];
    return routes.decoded(DecodedRecord(DecodedIttEvent{
        {XT_REC_ITT_EVENT, sizeof(xt_itt_event), 0, r.pid, r.tid, p.ns, p.ns}, r.domain, r.name,
        {r.id[0], r.id[1]}, r.extra, static_cast<uint16_t>(r.op), XT_ITT_FROM_COLLECTOR, {}}));
  }
  routes.record(std::span<const std::byte>(arena_.get() + p.offset, p.size));
}

void IttFastPath::BeforeRingRecord(std::span<const std::byte> record, const SideRoutes& routes) {
  if (record.size() < sizeof(xt_record_header)) return;
  xt_record_header hdr;
  std::memcpy(&hdr, record.data(), sizeof(hdr));
  while (next_ < pending_.size() && pending_[next_].ns <= hdr.end_ns) Deliver(pending_[next_++], routes);
  // A collection change (BPF keeps that state) decides which fast-path records count.
  if (hdr.type == XT_REC_ITT_STATE && record.size() >= sizeof(xt_itt_state)) {
    xt_itt_state state;
    std::memcpy(&state, record.data(), sizeof(state));
    if (auto it = states_.find(hdr.pid); it != states_.end())
      it->second.emplace_back(hdr.start_ns, state.state);
  }
}

void IttFastPath::AfterRing(const SideRoutes& routes) {
  while (next_ < pending_.size()) Deliver(pending_[next_++], routes);
  pending_.clear();
  // The room is kept for the next batch: a capture that is behind does not free and fault
  // in its batches' pages again and again.
  converting_.clear();
  arena_used_ = 0;
  next_ = 0;
  // Processes whose end is accounted for, once their last records are passed on.
  ForgetEnded();
}

}  // namespace xtrace
