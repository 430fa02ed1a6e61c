// Interned string table.
#include "model/string_table.h"

namespace xtrace {

StringTable::StringTable() { Intern(""); }

StringId StringTable::Intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  index_.emplace(stored, id);
  return id;
}

bool StringTable::Insert(StringId id, std::string_view text) {
  if (id != strings_.size()) return false;
  const std::string& stored = strings_.emplace_back(text);
  index_.emplace(stored, id);  // a repeated text keeps its first id in the index
  return true;
}

const std::string* StringTable::Find(StringId id) const {
  return id < strings_.size() ? &strings_[id] : nullptr;
}

std::string_view StringTable::Get(StringId id) const {
  const std::string* s = Find(id);
  return s ? std::string_view(*s) : std::string_view();
}

}  // namespace xtrace
