#include "capture/sources/driver_functions.h"

#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "capture/discovery/proc_maps.h"

namespace xtrace {
namespace {

std::string SelfMaps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The running program's build id, read from its own loaded notes (not its file): an
// independent way to the answer ElfBuildId reads from the file.
std::string LoadedBuildId() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        auto& id = *static_cast<std::string*>(out);
        for (int i = 0; i < info->dlpi_phnum && id.empty(); ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const char* at = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
          const char* end = at + ph.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(at);
            const char* name = at + sizeof(*n);
            const unsigned char* desc =
                reinterpret_cast<const unsigned char*>(name + ((n->n_namesz + 3) & ~3u));
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
              char hex[3];
              for (size_t k = 0; k < n->n_descsz; ++k) {
                std::snprintf(hex, sizeof hex, "%02x", desc[k]);
                id += hex;
              }
              break;
            }
            at = reinterpret_cast<const char*>(desc) + ((n->n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the program itself comes first
      },
      &id);
  return id;
}

TEST(ElfBuildId, ReadsTheFilesGnuBuildIdNote) {
  const std::string loaded = LoadedBuildId();
  ASSERT_FALSE(loaded.empty()) << "the test program is linked with a build id";
  auto id = ElfBuildId("/proc/self/exe");
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, loaded);
}

TEST(ElfBuildId, NonElfFileIsAnErrorNamingIt) {
  auto id = ElfBuildId("/proc/self/maps");
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("/proc/self/maps"), std::string::npos);
  EXPECT_FALSE(ElfBuildId("/nonexistent/libze_intel_gpu.so.1").ok());
}

// A function of this program, located as a handed-out driver function is: its file offset in
// the file of the program's build id.
int HandedOut(int x) { return x + 1; }

TEST(DriverFunctions, LocatesAnAddressByBuildIdAndFileOffset) {
  const std::string maps = SelfMaps();
  const uint64_t address = reinterpret_cast<uint64_t>(&HandedOut);
  DriverFunctions functions;
  EXPECT_TRUE(functions.empty());
  ASSERT_TRUE(functions.Add(maps, "zeCommandListAppendLaunchKernelWithArguments", address));
  const DriverFunctions::Offsets* offsets = functions.Of(LoadedBuildId());
  ASSERT_NE(offsets, nullptr);
  uint64_t expected = 0;
  for (const MappedSegment& s : ParseMappedSegments(maps))
    if (s.executable && address >= s.start && address < s.end)
      expected = address - s.start + s.file_offset;
  ASSERT_EQ(offsets->count("zeCommandListAppendLaunchKernelWithArguments"), 1u);
  EXPECT_EQ(offsets->at("zeCommandListAppendLaunchKernelWithArguments"), expected);
  EXPECT_EQ(functions.Of("0123"), nullptr);
  EXPECT_EQ(functions.Of(""), nullptr);
  // Whichever build hands it out.
  EXPECT_TRUE(functions.HandsOut("zeCommandListAppendLaunchKernelWithArguments"));
  EXPECT_FALSE(functions.HandsOut("zeCommandListHostSynchronize"));
}

TEST(DriverFunctions, AnAddressNoFileMapsIsNotNoted) {
  DriverFunctions functions;
  EXPECT_FALSE(functions.Add(SelfMaps(), "zexCounterBasedEventCreate2", 16));
  EXPECT_TRUE(functions.empty());
}

}  // namespace
}  // namespace xtrace
