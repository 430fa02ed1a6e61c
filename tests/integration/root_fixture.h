// The fixture integration tests build on: they load BPF programs, so they need root. Elsewhere
// they skip, saying why; under CI (which runs as root) a skip would hide a broken capture, so
// there it is a failure. Each test gets a scratch directory, kept (and named) if it failed.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

namespace xtrace::testing {

class RootTest : public ::testing::Test {
 protected:
  // `what` names the tests in the skip message ("DRM capture"); the scratch directory is
  // /tmp/xtrace-<tag>-XXXXXX.
  RootTest(std::string what, std::string tag) : what_(std::move(what)), tag_(std::move(tag)) {}

  // A fixture that adds to these calls them first; after SetUp, check IsSkipped() and
  // HasFatalFailure() before going on.
  void SetUp() override {
    if (geteuid() != 0) {
      if (getenv("CI")) FAIL() << what_ << " tests need root (BPF), and CI must run them";
      GTEST_SKIP() << what_ << " tests load BPF programs and need root; run as root (sudo make test)";
    }
    std::string tmpl = "/tmp/xtrace-" + tag_ + "-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (!HasFailure()) std::filesystem::remove_all(dir_);
    else std::fprintf(stderr, "test files kept in %s\n", dir_.c_str());
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;

 private:
  std::string what_, tag_;
};

}  // namespace xtrace::testing
