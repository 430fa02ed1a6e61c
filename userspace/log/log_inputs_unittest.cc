// Tests for log/log_inputs: which files a directory argument stands for.
#include "log/log_inputs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace xtrace {
namespace {

TEST(LogInputs, ADirectoryIsItsLogsAndThoseOfItsNodeDirectories) {
  char tmpl[] = "/tmp/xtrace-log-inputs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  std::filesystem::create_directories(dir / "n1");
  std::filesystem::create_directories(dir / "n2" / "empty.capnp");  // a directory, not a log
  for (const char* name : {"top.capnp", "n1/a.capnp", "n1/b.capnp", "n2/c.capnp", "n2/c.capnp.part", "notes.txt"})
    std::ofstream(dir / name) << "x";
  auto files = ExpandLogInputs({dir.string()});
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir / "n1/a.capnp").string(), (dir / "n1/b.capnp").string(),
                                              (dir / "n2/c.capnp").string(), (dir / "top.capnp").string()}));
  std::filesystem::remove_all(dir);
}

// A log named twice is read once: neither convert nor report may count its events twice.
TEST(LogInputs, ALogNamedTwiceIsListedOnce) {
  char tmpl[] = "/tmp/xtrace-log-inputs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  for (const char* name : {"a.capnp", "b.capnp"}) std::ofstream(dir / name) << "x";
  std::filesystem::create_symlink(dir / "a.capnp", dir / "link-to-a.log");
  const std::string a = (dir / "a.capnp").string(), b = (dir / "b.capnp").string();
  auto files = ExpandLogInputs({a, dir.string(), a, (dir / "link-to-a.log").string(),
                                (dir / "missing.capnp").string()});
  ASSERT_TRUE(files.ok()) << files.status().message();
  // A missing file stays, for the reader's error naming it.
  EXPECT_EQ(*files, (std::vector<std::string>{a, b, (dir / "missing.capnp").string()}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xtrace
