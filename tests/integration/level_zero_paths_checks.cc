// What a run of the Level Zero paths workloads must show: every launch named, on its engine,
// measured or bounded, tied to the calls that submitted it and saw it done; see
// level_zero_paths_fixture.h.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "level_zero_paths_fixture.h"

namespace xtrace::zepaths_test {

void LevelZeroPathsTest::ExpectEveryLaunch(const Run& run, bool attached,
                                           uint16_t host_function_fn) {
  ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
  ASSERT_GT(run.pid, 0u) << run.result.out;
  ASSERT_EQ(run.expected.size(), kIterations * kLaunchesPerIteration);
  std::vector<std::string> got;
  for (const KernelLaunch& l : run.capture.launches) {
    if (l.pid != run.pid) continue;
    EXPECT_TRUE(l.name_known) << run.capture.strings.Get(l.kernel_name);
    got.push_back(std::string(run.capture.strings.Get(l.kernel_name)) + "\t" +
                  std::to_string(l.group_count[0]) + "," + std::to_string(l.group_count[1]) +
                  "," + std::to_string(l.group_count[2]));
  }
  // The appended list's and the graph's launches are appended once and run every iteration.
  std::vector<std::string> expected_appends;
  std::set<std::string> seen;
  for (const auto& e : run.expected)
    if (!Replayed(e) || (!attached && seen.insert(e).second)) expected_appends.push_back(e);
  EXPECT_EQ(Sorted(got), Sorted(expected_appends));

  // The immediate list every launch with arguments or parameters went to; the appended
  // list's launch runs there too where zeCommandListImmediateAppendCommandListsExp exists
  // (else on a queue). Each iteration launches once with parameters, through the driver's
  // pointer (or the export of a loader that has one).
  std::set<uint64_t> immediate;
  size_t with_parameters = 0;
  for (const KernelLaunch& l : run.capture.launches) {
    if (l.pid != run.pid) continue;
    if (l.launch_kind == XT_LAUNCH_WITH_ARGUMENTS || l.launch_kind == XT_LAUNCH_WITH_PARAMETERS)
      immediate.insert(l.command_list);
    if (l.launch_kind == XT_LAUNCH_WITH_PARAMETERS) {
      ++with_parameters;
      EXPECT_NE(l.signal_event, 0u) << "its signal event, the fifth parameter";
      EXPECT_EQ(l.num_wait_events, 1u) << "its wait count, the sixth";
      EXPECT_GE(l.group_count[0], 16u) << "its group counts, read through the pointer";
    }
  }
  ASSERT_EQ(immediate.size(), 1u);
  EXPECT_EQ(with_parameters, size_t{kIterations});
  // The replays: zeCommandListAppendGraphExp calls, by thread and start.
  std::map<std::pair<uint32_t, uint64_t>, const ApiCall*> replays;
  for (const ApiCall& c : run.capture.calls)
    if (c.pid == run.pid && c.fn == XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP && c.result == 0)
      replays[{c.tid, c.start_ns}] = &c;
  EXPECT_EQ(replays.size(), size_t{kIterations});
  std::set<uint64_t> queues;
  std::map<uint64_t, size_t> graph_ops_per_replay;
  size_t ops = 0, measured = 0, unknown_graphs = 0;
  // The trace's flows: each operation is tied to the call that submitted it (a launch, or
  // the append or execution that ran its list) and to the call that saw it done.
  std::set<std::pair<uint32_t, uint64_t>> submitters;
  for (const KernelLaunch& l : run.capture.launches)
    if (l.pid == run.pid) submitters.insert({l.tid, l.start_ns});
  for (const ApiCall& c : run.capture.calls)
    if (c.pid == run.pid) submitters.insert({c.tid, c.start_ns});
  for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
    if (op.pid != run.pid || op.kind != DeviceOpKind::kKernel) continue;
    ++ops;
    queues.insert(op.queue);
    const std::string name(run.capture.strings.Get(op.name));
    EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}))
        << name << " is tied to no call that submitted it";
    EXPECT_NE(op.sync_ns, 0u) << name << " is tied to no call that saw it done";
    if (!InRegularList(name)) {
      EXPECT_EQ(op.queue, *immediate.begin()) << name;
    }
    EXPECT_NE(name, "") << "an unnamed kernel";
    EXPECT_LE(op.start_ns, op.end_ns);
    EXPECT_TRUE(op.completion_seen) << name;
    measured += op.measured ? 1 : 0;
    const bool unknown_graph = name.rfind("zeCommandListAppendGraphExp:", 0) == 0 &&
                               name.find("contents unknown") != std::string::npos;
    unknown_graphs += unknown_graph ? 1 : 0;
    if (InGraph(name) || unknown_graph) {
      // Submitted by a replay: the operation names the call and the executable graph.
      auto replay = replays.find({op.submit_tid, op.submit_ns});
      ASSERT_NE(replay, replays.end()) << name << " is tied to no zeCommandListAppendGraphExp";
      EXPECT_EQ(op.command_list, replay->second->arg[3]) << "the executable graph replayed";
      ++graph_ops_per_replay[op.submit_ns];
    }
  }
  const size_t graph_runs = static_cast<size_t>(kIterations) * kGraphLaunches;
  EXPECT_EQ(ops, attached ? run.expected.size() - kIterations - graph_runs + kIterations
                          : run.expected.size());
  EXPECT_EQ(unknown_graphs, attached ? size_t{kIterations} : 0u);
  EXPECT_EQ(graph_ops_per_replay.size(), size_t{kIterations});
  for (const auto& [at, n] : graph_ops_per_replay)
    EXPECT_EQ(n, attached ? 1u : kGraphLaunches) << "the replay at " << at;
  EXPECT_EQ(queues.size(),
            attached || Called(run, XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP) ? 1u : 2u);
  EXPECT_GE(measured, static_cast<size_t>(kIterations) * (attached ? 3 : 4))
      << "the launches signalling counter-based timestamp events (the graph's first, at each "
         "replay, too) carry measured times";
  // The host function each iteration appends: work on the list's timeline, submitted by its
  // append, seen done by the host synchronize after it.
  std::set<uint64_t> host_function_calls;
  for (const ApiCall& c : run.capture.calls)
    if (c.pid == run.pid && c.fn == host_function_fn && c.result == 0)
      host_function_calls.insert(c.start_ns);
  EXPECT_EQ(host_function_calls.size(), size_t{kIterations});
  size_t host_functions = 0;
  for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
    if (op.pid != run.pid || op.kind != DeviceOpKind::kHostFunction) continue;
    ++host_functions;
    EXPECT_EQ(op.queue, *immediate.begin());
    EXPECT_TRUE(op.completion_seen);
    EXPECT_TRUE(host_function_calls.count(op.submit_ns)) << "tied to its append";
  }
  EXPECT_EQ(host_functions, size_t{kIterations});
  EXPECT_NE(run.result.out.find("host_functions=" + std::to_string(kIterations)),
            std::string::npos) << run.result.out;
  if (attached) {
    EXPECT_NE(run.result.err.find(std::to_string(kIterations) +
                                  " replays of graphs recorded before the capture began"),
              std::string::npos)
        << run.result.err;
  } else {
    for (uint16_t fn : {XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP,
                        XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP,
                        XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, XT_ZE_GRAPH_DESTROY_EXP,
                        XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP})
      EXPECT_TRUE(Called(run, fn)) << "graph call " << fn << " is missing";
  }
}

