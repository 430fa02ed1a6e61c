// MergedLogReader (merged_log_reader.h).
#include "export/merged_log_reader.h"

#include <type_traits>

namespace xtrace {

std::optional<uint64_t> EventStartNs(const Event& event) {
  return std::visit(
      [](const auto& e) -> std::optional<uint64_t> {
        if constexpr (requires { e.start_ns; }) return e.start_ns;
        else if constexpr (requires { e.ts_ns; }) return e.ts_ns;
        else if constexpr (requires { e.created_ns; }) return e.created_ns;
        else if constexpr (requires { e.time_ns; }) return e.time_ns;
        else return std::nullopt;
      },
      event);
}

MergedLogReader::MergedLogReader(std::vector<Source> sources)
    : heap_(Later{&sources_}) {
  sources_.reserve(sources.size());
  for (Source& s : sources) sources_.push_back(Slot{std::move(s), nullptr, 0, false});
}

Result<bool> MergedLogReader::Advance(size_t i) {
  Slot& slot = sources_[i];
  Result<const Event*> next = slot.source.reader.NextEvent();
  if (!next.ok()) return next.status();
  slot.next = *next;
  if (!slot.next) return false;
  if (std::optional<uint64_t> start = EventStartNs(*slot.next)) {
    slot.key = *start + static_cast<uint64_t>(slot.source.offset_ns);
  } else if (!slot.primed) {
    slot.key = 0;  // identities before the first timed event: first of all
  }
  slot.primed = true;
  return true;
}

Result<const Event*> MergedLogReader::NextEvent(size_t* source) {
  if (!started_) {
    started_ = true;
    for (size_t i = 0; i < sources_.size(); ++i) {
      Result<bool> more = Advance(i);
      if (!more.ok()) return more.status();
      if (*more) heap_.push(i);
    }
  }
  if (returned_) {
    const size_t i = *returned_;
    returned_.reset();
    Result<bool> more = Advance(i);
    if (!more.ok()) return more.status();
    if (*more) heap_.push(i);
  }
  if (heap_.empty()) return static_cast<const Event*>(nullptr);
  const size_t i = heap_.top();
  heap_.pop();
  *source = i;
  returned_ = i;
  return sources_[i].next;
}

Result<bool> MergedLogReader::Next(Event* out, size_t* source) {
  Result<const Event*> next = NextEvent(source);
  if (!next.ok()) return next.status();
  if (!*next) return false;
  *out = **next;
  return true;
}

uint64_t MergedLogReader::bytes_read() const {
  uint64_t total = 0;
  for (const Slot& s : sources_) total += s.source.reader.bytes_read();
  return total;
}

std::optional<uint64_t> MergedLogReader::total_size() const {
  uint64_t total = 0;
  for (const Slot& s : sources_) {
    const std::optional<uint64_t> size = s.source.reader.file_size();
    if (!size) return std::nullopt;
    total += *size;
  }
  return total;
}

}  // namespace xtrace
