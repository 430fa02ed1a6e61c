// ChromeJsonWriter: hand-rolled JSON output; see chrome_json_writer.h for why.
#include "export/chrome_json_writer.h"

#include <charconv>
#include <cstring>

#include "export/utf8.h"

namespace xtrace {
namespace {

// Output is written in chunks of about this size: few syscalls, small resident memory.
constexpr size_t kFlushBytes = 256 * 1024;

bool IsPlainJsonByte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// IsPlainJsonByte for all eight bytes of `w` at once (bit tricks on the whole word: a byte
// below 0x20, with its top bit set, or equal to '"' or '\\' sets its top bit in the result).
bool IsPlainJsonWord(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return ((below_space | (w & kHigh) | has_zero_byte(w ^ (kOnes * '"')) |
           has_zero_byte(w ^ (kOnes * '\\'))) == 0);
}

template <typename Out>
void AppendEscapedControl(Out* out, unsigned char c) {
  switch (c) {
    case '\n':
      out->append("\\n");
      return;
    case '\t':
      out->append("\\t");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\b':
      out->append("\\b");
      return;
    case '\f':
      out->append("\\f");
      return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out->append(escaped, sizeof(escaped));
    }
  }
}

}  // namespace

template <typename Out>
void ChromeJsonWriter::AppendJsonString(Out* out, std::string_view text) {
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run that needs no attention in one append: eight bytes at a time
    // while a whole word is plain (kernel names run to a thousand characters), then bytewise.
    size_t run = i;
    while (text.size() - run >= 8) {
      uint64_t word;
      std::memcpy(&word, text.data() + run, 8);
      if (!IsPlainJsonWord(word)) break;
      run += 8;
    }
    while (run < text.size() && IsPlainJsonByte(static_cast<unsigned char>(text[run]))) ++run;
    out->append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;

    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20) {
      AppendEscapedControl(out, c);
      ++i;
    } else {
      size_t invalid_len = 0;
      if (const size_t len = WellFormedUtf8Length(text.substr(i), &invalid_len); len > 0) {
        out->append(text.data() + i, len);
        i += len;
      } else {
        out->append(kReplacementCharacter);
        i += invalid_len;
      }
    }
  }
  out->push_back('"');
}

template <typename Out>
void ChromeJsonWriter::AppendMicros(Out* out, uint64_t ns) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), ns / 1000);
  out->append(digits, end);
  const auto frac = static_cast<unsigned>(ns % 1000);
  const char decimals[] = {'.', static_cast<char>('0' + frac / 100),
                           static_cast<char>('0' + frac / 10 % 10),
                           static_cast<char>('0' + frac % 10)};
  out->append(decimals, sizeof(decimals));
}

template void ChromeJsonWriter::AppendJsonString(std::string*, std::string_view);
template void ChromeJsonWriter::AppendJsonString(ByteBuffer*, std::string_view);
template void ChromeJsonWriter::AppendMicros(std::string*, uint64_t);
template void ChromeJsonWriter::AppendMicros(ByteBuffer*, uint64_t);

ChromeJsonWriter::ChromeJsonWriter(OutputFile out) : out_(std::move(out)) {
  buffer_.reserve(kFlushBytes + 64 * 1024);
}

void ChromeJsonWriter::OpenObject() {
  if (opened_) return;
  opened_ = true;
  buffer_.append("{\"schemaVersion\":1,");
}

void ChromeJsonWriter::Start() {
  if (started_) return;
  started_ = true;
  OpenObject();
  if (clocks_.realtime_ns >= clocks_.monotonic_ns && clocks_.monotonic_ns != 0) {
    buffer_.append("\"baseTimeNanoseconds\":");
    AppendUint(clocks_.realtime_ns - clocks_.monotonic_ns);
    buffer_.push_back(',');
  }
  buffer_.append("\"traceEvents\":[\n");
}

