// Switching on a collector's ITT domains from outside (itt_domains.h).
#include "capture/sources/itt_domains.h"

#include "base/hex.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "xtrace/itt_ring.h"

namespace xtrace {
namespace {

// More domains than any real process makes (oneDNN makes one, TBB three, PyTorch one): a
// longer walk is a corrupt list, not a busy process.
constexpr uint64_t kMaxDomains = 1 << 16;

}  // namespace

Result<IttDomainsSwitched> SwitchOnIttDomains(const RemoteMemory& memory, uint64_t address) {
  xt_itt_domains list{};
  if (Status st = memory.Read(address, &list, sizeof(list)); !st.ok()) return st;
  IttDomainsSwitched out;
  if (list.magic == 0) return out;  // mapped, its constructors still to run
  if (list.magic != XT_ITT_DOMAINS_MAGIC || list.self != address)
    return Status::Error("no ITT domain list at " + Hex(address) + " (magic " + Hex(list.magic) +
                         ", own address " + Hex(list.self) + ")");
  out.ready = true;
  out.always_on = list.always_on != 0;
  if (out.always_on) return out;
  // The collector counts a domain before it publishes it, and one read may see the count of
  // one moment and the head of the next: the list holds at most one more than `count`.
  // Reads the domain at `at`, switches it on if it is off, and gives its `next`.
  auto switch_on = [&](uint64_t at) -> Result<uint64_t> {
    unsigned char domain[XT_ITT_DOMAIN_SIZE];
    if (Status st = memory.Read(at, domain, sizeof(domain)); !st.ok()) return st;
    ++out.domains;
    int flags = 0;
    std::memcpy(&flags, domain + XT_ITT_DOMAIN_FLAGS_OFFSET, sizeof(flags));
    if (flags == 0) {
      const int on = 1;
      if (Status st = memory.Write(at + XT_ITT_DOMAIN_FLAGS_OFFSET, &on, sizeof(on)); !st.ok())
        return st;
      ++out.switched_on;
    }
    uint64_t next = 0;
    std::memcpy(&next, domain + XT_ITT_DOMAIN_NEXT_OFFSET, sizeof(next));
    return next;
  };
  const uint64_t count = std::min<uint64_t>(list.count, kMaxDomains);
  uint64_t at = list.head;
  for (uint64_t i = 0; at != 0 && i < count + 1; ++i) {
    auto next = switch_on(at);
    if (!next.ok()) return next.status();
    at = *next;
  }
  // Adopted domains are on their clients' lists: their `next` is not followed.
  const uint32_t adopted = std::min<uint32_t>(list.adopted_count, XT_ITT_MAX_ADOPTED);
  for (uint32_t i = 0; i < adopted; ++i) {
    if (!list.adopted[i]) continue;
    if (auto next = switch_on(list.adopted[i]); !next.ok()) return next.status();
  }
  return out;
}

}  // namespace xtrace
