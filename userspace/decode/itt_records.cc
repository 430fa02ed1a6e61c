// ITT record decoding: fixed part first, then the inline name whose length BPF set.
#include "decode/itt_records.h"

#include <cstring>
#include <string>

namespace xtrace {
namespace {

template <typename T>
T Load(std::span<const std::byte> data) {
  T value;
  std::memcpy(&value, data.data(), sizeof(T));
  return value;
}

Status TooShort(const char* what, size_t need, size_t have) {
  return Status::Error(std::string(what) + " record too short: need " + std::to_string(need) +
                       " bytes, have " + std::to_string(have));
}

// The name_len bytes after a fixed part of `fixed` bytes, if they fit.
Result<std::string_view> Tail(const char* what, std::span<const std::byte> data, size_t fixed,
                              uint32_t len) {
  if (len > XT_MAX_ITT_NAME || fixed + len > data.size())
    return Status::Error(std::string(what) + " record: name length " + std::to_string(len) +
                         " does not fit the record (" + std::to_string(data.size()) + " bytes)");
  return std::string_view(reinterpret_cast<const char*>(data.data() + fixed), len);
}

}  // namespace

Result<DecodedIttName> DecodeIttName(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_itt_name)) return TooShort("itt-name", sizeof(xt_itt_name), data.size());
  const auto rec = Load<xt_itt_name>(data);
  auto text = Tail("itt-name", data, sizeof(rec), rec.name_len);
  if (!text.ok()) return text.status();
  return DecodedIttName{rec.hdr, rec.handle, rec.kind, *text};
}

Result<DecodedIttEvent> DecodeIttEvent(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_itt_event))
    return TooShort("itt-event", sizeof(xt_itt_event), data.size());
  const auto rec = Load<xt_itt_event>(data);
  auto name = Tail("itt-event", data, sizeof(rec), rec.name_len);
  if (!name.ok()) return name.status();
  return DecodedIttEvent{rec.hdr,   rec.domain, rec.name,   {rec.id[0], rec.id[1]},
                         rec.extra, rec.op,     rec.origin, *name};
}

Result<DecodedIttState> DecodeIttState(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_itt_state))
    return TooShort("itt-state", sizeof(xt_itt_state), data.size());
  const auto rec = Load<xt_itt_state>(data);
  return DecodedIttState{rec.hdr, rec.state, rec.previous};
}

}  // namespace xtrace