void ChromeJsonWriter::Describe(const TraceDescription& d) {
  if (started_) return;  // too late: the events have begun
  OpenObject();
  buffer_.append("\"deviceProperties\":[");
  for (size_t i = 0; i < d.devices.size(); ++i) {
    const TraceDescription::Device& device = d.devices[i];
    buffer_.append(i ? ",{\"id\":" : "{\"id\":");
    AppendUint(device.id);
    buffer_.append(",\"name\":");
    AppendJsonString(&buffer_, device.name);
    buffer_.append(",\"timer_hz\":");
    AppendUint(device.timer_hz);
    buffer_.append(",\"kernel_timestamp_bits\":");
    AppendUint(device.kernel_timestamp_bits);
    buffer_.push_back('}');
  }
  buffer_.append("],");
  if (d.ranks.empty() && !d.world_size) return;
  // Holistic Trace Analysis finds a file's rank with the pattern "rank":\s+(\d+): the space
  // after the colon is required. A trace of several ranks lists them and names no one rank.
  buffer_.append("\"distributedInfo\":{");
  if (d.ranks.size() == 1) {
    buffer_.append("\"rank\": ");
    AppendInt(d.ranks[0]);
  } else if (!d.ranks.empty()) {
    buffer_.append("\"ranks\":[");
    for (size_t i = 0; i < d.ranks.size(); ++i) {
      if (i) buffer_.push_back(',');
      AppendInt(d.ranks[i]);
    }
    buffer_.push_back(']');
  }
  if (d.world_size) {
    if (!d.ranks.empty()) buffer_.push_back(',');
    buffer_.append("\"world_size\":");
    AppendInt(*d.world_size);
  }
  buffer_.append("},");
}

Result<std::unique_ptr<ChromeJsonWriter>> ChromeJsonWriter::Create(const std::string& path) {
  Result<OutputFile> out = OutputFile::Create(path);
  if (!out.ok()) return out.status();
  return std::make_unique<ChromeJsonWriter>(std::move(*out));
}

ChromeJsonWriter::~ChromeJsonWriter() = default;

void ChromeJsonWriter::AppendUint(uint64_t v) {
  char* room = buffer_.Room(24);  // in place: 20 digits at most
  buffer_.Commit(std::to_chars(room, room + 24, v).ptr);
}

void ChromeJsonWriter::AppendInt(int64_t v) {
  char* room = buffer_.Room(24);
  buffer_.Commit(std::to_chars(room, room + 24, v).ptr);
}

void ChromeJsonWriter::BeginEvent(std::string_view ph, uint32_t pid, uint32_t tid) {
  Start();
  if (events_ > 0) buffer_.append(",\n");
  buffer_.append("{\"ph\":\"");
  buffer_.append(ph);
  buffer_.append("\",\"pid\":");
  AppendUint(pid);
  buffer_.append(",\"tid\":");
  AppendUint(tid);
}

void ChromeJsonWriter::EndEvent() {
  buffer_.push_back('}');
  ++events_;
  if (buffer_.size() >= kFlushBytes) FlushBuffer();
}

void ChromeJsonWriter::AppendArgs(std::span<const TraceArg> args) {
  buffer_.push_back('{');
  AppendArgMembers(args);
  buffer_.push_back('}');
}

void ChromeJsonWriter::AppendArgMembers(std::span<const TraceArg> args) {
  bool first = true;
  for (const TraceArg& arg : args) {
    if (!first) buffer_.push_back(',');
    first = false;
    AppendJsonString(&buffer_, arg.key);
    buffer_.push_back(':');
    switch (arg.kind) {
      case TraceArg::Kind::kInt:
        AppendInt(arg.int_value);
        break;
      case TraceArg::Kind::kUint:
        AppendUint(arg.uint_value);
        break;
      case TraceArg::Kind::kHex: {
        char digits[24];
        auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), arg.uint_value, 16);
        buffer_.append("\"0x");
        buffer_.append(digits, end);
        buffer_.push_back('"');
        break;
      }
      case TraceArg::Kind::kString:
        AppendJsonString(&buffer_, arg.string_value);
        break;
      case TraceArg::Kind::kBool:
        buffer_.append(arg.int_value ? "true" : "false");
        break;
    }
  }
}

// Metadata events carry no time; viewers key process names by pid alone, so no tid either.
void ChromeJsonWriter::ProcessName(uint32_t pid, std::string_view name,
                                   std::span<const TraceArg> args) {
  Start();
  if (events_ > 0) buffer_.append(",\n");
  buffer_.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
  AppendUint(pid);
  buffer_.append(",\"args\":{\"name\":");
  AppendJsonString(&buffer_, name);
  if (!args.empty()) {
    buffer_.push_back(',');
    AppendArgMembers(args);
  }
  buffer_.push_back('}');
  EndEvent();
}

void ChromeJsonWriter::ProcessSortIndex(uint32_t pid, int64_t index) {
  Start();
  if (events_ > 0) buffer_.append(",\n");
  buffer_.append("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
  AppendUint(pid);
  buffer_.append(",\"args\":{\"sort_index\":");
  AppendInt(index);
  buffer_.push_back('}');
  EndEvent();
}

void ChromeJsonWriter::ThreadName(uint32_t pid, uint32_t tid, std::string_view name) {
  BeginEvent("M", pid, tid);
  buffer_.append(",\"name\":\"thread_name\",\"args\":{\"name\":");
  AppendJsonString(&buffer_, name);
  buffer_.push_back('}');
  EndEvent();
}

void ChromeJsonWriter::BeginComplete(std::string_view category, uint32_t pid, uint32_t tid,
                                     uint64_t ts_ns, uint64_t dur_ns) {
  BeginEvent("X", pid, tid);
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_ns);
  buffer_.append(",\"dur\":");
  AppendMicros(&buffer_, dur_ns);
  buffer_.append(",\"cat\":");
  AppendJsonString(&buffer_, category);
  buffer_.append(",\"name\":");
}

