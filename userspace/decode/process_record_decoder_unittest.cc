// Tests for decode/process_record_decoder: lifecycle records from raw bytes, including
// truncated and malformed ones.
#include "decode/process_record_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace xtrace {
namespace {

std::vector<std::byte> Exec(const std::string& args, uint32_t flags = 0) {
  xt_process_event rec{};
  rec.hdr.type = XT_REC_PROCESS_EXEC;
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + args.size());
  rec.hdr.flags = flags;
  rec.hdr.pid = 4242;
  rec.hdr.tid = 4242;
  rec.parent_pid = 1;
  rec.ns_pid = 7;
  rec.cgroup_id = 0x1234;
  std::memcpy(rec.comm, "python3", 8);
  rec.args_len = static_cast<uint32_t>(args.size());
  std::vector<std::byte> bytes(sizeof(rec) + args.size());
  std::memcpy(bytes.data(), &rec, sizeof(rec));
  std::memcpy(bytes.data() + sizeof(rec), args.data(), args.size());
  return bytes;
}

TEST(ProcessRecordDecoder, ExecCarriesIdentityAndCommandLine) {
  const std::string args("python3\0train.py\0--epochs\0" "3\0", 28);
  auto r = DecodeProcessRecord(Exec(args, XT_FLAG_TRUNCATED));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& start = std::get<DecodedProcessStart>(*r);
  EXPECT_EQ(start.hdr.pid, 4242u);
  EXPECT_EQ(start.parent_pid, 1u);
  EXPECT_EQ(start.ns_pid, 7u);
  EXPECT_EQ(start.cgroup_id, 0x1234u);
  EXPECT_EQ(start.comm, "python3");
  // BPF cut it (XT_FLAG_TRUNCATED): the text says so too, wherever it is shown.
  EXPECT_EQ(start.command_line, "python3 train.py --epochs 3\u2026");
  EXPECT_TRUE(start.command_line_truncated);

  auto whole = DecodeProcessRecord(Exec(args));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(std::get<DecodedProcessStart>(*whole).command_line, "python3 train.py --epochs 3");
  EXPECT_FALSE(std::get<DecodedProcessStart>(*whole).command_line_truncated);
}

TEST(ProcessRecordDecoder, ExitAndLibraryChanges) {
  xt_process_exit exit{};
  exit.hdr.type = XT_REC_PROCESS_EXIT;
  exit.hdr.size = sizeof(exit);
  exit.hdr.pid = 99;
  exit.exit_code = 9;
  auto r = DecodeProcessRecord(std::as_bytes(std::span(&exit, 1)));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<DecodedProcessExit>(*r).exit_code, 9);

  xt_record_header maps{};
  maps.type = XT_REC_PROCESS_MAPS;
  maps.size = sizeof(maps);
  maps.pid = 5;
  auto m = DecodeProcessRecord(std::as_bytes(std::span(&maps, 1)));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(std::get<DecodedLibrariesChanged>(*m).hdr.pid, 5u);
  EXPECT_TRUE(IsProcessRecordType(XT_REC_PROCESS_MAPS));
  EXPECT_FALSE(IsProcessRecordType(XT_REC_LAUNCH_KERNEL));
}

TEST(ProcessRecordDecoder, DamageIsAnErrorNeverAnOverread) {
  auto bytes = Exec("abc");
  // Cut anywhere: never read past what was delivered.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto r = DecodeProcessRecord(std::span(bytes).first(cut));
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
  }
  // An argument length that does not fit the record.
  xt_process_event rec{};
  std::memcpy(&rec, bytes.data(), sizeof(rec));
  rec.args_len = 100;
  std::memcpy(bytes.data(), &rec, sizeof(rec));
  auto r = DecodeProcessRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument length 100"), std::string::npos);
  // A record of another family.
  xt_record_header other{};
  other.type = XT_REC_LAUNCH_KERNEL;
  other.size = sizeof(other);
  EXPECT_FALSE(DecodeProcessRecord(std::as_bytes(std::span(&other, 1))).ok());
}

}  // namespace
}  // namespace xtrace
