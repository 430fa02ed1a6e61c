// Tests for capture/discovery/elf_function_offsets: the file offset it finds for a function holds that function's
// code (checked against the copy loaded in this very process), names it lacks are absent, and
// what is not an ELF file is an error naming it.
#include "capture/discovery/elf_function_offsets.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "log_test_util.h"

namespace xtrace {
namespace {

std::string FileBytes(const std::string& path, uint64_t offset, size_t n) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  return bytes;
}

TEST(ElfFunctionOffsets, OffsetsPointAtTheFunctionsCode) {
  // libc's functions, as loaded here: their first bytes in memory must equal the bytes at the
  // offsets found in the file.
  Dl_info info{};
  void* fn = dlsym(RTLD_DEFAULT, "getpid");
  ASSERT_NE(fn, nullptr);
  ASSERT_NE(dladdr(fn, &info), 0);
  const std::string lib = info.dli_fname;
  const std::string_view names[] = {"getpid", "write", "xtrace_no_such_function"};
  auto offsets = FindFunctionOffsets(lib, names);
  ASSERT_TRUE(offsets.ok()) << offsets.status().message();
  ASSERT_TRUE(offsets->count("getpid"));
  ASSERT_TRUE(offsets->count("write"));
  EXPECT_FALSE(offsets->count("xtrace_no_such_function"));
  for (const char* name : {"getpid", "write"}) {
    const auto* code = static_cast<const char*>(dlsym(RTLD_DEFAULT, name));
    ASSERT_NE(code, nullptr);
    EXPECT_EQ(FileBytes(lib, offsets->at(name), 16), std::string(code, 16)) << name;
  }
}

TEST(ElfFunctionOffsets, ExecutableSegmentsHoldTheFunctions) {
  Dl_info info{};
  ASSERT_NE(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &info), 0);
  const std::string lib = info.dli_fname;
  auto segments = ExecutableSegments(lib);
  ASSERT_TRUE(segments.ok()) << segments.status().message();
  ASSERT_FALSE(segments->empty());
  const std::string_view names[] = {"getpid", "write"};
  auto offsets = FindFunctionOffsets(lib, names);
  ASSERT_TRUE(offsets.ok()) << offsets.status().message();
  for (const auto& [name, offset] : *offsets) {
    bool held = false;
    for (const FileRange& r : *segments) held = held || r.Holds(offset);
    EXPECT_TRUE(held) << name << " at " << offset;
  }
  // The ELF header is in no executable segment of a library linked by today's ld (-z separate-code).
  for (const FileRange& r : *segments) EXPECT_FALSE(r.Holds(0));
  test_util::ScratchDir dir;
  test_util::WriteFileBytes(dir.File("not-elf.so"), std::string(4096, 'x'));
  EXPECT_FALSE(ExecutableSegments(dir.File("not-elf.so")).ok());
}

TEST(ElfFunctionOffsets, NotAnElfFileIsAnErrorNamingIt) {
  test_util::ScratchDir dir;
  const std::string path = dir.File("not-elf.so");
  test_util::WriteFileBytes(path, std::string(4096, 'x'));
  const std::string_view names[] = {"zeInit"};
  auto r = FindFunctionOffsets(path, names);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(test_util::Contains(r.status().message(), path));
  auto missing = FindFunctionOffsets(dir.File("absent.so"), names);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(test_util::Contains(missing.status().message(), "No such file"));
}

}  // namespace
}  // namespace xtrace