void ChromeJsonWriter::EndComplete(std::span<const TraceArg> args) {
  if (!args.empty()) {
    buffer_.append(",\"args\":");
    AppendArgs(args);
  }
  EndEvent();
}

void ChromeJsonWriter::Complete(std::string_view name, std::string_view category, uint32_t pid,
                                uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
                                std::span<const TraceArg> args) {
  BeginComplete(category, pid, tid, ts_ns, dur_ns);
  AppendJsonString(&buffer_, name);
  EndComplete(args);
}

void ChromeJsonWriter::Complete(RecurringName name, std::string_view category, uint32_t pid,
                                uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
                                std::span<const TraceArg> args) {
  std::string& json = recurring_[name.key];
  if (json.empty()) AppendJsonString(&json, name.text);
  BeginComplete(category, pid, tid, ts_ns, dur_ns);
  buffer_.append(json);
  EndComplete(args);
}

void ChromeJsonWriter::AsyncSpan(std::string_view name, std::string_view category, uint32_t pid,
                                 uint32_t tid, uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                                 std::span<const TraceArg> args) {
  for (const bool begin : {true, false}) {
    BeginEvent(begin ? "b" : "e", pid, tid);
    buffer_.append(",\"ts\":");
    AppendMicros(&buffer_, begin ? ts_ns : ts_ns + dur_ns);
    buffer_.append(",\"id\":\"");
    AppendUint(id);
    buffer_.append("\",\"cat\":");
    AppendJsonString(&buffer_, category);
    buffer_.append(",\"name\":");
    AppendJsonString(&buffer_, name);
    if (begin && !args.empty()) {
      buffer_.append(",\"args\":");
      AppendArgs(args);
    }
    EndEvent();
  }
}

void ChromeJsonWriter::Instant(std::string_view name, std::string_view category, uint32_t pid,
                               uint32_t tid, uint64_t ts_ns, InstantScope scope,
                               std::span<const TraceArg> args) {
  BeginEvent("i", pid, tid);
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_ns);
  buffer_.append(scope == InstantScope::kThread    ? ",\"s\":\"t\""
                 : scope == InstantScope::kProcess ? ",\"s\":\"p\""
                                                   : ",\"s\":\"g\"");
  buffer_.append(",\"cat\":");
  AppendJsonString(&buffer_, category);
  buffer_.append(",\"name\":");
  AppendJsonString(&buffer_, name);
  if (!args.empty()) {
    buffer_.append(",\"args\":");
    AppendArgs(args);
  }
  EndEvent();
}

void ChromeJsonWriter::Flow(FlowPhase phase, std::string_view name, std::string_view category,
                            uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id) {
  BeginEvent(phase == FlowPhase::kStart ? "s" : "f", pid, tid);
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_ns);
  buffer_.append(",\"id\":");
  AppendUint(id);
  // "bp":"e": bind to the enclosing slice, not the next one to begin (the format's default
  // for flow ends).
  if (phase == FlowPhase::kEnd) buffer_.append(",\"bp\":\"e\"");
  buffer_.append(",\"cat\":");
  AppendJsonString(&buffer_, category);
  buffer_.append(",\"name\":");
  AppendJsonString(&buffer_, name);
  EndEvent();
}

void ChromeJsonWriter::Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
                               std::span<const TraceArg> series) {
  Start();
  if (events_ > 0) buffer_.append(",\n");
  buffer_.append("{\"ph\":\"C\",\"pid\":");
  AppendUint(pid);
  buffer_.append(",\"ts\":");
  AppendMicros(&buffer_, ts_ns);
  buffer_.append(",\"name\":");
  AppendJsonString(&buffer_, name);
  buffer_.append(",\"args\":");
  AppendArgs(series);
  EndEvent();
}

Status ChromeJsonWriter::Finish(std::span<const TraceArg> other_data) {
  if (finished_) return finish_status_;
  finished_ = true;
  Start();
  buffer_.append("\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
  AppendArgs(other_data);
  buffer_.append("}\n");
  FlushBuffer();
  finish_status_ = out_.Close();
  return finish_status_;
}

void ChromeJsonWriter::FlushBuffer() {
  out_.Write(buffer_);
  buffer_.clear();
}

}  // namespace xtrace
