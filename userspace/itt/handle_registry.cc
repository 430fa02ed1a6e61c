// Creation and lookup of ITT domains and string handles.
#include "itt/handle_registry.h"

#include <cstring>

namespace xtrace::itt {

Domain* HandleRegistry::DomainNamed(const char* name) {
  if (!name) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto it = domains_.find(name); it != domains_.end()) return it->second;
  auto* domain = new Domain{};
  domain->flags = 1;  // enabled: clients skip every call on a domain whose flags are 0
  domain->nameA = strdup(name);
  domains_.emplace(domain->nameA, domain);
  return domain;
}

StringHandle* HandleRegistry::StringNamed(const char* name) {
  if (!name) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto it = strings_.find(name); it != strings_.end()) return it->second;
  auto* handle = new StringHandle{};
  handle->strA = strdup(name);
  strings_.emplace(handle->strA, handle);
  return handle;
}

HandleRegistry& Handles() {
  static auto* registry = new HandleRegistry();
  return *registry;
}

}  // namespace xtrace::itt
