// The one function of libxtrace_itt.so that xtrace probes (defined in probe_site.cc).
#pragma once

#include <cstdint>

// Reports an ITT call: op is enum xt_itt_op (xtrace/records.h), the other arguments as that
// enum describes. Does nothing; a capture's uprobe reads the arguments from the registers.
// Protected visibility: exported (a stripped library still has it in .dynsym, where the
// capture finds it) yet called directly from inside the library, never through the PLT.
extern "C" __attribute__((visibility("protected"))) void xtrace_itt_probe(
    uint64_t op, const void* domain, const void* name, uint64_t id_d1, uint64_t id_d2,
    uint64_t extra);
