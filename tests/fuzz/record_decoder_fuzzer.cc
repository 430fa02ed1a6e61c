// Fuzzes the raw ring-record decoders — what the BPF programs hand user space — and the DRM
// ioctl argument decoder that reads the struct bytes a DRM record carries. Every view a
// decoder returns is read to its last byte, so AddressSanitizer sees any that points past the
// record.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "decode/drm_ioctl_decoder.h"
#include "decode/process_record_decoder.h"
#include "decode/record_decoder.h"

namespace {

volatile uint8_t g_sink;

void Touch(std::span<const std::byte> bytes) {
  uint8_t sum = 0;
  for (std::byte b : bytes) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(b));
  g_sink = sum;
}
void Touch(std::string_view text) { Touch(std::as_bytes(std::span(text.data(), text.size()))); }

// The drivers the DRM decoder tells apart, and one it does not know.
constexpr std::string_view kDrivers[] = {"i915", "xe", "amdgpu", ""};

void TouchRecord(const xtrace::DecodedRecord& record) {
  using namespace xtrace;
  if (const auto* r = std::get_if<DecodedKernelCreate>(&record)) {
    Touch(r->name);
  } else if (const auto* r = std::get_if<DecodedThreadName>(&record)) {
    Touch(r->comm);
    Touch(r->process_comm);
  } else if (const auto* r = std::get_if<DecodedIttName>(&record)) {
    Touch(r->text);
  } else if (const auto* r = std::get_if<DecodedIttEvent>(&record)) {
    Touch(r->inline_name);
  } else if (const auto* r = std::get_if<DecodedZeExecute>(&record)) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < r->lists_copied; ++i) sum += r->list(i);
    g_sink = static_cast<uint8_t>(sum);
  } else if (const auto* r = std::get_if<DecodedDrmIoctl>(&record)) {
    Touch(r->in);
    Touch(r->out);
    const auto driver = kDrivers[r->hdr.flags % std::size(kDrivers)];
    const DrmCallInfo info = DecodeDrmCall(driver, r->cmd, r->in, r->out, r->result);
    Touch(info.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  if (auto record = xtrace::DecodeRecord(bytes); record.ok()) TouchRecord(*record);
  if (auto process = xtrace::DecodeProcessRecord(bytes); process.ok()) {
    if (const auto* start = std::get_if<xtrace::DecodedProcessStart>(&*process)) {
      Touch(start->comm);
      Touch(start->command_line);
    }
  }
  return 0;
}
