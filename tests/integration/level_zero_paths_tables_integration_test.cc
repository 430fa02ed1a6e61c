// Integration tests of the Level Zero paths of SYCL's legacy adapter's shape (ze_sycl_legacy:
// cooperative launches, a multiple-indirect launch, lists filled per submission and executed
// on a queue, batches appended with zeCommandListImmediateAppendCommandListsExp), through the
// loader's exports and, with --through-tables, through the function tables it took from the
// loader: captured by default where xtrace sees it take them (under record, and attached
// before its zeInit) and, attached after, where it keeps them (found in its memory); one that
// kept only pointers copied out of them is said to be missed, and captured with
// --driver-tables; through the exports no
// driver function is probed by default, and with --driver-tables every call passes two
// probes and is counted once; with --from-the-driver it initialises and takes its tables from
// the driver itself, never through the loader, and is captured under record and attach
// alike. On the host's loader and trixie's (level_zero_paths_fixture.h).
// Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>

#include <string>

#include "level_zero_paths_fixture.h"

namespace xtrace::zepaths_test {
namespace {

// The legacy adapter's shape on bookworm's loader, through its exports: cooperative launches,
// lists filled per submission and executed on a queue, its batch executed on the queue
// (1.8.12 has no zeCommandListImmediateAppendCommandListsExp).
// The loader calls its own zeGet*ProcAddrTable at zeInit: a process that takes no table
// itself has no driver function probed, and each of its calls traps once (at the export).
TEST_F(LevelZeroPathsTest, SyclLegacyShapeOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {}, {"--verbose"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
  EXPECT_EQ(run.result.err.find("functions the loader dispatches to probed"), std::string::npos)
      << "driver functions probed in a process that took no table: " << run.result.err;
}

// The same, every call after zeInit made through the tables the loader hands out
// (zeGet*ProcAddrTable): with one driver they are the simulated driver's own functions, which
// it does not export, so no probe by name reaches them. By default (no option) the process's
// first call of a getter holds it until xtrace has probed where the loader's dispatch points,
// for this process alone, and each call is recorded once although loader and driver are both
// probed.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {"--through-tables"}, {"--verbose"});
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  // Probed for this process alone ("xtrace: pid N: FILE: K functions ..."), not for every
  // process.
  const size_t probed = run.result.err.find("functions the loader dispatches to probed where they are");
  ASSERT_NE(probed, std::string::npos) << run.result.err;
  const size_t line = run.result.err.rfind('\n', probed) + 1;  // npos + 1 == 0
  const std::string alone = "xtrace: pid " + std::to_string(run.pid) + ": ";
  EXPECT_EQ(run.result.err.substr(line, alone.size()), alone) << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
  for (uint16_t fn : {XT_ZE_COMMAND_LIST_RESET, XT_ZE_COMMAND_LIST_CLOSE,
                      XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, XT_ZE_FENCE_HOST_SYNCHRONIZE,
                      XT_ZE_EVENT_HOST_SYNCHRONIZE, XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP,
                      XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS})
    EXPECT_TRUE(Called(run, fn)) << "call " << fn << " through a table is missing";
}

// One process that calls both ways, by default: its set-up and every other iteration through
// the loader's exports, the rest through the tables it took. Once it has taken them, each
// call through an export passes two probes (the export's and, for this process, the driver
// function's it jumps to) and is recorded once (the calls counted exactly in
// ExpectEveryLegacyLaunch); each call through a table passes one.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAndTheExportsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {"--through-tables", "--mixed"},
                         {"--verbose", "--hold-max", "60000"});
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.err.find("functions the loader dispatches to probed where they are"),
            std::string::npos)
      << "the driver's functions were probed too: " << run.result.err;
  // Held, and none released by the bound (which the summary would add after "until probed").
  EXPECT_NE(run.result.err.find(" until probed."), std::string::npos) << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Through the loader's exports with --driver-tables: every call passes two probes, the
