// Tests for libxtrace_itt.so, loaded for real through INTEL_LIBITTNOTIFY64 by a minimal ITT
// client (tests/workloads/itt_client): which API entries it fills, its handles, and the
// bytes of its probe site (the layout the kernel's uprobe optimization needs).
#include <dlfcn.h>
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

#include "capture/sources/itt_domains.h"
#include "itt_client.h"
#include "xtrace/itt_ring.h"
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

TEST(IttCollector, HandlesAreSharedByNameAndKeepTheirText) {
  LoadCollector();
  itt::Domain* a = itt::DomainCreate("xt.unit");
  itt::Domain* b = itt::DomainCreate("xt.unit");
  itt::Domain* c = itt::DomainCreate("xt.unit.other");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
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

// Untraced, a domain is off, so its clients skip their calls inline; it is in the exported
// list a capture walks to switch it on (done here with the capture's own code, on this
// process); a call that reaches the collector untraced switches its domain off again; a
// domain made while the process is traced (here: the fast path's generation set, as an
// attached capture sets it) is made on.
TEST(IttCollector, DomainsAreOffUntilACaptureSwitchesThemOnAndOffAgainOnceUntraced) {
  LoadCollector();
  void* lib = dlopen(kCollector, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto* list = static_cast<xt_itt_domains*>(dlsym(lib, XT_ITT_DOMAINS_SYMBOL));
  auto* control = static_cast<xt_itt_control*>(dlsym(lib, XT_ITT_CONTROL_SYMBOL));
  ASSERT_NE(list, nullptr);
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(list->magic, XT_ITT_DOMAINS_MAGIC);
  EXPECT_EQ(list->self, reinterpret_cast<uintptr_t>(list));
  EXPECT_EQ(list->always_on, 0u);
  // A capture elsewhere on the machine (`--system`) may probe this very process: then it is
  // traced, and its domains are rightly made on.
  const auto* site = static_cast<const volatile unsigned char*>(dlsym(lib, XT_ITT_PROBE_SYMBOL));
  ASSERT_NE(site, nullptr);
  const auto probed = [site] { return *site != 0x0f; };
  if (probed()) GTEST_SKIP() << "a capture on this machine probes this process's collector";
  // Untraced (tests run before this one in the same process may have left a generation).
  const uint64_t generation = __atomic_exchange_n(&control->generation, 0, __ATOMIC_SEQ_CST);

  itt::Domain* d = itt::DomainCreate("xt.flags.untraced");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->flags, 0);  // clients skip every call on a domain whose flags are 0
  ASSERT_EQ(list->head, reinterpret_cast<uintptr_t>(d));
  const uint64_t count = list->count;
  EXPECT_GE(count, 1u);

  auto switched = SwitchOnIttDomains(RemoteMemory(static_cast<uint32_t>(getpid())),
                                     reinterpret_cast<uintptr_t>(list));
  ASSERT_TRUE(switched.ok()) << switched.status().message();
  EXPECT_TRUE(switched->ready);
  EXPECT_EQ(switched->domains, count);
  EXPECT_GE(switched->switched_on, 1u);
  EXPECT_EQ(d->flags, 1);

  itt::StringHandle* s = itt::StringHandleCreate("xt.flags.task");
  itt::TaskBegin(d, s);  // reaches the collector (flags 1), which finds nobody tracing
  if (probed()) GTEST_SKIP() << "a capture on this machine started probing this process";
  EXPECT_EQ(d->flags, 0);

  __atomic_store_n(&control->generation, 1, __ATOMIC_SEQ_CST);
  itt::Domain* traced = itt::DomainCreate("xt.flags.traced");
  __atomic_store_n(&control->generation, generation, __ATOMIC_SEQ_CST);
  ASSERT_NE(traced, nullptr);
  EXPECT_EQ(traced->flags, 1);
  EXPECT_EQ(list->head, reinterpret_cast<uintptr_t>(traced));
  EXPECT_EQ(list->count, count + 1);
  dlclose(lib);
}

// A client whose first ITT call is __itt_domain_create makes that domain itself, before it
// loads the collector (oneDNN does): the collector adopts such domains when the client
// initialises, switched off and listed for a capture, and switches them off again as its own.
TEST(IttCollector, DomainsAClientMadeBeforeLoadingItAreAdoptedLikeItsOwn) {
  LoadCollector();
  void* lib = dlopen(kCollector, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto* list = static_cast<xt_itt_domains*>(dlsym(lib, XT_ITT_DOMAINS_SYMBOL));
  auto* control = static_cast<xt_itt_control*>(dlsym(lib, XT_ITT_CONTROL_SYMBOL));
  auto init = reinterpret_cast<void (*)(xtrace::itt::Global*, int)>(dlsym(lib, "__itt_api_init"));
  const auto* site = static_cast<const volatile unsigned char*>(dlsym(lib, XT_ITT_PROBE_SYMBOL));
  ASSERT_TRUE(list && control && init && site);
  if (*site != 0x0f) GTEST_SKIP() << "a capture on this machine probes this process's collector";
  const uint64_t generation = __atomic_exchange_n(&control->generation, 0, __ATOMIC_SEQ_CST);

  // The client's own list, as its static part keeps it: made on, linked through `next`.
  itt::Domain first{}, second{};
  first.flags = 1;
  second.flags = 1;
  first.nameA = "xt.early.first";
  second.nameA = "xt.early.second";
  first.next = &second;
  xtrace::itt::ApiInfo no_entries[] = {{nullptr, nullptr, nullptr, nullptr, 0}};
  xtrace::itt::Global global{};
  global.api_list_ptr = no_entries;
  global.domain_list = &first;
  const uint32_t before = list->adopted_count;
  init(&global, 0);
  ASSERT_EQ(list->adopted_count, before + 2);
  EXPECT_EQ(list->adopted[before], reinterpret_cast<uintptr_t>(&first));
  EXPECT_EQ(list->adopted[before + 1], reinterpret_cast<uintptr_t>(&second));
  EXPECT_EQ(first.flags, 0);
  EXPECT_EQ(second.flags, 0);
  init(&global, 0);  // a client initialising twice (libtbb does): nothing adopted twice
  EXPECT_EQ(list->adopted_count, before + 2);

  auto switched = SwitchOnIttDomains(RemoteMemory(static_cast<uint32_t>(getpid())),
                                     reinterpret_cast<uintptr_t>(list));
  ASSERT_TRUE(switched.ok()) << switched.status().message();
  EXPECT_EQ(first.flags, 1);
  EXPECT_EQ(second.flags, 1);
  itt::TaskEnd(&first);  // reaches the collector, which finds nobody tracing
  if (*site != 0x0f) GTEST_SKIP() << "a capture on this machine started probing this process";
  EXPECT_EQ(first.flags, 0);
  EXPECT_EQ(second.flags, 1);

  // A domain the collector never adopted (made by a client it never initialised) stays on.
  itt::Domain stranger{};
  stranger.flags = 1;
  itt::TaskEnd(&stranger);
  EXPECT_EQ(stranger.flags, 1);
  __atomic_store_n(&control->generation, generation, __ATOMIC_SEQ_CST);
  dlclose(lib);
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
