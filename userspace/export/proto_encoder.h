// ProtoEncoder: appends protocol-buffer wire format to a string — varints, fixed64 and
// length-delimited fields, nested messages — which is all the Perfetto writer needs, with no
// generated code and no allocation per field. Nested lengths are written in their shortest
// form (a byte is reserved and the body moved the rare time it needs more).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "export/byte_buffer.h"
#include "export/utf8.h"

namespace xtrace {

class ProtoEncoder {
 public:
  // Wire types (the low three bits of a field's tag).
  static constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2;

  explicit ProtoEncoder(ByteBuffer* out) : out_(out) {}

  void Varint(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    AppendVarint(v);
  }
  // int64 and int32 fields: negative values take ten bytes, as the format says.
  void Int(uint32_t field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t v) {
    Tag(field, kFixed64);
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));  // little-endian
    out_->append(bytes, 8);
  }
  void Double(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    Fixed64(field, bits);
  }
  // bytes, or an already encoded message.
  void Bytes(uint32_t field, std::string_view v) {
    Tag(field, kLengthDelimited);
    AppendVarint(v.size());
    out_->append(v);
  }
  // A string field: protobuf strings must be UTF-8 (Perfetto drops or garbles others), so
  // ill-formed bytes become U+FFFD (export/utf8.h).
  void Text(uint32_t field, std::string_view v) {
    if (IsValidUtf8(v)) return Bytes(field, v);
    std::string valid;
    AppendValidUtf8(&valid, v);
    Bytes(field, valid);
  }

  // A nested message: fields written between BeginMessage and EndMessage(token) form its body.
  size_t BeginMessage(uint32_t field) {
    Tag(field, kLengthDelimited);
    out_->push_back(0);
    return out_->size();
  }
  void EndMessage(size_t token) {
    const size_t len = out_->size() - token;
    if (len < 0x80) {
      (*out_)[token - 1] = static_cast<char>(len);
      return;
    }
    char varint[10];
    const size_t n = EncodeVarint(len, varint);
    out_->insert(token, n - 1, '\0');
    std::memcpy(out_->data() + token - 1, varint, n);
  }

  void AppendVarint(uint64_t v) {
    char* p = out_->Room(10);  // a varint's longest
    out_->Commit(p + EncodeVarint(v, p));
  }
  static size_t EncodeVarint(uint64_t v, char* buf) {
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    return n;
  }

 private:
  void Tag(uint32_t field, uint32_t wire_type) { AppendVarint((uint64_t{field} << 3) | wire_type); }

  ByteBuffer* out_;
};

}  // namespace xtrace
