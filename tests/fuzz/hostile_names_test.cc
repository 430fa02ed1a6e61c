// Hostile names end to end: kernel names, ITT strings, thread and process names and command
// lines with quotes, backslashes, control characters, NUL bytes, invalid UTF-8 and 64 KiB
// lengths go through the log and `xtrace convert`; the JSON must parse (strictly, UTF-8
// included), every name must arrive with its bytes intact or — only where the bytes are not
// UTF-8 — with U+FFFD in their place, and a kernel name BPF cut must be marked as cut.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export/converter.h"
#include "log/log_writer.h"
#include "log_test_util.h"
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

TEST(HostileNamesTest, ConvertWritesValidJsonAndEveryNameIntact) {
  ScratchDir dir;
  const std::vector<Hostile> names = HostileNames();
  LogHeader header = test_util::SampleHeader();
  header.command_line = "xtrace record -- " + names[0].bytes + " " + names[4].bytes;
  auto writer = LogWriter::Create(dir.File("hostile.capnp"), header);
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
  // A kernel name as BPF cuts it: XT_MAX_NAME bytes, flagged.
  const std::string cut_name(XT_MAX_NAME, 'k');
  (*writer)->Append(KernelCreate{.pid = pid, .tid = pid, .start_ns = 2'000'000'000,
                                 .end_ns = 2'000'000'010, .kernel = 0x9000,
                                 .name = strings.Intern(cut_name), .name_truncated = true});
  ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  writer->reset();

  ConvertStats stats;
  const Status st =
      ConvertLogToChromeJson(dir.File("hostile.capnp"), dir.File("hostile.json"), {}, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  nlohmann::json trace;
  ASSERT_NO_THROW(trace = nlohmann::json::parse(test_util::ReadFileBytes(dir.File("hostile.json"))))
      << "the converter wrote invalid JSON";

  std::vector<std::string> all;
  CollectStrings(trace, &all);
  for (const Hostile& n : names) {
    EXPECT_TRUE(AnyContains(all, n.expected))
        << "a name of " << n.bytes.size() << " bytes starting \"" << n.bytes.substr(0, 16)
        << "\" is missing or altered";
  }
  // Every field that carries a name, not just one of them: the name appears as a process,
  // a thread, a kernel (its creation and its launch), an ITT task, a marker and a domain.
  size_t exact = 0;
  for (const auto& s : all) exact += s == names[0].expected;
  EXPECT_GE(exact, 6u);
  EXPECT_TRUE(AnyContains(all, names[0].bytes)) << "header command line";

  bool cut_marked = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "zeKernelCreate" || !e.contains("args")) continue;
    if (e["args"].value("kernel_name", "") != cut_name) {
      EXPECT_FALSE(e["args"].contains("name_truncated")) << "an uncut name marked as cut";
      continue;
    }
    cut_marked = e["args"].value("name_truncated", false);
  }
  EXPECT_TRUE(cut_marked) << "the kernel name cut at XT_MAX_NAME is not marked as cut";
}

}  // namespace
}  // namespace xtrace
