// What a process holds, for leak checks of long-running xtrace processes (the daemon): its
// descriptors, its resident memory, the BPF objects among its descriptors, and the BPF links,
// maps and programs of the whole machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace xtrace::testing {

struct ProcessResources {
  size_t fds = 0;
  size_t bpf_fds = 0;        // descriptors that are BPF programs, maps or links
  uint64_t rss_bytes = 0;    // VmRSS
};

ProcessResources ReadProcessResources(uint32_t pid);

// Descriptors of `pid` that are BPF programs, maps or links.
size_t BpfDescriptors(uint32_t pid);

// BPF objects loaded on the machine, by every process (as `bpftool link/map/prog list`
// count them): other captures running at the same time move these.
struct BpfObjectCounts {
  size_t links = 0, maps = 0, progs = 0;
};
BpfObjectCounts SystemBpfObjects();

// "fds 12, BPF fds 0, RSS 9.1 MiB" / "links 3, maps 10, programs 7".
std::string Describe(const ProcessResources& r);
std::string Describe(const BpfObjectCounts& c);

}  // namespace xtrace::testing
