// Hostile names end to end: kernel names, ITT strings, thread and process names and command
// lines with quotes, backslashes, control characters, NUL bytes, invalid UTF-8 and 64 KiB
// lengths go through the log and `xtrace convert` to Chrome JSON and to Perfetto protobuf;
// the JSON must parse (strictly, UTF-8 included), the protobuf must read back with every
// string valid UTF-8, every name must arrive with its bytes intact or — only where the bytes
// are not UTF-8 — with U+FFFD in their place, and names and command lines the probes cut
// must be marked as cut (a trailing "…" and a name_truncated argument).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export/converter.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "perfetto_trace_reader.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using test_util::ScratchDir;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Hostile {
  std::string bytes;     // as the target program had it
  std::string expected;  // as a JSON reader must see it
};

std::string AllControlCharacters() {
  std::string s = "ctl:";
  for (int c = 1; c < 0x20; ++c) s.push_back(static_cast<char>(c));
  s.push_back('\x7f');
  return s;
}

std::vector<Hostile> HostileNames() {
  std::vector<Hostile> names = {
      {R"(quote"back\slash\"both\\)", R"(quote"back\slash\"both\\)"},
      {AllControlCharacters(), AllControlCharacters()},
      {std::string("nul\0inside", 10), std::string("nul\0inside", 10)},
      {"utf8:\xCF\x80\xF0\x9F\x98\x80", "utf8:\xCF\x80\xF0\x9F\x98\x80"},  // π, 😀: kept as they are
      {"lone:\xFF!", "lone:" + std::string(kReplacement) + "!"},
      {"cut:\xE2\x82", "cut:" + std::string(kReplacement)},
      {"</script><b>\u2028\u2029", "</script><b>\u2028\u2029"},
  };
  // 64 KiB of everything at once: quotes, backslashes, control bytes and text.
  std::string big;
  while (big.size() < 65536) big += R"(a"b\c)" + std::string("\x01\x1f\t\n", 4);
  big.resize(65536);
  names.push_back({big, big});
  return names;
}

// Every string in `j` (keys and values), recursively.
void CollectStrings(const nlohmann::json& j, std::vector<std::string>* out) {
  if (j.is_string()) out->push_back(j.get<std::string>());
  for (auto it = j.begin(); j.is_structured() && it != j.end(); ++it) {
    if (j.is_object()) out->push_back(it.key());
    CollectStrings(*it, out);
  }
}

bool AnyContains(const std::vector<std::string>& strings, const std::string& needle) {
  for (const auto& s : strings)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

// Each name is among `all` (with U+FFFD for bytes that are not UTF-8), and the first in
// every field that carries a name, not just one of them: as a process, a thread, a kernel
// (its creation and its launch), an ITT task, a marker and a category.
void ExpectEveryNameIntact(const std::vector<std::string>& all, const std::vector<Hostile>& names) {
  for (const Hostile& n : names) {
    EXPECT_TRUE(AnyContains(all, n.expected))
        << "a name of " << n.bytes.size() << " bytes starting \"" << n.bytes.substr(0, 16)
        << "\" is missing or altered";
  }
  size_t exact = 0;
  for (const auto& s : all) exact += s == names[0].expected;
  EXPECT_GE(exact, 6u);
}

// The names as the probes cut them: a kernel name at XT_MAX_NAME bytes, an ITT name at
// XT_MAX_ITT_NAME - 1 and a command line at XT_MAX_ARGS, each ending in "…" where the
// collector marks it (base/cut_text.h) and flagged where the log has a flag for it.
const std::string kCutKernelName(XT_MAX_NAME, 'k');
const std::string kCutIttName = std::string(XT_MAX_ITT_NAME - 1, 'i') + "\u2026";
const std::string kCutCommandLine = std::string(XT_MAX_ARGS, 'c') + "\u2026";
constexpr uint32_t kCutPid = 5000;

// A log with every hostile name in every field that carries a name, and the cut ones.
void WriteHostileLog(const std::string& path, const std::vector<Hostile>& names) {
  LogHeader header = test_util::SampleHeader();
  header.command_line = "xtrace record -- " + names[0].bytes + " " + names[4].bytes;
  auto writer = LogWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  StringTable& strings = (*writer)->strings();

  uint32_t pid = 1000;
  for (const Hostile& n : names) {
    const StringId id = strings.Intern(n.bytes);
    const uint64_t t = 1'000'000'000ull + pid * 1000;
    (*writer)->Append(ProcessInfo{.pid = pid, .ns_pid = pid, .comm = id, .command_line = id,
                                  .cgroup = id});
    (*writer)->Append(ThreadInfo{.pid = pid, .tid = pid + 1, .name = id});
    KernelCreate create{.pid = pid, .tid = pid, .start_ns = t, .end_ns = t + 10,
                        .kernel = 0x1000 + pid, .name = id};
    (*writer)->Append(create);
    KernelLaunch launch{};
    launch.pid = launch.tid = pid;
    launch.start_ns = t + 20;
    launch.end_ns = t + 30;
    launch.kernel = create.kernel;
    launch.kernel_name = id;
    launch.name_known = true;
    (*writer)->Append(launch);
    (*writer)->Append(IttTask{.pid = pid, .tid = pid, .end_tid = pid, .start_ns = t + 40,
                              .end_ns = t + 50, .domain = id, .name = id});
    (*writer)->Append(IttMarker{.pid = pid, .tid = pid, .ts_ns = t + 60, .domain = id, .name = id});
    ++pid;
  }
  const uint32_t cut = kCutPid;
  (*writer)->Append(ProcessInfo{.pid = cut, .ns_pid = cut, .comm = strings.Intern("cut"),
                                .command_line = strings.Intern(kCutCommandLine)});
  (*writer)->Append(KernelCreate{.pid = cut, .tid = cut, .start_ns = 2'000'000'000,
                                 .end_ns = 2'000'000'010, .kernel = 0x9000,
                                 .name = strings.Intern(kCutKernelName), .name_truncated = true});
  const StringId domain = strings.Intern("dom");
  (*writer)->Append(IttTask{.pid = cut, .tid = cut, .end_tid = cut, .start_ns = 2'000'000'100,
                            .end_ns = 2'000'000'200, .domain = domain,
                            .name = strings.Intern(kCutIttName), .name_truncated = true});
  (*writer)->Append(IttMarker{.pid = cut, .tid = cut, .ts_ns = 2'000'000'300, .domain = domain,
                              .name = strings.Intern(kCutIttName), .name_truncated = true});
  ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
}

TEST(HostileNamesTest, ConvertWritesValidJsonAndEveryNameIntact) {
  ScratchDir dir;
  const std::vector<Hostile> names = HostileNames();
  WriteHostileLog(dir.File("hostile.capnp"), names);
  ASSERT_FALSE(HasFatalFailure());

  ConvertStats stats;
  const Status st =
      ConvertLogToChromeJson(dir.File("hostile.capnp"), dir.File("hostile.json"), {}, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  nlohmann::json trace;
  ASSERT_NO_THROW(trace = nlohmann::json::parse(test_util::ReadFileBytes(dir.File("hostile.json"))))
      << "the converter wrote invalid JSON";

  std::vector<std::string> all;
  CollectStrings(trace, &all);
  ExpectEveryNameIntact(all, names);
  EXPECT_TRUE(AnyContains(all, names[0].bytes)) << "header command line";

  bool kernel_cut_marked = false;
  int itt_cut_marked = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.contains("args")) continue;
    const bool marked = e["args"].value("name_truncated", false);
    if (e.value("name", "") == kCutIttName) {
      itt_cut_marked += marked;
      continue;
    }
    if (e.value("name", "") != "zeKernelCreate") {
      EXPECT_FALSE(marked) << "an uncut name marked as cut: " << e.dump().substr(0, 200);
      continue;
    }
    if (e["args"].value("kernel_name", "") != kCutKernelName) {
      EXPECT_FALSE(marked) << "an uncut name marked as cut";
      continue;
    }
    kernel_cut_marked = marked;
  }
  EXPECT_TRUE(kernel_cut_marked) << "the kernel name cut at XT_MAX_NAME is not marked as cut";
  EXPECT_EQ(itt_cut_marked, 2) << "the ITT task and marker whose name was cut are not marked";
  EXPECT_TRUE(AnyContains(all, kCutCommandLine)) << "the cut command line lost its mark";
}

