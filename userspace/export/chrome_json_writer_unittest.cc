// Tests for ChromeJsonWriter (userspace/export/chrome_json_writer.cc): output is parsed back
// with nlohmann::json (a strict parser: it rejects invalid UTF-8 and raw control characters)
// and checked field by field.
#include "export/chrome_json_writer.h"

#include <gtest/gtest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::Contains;
using test_util::ReadFileBytes;
using test_util::ScratchDir;

// Runs `emit` against a writer on a scratch file and returns the raw output.
template <typename Emit>
std::string WriteTrace(Emit&& emit, std::span<const TraceArg> other_data = {}) {
  ScratchDir dir;
  const std::string path = dir.File("trace.json");
  auto writer = ChromeJsonWriter::Create(path);
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  emit(**writer);
  const Status st = (*writer)->Finish(other_data);
  EXPECT_TRUE(st.ok()) << st.message();
  const std::string text = ReadFileBytes(path);
  EXPECT_EQ((*writer)->bytes_written(), text.size());
  return text;
}

nlohmann::json Parse(const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "invalid JSON: " << e.what() << "\n" << text.substr(0, 2000);
  }
  return json;
}

// The name of a single complete event whose name is `name`, round-tripped through JSON.
std::string RoundTripName(std::string_view name) {
  const nlohmann::json json =
      Parse(WriteTrace([&](ChromeJsonWriter& w) { w.Complete(name, "cat", 1, 1, 0, 0); }));
  return json["traceEvents"][0]["name"].get<std::string>();
}

TEST(ChromeJsonWriterTest, EmptyTraceIsAValidTraceObject) {
  const nlohmann::json json = Parse(WriteTrace([](ChromeJsonWriter&) {}));
  ASSERT_TRUE(json["traceEvents"].is_array());
  EXPECT_TRUE(json["traceEvents"].empty());
  EXPECT_EQ(json["displayTimeUnit"], "ns");
  EXPECT_TRUE(json["otherData"].is_object());
}

TEST(ChromeJsonWriterTest, CompleteEventWithEveryKindOfArg) {
  const std::array args = {
      TraceArg::Int("negative", -42),
      TraceArg::Uint("big", 4'000'000'000),
      TraceArg::Hex("handle", 0x7f1c'2a40'0010),
      TraceArg::String("text", "hello"),
      TraceArg::Bool("yes", true),
      TraceArg::Bool("no", false),
  };
  const nlohmann::json json = Parse(WriteTrace([&](ChromeJsonWriter& w) {
    w.Complete("gemm", "ze", 4242, 4243, 1'234'567'890, 2'500, args);
  }));
  ASSERT_EQ(json["traceEvents"].size(), 1u);
  const nlohmann::json& e = json["traceEvents"][0];
  EXPECT_EQ(e["ph"], "X");
  EXPECT_EQ(e["name"], "gemm");
  EXPECT_EQ(e["cat"], "ze");
  EXPECT_EQ(e["pid"], 4242);
  EXPECT_EQ(e["tid"], 4243);
  EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1'234'567.890);
  EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.5);
  EXPECT_EQ(e["args"]["negative"], -42);
  EXPECT_EQ(e["args"]["big"], 4'000'000'000u);
  EXPECT_EQ(e["args"]["handle"], "0x7f1c2a400010");
  EXPECT_EQ(e["args"]["text"], "hello");
  EXPECT_EQ(e["args"]["yes"], true);
  EXPECT_EQ(e["args"]["no"], false);
}

TEST(ChromeJsonWriterTest, EventWithoutArgsHasNoArgsMember) {
  const nlohmann::json json =
      Parse(WriteTrace([](ChromeJsonWriter& w) { w.Complete("k", "ze", 1, 2, 3, 4); }));
  EXPECT_FALSE(json["traceEvents"][0].contains("args"));
}