// export's and the driver function's it jumps to, and is recorded once (the launches and the
// calls counted exactly in ExpectEveryLegacyLaunch).
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheExportsWithDriverTablesOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  // The process is held at its zeInit until the driver's functions are probed: a bound no
  // loaded machine reaches, so that none of its calls comes first.
  const Run run = Record({}, kLegacy, log, log, {}, {},
                         {"--driver-tables", "--verbose", "--hold-max", "60000"});
  EXPECT_NE(run.result.out.find("tables=no"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.err.find("functions the loader dispatches to probed where they are"),
            std::string::npos)
      << "the driver's functions were probed too: " << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached before its zeInit (the driver not loaded yet), through the tables it takes after
// zeInit: the capture looks at the process again once zeInit has filled the loader's dispatch,
// holding it meanwhile, so that no call through a table comes before its probe.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedBeforeItsZeInitOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-before-init"},
                         {"--hold-max", "60000"});
  // Held, and none released by the bound (which the summary would add after "until probed").
  EXPECT_NE(run.result.err.find(" until probed."), std::string::npos) << run.result.err;
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached before its zeInit, which it calls as soon as the attach's first scan has probed it,
// while the scan goes on to eight more processes: holding is on from before that scan, so the
// process is held as its zeInit loads the driver and returns with the tables filled, and the
// scan serves those holds between two processes. When holding came on only after the first
// scan, the workload ran zeInit and took the tables unheld there, and its first calls through
// them went unprobed until the loop's next scan.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeWhoseZeInitCameDuringTheFirstScan) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-before-init"},
                         {"--driver-tables", "--hold-max", "60000"}, /*bystanders=*/8);
  // Held, and none released by the bound (which the summary would add after "until probed").
  EXPECT_NE(run.result.err.find(" until probed."), std::string::npos) << run.result.err;
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached once the workload has taken the tables, which it keeps on its heap: the attach
// finds a copy of them in its memory and marks it as if its getter calls had been seen, so the
// functions they point to are probed for it alone, and the closing summary says what was
// found. (It makes its objects after the attach: asking a process about objects made before
// is the SYCL v2 shape's attach test's concern.)
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedAfterItsLookupsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run =
      Attach({}, kLegacy, log, log, {"--through-tables", "--wait-after-lookups"}, {"--verbose"});
  ExpectFoundInTheTablesItKeeps(run);
  const std::string found = "pid " + std::to_string(run.pid) +
                            " took Level Zero function tables before xtrace saw it: one is at ";
  // Said at the attach and again in the closing summary.
  EXPECT_EQ(Count(run.result.err, found), 2u) << run.result.err;
  // Probed for this process alone ("xtrace: pid N: FILE: K functions ..."), not for every
  // process.
  const size_t probed =
      run.result.err.find("functions the loader dispatches to probed where they are");
  ASSERT_NE(probed, std::string::npos) << run.result.err;
  const size_t line = run.result.err.rfind('\n', probed) + 1;  // npos + 1 == 0
  const std::string alone = "xtrace: pid " + std::to_string(run.pid) + ": ";
  EXPECT_EQ(run.result.err.substr(line, alone.size()), alone) << run.result.err;
  EXPECT_EQ(run.result.err.find("had initialised Level Zero before xtrace saw it"),
            std::string::npos)
      << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached once the workload has taken the tables and kept only the pointers it calls, in no
// table's order: nothing in its memory says it took them, so the capture says (at the attach
// and in the closing summary) that such calls may be missed and that --driver-tables traces
// them ...
TEST_F(LevelZeroPathsTest, PointersKeptOutOfTablesTakenBeforeTheAttachAreSaidToBeMissed) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log,
                         {"--through-tables", "--scattered-pointers", "--wait-after-lookups"});
  EXPECT_EQ(Count(run.result.err, "pid " + std::to_string(run.pid) +
                                      " had initialised Level Zero before xtrace saw it and "
                                      "holds no function table of its loader's in its memory"),
            2u)
      << run.result.err;
  EXPECT_NE(run.result.err.find("--driver-tables traces them"), std::string::npos);
  EXPECT_EQ(run.result.err.find("took Level Zero function tables"), std::string::npos)
      << run.result.err;
  // ... and they are: the workload's launches go through the pointers, past every probe.
  EXPECT_FALSE(Called(run, XT_ZE_COMMAND_LIST_CLOSE)) << run.result.err;
}