// Every string of the Perfetto trace a consumer reads (names, categories, arguments,
// command lines, labels).
std::vector<std::string> PerfettoStrings(const test_util::PerfettoTraceReader& trace) {
  std::vector<std::string> all;
  for (const auto& [uuid, t] : trace.tracks) {
    all.push_back(t.name);
    all.insert(all.end(), t.cmdline.begin(), t.cmdline.end());
    all.insert(all.end(), t.labels.begin(), t.labels.end());
  }
  for (const auto& e : trace.events) {
    all.push_back(e.name);
    all.insert(all.end(), e.categories.begin(), e.categories.end());
    for (const auto& [key, value] : e.args) {
      all.push_back(key);
      all.push_back(value);
    }
  }
  return all;
}

// UTF-8 validity as an independent reader judges it: nlohmann::json refuses to serialize a
// string that is not UTF-8.
bool IsUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

TEST(HostileNamesTest, PerfettoOutputReadsBackWithValidUtf8AndEveryNameIntact) {
  ScratchDir dir;
  const std::vector<Hostile> names = HostileNames();
  WriteHostileLog(dir.File("hostile.capnp"), names);
  ASSERT_FALSE(HasFatalFailure());
  ConvertOptions options;
  options.format = TraceFormat::kPerfetto;
  ConvertStats stats;
  const Status st = ConvertLog(dir.File("hostile.capnp"), dir.File("hostile.pftrace"), options, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  const std::string bytes = test_util::ReadFileBytes(dir.File("hostile.pftrace"));
  const test_util::PerfettoTraceReader trace(bytes);
  EXPECT_TRUE(trace.errors.empty()) << trace.errors.size() << " errors, first: " << trace.errors[0];

  const std::vector<std::string> all = PerfettoStrings(trace);
  size_t invalid = 0;
  for (const auto& s : all) invalid += !IsUtf8(s);
  EXPECT_EQ(invalid, 0u) << "strings in the protobuf that are not UTF-8";
  ExpectEveryNameIntact(all, names);

  int itt_cut_marked = 0;
  for (const auto& e : trace.events) {
    auto it = e.args.find("name_truncated");
    if (e.name == kCutIttName) itt_cut_marked += it != e.args.end() && it->second == "true";
    else if (it != e.args.end() && e.args.count("kernel_name") == 0)
      ADD_FAILURE() << "an uncut name marked as cut: " << e.name.substr(0, 40);
  }
  EXPECT_EQ(itt_cut_marked, 2) << "the ITT task and marker whose name was cut are not marked";
  EXPECT_TRUE(AnyContains(all, kCutCommandLine)) << "the cut command line lost its mark";
}

}  // namespace
}  // namespace xtrace
