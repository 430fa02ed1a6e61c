// The Level Zero entry points xtrace probes: for each, the BPF programs on its entry and
// return, the cookie they read, the argument registers they need, and the files it is probed
// in. What is probed, apart from where and how ze_source.cc attaches it.
#ifndef XTRACE_CAPTURE_SOURCES_ZE_PROBE_SPECS_H_
#define XTRACE_CAPTURE_SOURCES_ZE_PROBE_SPECS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "capture/sources/probe_site.h"

struct bpf_program;
struct ze_probes;

namespace xtrace {

// One probed entry point: its symbol, the programs on its entry and return, and the cookie
// they read. (The skeleton's program table is an anonymous struct, hence accessors.)
struct ProbeSpec {
  const char* symbol;
  bpf_program* (*entry)(const ze_probes*);
  bpf_program* (*ret)(const ze_probes*);
  uint64_t cookie = 0;
  ArgRegisterMask needed = 0;  // argument registers the programs read (see probe_site.h)
  // Of those, the ones the programs can take from r10 where a stub saved them there (the
  // generic entry program can: its cookie says which).
  ArgRegisterMask readable_from_r10 = 0;
  // Where it is probed: the loader's export, the driver's function of that name (handed out
  // by zeDriverGetExtensionFunctionAddress), or both. A call that goes through both (a loader
  // stub jumps into the driver's function) is recorded once: the thread's one call slot
  // (pairing.bpf.h) holds the inner entry, whose return records the call; the outer return
  // then finds the slot empty.
  bool in_loader = true;
  bool in_driver = false;
};

// Every probed entry point: the dedicated records first, then model/ze_api.h's table.
const std::vector<ProbeSpec>& ZeProbeSpecs();

// The loader's getters of the driver's function tables (Level Zero's ze_ddi.h, as exported by
// loader 1.20.6; an older loader lacks some). An application that calls one from outside the
// loader takes the driver's own functions, which pass no export (ze_table_getter_entry).
std::span<const std::string_view> ZeTableGetters();

// Where a driver's table holds a probed function that an older loader (bookworm's 1.8 exports
// none of these) has no export and no dispatch slot for: the getter that fills the table and
// the slot's index in it (Level Zero's ze_ddi.h; its tables only ever grow at their end, so
// an index holds for every version that has the slot). xtrace learns where the functions its
// own loader dispatches are by following that loader's stubs; these it asks the driver's
// getters for (ze_taken_tables.cc), for a process that takes its tables from the driver.
struct DriverTableSlot {
  std::string_view function;
  std::string_view getter;
  size_t index = 0;
};
std::span<const DriverTableSlot> ZeDriverTableSlots();

}  // namespace xtrace

#endif  // XTRACE_CAPTURE_SOURCES_ZE_PROBE_SPECS_H_
