// The domains and string handles the collector gives out: one per distinct name for the life
// of the process, shared by every ITT client library in it. Clients keep handles in globals
// and use them until exit, so they are never freed.
#pragma once

#include <mutex>
#include <string_view>
#include <unordered_map>

#include "itt/itt_abi.h"

namespace xtrace::itt {

class HandleRegistry {
 public:
  // The handle for `name`, created on first use; nullptr for a null name. Thread-safe.
  // PyTorch asks for a string handle on every range push, so a known name costs one hash
  // lookup and no allocation.
  Domain* DomainNamed(const char* name);
  StringHandle* StringNamed(const char* name);

 private:
  std::mutex mutex_;
  // Keys view the handle's own copy of its name.
  std::unordered_map<std::string_view, Domain*> domains_;
  std::unordered_map<std::string_view, StringHandle*> strings_;
};

// The process's registry (never destroyed: clients may create handles from atexit handlers).
HandleRegistry& Handles();

}  // namespace xtrace::itt
