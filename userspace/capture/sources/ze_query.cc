// Asking a held process about the Level Zero objects it made before the attach: the
// bookkeeping of what was asked — which processes are watched, the holds served (their bounds,
// their renewal, the parent's SIGCONT), the handles asked for and learned, what it cost and
// the summary. The calls made in the held thread, and finding where they go, are
// ze_query_ask.cc's.
#include "capture/sources/ze_query.h"

#include "base/hex.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/read_file.h"
#include "base/unique_fd.h"
#include "capture/bpf/capture_maps.h"
#include "capture/holds/hold_guardian.h"
#include "model/ze_api_views.h"
#include "xtrace/hold.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

// The bound of a whole hold, from the moment it is served: the thread's stop and every call
// made in it. It asks on while the process answers (HoldBound): each call may take up to
// `kHoldIdleNs`, generous because the calls take microseconds and only CPU waits make them
// slow, and the hold never asks past its cap in all (--query-max). No call begins once it has
// passed; a call under way then is never undone in the middle (it may hold a lock:
// remote_call.h) but let finish while the capture goes on (Tick), and its answer is not used.
constexpr uint64_t kHoldIdleNs = 2'000'000'000;
// A call let finish that has still not returned when the capture ends: how long the capture
// waits for it before handing the thread to the guardian (which waits as long as it takes).
constexpr uint64_t kFinishAtEndNs = 5'000'000'000;
// How long each look at a call let finish may take (the capture's loop goes on between).
constexpr uint64_t kFinishLookNs = 2'000'000;
// The longest a hold waits, before it lets its thread go, for the SIGCONT a parent that
// mirrors its child's stops (nsenter) owes the process: the parent needs a CPU to send it.
constexpr uint64_t kParentEchoWaitNs = 1'000'000'000;
// How far past the probed instruction a held thread may stand: the probe's instruction was
// emulated or stepped (a conditional branch of the stub, or its first move).
constexpr uint64_t kHeldIpWindow = 64;
constexpr size_t kMaxFailuresShown = 3;
// Rounds of handles asked for by other threads while one is held (each round takes those that
// arrived during the previous one); in practice two.
constexpr int kMaxAskRounds = 16;
// Holds that found their thread unusable (not stopped, not where it was held) before a process
// is left alone: each costs the process a stop.
constexpr int kMaxUnusableHolds = 3;
// Holds served one after the other in one OnHold (each taken while the one before it closed).
constexpr int kMaxChainedHolds = 16;

// "10 s", "2.5 s".
std::string FormatSeconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", ns / 1e9);
  return text;
}

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

ZeQueries::ZeQueries(CaptureMaps& maps, int held_map_fd, RemoteCallSlot* slot, uint64_t hold_cap_ns,
                     Learned learned, LearnedCall learned_call, Held held, Say say)
    : maps_(maps),
      held_fd_(held_map_fd),
      slot_(slot),
      learned_(std::move(learned)),
      learned_call_(std::move(learned_call)),
      held_(std::move(held)),
      say_(std::move(say)),
      self_pid_(static_cast<uint32_t>(getpid())),
      bound_(kHoldIdleNs, hold_cap_ns) {
  stats_.hold_cap_ns = hold_cap_ns;
}

void ZeQueries::Refuse(uint32_t pid, const std::string& why) {
  if (stats_.not_queried.emplace(pid, why).second)
    say_("pid " + std::to_string(pid) + ": objects made before the attach are not queried (" + why +
         ")");
  Forget(pid);
}

void ZeQueries::Fail(const std::string& why) {
  if (stats_.failures.size() < kMaxFailuresShown &&
      std::find(stats_.failures.begin(), stats_.failures.end(), why) == stats_.failures.end())
    stats_.failures.push_back(why);
}

