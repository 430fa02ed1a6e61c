// Attaching processes to the ITT fast path, draining them, and merging their records into
// the capture's record stream (itt_fast_path.h).
#include "capture/itt_fast_path.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>

#include "base/read_file.h"
#include "capture/elf_symbols.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

std::string ProcPath(uint32_t pid, const std::string& rest) {
  return "/proc/" + std::to_string(pid) + "/" + rest;
}

// The start of the collector's mapping at file offset 0: its load base (a shared object
// whose first segment starts at address 0, as the collector is linked).
std::optional<uint64_t> LoadBase(uint32_t pid, const MappedLibrary& lib) {
  const std::string maps = ReadWholeFile(ProcPath(pid, "maps")).value_or("");
  size_t pos = 0;
  while (pos < maps.size()) {
    size_t eol = maps.find('\n', pos);
    if (eol == std::string::npos) eol = maps.size();
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    unsigned major = 0, minor = 0;
    char perms[8] = {};
    const std::string line = maps.substr(pos, eol - pos);
    pos = eol + 1;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &offset,
                    &major, &minor, &inode) != 7)
      continue;
    if (offset == 0 && inode == lib.inode && line.find(lib.path) != std::string::npos) return start;
  }
  return std::nullopt;
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

IttFastPath::IttFastPath(CaptureMaps& maps, Say say) : maps_(maps), say_(std::move(say)) {
  maps_.SetSideStream(this);
}

IttFastPath::~IttFastPath() {
  maps_.SetSideStream(nullptr);
  for (auto& [pid, proc] : processes_)
    if (proc.reader) proc.reader->Detach();
}

IttRingReader::Clock IttFastPath::ClockNow() {
  if (!clock_) {
    std::string why;
    const uint32_t kind = TscClock::ChooseClock(&why);
    if (kind != XT_ITT_CLOCK_TSC) say_("ITT fast path timestamps use CLOCK_MONOTONIC: " + why);
    clock_ = std::make_unique<TscClock>(kind);
  }
  return {clock_->clock(), clock_->Now(), clock_->UnitsFor(kLeaseNs)};
}

void IttFastPath::Attach(uint32_t pid, const MappedLibrary& lib) {
  if (attached(pid) || waiting_.count(pid)) return;
  auto refuse = [&](const std::string& why) {
    say_("pid " + std::to_string(pid) + ": ITT calls go through the probe site (no fast path: " +
         why + ")");
  };
  static constexpr std::array<std::string_view, 1> kControl = {XT_ITT_CONTROL_SYMBOL};
  auto values = ElfExportValues(lib.host_path, kControl);
  if (!values.ok()) return refuse(values.status().message());
  if (!(*values)[0]) return refuse(lib.path + " has no " XT_ITT_CONTROL_SYMBOL " (an older collector)");
  const auto base = LoadBase(pid, lib);
  if (!base) return refuse(lib.path + " is not mapped any more");
  const uint64_t address = *base + *(*values)[0];
  if (!TryAttach(pid, address, false)) waiting_[pid] = {address, 0};
}

bool IttFastPath::TryAttach(uint32_t pid, uint64_t address, bool last_try) {
  uint64_t magic = 0;
  const RemoteMemory memory(pid);
  Status st = memory.Read(address, &magic, sizeof(magic));
  if (st.ok() && magic == 0 && !last_try) return false;  // mapped, constructors still to run
  std::unique_ptr<IttRingReader> reader;
  if (st.ok()) {
    auto attached = IttRingReader::Attach(pid, address, ClockNow());
    if (attached.ok()) reader = std::move(*attached);
    else st = attached.status();
  }
  if (!reader) {
    say_("pid " + std::to_string(pid) + ": ITT calls go through the probe site (no fast path: " +
         st.message() + ")");
    return true;
  }
  Process& proc = processes_[pid];
  proc.reader = std::move(reader);
  proc.control_address = address;
  proc.own_pid_namespace = SamePidNamespace(pid);
  proc.states.emplace_back(0, maps_.CollectionState(pid));
  say_("pid " + std::to_string(pid) + ": ITT calls go through the in-process fast path");
  return true;
}

void IttFastPath::Release(uint32_t pid) {
  waiting_.erase(pid);
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  if (it->second.reader) it->second.reader->Detach();
  processes_.erase(it);
}

