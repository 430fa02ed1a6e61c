// Turns ITT records into model events: resolves handles to the names sent with them, pairs
// task begins with ends on each thread (and id-keyed kinds by id), and turns collection
// changes into events. Unbalanced input is kept and counted, never allowed to disturb
// other threads or processes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "decode/itt_records.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class EventSink;

struct IttStats {
  uint64_t tasks = 0;               // spans emitted (every kind, unbalanced ones included)
  uint64_t markers = 0;
  uint64_t unfinished = 0;          // begins never ended before the capture or collection ended
  uint64_t ends_without_begin = 0;  // ends that matched no open begin
  uint64_t closed_by_outer = 0;     // tasks closed because an enclosing task ended first
  uint64_t unknown_handles = 0;     // events naming a handle whose text never arrived
  uint64_t too_deep = 0;            // begins ignored beyond the open-span limits
  uint64_t pauses = 0;
  uint64_t resumes = 0;
  uint64_t detaches = 0;
};

class IttCorrelator {
 public:
  // Open spans kept per thread, and id-keyed spans kept per capture: beyond these a program
  // that begins without ever ending would grow memory without bound.
  static constexpr size_t kMaxOpenPerThread = 1024;
  static constexpr size_t kMaxOpenKeyed = 65536;
  // Threads whose stack is kept while empty (so a task costs no allocation); past this many,
  // a stack that empties goes.
  static constexpr size_t kMaxIdleStacks = 4096;

  using RenameThread = std::function<void(uint32_t pid, uint32_t tid, std::string_view name)>;

  IttCorrelator(StringTable& strings, EventSink& sink, RenameThread rename_thread);

  void OnName(const DecodedIttName& r);
  void OnEvent(const DecodedIttEvent& r);
  void OnState(const DecodedIttState& r);

  // The capture starts `pid` paused (--start-paused).
  void NoteStartPaused(uint32_t pid, uint64_t ts_ns);

  // Ends every open span at `end_ns`, marked unfinished (the capture is over).
  void Finish(uint64_t end_ns);

  // Ends `pid`'s open spans at `end_ns` as unfinished (its collection stopped, or it exited).
  void CloseProcess(uint32_t pid, uint64_t end_ns);

  const IttStats& stats() const { return stats_; }

 private:
  struct Open {
    uint64_t start_ns;
    uint64_t domain_key;  // the domain handle (0: PyTorch's implicit domain)
    uint32_t tid;
    StringId domain;
    StringId name;
  };
  struct ThreadStack {
    std::vector<Open> open;
    uint32_t ignored = 0;  // begins past kMaxOpenPerThread still waiting for their ends
  };
  // (pid, kind, handle) of a handle's text.
  struct HandleKey {
    uint64_t handle;
    uint32_t pid;
    uint32_t kind;
    bool operator==(const HandleKey&) const = default;
  };
  struct HandleKeyHash {
    size_t operator()(const HandleKey& k) const {
      return std::hash<uint64_t>()(k.handle ^ (uint64_t{k.pid} << 40) ^ (uint64_t{k.kind} << 32));
    }
  };
  using KeyedKey = std::tuple<uint32_t /*pid*/, IttTaskKind, uint64_t /*domain*/,
                              uint64_t /*id d1*/, uint64_t /*id d2*/>;

  // `text` as a string id; one the probe cut (XT_FLAG_TRUNCATED in `flags`) ends in "…" and
  // is remembered as cut.
  StringId InternName(std::string_view text, uint32_t flags);
  bool IsCut(StringId name) const { return cut_names_.count(name) != 0; }
  StringId HandleName(uint32_t pid, uint32_t kind, uint64_t handle);
  StringId DomainOf(const DecodedIttEvent& r, uint64_t* domain_key);
  StringId NameOf(const DecodedIttEvent& r);
  // The thread's stack of open tasks (made on first use, kept while its process lives: a
  // task a pair is then no allocation).
  ThreadStack& StackOf(uint32_t pid, uint32_t tid);
  void BeginTask(const DecodedIttEvent& r);
  void EndTask(const DecodedIttEvent& r);
  void BeginKeyed(const DecodedIttEvent& r, IttTaskKind kind);
  void EndKeyed(const DecodedIttEvent& r, IttTaskKind kind);
  void Marker(const DecodedIttEvent& r);
  void EndWithoutBegin(const DecodedIttEvent& r, IttTaskKind kind, StringId domain);
  void Emit(uint32_t pid, const Open& open, uint32_t end_tid, uint64_t end_ns, IttTaskKind kind,
            uint64_t id, bool unfinished, bool closed_by_outer);
  StringTable& strings_;
  EventSink& sink_;
  RenameThread rename_thread_;
  StringId pytorch_domain_;
  // (pid, kind, handle) -> text sent for it.
  std::unordered_map<HandleKey, StringId, HandleKeyHash> names_;
  // What HandleName found last, per kind ([1]: domains): a loop's tasks name the same domain
  // and string again and again, three lookups a task. Cleared when names_ changes a name.
  struct NameHit {
    uint64_t handle = 0;  // 0: none
    uint32_t pid = 0;
    StringId id = kEmptyString;
  };
  NameHit last_name_[2];
  std::set<StringId> cut_names_;  // names that end in "…" because the probe cut them
  std::unordered_map<uint64_t, ThreadStack> threads_;  // pid << 32 | tid
  // The stack StackOf found last (the next record is mostly the same thread's); nodes of an
  // unordered_map stay put, so this holds until threads_ loses an entry.
  uint64_t last_key_ = 0;
  ThreadStack* last_stack_ = nullptr;
  std::map<KeyedKey, std::vector<Open>> keyed_;
  size_t keyed_open_ = 0;
  IttStats stats_;
};

}  // namespace xtrace
