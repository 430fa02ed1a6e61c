// Decodes the process-lifecycle records (exec, fork, exit, library changes: types 96-111 in
// include/xtrace/records.h) the capture loop uses to follow processes. They never become
// events themselves, so they are kept apart from DecodedRecord.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "base/status.h"
#include "xtrace/records.h"

namespace xtrace {

// A process appeared (exec or fork).
struct DecodedProcessStart {
  xt_record_header hdr;  // type XT_REC_PROCESS_EXEC or XT_REC_PROCESS_FORK
  uint32_t parent_pid = 0;
  uint32_t ns_pid = 0;
  uint64_t cgroup_id = 0;
  std::string_view comm;  // points into the decoded buffer
  std::string command_line;  // exec only: arguments joined with spaces; ends in "…" when cut
  bool command_line_truncated = false;  // at XT_MAX_ARGS bytes (base/cut_text.h)
};

struct DecodedProcessExit {
  xt_record_header hdr;
  int32_t exit_code = 0;
};

// The dynamic linker changed the process's list of libraries.
struct DecodedLibrariesChanged {
  xt_record_header hdr;
};

using DecodedProcessRecord =
    std::variant<DecodedProcessStart, DecodedProcessExit, DecodedLibrariesChanged>;

// True for the record types this decoder handles.
bool IsProcessRecordType(uint16_t type);

// Decodes one lifecycle record, checking every size; never reads past `data`.
Result<DecodedProcessRecord> DecodeProcessRecord(std::span<const std::byte> data);

}  // namespace xtrace
