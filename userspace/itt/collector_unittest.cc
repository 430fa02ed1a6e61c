// Tests for libxtrace_itt.so, loaded for real through INTEL_LIBITTNOTIFY64 by a minimal ITT
// client (tests/workloads/itt_client): which API entries it fills, its handles, and the
// bytes of its probe site (the layout the kernel's uprobe optimization needs).
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "itt_client.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

namespace itt = itt_client;

const char* const kCollector = XTRACE_ITT_COLLECTOR;

void LoadCollector() {
  setenv("INTEL_LIBITTNOTIFY64", kCollector, 1);
  ASSERT_EQ(itt::Initialize(), "");
}

TEST(IttCollector, FillsWhatItImplementsAndGivesEveryOtherEntryItsNullFunction) {
  LoadCollector();
  const std::set<std::string> unimplemented = {"__itt_counter_create", "__itt_sync_create"};
  ASSERT_EQ(itt::ApiEntryCount(), 17);
  for (int i = 0; i < itt::ApiEntryCount(); ++i) {
    const itt::ApiEntryView entry = itt::ApiEntry(i);
    SCOPED_TRACE(entry.name);
    if (unimplemented.count(entry.name)) {
      EXPECT_EQ(entry.current, entry.null_func);  // the fallback, or nullptr
    } else {
      EXPECT_NE(entry.current, nullptr);
      EXPECT_NE(entry.current, entry.init_func);
      EXPECT_NE(entry.current, entry.null_func);
    }
  }
  EXPECT_EQ(itt::api.sync_create, nullptr);  // no fallback: clients skip the call
  EXPECT_NE(itt::api.counter_create, nullptr);
}

TEST(IttCollector, HandlesAreEnabledSharedByNameAndKeepTheirText) {
  LoadCollector();
  itt::Domain* a = itt::DomainCreate("xt.unit");
  itt::Domain* b = itt::DomainCreate("xt.unit");
  itt::Domain* c = itt::DomainCreate("xt.unit.other");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a->flags, 1);  // clients skip every call on a domain whose flags are 0
  EXPECT_STREQ(a->nameA, "xt.unit");
  itt::StringHandle* s = itt::StringHandleCreate("xt.name");
  EXPECT_EQ(s, itt::StringHandleCreate("xt.name"));
  EXPECT_STREQ(s->strA, "xt.name");
  EXPECT_EQ(itt::DomainCreate(nullptr), nullptr);
  EXPECT_EQ(itt::StringHandleCreate(nullptr), nullptr);
  // With no capture attached every call returns having done nothing visible.
  itt::TaskBegin(a, s);
  itt::Marker(a, s, itt::kScopeThread);
  itt::TaskEnd(a);
  itt::Id id = itt::MakeId(&id, 1);
  itt::FrameBegin(a, &id);
  itt::FrameEnd(a, nullptr);
}

TEST(IttCollector, ConcurrentCreationYieldsOneHandlePerName) {
  LoadCollector();
  constexpr int kThreads = 8, kNames = 200;
  std::vector<std::vector<itt::StringHandle*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int n = 0; n < kNames; ++n)
        seen[t].push_back(itt::StringHandleCreate(("xt.concurrent." + std::to_string(n)).c_str()));
    });
  for (auto& t : threads) t.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  EXPECT_EQ(std::set<itt::StringHandle*>(seen[0].begin(), seen[0].end()).size(), size_t{kNames});
}

// The rule of userspace/itt/probe_site.cc, checked on the built file: the exported site is a
// 16-byte-aligned function whose first instruction is the 5-byte NOP 0f 1f 44 00 00.
TEST(IttCollector, ProbeSiteIsAFiveByteNopAtTheStartOfAnAlignedExportedFunction) {
  ASSERT_NE(elf_version(EV_CURRENT), EV_NONE);
  const int fd = open(kCollector, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  ASSERT_NE(elf, nullptr);
  GElf_Sym site{};
  bool found = false;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name && std::strcmp(name, XT_ITT_PROBE_SYMBOL) == 0 && sym.st_shndx != SHN_UNDEF) {
        site = sym;
        found = true;
      }
    }
  }
  ASSERT_TRUE(found) << XT_ITT_PROBE_SYMBOL " is not exported by " << kCollector;
  EXPECT_EQ(GELF_ST_TYPE(site.st_info), STT_FUNC);
  EXPECT_EQ(site.st_value % 16, 0u);
  // File offset of the symbol: through the section that holds it.
  Elf_Scn* text = elf_getscn(elf, site.st_shndx);
  GElf_Shdr text_hdr;
  ASSERT_NE(gelf_getshdr(text, &text_hdr), nullptr);
  const off_t offset = static_cast<off_t>(site.st_value - text_hdr.sh_addr + text_hdr.sh_offset);
  unsigned char bytes[6] = {};
  ASSERT_EQ(pread(fd, bytes, sizeof(bytes), offset), static_cast<ssize_t>(sizeof(bytes)));
  const unsigned char expected[6] = {0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3};  // nop5; ret
  EXPECT_EQ(std::memcmp(bytes, expected, sizeof(bytes)), 0)
      << std::hex << int(bytes[0]) << " " << int(bytes[1]) << " " << int(bytes[2]) << " "
      << int(bytes[3]) << " " << int(bytes[4]) << " " << int(bytes[5]);
  elf_end(elf);
  close(fd);
}

// Loaded into any process or container image: it must need nothing but the C library.
TEST(IttCollector, NeedsOnlyTheCLibrary) {
  ASSERT_NE(elf_version(EV_CURRENT), EV_NONE);
  const int fd = open(kCollector, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  ASSERT_NE(elf, nullptr);
  std::vector<std::string> needed;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Dyn dyn;
      gelf_getdyn(data, static_cast<int>(i), &dyn);
      if (dyn.d_tag == DT_NEEDED) needed.emplace_back(elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val));
    }
  }
  elf_end(elf);
  close(fd);
  EXPECT_EQ(needed, std::vector<std::string>{"libc.so.6"});
}

}  // namespace
}  // namespace xtrace