void ZeQueries::Watch(uint32_t pid) {
  if (const std::string tracer = OtherTracer(pid, self_pid_); !tracer.empty())
    return Refuse(pid, tracer);
  // What its loader can be asked, known before its first hold: BPF asks only for those kinds.
  // A process with no loader mapped yet makes its objects under our eyes; one whose loader
  // cannot be read is refused at its first hold, as before.
  uint32_t kinds = 1u << XT_QUERY_KERNEL;
  if (auto resolved = ResolveQueryTarget(pid); resolved.ok()) {
    kinds = resolved->Kinds();
    if (!resolved->first_missing.empty()) {
      auto [it, first] = stats_.old_loaders.try_emplace(resolved->loader, resolved->first_missing, 0);
      ++it->second.second;
      if (first)
        say_("lists, queues and events made before the attach keep an unknown device and engine in "
             "processes using " + resolved->loader + ": it has no " + resolved->first_missing +
             " (Level Zero 1.9 added those queries); their kernels are still named");
    }
    targets_[pid] = *resolved;
  }
  if (Status st = maps_.SetQueryPid(pid, kinds); !st.ok()) return Refuse(pid, st.message());
  watched_.insert(pid);
}

void ZeQueries::Forget(uint32_t pid) {
  if (watched_.erase(pid) == 0) return;
  targets_.erase(pid);
  unusable_holds_.erase(pid);
  std::erase_if(devices_known_, [pid](const auto& k) { return k.first == pid; });
  std::erase_if(pool_flags_, [pid](const auto& k) { return k.first.first == pid; });
  maps_.ForgetQueries(pid);
}

bool IsQueryHold(int held_fd, const QueryHold& hold) {
  xt_hold entry{};
  return bpf_map_lookup_elem(held_fd, &hold.pid, &entry) == 0 && entry.reason == XT_HOLD_QUERY &&
         entry.tid == hold.tid && entry.since_ns == hold.since_ns;
}

bool RenewQueryHold(int held_fd, RemoteCallSlot* slot, const QueryHold& hold, uint64_t now_ns) {
  // Only our own: an entry that is another thread's hold now (ours was continued by the
  // guardian's bound, and that thread held the process since) is that hold's, its process
  // stopping, its record on its way. The entry itself is never written: the lease is.
  if (!IsQueryHold(held_fd, hold)) return false;
  if (slot->lease_pid.load() != hold.pid || slot->lease_since_ns.load() != hold.since_ns) {
    slot->lease_pid.store(0);  // moved to this hold: never read half-written as that one's
    slot->lease_since_ns.store(hold.since_ns);
    slot->lease_ns.store(now_ns);
    slot->lease_pid.store(hold.pid);
  } else {
    slot->lease_ns.store(now_ns);
  }
  return true;
}

bool EndQueryHold(int held_fd, RemoteCallSlot* slot, const QueryHold& hold) {
  if (slot->lease_pid.load() == hold.pid && slot->lease_since_ns.load() == hold.since_ns)
    slot->lease_pid.store(0);
  return TakeHoldIf(held_fd, hold.pid, hold.since_ns, XT_HOLD_QUERY, hold.tid);
}

bool ZeQueries::RenewHold() { return RenewQueryHold(held_fd_, slot_, hold_, NowNs()); }

bool ZeQueries::EndOwnHold() { return EndQueryHold(held_fd_, slot_, hold_); }

uint64_t ZeQueries::CallBound() {
  (void)RenewHold();
  // A call begins only once the one before it returned, answered or refused: the process
  // answers, so the hold asks on, up to its cap.
  bound_.Answered(NowNs());
  return Remaining();
}