void LevelZeroPathsTest::ExpectEveryLaunchOnTrixiesLoader(const Run& run, const std::string& root) {
  ExpectEveryLaunch(run);
  EXPECT_NE(run.result.err.find("attached to pid " + std::to_string(run.pid) + " (" + root +
                                "/usr/lib/x86_64-linux-gnu/libze_loader.so.1.20"),
            std::string::npos)
      << run.result.err;
  for (uint16_t fn : {XT_ZE_INIT_DRIVERS, XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE,
                      XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP,
                      XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2})
    EXPECT_TRUE(Called(run, fn)) << "call " << fn << " is missing";
  // What 1.20.6 lacks (Level Zero 1.14 and 1.15's) is probed in the driver, which hands it
  // out: no warning, nothing in the closing summary; with --verbose, said once at the attach.
  const std::string lacks =
      "does not export zeCommandListAppendLaunchKernelWithArguments, "
      "zeCommandListAppendLaunchKernelWithParameters, zeEventCounterBasedCreate (an older Level "
      "Zero loader): no call to them goes through it; "
      "zeCommandListAppendLaunchKernelWithArguments, "
      "zeCommandListAppendLaunchKernelWithParameters, zeEventCounterBasedCreate probed in drivers";
  const bool verbose = run.result.err.find("Tables: peak") != std::string::npos;
  EXPECT_EQ(Count(run.result.err, "and the Level Zero driver hands"), 0u) << run.result.err;
  EXPECT_EQ(Count(run.result.err, lacks), verbose ? 1u : 0u) << run.result.err;
  const size_t summary = run.result.err.find("xtrace: captured ");
  ASSERT_NE(summary, std::string::npos) << run.result.err;
  EXPECT_EQ(run.result.err.find("does not export", summary), std::string::npos) << run.result.err;
}

