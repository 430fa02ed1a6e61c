// Tests for capture/attach_planner: where a source's library probes go (per file or per
// process), sources that need no library, and what a target waits for. The sources are
// fakes that probe the C library this test maps; they attach nothing real.
#include "capture/attach_planner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace xtrace {
namespace {

class FakeSource : public ProbeSource {
 public:
  FakeSource(std::string name, bool needs_library, bool per_process = false)
      : name_(std::move(name)), needs_library_(needs_library), per_process_(per_process) {}
  std::string_view name() const override { return name_; }
  bool needs_library() const override { return needs_library_; }
  std::string_view waits_for() const override { return needs_library_ ? name_ : ""; }
  bool ProbesLibrary(const MappedLibrary& lib) override {
    return needs_library_ && lib.path.find("/libc.so") != std::string::npos;
  }
  Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary&, int pid) override {
    attach_pids.push_back(pid);
    if (refuse_per_process && pid >= 0) return Status::Error("Operation not permitted");
    // Placeholder links (no BPF) where the kernel is pretended to accept.
    return std::vector<ProbeLink>(links);
  }
  bool attaches_per_process() const override { return per_process_; }
  void OnProcessExit(uint32_t pid) override { exited.push_back(pid); }
  size_t link_count() const override { return 0; }

  std::vector<int> attach_pids;
  std::vector<uint32_t> exited;
  size_t links = 0;
  bool refuse_per_process = false;

 private:
  std::string name_;
  bool needs_library_;
  bool per_process_;
};

struct Planner {
  explicit Planner(std::vector<FakeSource*>& fakes, std::vector<std::unique_ptr<FakeSource>> owned,
                   bool per_process_links, bool per_file_if_refused = false) {
    std::vector<std::unique_ptr<ProbeSource>> sources;
    for (auto& s : owned) {
      fakes.push_back(s.get());
      sources.push_back(std::move(s));
    }
    planner = std::make_unique<AttachPlanner>(
        std::move(sources), nullptr, reaper,
        AttachPlanner::Settings{.watch_library_loads = !per_process_links,
                                .per_process_links = per_process_links,
                                .per_file_if_refused = per_file_if_refused,
                                .verbose = false},
        [this](const std::string& line) { said.push_back(line); });
  }
  LinkReaper reaper;
  std::vector<std::string> said;
  std::unique_ptr<AttachPlanner> planner;
};

std::vector<std::unique_ptr<FakeSource>> Sources(std::initializer_list<FakeSource*> list) {
  std::vector<std::unique_ptr<FakeSource>> out;
  for (FakeSource* s : list) out.emplace_back(s);
  return out;
}

const uint32_t kSelf = static_cast<uint32_t>(getpid());

TEST(AttachPlanner, LibraryProbesPerFileUnlessTheSourceDependsOnTheProcess) {
  std::vector<FakeSource*> fakes;
  Planner p(fakes, Sources({new FakeSource("shared", true), new FakeSource("own", true, true)}),
            /*per_process_links=*/false);
  ASSERT_TRUE(p.planner->Scan(kSelf, false));
  EXPECT_EQ(fakes[0]->attach_pids, std::vector<int>{-1});
  EXPECT_EQ(fakes[1]->attach_pids, std::vector<int>{static_cast<int>(kSelf)});
  // Attempted once per file: a rescan attaches nothing again.
  ASSERT_TRUE(p.planner->Scan(kSelf, false));
  EXPECT_EQ(fakes[0]->attach_pids.size(), 1u);
  EXPECT_EQ(fakes[1]->attach_pids.size(), 1u);
  // A source that found nothing to probe fails silently.
  EXPECT_TRUE(p.said.empty());
}

