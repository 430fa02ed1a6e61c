// The Level Zero source: uprobes on the loader's (libze_loader.so*) API entry points, on
// the functions a driver hands out by pointer (zeDriverGetExtensionFunctionAddress), found by
// name in the driver file, attached by the capture per file (or per process and file for
// explicit targets); and on the functions the loader's dispatch tables point to (the driver's
// own, which an application that takes the tables with zeGet*ProcAddrTable calls directly),
// found in the process's memory whenever the capture scans it, attached and held here. It
// keeps the device clocks, and asks processes attached mid-run about the objects they made
// before (ze_query.h) in the threads its programs hold for that.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "capture/bpf/bpf_link.h"
#include "capture/sources/device_clocks.h"
#include "capture/sources/driver_functions.h"
#include "capture/bpf/link_reaper.h"
#include "capture/sources/probe_source.h"
#include "capture/discovery/proc_maps.h"
#include "capture/sources/table_copies.h"
#include "capture/sources/ze_query.h"

struct ze_probes;  // generated skeleton (build/bpf/ze_probes.skel.h)

namespace xtrace {

struct ProbeSpec;  // ze_probe_specs.h

class ZeSource final : public ProbeSource {
 public:
  static Result<std::unique_ptr<ProbeSource>> Load(const SourceContext& ctx);
  ~ZeSource() override;

  std::string_view name() const override { return "Level Zero"; }
  bool needs_library() const override { return true; }
  std::string_view waits_for() const override { return "Level Zero (libze_loader.so*)"; }
  bool ProbesLibrary(const MappedLibrary& lib) override;
  bool NamesAttachment(const MappedLibrary& lib) const override;
  Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) override;
  std::vector<MappedLibrary> LibrariesBeforeExec(uint32_t pid) override;
  std::string_view host_soname() const override;
  void ProcessScanned(uint32_t pid, bool per_process) override;
  // A query call let finish past its hold's bound is looked at; dispatch probes nobody has
  // used for `idle_grace_ns` go; the device clocks are read every second.
  void Tick(uint64_t now_ns, uint64_t idle_grace_ns) override;
  // Its unknown kernels, lists, queues and events are asked about (with --query).
  void FoundRunning(uint32_t pid) override;
  void OnProcessExit(uint32_t pid) override;
  void OnProcessExec(uint32_t pid, uint64_t exec_ns) override;
  // The dispatch targets' links; the capture holds those of AttachToLibrary.
  size_t link_count() const override;
  bool records_api_calls() const override { return true; }
  // Opens the device clocks (device_clocks.h): the devices, and where their drivers keep the
  // functions they hand out, before any driver file is probed; with --query and the holds'
  // guardian, makes the queries.
  void Begin(const SourceStart& start) override;
  // Query holds (XT_HOLD_QUERY), once the queries are made.
  uint32_t holds_served() const override;
  // A thread held to be asked about objects its process made before the attach: asked now,
  // before any later record, so that the launch it was held in and every later one is named
  // (continued at once without queries).
  bool OnHold(const DecodedHold& hold) override;
  // A last clock reading, which covers the newest kernel timestamps.
  void Finish(uint64_t now_ns) override;
  // What the queries came to (after the capture's sentence about holds).
  SourceSummary Summary(const SourceSummaryInputs& in) const override;

  // Where this source probes `symbol` in the loader file at `path`: bytes into the function
  // (0: its entry; see probe_site.h), or nullopt if it does not probe that function. For the
  // benchmark, which measures the bare trap at the same instruction.
  static Result<std::optional<uint32_t>> ProbeSiteOf(const std::string& path,
                                                     std::string_view symbol);

  // The functions probed in driver files: those drivers hand out by pointer, whose place the
  // source asks its own Level Zero for (device_clocks.h).
  static std::vector<std::string_view> DriverFunctionNames();

  // Whether the file at `path` is a Level Zero loader, or a driver (by its name).
  static bool IsLoaderPath(std::string_view path);
  static bool IsDriverPath(std::string_view path);
  // Whether it is a loader or one of the loader's layers (libze_tracing_layer.so, ...).
  static bool IsLevelZerosOwnPath(std::string_view path);