void LevelZeroPathsTest::ExpectEveryLegacyLaunch(const Run& run, bool immediate_append) {
  ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
  ASSERT_GT(run.pid, 0u) << run.result.out;
  ASSERT_EQ(run.expected.size(), kIterations * kLegacyLaunchesPerIteration);
  EXPECT_NE(run.result.out.find(std::string("immediate_append=") + (immediate_append ? "yes" : "no")),
            std::string::npos) << run.result.out;
  std::vector<std::string> got;
  size_t cooperative = 0;
  std::set<std::pair<uint32_t, uint64_t>> submitters;  // (tid, start) of launches and calls
  std::map<std::string, std::set<uint64_t>> lists_of;  // kernel name -> lists launched on
  for (const KernelLaunch& l : run.capture.launches) {
    if (l.pid != run.pid) continue;
    const std::string name(run.capture.strings.Get(l.kernel_name));
    EXPECT_TRUE(l.name_known) << name;
    got.push_back(name + "\t" + std::to_string(l.group_count[0]) + "," +
                  std::to_string(l.group_count[1]) + "," + std::to_string(l.group_count[2]));
    cooperative += l.launch_kind == XT_LAUNCH_COOPERATIVE ? 1 : 0;
    submitters.insert({l.tid, l.start_ns});
    lists_of[name].insert(l.command_list);
  }
  EXPECT_EQ(Sorted(got), Sorted(run.expected)) << "each launch once, named";
  EXPECT_EQ(cooperative, size_t{kIterations} * 2);
  for (const ApiCall& c : run.capture.calls)
    if (c.pid == run.pid) submitters.insert({c.tid, c.start_ns});
  // The immediate list: the one the cooperative sycl lambda is launched on.
  std::string lambda, gemm;
  for (const auto& [name, lists] : lists_of) {
    if (name.find("gemm") != std::string::npos) gemm = name;
    if (name.rfind("_ZTS", 0) == 0) lambda = name;  // the mangled SYCL kernel lambda
  }
  ASSERT_FALSE(lambda.empty());
  ASSERT_EQ(lists_of[lambda].size(), 1u);
  const uint64_t immediate = *lists_of[lambda].begin();
  std::map<std::string, std::set<uint64_t>> queues_of;
  size_t ops = 0, measured = 0;
  std::set<uint64_t> indirect_queues;  // where the multiple-indirect launches ran
  size_t indirect = 0;
  for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
    if (op.pid != run.pid || op.kind != DeviceOpKind::kKernel) continue;
    const std::string name(run.capture.strings.Get(op.name));
    if (name == kMultipleIndirect) {
      // One operation per execution stands for the kernels the device reads: bounded (it
      // signals no event), tied to the execution that ran it and the wait that saw it done.
      ++indirect;
      indirect_queues.insert(op.queue);
      EXPECT_TRUE(op.completion_seen);
      EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}));
      continue;
    }
    ++ops;
    queues_of[name].insert(op.queue);
    measured += op.measured ? 1 : 0;
    EXPECT_TRUE(op.completion_seen) << name;
    EXPECT_LE(op.start_ns, op.end_ns) << name;
    EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}))
        << name << " is tied to no call that submitted it";
    EXPECT_NE(op.sync_ns, 0u) << name << " is tied to no call that saw it done";
  }
  EXPECT_EQ(ops, run.expected.size());
  EXPECT_EQ(measured, ops) << "every launch signals a timestamp event the process reads";
  EXPECT_EQ(queues_of.size(), kLegacyLaunchesPerIteration);
  std::set<uint64_t> queue;  // the command queue: where the other two kernels ran
  for (const auto& [name, queues] : queues_of) {
    EXPECT_EQ(queues.size(), 1u) << name << " ran on one engine";
    if (name == lambda) {
      EXPECT_EQ(*queues.begin(), immediate);
    } else if (name != gemm) {
      queue.insert(*queues.begin());
    }
  }
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_NE(*queue.begin(), immediate);
  EXPECT_EQ(*queues_of[gemm].begin(), immediate_append ? immediate : *queue.begin());
  EXPECT_EQ(indirect, size_t{kIterations});
  EXPECT_EQ(indirect_queues, std::set<uint64_t>{*queue.begin()}) << "in the queue's list";
  // Every call once, however many probes it passed (a loader export and the driver function
  // it reaches, with --driver-tables): the workload's own counts.
  for (auto [fn, per_iteration] : kLegacyCallsPerIteration) {
    // Without the batched append the batch is executed on the queue, and waited for.
    if (!immediate_append &&
        (fn == XT_ZE_FENCE_HOST_SYNCHRONIZE || fn == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS))
      ++per_iteration;
    EXPECT_EQ(CallCount(run, fn), kIterations * per_iteration) << "calls of " << fn;
  }
}

}  // namespace xtrace::zepaths_test