TEST(AttachPlanner, SourceWithoutLibraryCoversGivenTargetsAndCountsOnlyWhenAlone) {
  std::vector<FakeSource*> fakes;
  Planner p(fakes, Sources({new FakeSource("Level Zero", true), new FakeSource("DRM ioctls", false)}),
            true);
  auto scanned = p.planner->Scan(kSelf, /*given=*/true);
  ASSERT_TRUE(scanned);
  EXPECT_FALSE(scanned->any) << "DRM beside a library source does not make a target attached";
  ASSERT_EQ(p.said.size(), 1u);
  EXPECT_EQ(p.said[0], "tracing the DRM ioctls of pid " + std::to_string(kSelf));
  (void)p.planner->Scan(kSelf, true);
  EXPECT_EQ(p.said.size(), 1u) << "said once per process";
  p.planner->ProcessGone(kSelf, 0);
  EXPECT_EQ(fakes[0]->exited, std::vector<uint32_t>{kSelf});
  (void)p.planner->Scan(kSelf, true);
  EXPECT_EQ(p.said.size(), 2u) << "a process with the pid again is covered again";
  EXPECT_EQ(p.planner->WaitsFor(), "Level Zero");

  std::vector<FakeSource*> alone;
  Planner drm_only(alone, Sources({new FakeSource("DRM ioctls", false)}), true);
  EXPECT_FALSE(drm_only.planner->Scan(kSelf, /*given=*/false)->any) << "discovered: not told";
  EXPECT_TRUE(drm_only.planner->Scan(kSelf, true)->any);
  EXPECT_TRUE(drm_only.planner->BeforeExec(kSelf).any);
  EXPECT_EQ(drm_only.planner->WaitsFor(), "");
}

// Per-process links are the default where the kernel allows them: a file whose per-process
// attach is refused is probed for every process instead, said once and noted for the summary.
TEST(AttachPlanner, PerFileWhereTheKernelRefusesPerProcess) {
  std::vector<FakeSource*> fakes;
  auto* refused = new FakeSource("Level Zero", true);
  refused->links = 1;
  refused->refuse_per_process = true;
  Planner p(fakes, Sources({refused}), /*per_process_links=*/true, /*per_file_if_refused=*/true);
  auto scanned = p.planner->Scan(kSelf, false);
  ASSERT_TRUE(scanned);
  EXPECT_TRUE(scanned->any);
  EXPECT_EQ(fakes[0]->attach_pids, (std::vector<int>{static_cast<int>(kSelf), -1}));
  ASSERT_EQ(p.said.size(), 1u);
  EXPECT_NE(p.said[0].find("per-process probes refused on "), std::string::npos) << p.said[0];
  EXPECT_NE(p.said[0].find("(Operation not permitted): probing it for every process"),
            std::string::npos) << p.said[0];
  EXPECT_EQ(p.planner->notes(), p.said);
  // The file stays per file: another process (the same pid once more) is not tried per process.
  p.planner->ProcessGone(kSelf, 0);
  ASSERT_TRUE(p.planner->Scan(kSelf, false));
  EXPECT_EQ(fakes[0]->attach_pids.size(), 2u);
  EXPECT_EQ(p.said.size(), 1u);

  // Asked for per process by name (or a source of its own per process): no fallback.
  std::vector<FakeSource*> strict;
  auto* refused_too = new FakeSource("Level Zero", true);
  refused_too->links = 1;
  refused_too->refuse_per_process = true;
  Planner q(strict, Sources({refused_too}), true, /*per_file_if_refused=*/false);
  auto none = q.planner->Scan(kSelf, false);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->any);
  EXPECT_EQ(strict[0]->attach_pids, std::vector<int>{static_cast<int>(kSelf)});
  EXPECT_TRUE(q.planner->notes().empty());
}

TEST(AttachPlanner, UnreadableProcessIsNotScanned) {
  std::vector<FakeSource*> fakes;
  Planner p(fakes, Sources({new FakeSource("Level Zero", true)}), true);
  EXPECT_FALSE(p.planner->Scan(0x3fffffff, true));
}

}  // namespace
}  // namespace xtrace
