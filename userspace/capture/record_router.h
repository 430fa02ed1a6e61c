// Where each record read from the ring goes, knowing no probe source by name: a process's
// lifecycle records to whoever follows processes, a thread held for a source to the source
// that serves it (ProbeSource::OnHold), every other record counted by family for its process, decoded, given to the correlator and
// then to each source (ProbeSource::OnRecord), whose word on what it means for its process
// (it detached itself) the capture takes from here. The sources' part of the log's start,
// its end and the closing summary go through here too. A record the decoders refuse is
// counted as malformed, the first one's reason kept. Testable without BPF: the routes are
// functions and the sources an interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capture/sources/probe_source.h"
#include "decode/hold_record_decoder.h"
#include "decode/process_record_decoder.h"
#include "decode/py_stack_chains.h"
#include "decode/record_decoder.h"
#include "xtrace/records.h"

namespace xtrace {

class RecordRouter {
 public:
  struct Routes {
    // Exec, fork, exit and library records, whoever's (the collector's own too: it may be
    // held like any other).
    std::function<void(const DecodedProcessRecord&)> process;
    // A thread held that no source serves (none took its record): to be continued.
    std::function<void(const DecodedHold&)> unserved_hold;
    // A source's record (RecordFamily) of `pid`, counted before it is decoded.
    std::function<void(uint32_t pid, std::string_view family)> counted;
    // Every decoded record: the correlator.
    std::function<void(const DecodedRecord&)> decoded;
  };

  // The records of `self_pid` (the collector, whose own Level Zero reads the device clocks)
  // are not the workload's: only its lifecycle records are routed. `sources` outlive this.
  RecordRouter(uint32_t self_pid, std::vector<ProbeSource*> sources, Routes routes);

  // One record as the ring gave it.
  void Route(std::span<const std::byte> data);
  // One record decoded elsewhere (a call still pending at the end, read from its thread's
  // state): to the correlator and the sources, or counted as malformed, as a ring record is.
  void RouteDecoded(const Result<DecodedRecord>& decoded);
  // A source's record a side stream made decoded itself (CaptureMaps::SetDecodedRoute): counted
  // by family and routed as Route routes it once decoded. Neither a process, hold nor Python
  // stack record.
  void RouteSideRecord(const DecodedRecord& record);

  // The processes a source said detached themselves since the last call, in record order.
  std::vector<uint32_t> TakeDetached();

  uint64_t malformed() const { return malformed_; }
  const std::string& first_malformed() const { return first_malformed_; }

  // Whether a source records the host API calls kernel-driver work is attributed to.
  bool records_api_calls() const;
  // The kinds of holds the sources serve (ProbeSource::holds_served), together.
  uint32_t holds_served() const;
  // ProbeSource::Begin, Finish and Summary of every source, in the sources' order.
  void Begin(const SourceStart& start);
  void Finish(uint64_t now_ns);
  SourceSummary Summary(const SourceSummaryInputs& in) const;

 private:
  void RouteWhole(const DecodedRecord& record);  // Python stacks made whole
  void Malformed(const std::string& why);

  uint32_t self_pid_;
  std::vector<ProbeSource*> sources_;
  Routes routes_;
  std::vector<uint32_t> detached_;
  PyStackChains py_stacks_;  // every stack record made whole here, in ring order
  uint64_t malformed_ = 0;
  std::string first_malformed_;
};

}  // namespace xtrace
