// Integration tests of programs that run with the Level Zero loader's layers on: the loader's
// dispatch then points into the layer library, which calls the driver. Over each loader
// (bookworm's 1.8.12, trixie's 1.20.6 under chroot) × `record` and `attach` (after the
// workload made its objects) × no layer, the validation layer, and the tracing layer with a
// tracer of the program's own (ze_sycl_legacy --own-tracer: on bookworm with
// ZE_ENABLE_TRACING_LAYER=1 and the validation layer too, on trixie turned on by
// zelEnableTracingLayer as profilers do on newer loaders): every launch named once, on its
// engine, measured, every call counted once, and the program's own callbacks ran for each call
// xtrace saw. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "level_zero_paths_fixture.h"

namespace xtrace::zepaths_test {
namespace {

enum class Loader { kBookworm, kTrixie };
enum class Capturing { kRecord, kAttach };
enum class Layers { kNone, kValidation, kOwnTracer };

using LayerCase = std::tuple<Loader, Capturing, Layers>;

// The environment each case's workload runs with.
std::vector<std::string> LayerEnvironment(Loader loader, Layers layers) {
  switch (layers) {
    case Layers::kNone:
      return {};
    case Layers::kValidation:
      // Bookworm's 1.8.12 checks parameters against the 1.8 enums, which lack the in-order
      // queue flag the workload's immediate list uses (its creation fails without xtrace too).
      if (loader == Loader::kBookworm) return {"ZE_ENABLE_VALIDATION_LAYER=1"};
      return {"ZE_ENABLE_VALIDATION_LAYER=1", "ZE_ENABLE_PARAMETER_VALIDATION=1"};
    case Layers::kOwnTracer:
      // 1.8.12 has no zelEnableTracingLayer: the variable; trixie's loader, by the call.
      if (loader == Loader::kBookworm)
        return {"ZE_ENABLE_TRACING_LAYER=1", "ZE_ENABLE_VALIDATION_LAYER=1"};
      return {};
  }
  return {};
}

// How many of `name` the workload's own tracer saw ("own_tracer <name>=<n> ..."); -1 if not said.
long OwnTracerCount(const std::string& out, const std::string& name) {
  const size_t line = out.find("own_tracer ");
  if (line == std::string::npos) return -1;
  const std::string said = " " + name + "=";
  const size_t at = out.find(said, line);
  if (at == std::string::npos || at > out.find('\n', line)) return -1;
  return std::strtol(out.c_str() + at + said.size(), nullptr, 10);
}

class LevelZeroLayersTest : public LevelZeroPathsTest,
                            public ::testing::WithParamInterface<LayerCase> {};

TEST_P(LevelZeroLayersTest, SyclLegacyShapeIsCapturedOnceWithTheLayersOn) {
  const auto [loader, capturing, layers] = GetParam();
  std::vector<std::string> options;
  if (layers == Layers::kOwnTracer) options.push_back("--own-tracer");
  // The workload under env, with the layers' variables (and under chroot on trixie's loader).
  std::vector<std::string> prefix;
  std::string workload = kLegacy, log = Path("launches.tsv"), host_log = log;
  if (loader == Loader::kTrixie) {
    const std::string root = TrixieRootOrSkip();
    if (root.empty()) return;
    const TreeCopy tree = CopyIntoTrixieTree(root, kLegacy);
    ASSERT_FALSE(tree.dir.empty());
    prefix = {"/usr/sbin/chroot", root};
    workload = tree.inside + "/ze_sycl_legacy";
    log = tree.inside + "/launches.tsv";
    host_log = tree.dir + "/launches.tsv";
    prefix.insert(prefix.end(), {"/usr/bin/env", "ZE_ENABLE_ALT_DRIVERS=" + tree.inside +
                                                     "/libxtrace_simze.so"});
  } else {
    prefix = {"/usr/bin/env"};
  }
  for (const std::string& v : LayerEnvironment(loader, layers)) prefix.push_back(v);
  const bool attached = capturing == Capturing::kAttach;
  const Run run = attached ? Attach(prefix, workload, log, host_log,
                                    [&] {
                                      auto o = options;
                                      o.push_back("--wait-for-signal");
                                      return o;
                                    }())
                           : Record(prefix, workload, log, host_log, {}, options);
  // Launches, engines, timestamps, and every call of an iteration counted once.
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/loader == Loader::kTrixie);
  if (attached) {
    EXPECT_NE(run.result.err.find("objects made before the attach were queried in the process"),
              std::string::npos)
        << run.result.err;
  }
  // Nothing said of probes that could not go where the layers put the dispatch.
  EXPECT_EQ(run.result.err.find("cannot probe"), std::string::npos) << run.result.err;
  if (layers != Layers::kOwnTracer) return;
  // The program's own callbacks ran for every call xtrace captured, and xtrace captured every
  // call they saw (zeKernelCreate came before the attach, where the capture attached).
  EXPECT_NE(run.result.out.find(loader == Loader::kTrixie ? "enabled_by=zelEnableTracingLayer"
                                                          : "enabled_by=env"),
            std::string::npos)
      << run.result.out;
  size_t plain = 0, cooperative = 0, creates = 0;
  for (const KernelLaunch& l : run.capture.launches) {
    if (l.pid != run.pid) continue;
    plain += l.launch_kind == XT_LAUNCH_PLAIN ? 1 : 0;
    cooperative += l.launch_kind == XT_LAUNCH_COOPERATIVE ? 1 : 0;
  }
  for (const KernelCreate& k : run.capture.creates) creates += k.pid == run.pid ? 1 : 0;
  const std::vector<std::pair<std::string, size_t>> captured = {
      {"zeCommandListAppendLaunchKernel", plain},
      {"zeCommandListAppendLaunchCooperativeKernel", cooperative},
      {"zeCommandListAppendLaunchMultipleKernelsIndirect",
       CallCount(run, XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT)},
      {"zeCommandQueueExecuteCommandLists", CallCount(run, XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS)},
      {"zeFenceHostSynchronize", CallCount(run, XT_ZE_FENCE_HOST_SYNCHRONIZE)},
      {"zeEventHostSynchronize", CallCount(run, XT_ZE_EVENT_HOST_SYNCHRONIZE)},
      {"zeEventQueryKernelTimestamp", CallCount(run, XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP)},
  };
  for (const auto& [name, n] : captured) {
    EXPECT_GT(n, 0u) << name;
    EXPECT_EQ(OwnTracerCount(run.result.out, name), static_cast<long>(n)) << name << ": " << run.result.out;
  }
  if (!attached) {
    EXPECT_EQ(OwnTracerCount(run.result.out, "zeKernelCreate"), static_cast<long>(creates))
        << run.result.out;
  }
}

// Trixie's loader with the tracing layer turned on at run time (zelEnableTracingLayer, after
// zeInit) by a program that then takes the function tables and calls both ways: the loader's
// dispatch points into the layer, while the tables it hands out hold the driver's functions.
// Every launch through either is captured once, named: the driver's functions are probed
// behind the layer, zeCommandListImmediateAppendCommandListsExp too, which xtrace's own loader
// (bookworm's) has no slot for: the driver's own getters say where it is.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesWithTheTracingLayerTurnedOnOnTrixiesLoader) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  const TreeCopy tree = CopyIntoTrixieTree(root, kLegacy);
  ASSERT_FALSE(tree.dir.empty());
  const Run run = Record({"/usr/sbin/chroot", root, "/usr/bin/env",
                          "ZE_ENABLE_ALT_DRIVERS=" + tree.inside + "/libxtrace_simze.so"},
                         tree.inside + "/ze_sycl_legacy", tree.inside + "/launches.tsv",
                         tree.dir + "/launches.tsv", {},
                         {"--own-tracer", "--through-tables", "--mixed"}, {"--verbose"});
  ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
  EXPECT_NE(run.result.out.find("enabled_by=zelEnableTracingLayer"), std::string::npos)
      << run.result.out;
  std::vector<std::string> got;
  for (const KernelLaunch& l : run.capture.launches) {
    if (l.pid != run.pid) continue;
    EXPECT_TRUE(l.name_known);
    got.push_back(std::string(run.capture.strings.Get(l.kernel_name)) + "\t" +
                  std::to_string(l.group_count[0]) + "," + std::to_string(l.group_count[1]) +
                  "," + std::to_string(l.group_count[2]));
  }
  ASSERT_EQ(run.expected.size(), kIterations * kLegacyLaunchesPerIteration);
  EXPECT_EQ(Sorted(got), Sorted(run.expected)) << "each launch once, named: " << run.result.err;
  for (auto [fn, per_iteration] : kLegacyCallsPerIteration)
    EXPECT_EQ(CallCount(run, fn), kIterations * per_iteration) << "calls of " << fn;
  EXPECT_EQ(CallCount(run, XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP), kIterations);
  // Probed in the driver, behind the layer the dispatch points into.
  size_t in_the_driver = 0;
  for (const std::string& line :
       testing::LinesWith(run.result.err, "functions the loader dispatches to probed where they are"))
    in_the_driver += line.find(tree.dir + "/libxtrace_simze.so: ") != std::string::npos ? 1 : 0;
  EXPECT_EQ(in_the_driver, 1u) << run.result.err;
}

std::string CaseName(const ::testing::TestParamInfo<LayerCase>& info) {
  const auto [loader, capturing, layers] = info.param;
  const char* layer_names[] = {"NoLayer", "ValidationLayer", "TracingLayerWithItsOwnTracer"};
  return std::string(loader == Loader::kBookworm ? "HostsLoader" : "TrixiesLoader") +
         (capturing == Capturing::kRecord ? "Recorded" : "Attached") +
         layer_names[static_cast<int>(layers)];
}

INSTANTIATE_TEST_SUITE_P(
    LoaderCaptureLayers, LevelZeroLayersTest,
    ::testing::Combine(::testing::Values(Loader::kBookworm, Loader::kTrixie),
                       ::testing::Values(Capturing::kRecord, Capturing::kAttach),
                       ::testing::Values(Layers::kNone, Layers::kValidation, Layers::kOwnTracer)),
    CaseName);

}  // namespace
}  // namespace xtrace::zepaths_test
