// Routing the ring's records; see record_router.h.
#include "capture/record_router.h"

#include <cstring>
#include <utility>

#include "capture/output/record_families.h"

namespace xtrace {

RecordRouter::RecordRouter(uint32_t self_pid, std::vector<ProbeSource*> sources, Routes routes)
    : self_pid_(self_pid), sources_(std::move(sources)), routes_(std::move(routes)) {}

void RecordRouter::Malformed(const std::string& why) {
  if (malformed_++ == 0) first_malformed_ = why;
}

void RecordRouter::Route(std::span<const std::byte> data) {
  if (data.size() >= sizeof(xt_record_header)) {
    xt_record_header hdr;
    std::memcpy(&hdr, data.data(), sizeof(hdr));
    if (IsProcessRecordType(hdr.type)) {
      auto decoded = DecodeProcessRecord(data);
      if (!decoded.ok()) return Malformed(decoded.status().message());
      if (const auto* exit = std::get_if<DecodedProcessExit>(&*decoded))
        py_stacks_.ForgetProcess(exit->hdr.pid);
      return routes_.process(*decoded);
    }
    if (IsHoldRecordType(hdr.type)) {
      auto hold = DecodeHoldRecord(data);
      if (!hold.ok()) return Malformed(hold.status().message());
      for (ProbeSource* source : sources_)
        if (source->OnHold(*hold)) return;
      return routes_.unserved_hold(*hold);
    }
    if (hdr.pid == self_pid_) return;
    const std::string_view family = RecordFamily(data);
    if (!family.empty()) routes_.counted(hdr.pid, family);
  }
  RouteDecoded(DecodeRecord(data));
}

void RecordRouter::RouteDecoded(const Result<DecodedRecord>& decoded) {
  if (!decoded.ok()) return Malformed(decoded.status().message());
  if (const auto* stack = std::get_if<DecodedPyStack>(&decoded.value()))
    return RouteWhole(DecodedRecord(py_stacks_.Expand(*stack)));
  RouteWhole(decoded.value());
}

void RecordRouter::RouteSideRecord(const DecodedRecord& record) {
  const xt_record_header& hdr = HeaderOf(record);
  if (hdr.pid == self_pid_) return;
  const std::string_view family = RecordFamily(hdr.type);
  if (!family.empty()) routes_.counted(hdr.pid, family);
  RouteWhole(record);
}

void RecordRouter::RouteWhole(const DecodedRecord& record) {
  routes_.decoded(record);
  for (ProbeSource* source : sources_) {
    const RecordEffect effect = source->OnRecord(record);
    if (effect.process_detached) detached_.push_back(HeaderOf(record).pid);
  }
}

std::vector<uint32_t> RecordRouter::TakeDetached() { return std::exchange(detached_, {}); }

bool RecordRouter::records_api_calls() const {
  for (const ProbeSource* source : sources_)
    if (source->records_api_calls()) return true;
  return false;
}

uint32_t RecordRouter::holds_served() const {
  uint32_t kinds = 0;
  for (const ProbeSource* source : sources_) kinds |= source->holds_served();
  return kinds;
}

void RecordRouter::Begin(const SourceStart& start) {
  for (ProbeSource* source : sources_) source->Begin(start);
}

void RecordRouter::Finish(uint64_t now_ns) {
  for (ProbeSource* source : sources_) source->Finish(now_ns);
}

SourceSummary RecordRouter::Summary(const SourceSummaryInputs& in) const {
  const SourceSummaryInputs with_stacks{in.correlator, in.counters, py_stacks_.frame_counts()};
  SourceSummary all;
  for (const ProbeSource* source : sources_) {
    SourceSummary one = source->Summary(with_stacks);
    all.sentences += one.sentences;
    all.lines += one.lines;
    all.hold_sentences += one.hold_sentences;
  }
  return all;
}

}  // namespace xtrace
