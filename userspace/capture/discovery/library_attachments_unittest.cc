// Tests for capture/discovery/library_attachments: links shared per file or held per process, released
// with their last user after the grace period, failures not retried while the file is used.
#include "capture/discovery/library_attachments.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

MappedLibrary File(uint64_t inode) {
  MappedLibrary lib;
  lib.path = "/usr/lib/libze_loader.so.1";
  lib.host_path = lib.path;
  lib.inode = inode;
  lib.dev_major = 8;
  return lib;
}

// Stands in for a source: counts attaches and returns `links` placeholder links (no BPF).
struct FakeAttach {
  int calls = 0;
  std::vector<int> pids;
  size_t links = 2;
  bool fail = false;
  LibraryAttachments::AttachFn Fn() {
    return [this](const MappedLibrary&, int pid) -> Result<std::vector<ProbeLink>> {
      ++calls;
      pids.push_back(pid);
      if (fail) return Status::Error("no symbols");
      std::vector<ProbeLink> out(links);
      return out;
    };
  }
};

using Outcome = LibraryAttachments::Outcome;

TEST(LibraryAttachments, OneSetOfLinksPerFileSharedByItsProcesses) {
  LinkReaper reaper;
  LibraryAttachments a(reaper);
  FakeAttach attach;
  EXPECT_EQ(a.Use(0, File(1), 100, false, attach.Fn(), nullptr), Outcome::kAttached);
  EXPECT_EQ(a.Use(0, File(1), 101, false, attach.Fn(), nullptr), Outcome::kShared);
  EXPECT_EQ(a.Use(0, File(2), 101, false, attach.Fn(), nullptr), Outcome::kAttached);
  EXPECT_EQ(a.Use(1, File(1), 101, false, attach.Fn(), nullptr), Outcome::kAttached);  // other owner
  EXPECT_EQ(attach.calls, 3);
  EXPECT_EQ(attach.pids, (std::vector<int>{-1, -1, -1}));
  EXPECT_EQ(a.link_count(), 6u);
  EXPECT_TRUE(a.HasLinks(0, 100));
  EXPECT_FALSE(a.HasLinks(1, 100));

  // The file stays probed while anyone uses it, and for the grace period after.
  a.Release(100, 1'000);
  a.ExpireIdle(2'000, 500);
  EXPECT_EQ(a.link_count(), 6u);
  a.Release(101, 5'000);
  a.ExpireIdle(5'400, 500);
  EXPECT_EQ(a.link_count(), 6u);
  EXPECT_EQ(a.Use(0, File(1), 102, false, attach.Fn(), nullptr), Outcome::kShared);  // revived
  a.ExpireIdle(6'000, 500);
  EXPECT_EQ(a.link_count(), 2u);  // file 1 of owner 0 is in use again
  EXPECT_EQ(a.file_count(), 1u);
  a.Release(102, 7'000);
  a.ExpireIdle(7'500, 500);
  EXPECT_EQ(a.link_count(), 0u);
  EXPECT_EQ(a.file_count(), 0u);
  reaper.WaitIdle();
  EXPECT_EQ(reaper.pending(), 0u);
}

TEST(LibraryAttachments, PerProcessLinksGoWithTheirProcessAtOnce) {
  LinkReaper reaper;
  LibraryAttachments a(reaper);
  FakeAttach attach;
  EXPECT_EQ(a.Use(0, File(1), 100, true, attach.Fn(), nullptr), Outcome::kAttached);
  EXPECT_EQ(a.Use(0, File(1), 101, true, attach.Fn(), nullptr), Outcome::kAttached);
  EXPECT_EQ(a.Use(0, File(1), 100, true, attach.Fn(), nullptr), Outcome::kShared);  // rescan
  EXPECT_EQ(attach.pids, (std::vector<int>{100, 101}));
  a.Release(100, 0);
  EXPECT_EQ(a.link_count(), 2u);
  EXPECT_FALSE(a.HasLinks(0, 100));
  EXPECT_TRUE(a.HasLinks(0, 101));
}

TEST(LibraryAttachments, AFailureIsReportedOnceAndRetriedWhenTheFileIsUsedAfresh) {
  LinkReaper reaper;
  LibraryAttachments a(reaper);
  FakeAttach attach;
  attach.fail = true;
  std::string error;
  EXPECT_EQ(a.Use(0, File(1), 100, false, attach.Fn(), &error), Outcome::kFailed);
  EXPECT_EQ(error, "no symbols");
  EXPECT_EQ(a.Use(0, File(1), 100, false, attach.Fn(), nullptr), Outcome::kShared);
  EXPECT_EQ(attach.calls, 1);
  EXPECT_FALSE(a.HasLinks(0, 100));
  a.Release(100, 0);
  a.ExpireIdle(10, 0);
  attach.fail = false;
  EXPECT_EQ(a.Use(0, File(1), 100, false, attach.Fn(), nullptr), Outcome::kAttached);
}

TEST(LibraryAttachments, TheCapturesOwnPinOutlivesEveryProcess) {
  LinkReaper reaper;
  LibraryAttachments a(reaper);
  FakeAttach attach;
  a.Use(0, File(1), LibraryAttachments::kCapturePid, false, attach.Fn(), nullptr);
  EXPECT_EQ(a.Use(0, File(1), 100, false, attach.Fn(), nullptr), Outcome::kShared);
  a.Release(100, 0);
  a.ExpireIdle(1'000'000, 0);
  EXPECT_EQ(a.link_count(), 2u);
  a.Clear();
  EXPECT_EQ(a.link_count(), 0u);
}

}  // namespace
}  // namespace xtrace