// ts/dur are exact decimals of the integer ns: checked on the raw text, because parsing to a
// double could hide a rounding error in the writer.
TEST(ChromeJsonWriterTest, TimesAreMicrosecondsWithExactNanosecondDecimals) {
  const std::string text = WriteTrace([](ChromeJsonWriter& w) {
    w.Complete("one_ns", "c", 1, 1, 1, 999);
    w.Complete("big", "c", 1, 1, 18'446'744'073'709'551'615u, 1'000);
    w.Complete("zero", "c", 1, 1, 0, 1'000'001);
  });
  EXPECT_TRUE(Contains(text, "\"ts\":0.001,\"dur\":0.999,"));
  EXPECT_TRUE(Contains(text, "\"ts\":18446744073709551.615,\"dur\":1.000,"));
  EXPECT_TRUE(Contains(text, "\"ts\":0.000,\"dur\":1000.001,"));
  const nlohmann::json json = Parse(text);
  EXPECT_DOUBLE_EQ(json["traceEvents"][0]["ts"].get<double>(), 0.001);

  std::string out;
  ChromeJsonWriter::AppendMicros(&out, 1'234'567);
  EXPECT_EQ(out, "1234.567");
}

TEST(ChromeJsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::string name = "say \"hi\" \\ path\\to\n\t\r\b\f";
  for (char c = 1; c < 0x20; ++c) name.push_back(c);
  name.push_back('\0');
  name += "end\x7f";
  EXPECT_EQ(RoundTripName(name), name);

  std::string out;
  ChromeJsonWriter::AppendJsonString(&out, std::string_view("a\"b\\c\x01\x1f\n", 8));
  EXPECT_EQ(out, R"("a\"b\\c\u0001\u001f\n")");
}

TEST(ChromeJsonWriterTest, ValidMultibyteUtf8PassesThroughUnescaped) {
  const std::string name =
      "gr\xC3\xBC\xC3\x9F \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";
  const std::string text =
      WriteTrace([&](ChromeJsonWriter& w) { w.Complete(name, "c", 1, 1, 0, 0); });
  EXPECT_TRUE(Contains(text, "\"name\":\"" + name + "\""));
  EXPECT_EQ(Parse(text)["traceEvents"][0]["name"], name);
}

TEST(ChromeJsonWriterTest, InvalidUtf8IsReplacedSoOutputStaysValid) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  struct Case {
    std::string input;
    std::string expected;
  };
  const Case cases[] = {
      {"a\xFF"
       "b",
       "a" + r + "b"},  // never valid in UTF-8
      {"a\x80"
       "b",
       "a" + r + "b"},     // lone continuation byte
      {"a\xC3", "a" + r},  // sequence cut by the end
      {"a\xC3"
       "b",
       "a" + r + "b"},  // cut by an ASCII byte
      {"\xE6\x97"
       "x",
       r + "x"},                            // 3-byte cut after 2: one U+FFFD
      {"\xC0\xAF", r + r},                  // overlong '/'
      {"\xE0\x80\xAF", r + r + r},          // overlong 3-byte
      {"\xED\xA0\x80", r + r + r},          // UTF-16 surrogate
      {"\xF4\x90\x80\x80", r + r + r + r},  // above U+10FFFF
      {"\xF5\x80", r + r},                  // lead byte beyond Unicode
      {"ok \xF0\x9F\x9A", "ok " + r},       // 4-byte cut after 3
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.input));
    EXPECT_EQ(RoundTripName(c.input), c.expected);
  }
}

// Plain runs are scanned a word at a time: every byte value at every position of a word
// (and of the tail after the last whole word) must still be escaped exactly as bytewise.
TEST(ChromeJsonWriterTest, EscapingIsTheSameWhereverTheByteFallsInAWord) {
  auto bytewise = [](unsigned char c) -> std::string {
    if (c == '"') return "\\\"";
    if (c == '\\') return "\\\\";
    if (c >= 0x20 && c < 0x80) return std::string(1, static_cast<char>(c));
    std::string one;
    ChromeJsonWriter::AppendJsonString(&one, std::string(1, static_cast<char>(c)));
    return one.substr(1, one.size() - 2);  // a lone byte: its escape, or U+FFFD
  };
  for (int c = 0; c < 256; ++c) {
    for (size_t pos = 0; pos < 19; ++pos) {
      std::string text(19, 'a');
      text[pos] = static_cast<char>(c);
      std::string out;
      ChromeJsonWriter::AppendJsonString(&out, text);
      const std::string expected = "\"" + std::string(pos, 'a') + bytewise(static_cast<unsigned char>(c)) +
                                   std::string(18 - pos, 'a') + "\"";
      ASSERT_EQ(out, expected) << "byte " << c << " at " << pos;
    }
  }
}

TEST(ChromeJsonWriterTest, RecurringNameIsEscapedLikeAnyName) {
  const std::string text = WriteTrace([&](ChromeJsonWriter& w) {
    w.Complete(RecurringName{7, "gemm<\"f32\">"}, "ze", 1, 2, 1000, 250);
    w.Complete(RecurringName{7, "gemm<\"f32\">"}, "ze", 1, 2, 1500, 250);
    w.Complete("gemm<\"f32\">", "ze", 1, 2, 1500, 250);
  });
  const auto json = Parse(text);
  ASSERT_EQ(json["traceEvents"].size(), 3u);
  EXPECT_EQ(json["traceEvents"][1], json["traceEvents"][2]);
  EXPECT_EQ(json["traceEvents"][0]["name"], "gemm<\"f32\">");
}