// ... which --driver-tables does: the functions the loader's dispatch points to are probed in
// every traced process at the attach.
TEST_F(LevelZeroPathsTest, PointersKeptOutOfTablesTakenBeforeTheAttachWithDriverTables) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log,
                         {"--through-tables", "--scattered-pointers", "--wait-after-lookups"},
                         {"--driver-tables"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Trixie's loader under chroot, through its tables: zeCommandListImmediateAppendCommandListsExp
// from zeGetCommandListExpProcAddrTable, the batch on the immediate list.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesOnTrixiesLoaderUnderChroot) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  const TreeCopy tree = CopyIntoTrixieTree(root, kLegacy);
  ASSERT_FALSE(tree.dir.empty());
  const Run run = Record({"/usr/sbin/chroot", root, "/usr/bin/env",
                          "ZE_ENABLE_ALT_DRIVERS=" + tree.inside + "/libxtrace_simze.so"},
                         tree.inside + "/ze_sycl_legacy", tree.inside + "/launches.tsv",
                         tree.dir + "/launches.tsv", {}, {"--through-tables"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
  EXPECT_TRUE(Called(run, XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP));
}

// Trixie's loader in a podman container (sharing the host's pid namespace, so that the
// workload's pid is the one to attach to), attached once the workload has taken the tables:
// the copy it keeps is found in its memory, and their functions through the container's
// loader. (It makes its objects after the attach: asking a process about objects made before
// is the host's tests' concern.)
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedAfterItsLookupsOnTrixiesLoader) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (!PodmanOrSkip()) return;
  const std::string dir = CopyToBind(kLegacy);
  const Run run = Attach(PodmanRun(root, dir, {"--pid=host"}), "/xt/ze_sycl_legacy",
                         "/xt/launches.tsv", dir + "/launches.tsv",
                         {"--through-tables", "--wait-after-lookups"}, {"--verbose"});
  EXPECT_NE(run.result.err.find("pid " + std::to_string(run.pid) +
                                " took Level Zero function tables before xtrace saw it"),
            std::string::npos)
      << run.result.err;
  // Found by the rule of a run from a table's first function, in the tables the workload
  // keeps (trixie's loader keeps no second whole copy that would pass for one).
  ExpectFoundInTheTablesItKeeps(run);
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

// Without the loader: the workload loads the driver itself, takes its Global table (the
// driver's own zeGetGlobalProcAddrTable; the loader's answers UNINITIALIZED before zeInit,
// 0x78000001), initialises through its pfnInit, and calls through the tables the driver's own
// getters hand out. Its first getter call holds it (the loader's calls of its driver's getters
// are made inside its zeInit, and ignored), and the functions xtrace's own Level Zero found
// the same driver build's tables to hold are probed for it alone: those of its loader's
// dispatch, and those the driver's getters put where newer Level Zero has them
// (zeCommandListImmediateAppendCommandListsExp, which bookworm's loader knows nothing of).
template <typename Run>
void ExpectTheDriversTablesTaken(const Run& run) {
  EXPECT_NE(run.result.out.find("loader_global=0x78000001"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  EXPECT_EQ(Count(run.result.err, "pid " + std::to_string(run.pid) +
                                      " takes function tables from its Level Zero driver itself, "
                                      "with no loader initialised: the functions they hold are "
                                      "probed for it"),
            2u)
      << run.result.err;
}

TEST_F(LevelZeroPathsTest, TheDriversOwnTablesWithoutTheLoaderOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {"--from-the-driver"});
  ExpectTheDriversTablesTaken(run);
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

TEST_F(LevelZeroPathsTest, TheDriversOwnTablesWithoutTheLoaderOnTrixiesLoaderUnderChroot) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  const TreeCopy tree = CopyIntoTrixieTree(root, kLegacy);
  ASSERT_FALSE(tree.dir.empty());
  const Run run = Record({"/usr/sbin/chroot", root, "/usr/bin/env",
                          "ZE_ENABLE_ALT_DRIVERS=" + tree.inside + "/libxtrace_simze.so"},
                         tree.inside + "/ze_sycl_legacy", tree.inside + "/launches.tsv",
                         tree.dir + "/launches.tsv", {}, {"--from-the-driver"});
  ExpectTheDriversTablesTaken(run);
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

// The same attached after the lookups: its loader was never initialised, so no dispatch of it
// says what a table holds; the tables it keeps are found in its memory by the words of the
// same driver build's tables as xtrace's own Level Zero holds them, placed where the process
// maps the driver.
template <typename Run>
void ExpectTheDriversTablesFound(const Run& run) {
  EXPECT_NE(run.result.out.find("loader_global=0x78000001"), std::string::npos) << run.result.out;
  EXPECT_EQ(Count(run.result.err, "pid " + std::to_string(run.pid) +
                                      " took Level Zero function tables from its driver itself, "
                                      "with no loader initialised, before xtrace saw it: one is at "),
            2u)
      << run.result.err;
}

TEST_F(LevelZeroPathsTest,
       TheDriversOwnTablesWithoutTheLoaderAttachedAfterItsLookupsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--from-the-driver", "--wait-after-lookups"},
                         {"--verbose"});
  ExpectTheDriversTablesFound(run);
  ExpectFoundInTheTablesItKeeps(run);
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

TEST_F(LevelZeroPathsTest,
       TheDriversOwnTablesWithoutTheLoaderAttachedAfterItsLookupsOnTrixiesLoader) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (!PodmanOrSkip()) return;
  const std::string dir = CopyToBind(kLegacy);
  const Run run = Attach(PodmanRun(root, dir, {"--pid=host"}), "/xt/ze_sycl_legacy",
                         "/xt/launches.tsv", dir + "/launches.tsv",
                         {"--from-the-driver", "--wait-after-lookups"}, {"--verbose"});
  ExpectTheDriversTablesFound(run);
  ExpectFoundInTheTablesItKeeps(run);
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

}  // namespace
}  // namespace xtrace::zepaths_test