void ZeQueries::AwaitParentEcho(uint32_t pid) {
  const int fd = maps_.hold_parents_fd();
  const uint64_t until = NowNs() + kParentEchoWaitNs;
  for (;;) {
    (void)RenewHold();  // the guardian's bound is not for this wait
    std::vector<uint32_t> owing;
    uint32_t key = 0, next = 0;
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      xt_hold_parent e{};
      if (bpf_map_lookup_elem(fd, &next, &e) == 0 && e.child_ns == pid && (e.state & XT_PARENT_CONTINUED))
        owing.push_back(next);
      key = next;
      prev = &key;
    }
    if (owing.empty()) return;
    if (NowNs() >= until) {
      // A parent that never sent it: not waited for again.
      for (uint32_t parent : owing) bpf_map_delete_elem(fd, &parent);
      Fail("the parent of pid " + std::to_string(pid) + " did not continue it within " +
           std::to_string(kParentEchoWaitNs / 1'000'000) + " ms of being continued");
      return;
    }
    const timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
}

bool ZeQueries::HeldNow(uint32_t pid) const {
  xt_hold hold{};
  return bpf_map_lookup_elem(held_fd_, &pid, &hold) == 0;
}

void ZeQueries::OnHold(uint32_t pid, uint32_t tid, uint64_t ip, uint64_t since_ns) {
  if (served_.erase({pid, since_ns})) return;  // served right after the hold before it
  for (int chained = 0;; ++chained) {
    // Handles asked just before a hold closed are left to the hold another thread took since.
    // Their askers ran on, and their launches' records may come before that hold's record:
    // read first, they would stay unnamed. So that hold is served now, its record skipped.
    if (!ServeHold(pid, tid, ip, since_ns) || chained >= kMaxChainedHolds) return;
    xt_hold next{};
    if (bpf_map_lookup_elem(held_fd_, &pid, &next) != 0 || next.reason != XT_HOLD_QUERY) return;
    served_.insert({pid, next.since_ns});
    tid = next.tid;
    ip = next.ip;
    since_ns = next.since_ns;
  }
}

uint64_t ZeQueries::Remaining() const { return bound_.Remaining(NowNs()); }

bool ZeQueries::SlotFree(uint64_t wait_ns) {
  if (!finishing_) return true;
  if (!finishing_->Finish(wait_ns)) return false;
  finishing_.reset();
  slot_->state.store(static_cast<uint32_t>(RemoteCallState::kFree));
  return true;
}

void ZeQueries::Tick() { (void)SlotFree(kFinishLookNs); }

