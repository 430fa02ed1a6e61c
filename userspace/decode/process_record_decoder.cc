// Process-lifecycle record decoding: size checks before every read.
#include "decode/process_record_decoder.h"

#include <cstring>

#include "base/cut_text.h"

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

// argv as the kernel lays it out (each argument NUL-terminated), joined with spaces.
std::string JoinArguments(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string joined(raw);
  for (char& c : joined)
    if (c == '\0') c = ' ';
  return joined;
}

Result<DecodedProcessRecord> DecodeStart(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_process_event))
    return TooShort("process-start", sizeof(xt_process_event), data.size());
  const auto rec = Load<xt_process_event>(data);
  if (rec.args_len > XT_MAX_ARGS || sizeof(rec) + rec.args_len > data.size())
    return Status::Error("process-start record: argument length " + std::to_string(rec.args_len) +
                         " does not fit the record (" + std::to_string(data.size()) + " bytes)");
  DecodedProcessStart out;
  out.hdr = rec.hdr;
  out.parent_pid = rec.parent_pid;
  out.ns_pid = rec.ns_pid;
  out.cgroup_id = rec.cgroup_id;
  const char* comm = reinterpret_cast<const char*>(data.data() + offsetof(xt_process_event, comm));
  out.comm = std::string_view(comm, strnlen(comm, XT_COMM_LEN));
  const char* args = reinterpret_cast<const char*>(data.data() + sizeof(rec));
  out.command_line = JoinArguments(std::string_view(args, rec.args_len));
  out.command_line_truncated = (rec.hdr.flags & XT_FLAG_TRUNCATED) != 0;
  if (out.command_line_truncated) out.command_line = MarkCut(out.command_line);
  return DecodedProcessRecord(std::move(out));
}

}  // namespace

bool IsProcessRecordType(uint16_t type) {
  return type == XT_REC_PROCESS_EXEC || type == XT_REC_PROCESS_FORK ||
         type == XT_REC_PROCESS_EXIT || type == XT_REC_PROCESS_MAPS;
}

Result<DecodedProcessRecord> DecodeProcessRecord(std::span<const std::byte> data) {
  if (data.size() < sizeof(xt_record_header))
    return TooShort("a", sizeof(xt_record_header), data.size());
  const auto hdr = Load<xt_record_header>(data);
  if (hdr.size < sizeof(xt_record_header) || hdr.size > data.size())
    return Status::Error("record of type " + std::to_string(hdr.type) + " says it has " +
                         std::to_string(hdr.size) + " bytes but " + std::to_string(data.size()) +
                         " were delivered");
  const auto body = data.first(hdr.size);
  switch (hdr.type) {
    case XT_REC_PROCESS_EXEC:
    case XT_REC_PROCESS_FORK:
      return DecodeStart(body);
    case XT_REC_PROCESS_EXIT: {
      if (body.size() < sizeof(xt_process_exit))
        return TooShort("process-exit", sizeof(xt_process_exit), body.size());
      const auto rec = Load<xt_process_exit>(body);
      return DecodedProcessRecord(DecodedProcessExit{rec.hdr, rec.exit_code});
    }
    case XT_REC_PROCESS_MAPS:
      return DecodedProcessRecord(DecodedLibrariesChanged{hdr});
  }
  return Status::Error("record type " + std::to_string(hdr.type) + " is not a process record");
}

}  // namespace xtrace