void IttFastPath::DrainProcess(uint32_t pid, Process& proc, std::vector<Raw>& raw) {
  const IttDrainStats stats = proc.reader->Drain(clock_->Now(), [&](const IttRingRecord& r) {
    Raw& back = raw.emplace_back(Raw{pid, r, std::string(r.text), std::nullopt});
    back.rec.text = {};
  });
  maps_.AddUserCount(XT_CNT_DROPPED, pid, stats.dropped);
  if (stats.malformed && proc.malformed == 0)
    say_("pid " + std::to_string(pid) + ": ITT fast path: skipped malformed records (" +
         stats.first_error + ")");
  proc.malformed += stats.malformed;
  if (stats.gone) {
    // Exited (its exit is handled elsewhere) or its control block stopped making sense.
    if (stats.malformed) say_("pid " + std::to_string(pid) + ": ITT calls go through the probe site from now on");
    proc.reader->Detach();
    proc.reader.reset();
    return;
  }
  if (stats.lapsed) {
    // The collector let go (no drain within the lease): its calls went to the probe site
    // meanwhile, so nothing was lost. Take it back.
    auto again = IttRingReader::Attach(pid, proc.control_address, ClockNow());
    if (again.ok()) proc.reader = std::move(*again);
    say_("pid " + std::to_string(pid) + ": ITT fast path lapsed (no drain for " +
         std::to_string(kLeaseNs / 1'000'000'000) + " s); " +
         (again.ok() ? "attached again" : "staying on the probe site: " + again.status().message()));
    if (!again.ok()) proc.reader.reset();
  }
}

void IttFastPath::Collect() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto& [address, tries] = it->second;
    const bool done = TryAttach(it->first, address, ++tries >= kMaxInitWaits);
    it = done ? waiting_.erase(it) : std::next(it);
  }
  if (processes_.empty()) return;
  std::vector<Raw> raw;
  for (auto& [pid, proc] : processes_)
    if (proc.reader) DrainProcess(pid, proc, raw);
  // Every record read now lies before this reading: each is interpolated, not extrapolated.
  clock_->Sample();
  // In time order across threads, so a handle's text or a thread's name goes out before
  // the first event that uses it, whichever thread's ring was read first.
  for (Raw& r : raw) r.ns = clock_->ToMonotonic(r.rec.time);
  std::stable_sort(raw.begin(), raw.end(),
                   [](const Raw& a, const Raw& b) { return a.ns.value_or(0) < b.ns.value_or(0); });
  for (const Raw& r : raw) Convert(r);
  for (auto& [pid, proc] : processes_)
    if (proc.reader) proc.reader->Commit();
  std::stable_sort(pending_.begin() + static_cast<ptrdiff_t>(next_), pending_.end(),
                   [](const Pending& a, const Pending& b) {
                     return a.ns != b.ns ? a.ns < b.ns : a.seq < b.seq;
                   });
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
  const size_t offset = arena_.size();
  arena_.resize(offset + size + tail.size());
  std::memcpy(arena_.data() + offset, data, size);
  std::memcpy(arena_.data() + offset + size, tail.data(), tail.size());
  pending_.push_back(Pending{ns, seq_++, pid, is_event, offset, size + tail.size()});
}

void IttFastPath::NoteThread(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns) {
  ThreadName& t = proc.threads[tid];
  const uint64_t now = TscClock::MonotonicNs();
  if (t.checked_ns && now - t.checked_ns < kRenameCheckNs) return;
  t.checked_ns = now;
  auto comm = ReadWholeFile(ProcPath(pid, "task/" + std::to_string(tid) + "/comm"));
  if (!comm || Trimmed(*comm) == t.comm) return;
  t.comm = Trimmed(*comm);
  xt_thread_name rec{};
  rec.hdr = {XT_REC_THREAD_NAME, sizeof(rec), 0, pid, tid, ns, ns};
  CopyComm<char>(rec.comm, t.comm);
  CopyComm<char>(rec.process_comm, Trimmed(ReadWholeFile(ProcPath(pid, "comm")).value_or("")));
  Push(pid, ns, false, &rec, sizeof(rec));
}