TEST(ChromeJsonWriterTest, KeysAreEscapedToo) {
  const std::array args = {TraceArg::Int("we\"ird\xFFkey", 1)};
  const nlohmann::json json =
      Parse(WriteTrace([&](ChromeJsonWriter& w) { w.Complete("k", "c", 1, 1, 0, 0, args); }));
  EXPECT_EQ(json["traceEvents"][0]["args"]["we\"ird\xEF\xBF\xBDkey"], 1);
}

TEST(ChromeJsonWriterTest, MetadataEvents) {
  const std::array extra = {TraceArg::String("command_line", "python3 train.py")};
  const nlohmann::json json = Parse(WriteTrace([&](ChromeJsonWriter& w) {
    w.ProcessName(100, "python3", extra);
    w.ProcessName(200, "plain");
    w.ThreadName(100, 101, "worker \"1\"");
    w.ProcessSortIndex(100, -5);
  }));
  const nlohmann::json& events = json["traceEvents"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["name"], "process_name");
  EXPECT_EQ(events[0]["pid"], 100);
  EXPECT_EQ(events[0]["args"]["name"], "python3");
  EXPECT_EQ(events[0]["args"]["command_line"], "python3 train.py");
  EXPECT_EQ(events[1]["args"], nlohmann::json({{"name", "plain"}}));
  EXPECT_EQ(events[2]["ph"], "M");
  EXPECT_EQ(events[2]["name"], "thread_name");
  EXPECT_EQ(events[2]["pid"], 100);
  EXPECT_EQ(events[2]["tid"], 101);
  EXPECT_EQ(events[2]["args"]["name"], "worker \"1\"");
  EXPECT_EQ(events[3]["name"], "process_sort_index");
  EXPECT_EQ(events[3]["args"]["sort_index"], -5);
}

