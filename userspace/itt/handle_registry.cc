// Creation and lookup of ITT domains and string handles.
#include "itt/handle_registry.h"

#include <cstdlib>
#include <cstring>

__attribute__((visibility("protected"))) xt_itt_domains xtrace_itt_domains = {};

namespace xtrace::itt {
namespace {

// Before any client can create a domain: what xtrace checks, and whether domains stay on.
__attribute__((constructor)) void InitDomainList() {
  const char* opt = std::getenv("XTRACE_ITT_FAST_PATH");
  xtrace_itt_domains.always_on = opt && std::strcmp(opt, "0") == 0;
  xtrace_itt_domains.self = reinterpret_cast<uintptr_t>(&xtrace_itt_domains);
  __atomic_store_n(&xtrace_itt_domains.magic, static_cast<__u64>(XT_ITT_DOMAINS_MAGIC),
                   __ATOMIC_RELEASE);
}

// FNV-1a: short names, no need for more.
uint64_t HashOf(const char* name) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(name); *p; ++p)
    h = (h ^ *p) * 1099511628211ull;
  return h;
}

// Holds the registry's mutex for a scope.
class Locked {
 public:
  explicit Locked(pthread_mutex_t* mutex) : mutex_(mutex) { pthread_mutex_lock(mutex_); }
  ~Locked() { pthread_mutex_unlock(mutex_); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

}  // namespace

const char* DomainName(const Domain* d) { return d->nameA; }
const char* StringHandleText(const StringHandle* s) { return s->strA; }

template <typename Handle, const char* (*NameOf)(const Handle*)>
Handle* NameIndex<Handle, NameOf>::Find(const char* name, uint64_t hash) const {
  if (capacity_ == 0) return nullptr;
  for (size_t i = hash & (capacity_ - 1);; i = (i + 1) & (capacity_ - 1)) {
    if (!slots_[i]) return nullptr;
    if (hashes_[i] == hash && std::strcmp(NameOf(slots_[i]), name) == 0) return slots_[i];
  }
}

template <typename Handle, const char* (*NameOf)(const Handle*)>
bool NameIndex<Handle, NameOf>::Grow() {
  const size_t capacity = capacity_ ? capacity_ * 2 : 64;
  auto** slots = static_cast<Handle**>(std::calloc(capacity, sizeof(Handle*)));
  auto* hashes = static_cast<uint64_t*>(std::calloc(capacity, sizeof(uint64_t)));
  if (!slots || !hashes) {
    std::free(slots);
    std::free(hashes);
    return false;
  }
  for (size_t i = 0; i < capacity_; ++i) {
    if (!slots_[i]) continue;
    size_t j = hashes_[i] & (capacity - 1);
    while (slots[j]) j = (j + 1) & (capacity - 1);
    slots[j] = slots_[i];
    hashes[j] = hashes_[i];
  }
  std::free(slots_);
  std::free(hashes_);
  slots_ = slots;
  hashes_ = hashes;
  capacity_ = capacity;
  return true;
}

template <typename Handle, const char* (*NameOf)(const Handle*)>
bool NameIndex<Handle, NameOf>::Add(Handle* handle, uint64_t hash) {
  if (2 * (size_ + 1) > capacity_ && !Grow()) return false;
  size_t i = hash & (capacity_ - 1);
  while (slots_[i]) i = (i + 1) & (capacity_ - 1);
  slots_[i] = handle;
  hashes_[i] = hash;
  ++size_;
  return true;
}

Domain* HandleRegistry::DomainNamed(const char* name) {
  if (!name) return nullptr;
  const uint64_t hash = HashOf(name);
  Locked lock(&mutex_);
  if (Domain* known = domains_.Find(name, hash)) return known;
  auto* domain = static_cast<Domain*>(std::calloc(1, sizeof(Domain)));
  char* copy = strdup(name);
  if (!domain || !copy) {
    std::free(domain);
    std::free(copy);
    return nullptr;
  }
  // Clients skip every call on a domain whose flags are 0: off until a capture switches it on.
  domain->flags = xtrace_itt_domains.always_on ? 1 : 0;
  domain->nameA = copy;
  domain->extra2 = &xtrace_itt_domains;  // the collector's own (Switchable)
  if (!domains_.Add(domain, hash)) {
    std::free(domain);
    std::free(copy);
    return nullptr;
  }
  // Complete before it is published: xtrace reads the list from outside at any moment.
  domain->next = reinterpret_cast<Domain*>(xtrace_itt_domains.head);
  __atomic_store_n(&xtrace_itt_domains.count, xtrace_itt_domains.count + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&xtrace_itt_domains.head, reinterpret_cast<uintptr_t>(domain), __ATOMIC_RELEASE);
  return domain;
}

std::pair<uint32_t, uint32_t> HandleRegistry::AdoptClientDomains(const Global* global) {
  Locked lock(&mutex_);
  xt_itt_domains& list = xtrace_itt_domains;
  const uint32_t first = list.adopted_count;
  uint32_t end = first;
  // The client's list only grows at its tail, under its own lock, and not at all once it
  // initialised (which is when this runs): its domains since then are the collector's.
  for (auto* d = static_cast<Domain*>(global->domain_list); d && end < XT_ITT_MAX_ADOPTED;
       d = d->next) {
    if (Switchable(d)) continue;
    if (!list.always_on) d->flags = 0;
    list.adopted[end++] = reinterpret_cast<uintptr_t>(d);
  }
  __atomic_store_n(&list.adopted_count, end, __ATOMIC_RELEASE);
  return {first, end};
}

bool HandleRegistry::Switchable(const Domain* domain) {
  if (domain->extra2 == &xtrace_itt_domains) return true;
  const uint32_t n = __atomic_load_n(&xtrace_itt_domains.adopted_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n && i < XT_ITT_MAX_ADOPTED; ++i)
    if (xtrace_itt_domains.adopted[i] == reinterpret_cast<uintptr_t>(domain)) return true;
  return false;
}

StringHandle* HandleRegistry::StringNamed(const char* name) {
  if (!name) return nullptr;
  const uint64_t hash = HashOf(name);
  Locked lock(&mutex_);
  if (StringHandle* known = strings_.Find(name, hash)) return known;
  auto* handle = static_cast<StringHandle*>(std::calloc(1, sizeof(StringHandle)));
  char* copy = strdup(name);
  if (!handle || !copy) {
    std::free(handle);
    std::free(copy);
    return nullptr;
  }
  handle->strA = copy;
  if (!strings_.Add(handle, hash)) {
    std::free(handle);
    std::free(copy);
    return nullptr;
  }
  return handle;
}

namespace {
// Constant-initialized and trivially destructible: usable from any constructor or atexit
// handler of any client, with no guard variable and no destructor ordering.
constinit HandleRegistry registry;
}  // namespace

HandleRegistry& Handles() { return registry; }

}  // namespace xtrace::itt
