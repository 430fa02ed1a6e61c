// ITT correlation: handle names, begin/end pairing, collection changes.
#include "correlate/itt_correlator.h"

#include <cstdio>
#include <string>

#include "base/cut_text.h"
#include "correlate/correlator.h"

namespace xtrace {
namespace {

// What PyTorch's own ITT domain is called; its probed ranges carry no domain of their own.
constexpr std::string_view kPytorchDomain = "PyTorch";

uint64_t ThreadKey(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }

std::string HexName(const char* prefix, uint64_t value) {
  char text[48];
  std::snprintf(text, sizeof(text), "%s@0x%llx", prefix, static_cast<unsigned long long>(value));
  return text;
}

IttMarkerScope ScopeOf(uint64_t itt_scope) {
  // __itt_scope: unknown, global, track_group, track, task, marker.
  switch (itt_scope) {
    case 1: return IttMarkerScope::kGlobal;
    case 2: return IttMarkerScope::kProcess;
    case 3: return IttMarkerScope::kThread;
    case 4: return IttMarkerScope::kTask;
    default: return IttMarkerScope::kUnknown;
  }
}

CollectionState StateOf(uint32_t state) {
  switch (state) {
    case XT_COLLECT_PAUSED: return CollectionState::kPaused;
    case XT_COLLECT_DETACHED: return CollectionState::kDetached;
    default: return CollectionState::kCollecting;
  }
}

}  // namespace

IttCorrelator::IttCorrelator(StringTable& strings, EventSink& sink, RenameThread rename_thread)
    : strings_(strings),
      sink_(sink),
      rename_thread_(std::move(rename_thread)),
      pytorch_domain_(strings.Intern(kPytorchDomain)) {}

StringId IttCorrelator::InternName(std::string_view text, uint32_t flags) {
  if (!(flags & XT_FLAG_TRUNCATED)) return strings_.Intern(text);
  const StringId id = strings_.Intern(MarkCut(text));
  cut_names_.insert(id);
  return id;
}

void IttCorrelator::OnName(const DecodedIttName& r) {
  if (r.kind == XT_ITT_NAME_THREAD) {
    if (r.text.empty()) return;
    if (r.hdr.flags & XT_FLAG_TRUNCATED) rename_thread_(r.hdr.pid, r.hdr.tid, MarkCut(r.text));
    else rename_thread_(r.hdr.pid, r.hdr.tid, r.text);
    return;
  }
  names_[{r.handle, r.hdr.pid, r.kind}] = InternName(r.text, r.hdr.flags);
  last_name_[0] = last_name_[1] = {};
}

StringId IttCorrelator::HandleName(uint32_t pid, uint32_t kind, uint64_t handle) {
  if (handle == 0) return kEmptyString;
  NameHit& hit = last_name_[kind == XT_ITT_NAME_DOMAIN];
  if (hit.handle == handle && hit.pid == pid) return hit.id;
  auto it = names_.find({handle, pid, kind});
  if (it == names_.end()) {
    // Its name record was lost (ring full) or it was unreadable: name it by address, once.
    ++stats_.unknown_handles;
    const StringId id =
        strings_.Intern(HexName(kind == XT_ITT_NAME_DOMAIN ? "domain" : "name", handle));
    it = names_.emplace(HandleKey{handle, pid, kind}, id).first;
  }
  hit = {handle, pid, it->second};
  return it->second;
}

StringId IttCorrelator::DomainOf(const DecodedIttEvent& r, uint64_t* domain_key) {
  if (r.origin == XT_ITT_FROM_PYTORCH) {
    *domain_key = 0;
    return pytorch_domain_;
  }
  *domain_key = r.domain;
  return HandleName(r.hdr.pid, XT_ITT_NAME_DOMAIN, r.domain);
}

StringId IttCorrelator::NameOf(const DecodedIttEvent& r) {
  if (r.origin == XT_ITT_FROM_PYTORCH) return InternName(r.inline_name, r.hdr.flags);
  if (r.op == XT_ITT_TASK_BEGIN_FN) return strings_.Intern(HexName("fn", r.extra));
  return HandleName(r.hdr.pid, XT_ITT_NAME_STRING, r.name);
}

void IttCorrelator::OnEvent(const DecodedIttEvent& r) {
  switch (r.op) {
    case XT_ITT_TASK_BEGIN:
    case XT_ITT_TASK_BEGIN_FN:
      return BeginTask(r);
    case XT_ITT_TASK_END:
      return EndTask(r);
    case XT_ITT_TASK_BEGIN_OVERLAPPED:
      return BeginKeyed(r, IttTaskKind::kOverlappedTask);
    case XT_ITT_TASK_END_OVERLAPPED:
      return EndKeyed(r, IttTaskKind::kOverlappedTask);
    case XT_ITT_REGION_BEGIN:
      return BeginKeyed(r, IttTaskKind::kRegion);
    case XT_ITT_REGION_END:
      return EndKeyed(r, IttTaskKind::kRegion);
    case XT_ITT_FRAME_BEGIN:
      return BeginKeyed(r, IttTaskKind::kFrame);
    case XT_ITT_FRAME_END:
      return EndKeyed(r, IttTaskKind::kFrame);
    case XT_ITT_MARKER:
      return Marker(r);
  }
}

void IttCorrelator::Emit(uint32_t pid, const Open& open, uint32_t end_tid, uint64_t end_ns,
                         IttTaskKind kind, uint64_t id, bool unfinished, bool closed_by_outer) {
  IttTask e;
  e.pid = pid;
  e.tid = open.tid;
  e.end_tid = end_tid;
  e.start_ns = open.start_ns;
  e.end_ns = end_ns < open.start_ns ? open.start_ns : end_ns;
  e.domain = open.domain;
  e.name = open.name;
  e.name_truncated = IsCut(open.name);
  e.kind = kind;
  e.id = id;
  e.unfinished = unfinished;
  e.closed_by_outer = closed_by_outer;
  ++stats_.tasks;
  if (unfinished) ++stats_.unfinished;
  if (closed_by_outer) ++stats_.closed_by_outer;
  sink_.OnIttTask(e);
}

void IttCorrelator::EndWithoutBegin(const DecodedIttEvent& r, IttTaskKind kind, StringId domain) {
  ++stats_.ends_without_begin;
  ++stats_.tasks;
  IttTask e;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.end_tid = r.hdr.tid;
  e.start_ns = e.end_ns = r.hdr.start_ns;
  e.domain = domain;
  e.kind = kind;
  e.id = kind == IttTaskKind::kTask ? 0 : r.id[0];
  e.begin_missing = true;
  sink_.OnIttTask(e);
}

IttCorrelator::ThreadStack& IttCorrelator::StackOf(uint32_t pid, uint32_t tid) {
  const uint64_t key = ThreadKey(pid, tid);
  if (!last_stack_ || last_key_ != key) {
    last_stack_ = &threads_[key];
    last_key_ = key;
  }
  return *last_stack_;
}

void IttCorrelator::BeginTask(const DecodedIttEvent& r) {
  ThreadStack& thread = StackOf(r.hdr.pid, r.hdr.tid);
  if (thread.open.size() >= kMaxOpenPerThread) {
    ++stats_.too_deep;
    ++thread.ignored;
    return;
  }
  Open open{};
  open.start_ns = r.hdr.start_ns;
  open.tid = r.hdr.tid;
  open.domain = DomainOf(r, &open.domain_key);
  open.name = NameOf(r);
  thread.open.push_back(open);
}

// __itt_task_end ends the innermost open task of its domain on the calling thread. Tasks of
// that thread begun inside it and still open cannot outlive it on a nesting timeline: they
// end with it, marked closed_by_outer.
void IttCorrelator::EndTask(const DecodedIttEvent& r) {
  uint64_t domain_key = 0;
  const StringId domain = DomainOf(r, &domain_key);
  ThreadStack& thread = StackOf(r.hdr.pid, r.hdr.tid);
  if (thread.ignored > 0) {
    --thread.ignored;
    return;
  }
  std::vector<Open>& open = thread.open;
  size_t match = open.size();
  while (match > 0 && open[match - 1].domain_key != domain_key) --match;
  if (match == 0) return EndWithoutBegin(r, IttTaskKind::kTask, domain);
  for (size_t i = open.size(); i > match; --i)
    Emit(r.hdr.pid, open[i - 1], r.hdr.tid, r.hdr.start_ns, IttTaskKind::kTask, 0, false, true);
  Emit(r.hdr.pid, open[match - 1], r.hdr.tid, r.hdr.start_ns, IttTaskKind::kTask, 0, false,
       false);
  open.resize(match - 1);
  // A thread pool that churns threads would keep a stack for every thread it ever had.
  if (open.empty() && threads_.size() > kMaxIdleStacks) {
    threads_.erase(ThreadKey(r.hdr.pid, r.hdr.tid));
    last_stack_ = nullptr;
  }
}

void IttCorrelator::BeginKeyed(const DecodedIttEvent& r, IttTaskKind kind) {
  if (keyed_open_ >= kMaxOpenKeyed) {
    ++stats_.too_deep;
    return;
  }
  Open open{};
  open.start_ns = r.hdr.start_ns;
  open.tid = r.hdr.tid;
  open.domain = DomainOf(r, &open.domain_key);
  open.name = NameOf(r);
  keyed_[{r.hdr.pid, kind, open.domain_key, r.id[0], r.id[1]}].push_back(open);
  ++keyed_open_;
}

void IttCorrelator::EndKeyed(const DecodedIttEvent& r, IttTaskKind kind) {
  uint64_t domain_key = 0;
  const StringId domain = DomainOf(r, &domain_key);
  auto it = keyed_.find({r.hdr.pid, kind, domain_key, r.id[0], r.id[1]});
  if (it == keyed_.end()) return EndWithoutBegin(r, kind, domain);
  Emit(r.hdr.pid, it->second.back(), r.hdr.tid, r.hdr.start_ns, kind, r.id[0], false, false);
  it->second.pop_back();
  --keyed_open_;
  if (it->second.empty()) keyed_.erase(it);
}

void IttCorrelator::Marker(const DecodedIttEvent& r) {
  ++stats_.markers;
  IttMarker e;
  uint64_t domain_key = 0;
  e.pid = r.hdr.pid;
  e.tid = r.hdr.tid;
  e.ts_ns = r.hdr.start_ns;
  e.domain = DomainOf(r, &domain_key);
  e.name = NameOf(r);
  e.name_truncated = IsCut(e.name);
  e.scope = r.origin == XT_ITT_FROM_PYTORCH ? IttMarkerScope::kThread : ScopeOf(r.extra);
  sink_.OnEvent(e);
}

void IttCorrelator::OnState(const DecodedIttState& r) {
  const CollectionState state = StateOf(r.state);
  if (state == CollectionState::kPaused) ++stats_.pauses;
  if (state == CollectionState::kCollecting) ++stats_.resumes;
  if (state == CollectionState::kDetached) ++stats_.detaches;
  // Ends that happen while collection is off are never seen: what is open now is cut here.
  if (state != CollectionState::kCollecting) CloseProcess(r.hdr.pid, r.hdr.start_ns);
  sink_.OnEvent(CollectionChange{r.hdr.pid, r.hdr.tid, r.hdr.start_ns, state,
                                 CollectionCause::kIttCall});
}

void IttCorrelator::NoteStartPaused(uint32_t pid, uint64_t ts_ns) {
  ++stats_.pauses;
  sink_.OnEvent(
      CollectionChange{pid, 0, ts_ns, CollectionState::kPaused, CollectionCause::kStartPaused});
}

void IttCorrelator::CloseProcess(uint32_t pid, uint64_t end_ns) {
  last_stack_ = nullptr;
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->first >> 32 != pid) {
      ++it;
      continue;
    }
    for (auto open = it->second.open.rbegin(); open != it->second.open.rend(); ++open)
      Emit(pid, *open, open->tid, end_ns, IttTaskKind::kTask, 0, true, false);
    it = threads_.erase(it);
  }
  for (auto it = keyed_.begin(); it != keyed_.end();) {
    if (std::get<0>(it->first) != pid) {
      ++it;
      continue;
    }
    for (const Open& open : it->second)
      Emit(pid, open, open.tid, end_ns, std::get<1>(it->first), std::get<3>(it->first), true,
           false);
    keyed_open_ -= it->second.size();
    it = keyed_.erase(it);
  }
}

void IttCorrelator::Finish(uint64_t end_ns) {
  for (auto& [key, thread] : threads_)
    for (auto open = thread.open.rbegin(); open != thread.open.rend(); ++open)
      Emit(static_cast<uint32_t>(key >> 32), *open, open->tid, end_ns, IttTaskKind::kTask, 0,
           true, false);
  threads_.clear();
  last_stack_ = nullptr;
  for (auto& [key, opens] : keyed_)
    for (const Open& open : opens)
      Emit(std::get<0>(key), open, open.tid, end_ns, std::get<1>(key), std::get<3>(key), true,
           false);
  keyed_.clear();
  keyed_open_ = 0;
}

}  // namespace xtrace
