// Tests for decode/itt_records through DecodeRecord: ITT name, event and state records as
// BPF writes them, and truncated or inconsistent ones.
#include "decode/itt_records.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "decode/record_decoder.h"

namespace xtrace {
namespace {

template <typename T>
std::vector<std::byte> Bytes(const T& rec, std::string_view tail = {}) {
  std::vector<std::byte> out(sizeof(T) + tail.size());
  std::memcpy(out.data(), &rec, sizeof(T));
  std::memcpy(out.data() + sizeof(T), tail.data(), tail.size());
  return out;
}

xt_record_header Hdr(uint16_t type, size_t size) {
  xt_record_header h{};
  h.type = type;
  h.size = static_cast<uint16_t>(size);
  h.pid = 41;
  h.tid = 42;
  h.start_ns = h.end_ns = 1000;
  return h;
}

TEST(IttRecords, DecodesAHandleName) {
  const std::string text = "dnnl::primitive::execute";
  xt_itt_name rec{};
  rec.hdr = Hdr(XT_REC_ITT_NAME, sizeof(rec) + text.size());
  rec.handle = 0x5555'1000;
  rec.kind = XT_ITT_NAME_DOMAIN;
  rec.name_len = static_cast<uint32_t>(text.size());
  const auto bytes = Bytes(rec, text);
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& n = std::get<DecodedIttName>(*r);
  EXPECT_EQ(n.hdr.pid, 41u);
  EXPECT_EQ(n.handle, 0x5555'1000u);
  EXPECT_EQ(n.kind, uint32_t{XT_ITT_NAME_DOMAIN});
  EXPECT_EQ(n.text, text);
}

TEST(IttRecords, DecodesAnEventWithAndWithoutAnInlineName) {
  xt_itt_event rec{};
  rec.hdr = Hdr(XT_REC_ITT_EVENT, sizeof(rec));
  rec.domain = 0x10;
  rec.name = 0x20;
  rec.id[0] = 7;
  rec.id[1] = 8;
  rec.extra = 3;
  rec.op = XT_ITT_MARKER;
  rec.origin = XT_ITT_FROM_COLLECTOR;
  auto r = DecodeRecord(Bytes(rec));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& e = std::get<DecodedIttEvent>(*r);
  EXPECT_EQ(e.domain, 0x10u);
  EXPECT_EQ(e.name, 0x20u);
  EXPECT_EQ(e.id[0], 7u);
  EXPECT_EQ(e.id[1], 8u);
  EXPECT_EQ(e.extra, 3u);
  EXPECT_EQ(e.op, XT_ITT_MARKER);
  EXPECT_TRUE(e.inline_name.empty());

  const std::string name = "aten::linear";
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + name.size());
  rec.origin = XT_ITT_FROM_PYTORCH;
  rec.op = XT_ITT_TASK_BEGIN;
  rec.name_len = static_cast<uint32_t>(name.size());
  const auto with_name = Bytes(rec, name);
  auto r2 = DecodeRecord(with_name);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(std::get<DecodedIttEvent>(*r2).inline_name, name);
  EXPECT_EQ(std::get<DecodedIttEvent>(*r2).origin, XT_ITT_FROM_PYTORCH);
}

TEST(IttRecords, DecodesAStateChange) {
  xt_itt_state rec{};
  rec.hdr = Hdr(XT_REC_ITT_STATE, sizeof(rec));
  rec.state = XT_COLLECT_PAUSED;
  rec.previous = XT_COLLECT_ON;
  auto r = DecodeRecord(Bytes(rec));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::get<DecodedIttState>(*r).state, uint32_t{XT_COLLECT_PAUSED});
  EXPECT_EQ(std::get<DecodedIttState>(*r).previous, uint32_t{XT_COLLECT_ON});
}

TEST(IttRecords, RejectsRecordsShorterThanTheirFixedPart) {
  xt_itt_event rec{};
  rec.hdr = Hdr(XT_REC_ITT_EVENT, sizeof(rec) - 8);
  auto bytes = Bytes(rec);
  bytes.resize(sizeof(rec) - 8);
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("itt-event record too short"), std::string::npos)
      << r.status().message();

  xt_itt_state state{};
  state.hdr = Hdr(XT_REC_ITT_STATE, sizeof(xt_record_header));
  auto state_bytes = Bytes(state);
  state_bytes.resize(sizeof(xt_record_header));
  EXPECT_FALSE(DecodeRecord(state_bytes).ok());
}

TEST(IttRecords, RejectsANameLengthBeyondTheRecordOrTheLimit) {
  const std::string text = "tbb";
  xt_itt_name rec{};
  rec.hdr = Hdr(XT_REC_ITT_NAME, sizeof(rec) + text.size());
  rec.kind = XT_ITT_NAME_DOMAIN;
  rec.name_len = 4;  // one more than delivered
  auto r = DecodeRecord(Bytes(rec, text));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not fit"), std::string::npos) << r.status().message();

  xt_itt_event ev{};
  const std::string big(XT_MAX_ITT_NAME + 1, 'x');
  ev.hdr = Hdr(XT_REC_ITT_EVENT, sizeof(ev) + big.size());
  ev.name_len = static_cast<uint32_t>(big.size());
  EXPECT_FALSE(DecodeRecord(Bytes(ev, big)).ok());
}

}  // namespace
}  // namespace xtrace