 private:
  explicit ZeSource(const SourceContext& ctx) : ctx_(ctx) {}
  // Where the driver file `lib` keeps the functions it hands out, if xtrace's own Level Zero
  // loaded its build; else null, said once per file where that matters.
  const DriverFunctions::Offsets* HandedOutIn(const MappedLibrary& lib);
  // Opens and loads the programs, as uprobe_multi programs if `multi`.
  Status LoadPrograms(bool multi);
  // The two ways to put every probe on `lib` for `pid` (-1: every process that maps it): a
  // few uprobe_multi links per library, or two perf-event uprobes per function (kernels
  // before 6.6). Both add their links to `links` and return how many functions are probed.
  size_t AttachMulti(int pid, const MappedLibrary& lib, std::string* first_error,
                     std::vector<ProbeLink>* links);
  size_t AttachEach(int pid, const MappedLibrary& lib, std::string* first_error,
                    std::vector<ProbeLink>* links);

  struct SkeletonDeleter {
    void operator()(::ze_probes* skel) const;
  };
  // Says once per loader file which entry points it does not export: with --verbose, and as a
  // warning (and a note for the log) only for those its driver hands out past it unprobed.
  void SayMissing(const MappedLibrary& lib, const std::vector<const ProbeSpec*>& missing);

  // A loader file's probed exports: each one's spec (an index into the probe list), file
  // offset and first bytes, read once per file.
  struct LoaderStub {
    size_t spec = 0;
    uint64_t file_offset = 0;
    std::vector<uint8_t> code;
  };
  // (device major, minor, inode) of a file as the process's maps name it.
  using FileKey = std::tuple<uint32_t, uint32_t, uint64_t>;
  const std::vector<LoaderStub>& StubsOf(uint32_t pid, const FileKey& key, const MappedLibrary& lib);
  // Per file a process's dispatch points into: a segment of it (to open it by) and the
  // functions there, offset -> spec.
  using DispatchTargets =
      std::map<FileKey, std::pair<const MappedSegment*, std::map<uint64_t, size_t>>>;
  // Replaces the functions of the loader's layers among `targets` by those of the drivers
  // behind them, where xtrace's own Level Zero found the drivers' (same build).
  void BehindTheLayers(uint32_t pid, const std::vector<MappedSegment>& segments,
                       DispatchTargets* targets);
  // Probes at `targets` (file offset -> spec) of the file `lib` maps in `pid` those not probed
  // yet, for `pid` alone or (scope -1) every process.
  void ProbeDispatchTargets(uint32_t pid, bool per_process, const MappedLibrary& lib,
                            const std::map<uint64_t, size_t>& targets);
  // `pid` no longer uses its dispatch probes: its own go, shared ones it was the last user of
  // wait for Tick.
  void ReleaseDispatchProbes(uint32_t pid);
  // Probes the loader `lib`'s zeGet*ProcAddrTable exports for `pid` (-1: every process), adding
  // the links to `links`; says so if it cannot.
  void AttachTableGetters(int pid, const MappedLibrary& lib, std::vector<ProbeLink>* links);
  // Whether `pid` called a zeGet*ProcAddrTable of its loader itself (the table_takers map).
  bool TookTables(uint32_t pid) const;
  // Whether `pid`, first seen with its dispatch filled, holds a copy of a table it took
  // before (ze_taken_tables.cc): its memory (`maps`, its /proc/PID/maps text, less
  // `own_files`, the loaders' and drivers' files) read for runs of the words of each loader's
  // dispatch (`slots`, where the stubs of each loader it maps load from, and the function
  // each stub is). If it does it is
  // marked in table_takers; either way the capture is told.
  bool FoundTakenTables(uint32_t pid, const std::string& maps,
                        const std::vector<std::vector<std::pair<uint64_t, std::string_view>>>& slots,
                        const std::set<std::string>& own_files);
  // FoundTakenTables for the words of ready `dispatches`; `from` says where the tables came
  // from ("" from the loader).
  bool FoundTakenCopies(uint32_t pid, const std::string& maps,
                        const std::vector<LoaderDispatch>& dispatches,
                        const std::set<std::string>& own_files, std::string_view from);
  // Where the driver files xtrace's own Level Zero loaded keep the functions their tables
  // hold: learned at Begin by following its own loader's dispatch (one driver, not
  // intercepted), by the driver file's build id (ze_taken_tables.cc).
  void LearnDriverTables();
  // A process none of whose loaders has its dispatch filled (not initialised, or no loader)
  // but which maps a driver may have initialised it through the driver's own tables
  // (zeGetGlobalProcAddrTable, then its pfnInit): if it was seen taking them (`took`), the
  // functions of a driver build xtrace knows are probed for it; at its first look, its memory
  // is read for copies of them. `segments` and `maps` are its /proc/PID/maps.
  void ScanDriversWithoutLoader(uint32_t pid, const std::vector<MappedSegment>& segments,
                                const std::string& maps, bool took, bool first_look);
  // `pid` is gone or replaced its image: its dispatch probes and marks go.
  void Forget(uint32_t pid);

