// The domains and string handles the collector gives out: one per distinct name for the life
// of the process, shared by every ITT client library in it. Clients keep handles in globals
// and use them until exit, so they are never freed.
//
// Written with the C library only (calloc, a pthread mutex, a small open-addressing table):
// the collector is loaded into arbitrary programs and containers, so it depends on libc alone.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "itt/itt_abi.h"
#include "xtrace/itt_ring.h"

// The list of domains xtrace walks to switch them on (exported, see exports.map).
extern "C" __attribute__((visibility("protected"))) xt_itt_domains xtrace_itt_domains;

namespace xtrace::itt {

// Handles by name: open addressing on the name's hash, doubled at half load. `Handle` is
// Domain or StringHandle; `NameOf` reads the name a handle keeps.
template <typename Handle, const char* (*NameOf)(const Handle*)>
class NameIndex {
 public:
  Handle* Find(const char* name, uint64_t hash) const;
  // Adds `handle` (whose name is not in the index). False if memory ran out.
  bool Add(Handle* handle, uint64_t hash);

 private:
  bool Grow();

  Handle** slots_ = nullptr;
  uint64_t* hashes_ = nullptr;
  size_t capacity_ = 0;  // a power of two, or 0
  size_t size_ = 0;
};

const char* DomainName(const Domain* d);
const char* StringHandleText(const StringHandle* s);

class HandleRegistry {
 public:
  // The handle for `name`, created on first use; nullptr for a null name (or if memory ran
  // out). Thread-safe. A new domain is created switched off (flags 0) and published in
  // xtrace_itt_domains (xtrace/itt_ring.h), or switched on in a process that opted out. PyTorch asks for a string handle on every range push, so a known name
  // costs one hash and one lookup, no allocation.
  Domain* DomainNamed(const char* name);
  StringHandle* StringNamed(const char* name);

  // Adopts the domains `global`'s client made itself before it loaded the collector (those
  // on its own domain list): each is switched off and listed in xtrace_itt_domains.adopted,
  // so that xtrace switches it on as it does the collector's own. Returns the index range
  // [first, end) of xtrace_itt_domains.adopted that this call added.
  std::pair<uint32_t, uint32_t> AdoptClientDomains(const Global* global);
  // Whether xtrace can find `domain` to switch it on again: one of the collector's own or an
  // adopted one. Only such a domain may be switched off.
  static bool Switchable(const Domain* domain);

 private:
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  NameIndex<Domain, DomainName> domains_;
  NameIndex<StringHandle, StringHandleText> strings_;
};

// The process's registry (never destroyed: clients may create handles from atexit handlers).
HandleRegistry& Handles();

}  // namespace xtrace::itt
