// Code objects read from the target; see python_frames.h.
#include "python/python_frames.h"

#include <sys/uio.h>
#include <time.h>

#include <cstring>

#include "python/line_table.h"

namespace xtrace {
namespace {

// Longest name or file name read, and largest line table: far above what real code has, a
// bound against reading garbage.
constexpr uint64_t kMaxStringChars = 4096;
constexpr uint64_t kMaxLineTable = 1 << 20;

template <typename T>
T Field(const std::vector<uint8_t>& bytes, uint32_t offset) {
  T value{};
  if (offset + sizeof(T) <= bytes.size()) std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

uint64_t MonotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

PythonFrameResolver::PythonFrameResolver(const PythonInterpreters& interpreters,
                                         ProcessMemory& memory, StringTable& strings,
                                         std::function<uint64_t()> now_ns)
    : interpreters_(interpreters),
      memory_(memory),
      strings_(strings),
      now_ns_(now_ns ? std::move(now_ns) : std::function<uint64_t()>(MonotonicNowNs)) {}

void PythonInterpreters::Set(uint32_t pid, const PythonInterpreter& interpreter) {
  std::lock_guard lock(mu_);
  by_pid_[pid] = interpreter;
}

void PythonInterpreters::Forget(uint32_t pid) {
  std::lock_guard lock(mu_);
  by_pid_.erase(pid);
}

std::optional<PythonInterpreter> PythonInterpreters::Find(uint32_t pid) const {
  std::lock_guard lock(mu_);
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return std::nullopt;
  return it->second;
}

bool ProcessVmMemory::Read(uint32_t pid, uint64_t address, void* out, size_t size) {
  if (size == 0) return true;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(size);
}

// A PEP 393 string: compact ASCII (data after PyASCIIObject) or compact with 1, 2 or 4 bytes
// per character (after PyCompactUnicodeObject). Code objects' names are always compact.
std::optional<std::string> PythonFrameResolver::ReadString(uint32_t pid, const CPythonLayout& l,
                                                           uint64_t address) {
  std::vector<uint8_t> head(l.unicode_compact_data);
  if (!address || !memory_.Read(pid, address, head.data(), head.size())) return std::nullopt;
  const auto length = Field<int64_t>(head, l.unicode_length);
  const auto state = Field<uint32_t>(head, l.unicode_state);
  const uint32_t kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (length < 0 || static_cast<uint64_t>(length) > kMaxStringChars || !compact) return std::nullopt;
  if (ascii) {
    std::string text(static_cast<size_t>(length), '\0');
    if (!memory_.Read(pid, address + l.unicode_ascii_data, text.data(), text.size()))
      return std::nullopt;
    return text;
  }
  if (kind != 1 && kind != 2 && kind != 4) return std::nullopt;
  std::vector<uint8_t> data(static_cast<size_t>(length) * kind);
  if (!memory_.Read(pid, address + l.unicode_compact_data, data.data(), data.size()))
    return std::nullopt;
  std::string text;
  for (size_t i = 0; i < static_cast<size_t>(length); ++i) {
    uint32_t cp = 0;
    std::memcpy(&cp, data.data() + i * kind, kind);
    if (cp > 0x10ffff) return std::nullopt;
    AppendUtf8(text, cp);
  }
  return text;
}

std::optional<PythonFrameResolver::CodeIdentity> PythonFrameResolver::ReadIdentity(
    uint32_t pid, const CPythonLayout& l, uint64_t address) {
  std::vector<uint8_t> head(l.code_header_size);
  if (!address || !memory_.Read(pid, address, head.data(), head.size())) return std::nullopt;
  return CodeIdentity{Field<uint64_t>(head, l.object_type), Field<uint64_t>(head, l.code_filename),
                      Field<uint64_t>(head, l.code_qualname),
                      Field<uint64_t>(head, l.code_linetable),
                      Field<int32_t>(head, l.code_firstlineno)};
}

void PythonFrameResolver::ReadCode(uint32_t pid, const PythonInterpreter& interp,
                                   uint64_t address, uint64_t now, Code& code) {
  code = Code{};
  code.checked_ns = now;
  const CPythonLayout& l = *interp.layout;
  const auto identity = ReadIdentity(pid, l, address);
  if (!identity || identity->type != interp.code_type) return;
  auto file = ReadString(pid, l, identity->filename);
  auto function = ReadString(pid, l, identity->qualname);
  if (!file || !function) return;
  int64_t table_size = 0;
  if (!identity->line_table ||
      !memory_.Read(pid, identity->line_table + l.var_size, &table_size, sizeof(table_size)) ||
      table_size < 0 || static_cast<uint64_t>(table_size) > kMaxLineTable)
    return;
  code.line_table.resize(static_cast<size_t>(table_size));
  if (!memory_.Read(pid, identity->line_table + l.bytes_data, code.line_table.data(),
                    code.line_table.size()))
    return;
  code.identity = *identity;
  code.file = strings_.Intern(*file);
  code.function = strings_.Intern(*function);
  code.valid = true;
}

const PythonFrameResolver::Code& PythonFrameResolver::CodeAt(uint32_t pid,
                                                             const PythonInterpreter& interp,
                                                             uint64_t address,
                                                             uint64_t now) {
  auto& codes = codes_[pid];
  auto [it, added] = codes.try_emplace(address);
  Code& code = it->second;
  if (added) {
    ++stats_.code_objects;
    ReadCode(pid, interp, address, now, code);
    return code;
  }
  if (now - code.checked_ns < kCodeRecheckNs) return code;
  ++stats_.rechecks;
  if (ReadIdentity(pid, *interp.layout, address) == code.identity) {
    code.checked_ns = now;
    return code;
  }
  // Freed and reused for another code object (or gone): what it says now, if anything.
  ++stats_.replaced;
  ReadCode(pid, interp, address, now, code);
  return code;
}

std::optional<std::vector<PythonFrame>> PythonFrameResolver::Resolve(
    uint32_t pid, const std::vector<std::pair<uint64_t, uint64_t>>& frames) {
  const auto interp = interpreters_.Find(pid);
  if (!interp) {
    ++stats_.unresolved;
    return std::nullopt;
  }
  std::vector<PythonFrame> out;
  out.reserve(frames.size());
  const uint64_t now = now_ns_();
  for (const auto& [address, instr] : frames) {
    if (address == 0) continue;  // the interpreter's own entry frame, blanked by BPF
    const Code& code = CodeAt(pid, *interp, address, now);
    if (!code.valid) {
      // Not kept as invalid for good: a read that failed may succeed for a later stack (the
      // code object was not yet resident), and a freed one may be reused for a new object.
      codes_[pid].erase(address);
      ++stats_.unresolved;
      return std::nullopt;
    }
    PythonFrame frame{code.file, code.function, 0};
    const uint64_t first = address + interp->layout->code_adaptive;
    // Before its first instruction a frame's pointer is one code unit before it.
    const uint64_t index = instr >= first ? (instr - first) / 2 : 0;
    const int32_t first_line = code.identity.first_line;
    frame.line = LineOfCodeUnit(code.line_table, first_line, index)
                     .value_or(first_line > 0 ? static_cast<uint32_t>(first_line) : 0);
    out.push_back(frame);
  }
  ++stats_.stacks;
  return out;
}

std::string PythonFramesSummary(const PythonFrameStats& s, uint64_t frames, uint64_t shared) {
  if (!s.stacks && !s.unresolved) return "";
  auto count = [](uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string text = " Python frames: " + count(s.stacks, "stack", "stacks") + " resolved";
  if (s.unresolved)
    text += ", " + std::to_string(s.unresolved) +
            " left without frames (a frame could not be read, or was not a code object when "
            "read)";
  text += "; " + count(s.code_objects, "code object", "code objects") + " read";
  if (s.replaced)
    text += ", " + std::to_string(s.replaced) + " found replaced at their address and read again";
  if (frames)
    text += "; " + count(frames, "frame", "frames") + " in the stacks, " + std::to_string(shared) +
            " of them the same as in their thread's stack before (not written again)";
  return text + ".";
}

void PythonFrameResolver::ForgetProcess(uint32_t pid) { codes_.erase(pid); }

}  // namespace xtrace