  // A driver build's tables as xtrace's own Level Zero holds them (LearnDriverTables): the
  // file offset of each function its loader's exports reach (-> probe spec), and its
  // loader's dispatch as file offsets in the driver (kNotInTheDriver elsewhere), with the
  // words each table begins at.
  struct DriverTables {
    std::map<uint64_t, size_t> functions;
    std::vector<uint64_t> words;
    std::vector<size_t> table_starts;
  };
  std::map<std::string, DriverTables> driver_tables_;  // by build id
  std::map<FileKey, std::string> build_ids_;           // of driver files processes map
  // The GNU build id of the driver file `s` maps in `pid` ("" when it has none), read once
  // per file; null when the file cannot be opened now (tried again next time).
  const std::string* DriverBuildId(uint32_t pid, const MappedSegment& s);
  std::set<FileKey> said_unknown_tables_;  // driver files whose tables nothing says where
  std::set<uint32_t> driver_takers_said_;  // processes said to take a driver's tables

  SourceContext ctx_;
  // Where drivers keep the functions they hand out by pointer, as xtrace's own Level Zero
  // found them at Begin (before it, nothing is asked: found by their names, silently).
  bool begun_ = false;
  DriverFunctions driver_functions_;
  std::unique_ptr<DeviceClocks> clocks_;  // null: no Level Zero of its own, or not begun
  bool multi_ = false;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, bool> said_missing_;  // (dev, inode)
  std::set<std::tuple<uint32_t, uint32_t, uint64_t>> said_by_name_;  // (dev, inode)
  std::unique_ptr<::ze_probes, SkeletonDeleter> skel_;
  std::map<FileKey, std::vector<LoaderStub>> loader_stubs_;
  // Processes whose dispatch was looked at once (without --driver-tables, to find the tables
  // they took if it was filled before xtrace saw them), and whether one holding none was said.
  std::set<uint32_t> looked_at_;
  bool said_taken_before_ = false;
  // Dispatch targets probed, per file (device and inode as opened) and scope (pid, or -1 for
  // every process): their offsets and links. Declared after skel_: destroyed before it.
  struct DispatchProbes {
    std::set<uint64_t> offsets;
    std::vector<ProbeLink> links;
    std::set<uint32_t> users;    // processes whose scans found targets in this file
    uint64_t idle_since_ns = 0;  // when the last of them went (users empty)
  };
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, int64_t>, DispatchProbes> dispatch_;
  // Detaching waits for every CPU to leave the probes: done off the capture loop. Declared
  // after the links and the programs: it destroys what is still queued before they go.
  LinkReaper reaper_;
  // Null: objects made before the attach stay unknown. Declared last: a query call still let
  // finish is waited for, and handed to the guardian, while the programs that hold are there.
  std::unique_ptr<ZeQueries> queries_;
};

}  // namespace xtrace