void IttFastPath::NoteHandle(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns,
                             uint32_t kind, uint64_t handle) {
  if (!handle || !proc.named.insert({kind, handle}).second) return;
  xt_itt_name rec{};
  rec.hdr = {XT_REC_ITT_NAME, 0, 0, pid, tid, ns, ns};
  rec.handle = handle;
  rec.kind = kind;
  const uint64_t offset = kind == XT_ITT_NAME_DOMAIN ? XT_ITT_DOMAIN_NAME_OFFSET : XT_ITT_STRING_TEXT_OFFSET;
  uint64_t text_at = 0;
  std::string text;
  bool truncated = false;
  if (proc.reader->memory().Read(handle + offset, &text_at, sizeof(text_at)).ok()) {
    auto read = proc.reader->memory().ReadString(text_at, XT_MAX_ITT_NAME, &truncated);
    if (read.ok()) text = std::move(*read);
    else rec.hdr.flags |= XT_FLAG_ARG_UNREADABLE;
  } else {
    rec.hdr.flags |= XT_FLAG_ARG_UNREADABLE;
  }
  if (truncated) rec.hdr.flags |= XT_FLAG_TRUNCATED;
  rec.name_len = static_cast<uint32_t>(text.size());
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + text.size());
  Push(pid, ns, false, &rec, sizeof(rec), text);
}

void IttFastPath::Convert(const Raw& raw) {
  auto it = processes_.find(raw.pid);
  if (it == processes_.end() || !it->second.reader) return;
  Process& proc = it->second;
  const IttRingRecord& r = raw.rec;
  const std::optional<uint64_t>& ns = raw.ns;
  if (!ns) {
    // Stamped before this capture attached (a write of an earlier one still in flight) or
    // with a time the target made up: not this capture's record.
    if (proc.malformed++ == 0)
      say_("pid " + std::to_string(raw.pid) + ": ITT fast path: skipped a record whose time lies outside the capture");
    return;
  }
  const uint32_t tid = CaptureTid(raw.pid, proc, r.tid);
  NoteThread(raw.pid, proc, tid, *ns);
  if (r.op == XT_ITT_THREAD_NAME) {
    xt_itt_name rec{};
    const size_t len = std::min<size_t>(raw.text.size(), XT_MAX_ITT_NAME);
    rec.hdr = {XT_REC_ITT_NAME, static_cast<uint16_t>(sizeof(rec) + len), 0, raw.pid, tid, *ns, *ns};
    rec.kind = XT_ITT_NAME_THREAD;
    rec.name_len = static_cast<uint32_t>(len);
    Push(raw.pid, *ns, true, &rec, sizeof(rec), std::string_view(raw.text).substr(0, len));
    return;
  }
  NoteHandle(raw.pid, proc, tid, *ns, XT_ITT_NAME_DOMAIN, r.domain);
  NoteHandle(raw.pid, proc, tid, *ns, XT_ITT_NAME_STRING, r.name);
  xt_itt_event rec{};
  rec.hdr = {XT_REC_ITT_EVENT, sizeof(rec), 0, raw.pid, tid, *ns, *ns};
  rec.domain = r.domain;
  rec.name = r.name;
  rec.id[0] = r.id[0];
  rec.id[1] = r.id[1];
  rec.extra = r.extra;
  rec.op = static_cast<uint16_t>(r.op);
  rec.origin = XT_ITT_FROM_COLLECTOR;
  Push(raw.pid, *ns, true, &rec, sizeof(rec));
}

bool IttFastPath::Collecting(uint32_t pid, uint64_t ns) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return true;
  uint32_t state = XT_COLLECT_ON;
  for (const auto& [at, s] : it->second.states)
    if (at <= ns) state = s;
  return state == XT_COLLECT_ON;
}

void IttFastPath::Deliver(const Pending& p, const RecordCallback& callback) {
  if (p.is_event && !Collecting(p.pid, p.ns)) {
    maps_.AddUserCount(XT_CNT_PAUSED, p.pid, 1);
    return;
  }
  callback(std::span<const std::byte>(arena_.data() + p.offset, p.size));
}

void IttFastPath::BeforeRingRecord(std::span<const std::byte> record, const RecordCallback& callback) {
  if (record.size() < sizeof(xt_record_header)) return;
  xt_record_header hdr;
  std::memcpy(&hdr, record.data(), sizeof(hdr));
  while (next_ < pending_.size() && pending_[next_].ns <= hdr.end_ns) Deliver(pending_[next_++], callback);
  // A collection change (BPF keeps that state) decides which fast-path records count.
  if (hdr.type == XT_REC_ITT_STATE && record.size() >= sizeof(xt_itt_state)) {
    xt_itt_state state;
    std::memcpy(&state, record.data(), sizeof(state));
    if (auto it = processes_.find(hdr.pid); it != processes_.end())
      it->second.states.emplace_back(hdr.start_ns, state.state);
  }
}

void IttFastPath::AfterRing(const RecordCallback& callback) {
  while (next_ < pending_.size()) Deliver(pending_[next_++], callback);
  pending_.clear();
  arena_.clear();
  next_ = 0;
}

}  // namespace xtrace
