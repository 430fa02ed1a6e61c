// Switching on the ITT domains of a traced process's collector (xt_itt_domains in
// xtrace/itt_ring.h). The collector keeps its domains off while nobody traces the process,
// so that its ITT clients skip their calls inline; a capture that attaches to it switches
// them on from outside, and again periodically (a call that raced the attach may have
// switched its domain off again, and a domain may have been made before the list was read).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "capture/sources/itt_ring_reader.h"

namespace xtrace {

struct IttDomainsSwitched {
  bool ready = false;      // the collector's list is initialised (else: try again later)
  bool always_on = false;  // the process opted out: its domains are never off, nothing written
  uint64_t domains = 0;    // domains in the list
  uint64_t switched_on = 0;
};

// Walks the list at `address` in the process `memory` reads and sets the flags of every domain
// that is off. Everything read is checked (the list's magic and own address, at most its
// count of entries); an error names what could not be read or written.
Result<IttDomainsSwitched> SwitchOnIttDomains(const RemoteMemory& memory, uint64_t address);

}  // namespace xtrace