ZeQueries::~ZeQueries() {
  if (!finishing_ || SlotFree(kFinishAtEndNs)) return;
  // Still in the function it was called into: never undone there. The guardian, which
  // outlives the capture, takes the thread over and puts it back once the call returned.
  say_("pid " + std::to_string(finishing_pid_) + ": a call into its loader has not returned after " +
       std::to_string((kHoldIdleNs + kFinishAtEndNs) / 1'000'000'000) +
       " s; its thread is left to the hold guardian, which puts it back once the call returns");
  (void)finishing_->HandOver(kFinishAtEndNs);
  finishing_.reset();
}

bool ZeQueries::ServeHold(uint32_t pid, uint32_t tid, uint64_t ip, uint64_t since_ns) {
  ++stats_.holds;
  if (!SlotFree(kFinishLookNs)) {
    // A call of an earlier hold is still let finish in the slot: this hold goes on unasked,
    // and its handles wait for a later hold.
    stats_.missed += maps_.AskedHandles(pid).size();
    Fail("a call into pid " + std::to_string(finishing_pid_) +
         "'s loader had not returned yet when another hold came");
    // Unless the guardian's bound continued it already (and another hold may be there now).
    hold_ = {pid, tid, since_ns, ip};
    const bool ended_here = EndOwnHold();
    const uint64_t end_ns = NowNs();
    if (ended_here) kill(static_cast<pid_t>(pid), SIGCONT);
    const uint64_t held = end_ns - std::min(end_ns, since_ns);
    stats_.held_ns += held;
    stats_.max_held_ns = std::max(stats_.max_held_ns, held);
    // The whole process stood still meanwhile, and nothing was asked.
    if (ended_here)
      held_(XtraceHold{.pid = pid, .tid = tid, .start_ns = since_ns, .end_ns = end_ns,
                       .process_end_ns = end_ns, .cause = HoldCause::kAttachQueries});
    return false;
  }
  bound_.Begin(NowNs());
  // The hold is ours while its entry stays: renewed (the guardian's bound continues stale
  // holds) and deleted by us. While it is there, other threads of the process that launch
  // unknown kernels only ask (bpf/query.bpf.h) and run on: they are asked about here, in the
  // held thread, before their launches' records are read. From here the slot tells the
  // guardian to continue the process if we die.
  slot_->pid = pid;
  slot_->tid = tid;
  slot_->state.store(static_cast<uint32_t>(RemoteCallState::kOwned));
  hold_ = {pid, tid, since_ns, ip};
  if (!RenewHold()) {
    slot_->state.store(static_cast<uint32_t>(RemoteCallState::kFree));
    // Its launch ran on unasked: unnamed, and said so.
    ++stats_.unusable;
    Fail("a thread was no longer held when its turn came (--query-max passed before the capture "
         "took it up, or it exited)");
    return false;
  }
  const size_t waiting = maps_.AskedHandles(pid).size();
  const uint64_t failed_before = stats_.failed;
  uint64_t process_end_ns = 0;  // when the rest of the process was continued (0: at the end)
  std::set<uint64_t> asked;  // asked about in this hold, answered or not
  std::set<uint64_t> deferred;  // left asked for, for a later hold: this one's bound passed
  std::vector<LearnedKernel> learned;
  std::vector<ApiCall> learned_calls;
  uint64_t objects = 0;  // learned, kernels and others
  std::string why;        // the process cannot be asked at all
  bool retry = false;     // this hold could not be used: its handles wait for the next one
  bool continued = false;  // the session continued the rest of the process
  // When the session let the held thread go: it runs on from there (its call may return
  // before this thread reads the clock again), so the hold ends then (0: no session ended).
  uint64_t released_ns = 0;
  bool released = false;   // the hold's entry is gone
  bool left = false;       // handles asked for were left to a hold taken since
  bool echo_awaited = false;  // a parent's SIGCONT owed to the process was waited for
  if (!watched_.count(pid)) {
    why = "not watched";
  } else if (const std::string tracer = OtherTracer(pid, self_pid_); !tracer.empty()) {
    why = tracer;
    Refuse(pid, tracer);
  } else {
    auto it = targets_.find(pid);
    if (it == targets_.end()) {
      auto resolved = ResolveQueryTarget(pid);
      if (!resolved.ok()) {
        why = resolved.status().message();
        Refuse(pid, why);
      } else {
        it = targets_.emplace(pid, *resolved).first;
      }
    }
    if (it != targets_.end()) {
      const QueryTargetAddresses target = it->second;
      std::unique_ptr<RemoteCallSession> unstopped;
      auto session = RemoteCallSession::Begin(pid, tid, ip, ip + kHeldIpWindow, target.loop, slot_,
                                              Remaining(), &unstopped);
      if (!session.ok()) {
        retry = true;
        ++stats_.unusable;
        Fail(session.status().message());
        if (++unusable_holds_[pid] >= kMaxUnusableHolds) Refuse(pid, session.status().message());
        // Asked to stop and not stopped yet: let go once its stop is in (Tick).
        if (unstopped) {
          finishing_ = std::move(unstopped);
          finishing_pid_ = pid;
        }
      } else {
        continued = true;
        process_end_ns = NowNs();  // Begin continued the rest of the process
        if (Status st = (*session)->SaveErrno(target.errno_location, CallBound()); !st.ok()) {
          if ((*session)->unfinished()) {
            retry = true;  // slow, not refused: its handles wait for the next hold
            Fail("__errno_location: " + st.message());
          } else {
            why = st.message();
            Refuse(pid, why);
          }
        } else {
          auto ask = [&](const CaptureMaps::AskedHandle& h) {
            // Past the hold's bound (or behind a call let finish), nothing more is asked. The
            // handle stays asked for: the next launch that uses it holds again and it is asked
            // then. Settled unasked, it was never asked again: eight threads on trixie's loader
            // (88 objects in one hold) left 37 of them unnamed for good.
            if ((*session)->unfinished() || Remaining() == 0) {
              if (deferred.insert(h.handle).second) ++stats_.deferred;
              return;
            }
            asked.insert(h.handle);
            if (h.kind == XT_QUERY_KERNEL) {
              auto name = AskKernelName(**session, target.kernel_get_name, h.handle);
              if (name.ok()) {
                learned.push_back(std::move(*name));
                ++objects;
              } else {
                ++stats_.failed;
                Fail("kernel " + Hex(h.handle) + ": " + name.status().message());
              }
              return;
            }
            auto calls = AskObject(**session, target, pid, h.handle, h.kind);
            if (calls.ok()) {
              learned_calls.insert(learned_calls.end(), calls->begin(), calls->end());
              ++objects;
            } else {
              ++stats_.failed;
              static constexpr const char* kKindNames[] = {"kernel", "command list", "command queue", "event"};
              Fail(std::string(h.kind < std::size(kKindNames) ? kKindNames[h.kind] : "object") + " " +
                   Hex(h.handle) + ": " + calls.status().message());
            }
          };
          // Rounds until no thread asked for more while the previous one ran.
          for (int round = 0; round < kMaxAskRounds && RenewHold(); ++round) {
            bool any = false;
            for (const CaptureMaps::AskedHandle& h : maps_.AskedHandles(pid)) {
              if (asked.count(h.handle) || deferred.count(h.handle)) continue;
              any = true;
              ask(h);
            }
            if (!any) break;
          }
          // While the hold is still ours (a thread asking meanwhile rides on it: no new stop
          // of the process for the echo to end early).
          if (!(*session)->unfinished()) AwaitParentEcho(pid);
          echo_awaited = true;
          // Closed: a thread asking from now on takes a hold of its own. Those that asked
          // just before are taken still, unless such a hold began (it takes them then).
          (void)EndOwnHold();
          released = true;
          for (const CaptureMaps::AskedHandle& h : maps_.AskedHandles(pid)) {
            if (asked.count(h.handle) || deferred.count(h.handle)) continue;
            if (HeldNow(pid)) {
              left = true;
              break;
            }
            ask(h);
          }
        }
        if (!echo_awaited && !(*session)->unfinished()) AwaitParentEcho(pid);
        released_ns = NowNs();
        if ((*session)->unfinished()) {
          // A call passed the hold's bound: it runs on, and its thread is put back once it
          // has returned (Tick). The slot stays its until then.
          finishing_ = std::move(*session);
          finishing_pid_ = pid;
        } else if (Status st = (*session)->End(); !st.ok()) {
          Fail(st.message());
        }
      }
    }
  }
  if (!why.empty()) {
    stats_.failed += waiting;
    Fail(why);
  }
  // Known from now on, answered or not: a handle is asked about once. Handles of a hold that
  // could not be used stay asked for, and the next launch of one holds again. (A process
  // refused is forgotten: nothing of it is kept.)
  if (!retry && why.empty()) maps_.SettleHandles(pid, std::vector<uint64_t>(asked.begin(), asked.end()));
  // Ours only: gone, the guardian's bound continued the process (and another thread may hold
  // it now, for its own record to serve).
  const bool ended_here = !released && EndOwnHold();
  const uint64_t end_ns = released_ns ? released_ns : NowNs();
  // A session continued the process as it began; otherwise it is continued here. Never
  // after a session: a hold another thread took since would be undone before it was used.
  if (!continued && ended_here) kill(static_cast<pid_t>(pid), SIGCONT);
  if (!finishing_) slot_->state.store(static_cast<uint32_t>(RemoteCallState::kFree));
  const uint64_t held = end_ns > since_ns ? end_ns - since_ns : 0;
  stats_.held_ns += held;
  stats_.max_held_ns = std::max(stats_.max_held_ns, held);
  stats_.learned += objects;
  for (const LearnedKernel& k : learned) learned_(pid, tid, since_ns, end_ns, k);
  for (ApiCall& call : learned_calls) {
    call.start_ns = since_ns;
    call.end_ns = end_ns;
    learned_call_(call);
  }
  // The hold itself, whatever it learned (nothing when every query failed): the span the
  // report leaves out of the program's time. The held thread stayed in its ptrace stop until
  // the session ended, whoever deleted the hold's entry; without a session, the guardian's
  // bound continued the process at a time not known here, and no span is written.
  if (continued || ended_here)
    held_(XtraceHold{.pid = pid, .tid = tid, .start_ns = since_ns, .end_ns = end_ns,
                     .process_end_ns = process_end_ns ? std::min(process_end_ns, end_ns) : end_ns,
                     .cause = HoldCause::kAttachQueries,
                     .learned = static_cast<uint32_t>(objects),
                     .failed = static_cast<uint32_t>(stats_.failed - failed_before)});
  return left;
}

std::string QuerySummary(const QueryStats& stats) {
  std::string text;
  char line[160];
  auto holds = [&] {
    if (stats.holds > 1) {
      std::snprintf(line, sizeof(line), " (%llu holds, longest %.1f ms)",
                    static_cast<unsigned long long>(stats.holds), stats.max_held_ns / 1e6);
      text += line;
    }
  };
  auto reasons = [&] {
    for (size_t i = 0; i < stats.failures.size(); ++i) text += (i ? "; " : "") + stats.failures[i];
    text += ".";
  };
  if (stats.learned) {
    std::snprintf(line, sizeof(line),
                  " %llu object%s made before the attach %s queried in the process: %.1f ms held in all",
                  static_cast<unsigned long long>(stats.learned), stats.learned == 1 ? "" : "s",
                  stats.learned == 1 ? "was" : "were", stats.held_ns / 1e6);
    text += line;
    holds();
    text += ".";
  } else if (stats.failed) {
    // Nothing answered: "0 objects were queried ... 11 could not be" read as if none was asked.
    std::snprintf(line, sizeof(line),
                  " %llu object%s made before the attach could not be queried in the process, "
                  "%.1f ms held in all",
                  static_cast<unsigned long long>(stats.failed), stats.failed == 1 ? "" : "s",
                  stats.held_ns / 1e6);
    text += line;
    holds();
    text += ": ";
    reasons();
  }
  if (stats.learned && stats.failed) {
    text += " " + std::to_string(stats.failed) + " could not be: ";
    reasons();
  } else if (!stats.failed && stats.unusable) {
    // Nothing asked went unanswered, but a held launch ran on unnamed: say why all the same.
    text += " " + std::to_string(stats.unusable) + " hold" + (stats.unusable == 1 ? "" : "s") +
            " could not be used (the launch held ran unnamed): ";
    reasons();
  }
  for (const auto& [loader, missing] : stats.old_loaders)
    text += " Lists, queues and events made before the attach keep an unknown device and engine in " +
            std::to_string(missing.second) + " process" + (missing.second == 1 ? "" : "es") +
            ": their loader " + loader + " has no " + missing.first + " (Level Zero 1.9).";
  if (stats.deferred)
    text += " " + std::to_string(stats.deferred) + " waited for a later hold: the hold's bound (" +
            FormatSeconds(kHoldIdleNs) + " a call, " +
            FormatSeconds(stats.hold_cap_ns) + " in all) passed before they were asked.";
  if (stats.missed)
    text += " " + std::to_string(stats.missed) +
            " uses of objects made before the attach could not be asked about (a query map was "
            "full, the thread could not be stopped, or a call of an earlier hold had not returned).";
  for (const auto& [pid, why] : stats.not_queried)
    text += " pid " + std::to_string(pid) + " was not queried: " + why + ".";
  return text;
}

}  // namespace xtrace
