// Resource counts from /proc and the BPF object id iterators.
#include "process_resources.h"

#include <bpf/bpf.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace xtrace::testing {
namespace {

// Ids of one kind of BPF object, by the kernel's iterator (what bpftool walks).
size_t CountIds(int (*next)(uint32_t, uint32_t*)) {
  size_t n = 0;
  for (uint32_t id = 0; next(id, &id) == 0;) ++n;
  return n;
}

}  // namespace

size_t BpfDescriptors(uint32_t pid) {
  size_t n = 0;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(it->path(), link_ec).string();
    // anon_inode:bpf-prog, anon_inode:bpf-map, anon_inode:bpf_link (not any path with "bpf").
    if (target.rfind("anon_inode:bpf", 0) == 0) ++n;
  }
  return n;
}

ProcessResources ReadProcessResources(uint32_t pid) {
  ProcessResources r;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++r.fds;
  r.bpf_fds = BpfDescriptors(pid);
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kib) == 1) r.rss_bytes = kib * 1024;
  }
  return r;
}

BpfObjectCounts SystemBpfObjects() {
  return {CountIds(bpf_link_get_next_id), CountIds(bpf_map_get_next_id),
          CountIds(bpf_prog_get_next_id)};
}

std::string Describe(const ProcessResources& r) {
  char text[96];
  std::snprintf(text, sizeof(text), "fds %zu, BPF fds %zu, RSS %.1f MiB", r.fds, r.bpf_fds,
                r.rss_bytes / 1048576.0);
  return text;
}

std::string Describe(const BpfObjectCounts& c) {
  return "links " + std::to_string(c.links) + ", maps " + std::to_string(c.maps) +
         ", programs " + std::to_string(c.progs);
}

}  // namespace xtrace::testing