TEST(ChromeJsonWriterTest, InstantAndCounterEvents) {
  const std::array series = {TraceArg::Uint("queued", 3), TraceArg::Int("delta", -1)};
  const nlohmann::json json = Parse(WriteTrace([&](ChromeJsonWriter& w) {
    w.Instant("drop", "xtrace", 1, 2, 5'000, ChromeJsonWriter::InstantScope::kThread);
    w.Instant("sync", "xtrace", 1, 2, 6'000, ChromeJsonWriter::InstantScope::kProcess);
    w.Instant("start", "xtrace", 1, 2, 7'000, ChromeJsonWriter::InstantScope::kGlobal);
    w.Counter("commands", 1, 8'001, series);
  }));
  const nlohmann::json& events = json["traceEvents"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["ph"], "i");
  EXPECT_EQ(events[0]["s"], "t");
  EXPECT_EQ(events[0]["name"], "drop");
  EXPECT_DOUBLE_EQ(events[0]["ts"].get<double>(), 5.0);
  EXPECT_EQ(events[1]["s"], "p");
  EXPECT_EQ(events[2]["s"], "g");
  EXPECT_EQ(events[3]["ph"], "C");
  EXPECT_EQ(events[3]["name"], "commands");
  EXPECT_DOUBLE_EQ(events[3]["ts"].get<double>(), 8.001);
  EXPECT_EQ(events[3]["args"]["queued"], 3);
  EXPECT_EQ(events[3]["args"]["delta"], -1);
}

TEST(ChromeJsonWriterTest, FlowEventsShareNameCategoryAndIdAndTheEndBindsToItsSlice) {
  const nlohmann::json json = Parse(WriteTrace([&](ChromeJsonWriter& w) {
    w.Flow(ChromeJsonWriter::FlowPhase::kStart, "zeCommandQueueExecuteCommandLists", "drm", 1, 2,
           5'250, 7);
    w.Flow(ChromeJsonWriter::FlowPhase::kEnd, "zeCommandQueueExecuteCommandLists", "drm", 1,
           0x7fff0000, 5'500, 7);
  }));
  const nlohmann::json& events = json["traceEvents"];
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["ph"], "s");
  EXPECT_EQ(events[0]["tid"], 2);
  EXPECT_DOUBLE_EQ(events[0]["ts"].get<double>(), 5.25);
  EXPECT_FALSE(events[0].contains("bp"));
  EXPECT_EQ(events[1]["ph"], "f");
  EXPECT_EQ(events[1]["tid"], 0x7fff0000);
  EXPECT_EQ(events[1]["bp"], "e");
  for (const auto& e : events) {
    EXPECT_EQ(e["id"], 7);
    EXPECT_EQ(e["cat"], "drm");
    EXPECT_EQ(e["name"], "zeCommandQueueExecuteCommandLists");
    EXPECT_EQ(e["pid"], 1);
  }
}

TEST(ChromeJsonWriterTest, OtherDataComesFromFinish) {
  const std::array other = {TraceArg::String("host", "node-1"), TraceArg::String("dropped", "0")};
  const nlohmann::json json = Parse(WriteTrace([](ChromeJsonWriter&) {}, other));
  EXPECT_EQ(json["otherData"]["host"], "node-1");
  EXPECT_EQ(json["otherData"]["dropped"], "0");
}

// Enough events to cross the flush threshold many times: output stays one valid document
// and nothing is lost or duplicated at chunk boundaries.
TEST(ChromeJsonWriterTest, LargeTraceIsWrittenInChunksAndStaysValid) {
  constexpr int kEvents = 50'000;
  uint64_t events_written = 0;
  const std::string text = WriteTrace([&](ChromeJsonWriter& w) {
    const std::array args = {TraceArg::Hex("kernel", 0xabc), TraceArg::String("s", "\xC3\xBC\"")};
    for (int i = 0; i < kEvents; ++i) {
      w.Complete("kernel_" + std::to_string(i % 10), "ze", 1, 2, static_cast<uint64_t>(i) * 1000,
                 500, args);
    }
    events_written = w.events_written();
  });
  EXPECT_EQ(events_written, static_cast<uint64_t>(kEvents));
  EXPECT_GT(text.size(), 4u * 256 * 1024);
  const nlohmann::json json = Parse(text);
  ASSERT_EQ(json["traceEvents"].size(), static_cast<size_t>(kEvents));
  for (int i = 0; i < kEvents; i += 997) {
    EXPECT_DOUBLE_EQ(json["traceEvents"][i]["ts"].get<double>(), i);
    EXPECT_EQ(json["traceEvents"][i]["args"]["s"], "\xC3\xBC\"");
  }
}

TEST(ChromeJsonWriterTest, WriteErrorIsReportedByFinish) {
  XTRACE_REQUIRE_DEV_FULL();
  auto writer = ChromeJsonWriter::Create("/dev/full");
  ASSERT_TRUE(writer.ok());
  (*writer)->Complete("k", "c", 1, 1, 0, 0);
  const Status st = (*writer)->Finish();
  EXPECT_EQ(st.message(), "writing /dev/full: No space left on device");
}

TEST(ChromeJsonWriterTest, CreateErrorNamesPath) {
  auto writer = ChromeJsonWriter::Create("/nonexistent-dir/trace.json");
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().message(),
            "/nonexistent-dir/trace.json: cannot create: No such file or directory");
}

// The opening PyTorch's analyzers read before the events (docs/kineto-json.md).
TEST(ChromeJsonWriterTest, OpensWithTheDescriptionAndBaseTimeBeforeTheEvents) {
  TraceDescription d;
  d.devices.push_back({0, "GPU \"A\"", 19'200'000, 32});
  d.ranks = {5};
  d.world_size = 8;
  const std::string text = WriteTrace([&](ChromeJsonWriter& w) {
    w.Clocks({.monotonic_ns = 2'000,
              .monotonic_raw_ns = 2'100,
              .realtime_ns = 1'700'000'000'000'002'000});
    w.Describe(d);
    w.Complete("k", "kernel", 1, 2, 3, 4);
  });
  const std::string opening = text.substr(0, text.find("\"traceEvents\""));
  EXPECT_EQ(opening.rfind("{\"schemaVersion\":1,", 0), 0u) << opening;
  // Holistic Trace Analysis's rank pattern needs the space after the colon.
  EXPECT_TRUE(Contains(opening, "\"distributedInfo\":{\"rank\": 5,\"world_size\":8}"))
      << opening;
  EXPECT_TRUE(Contains(opening, "\"baseTimeNanoseconds\":1700000000000000000")) << opening;
  const nlohmann::json json = Parse(text);
  EXPECT_EQ(json["deviceProperties"][0]["name"], "GPU \"A\"");
  EXPECT_EQ(json["deviceProperties"][0]["timer_hz"], 19'200'000);
  EXPECT_EQ(json["traceEvents"].size(), 1u);
}

TEST(ChromeJsonWriterTest, SeveralRanksNameNoOneRankAndALateDescriptionIsDropped) {
  TraceDescription several;
  several.ranks = {0, 1};
  const nlohmann::json json = Parse(WriteTrace([&](ChromeJsonWriter& w) { w.Describe(several); }));
  EXPECT_FALSE(json["distributedInfo"].contains("rank"));
  EXPECT_EQ(json["distributedInfo"]["ranks"], nlohmann::json::array({0, 1}));
  EXPECT_FALSE(json.contains("baseTimeNanoseconds"));  // no clocks given

  const std::string late = WriteTrace([&](ChromeJsonWriter& w) {
    w.Complete("k", "kernel", 1, 2, 3, 4);
    w.Describe(several);
  });
  EXPECT_FALSE(Parse(late).contains("distributedInfo"));
  EXPECT_EQ(Parse(late)["schemaVersion"], 1);
}

}  // namespace
}  // namespace xtrace
