// Interned strings: every name in the log and in model events is a StringId into one table,
// so a kernel name launched a million times is stored and compared once.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace xtrace {

using StringId = uint32_t;

// Id 0 is always the empty string, so a zero-initialised event names nothing.
inline constexpr StringId kEmptyString = 0;

class StringTable {
 public:
  StringTable();

  // Returns the id of `text`, adding it if new. Ids are dense and assigned in order.
  StringId Intern(std::string_view text);

  // Adds `text` with a known id (used by readers rebuilding a writer's table). Fails (false)
  // if `id` is not the next id in sequence.
  bool Insert(StringId id, std::string_view text);

  // The text of `id`; an unknown id yields nullptr.
  const std::string* Find(StringId id) const;
  std::string_view Get(StringId id) const;  // empty for an unknown id

  StringId size() const { return static_cast<StringId>(strings_.size()); }

 private:
  std::deque<std::string> strings_;  // deque: stable addresses for the index's views
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace xtrace
