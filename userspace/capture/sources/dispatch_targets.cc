// Following the Level Zero loader's dispatch stubs through a process's memory; see
// dispatch_targets.h.
#include "capture/sources/dispatch_targets.h"

#include <sys/uio.h>

#include <array>
#include <cstring>

namespace xtrace {
namespace {

// Instructions followed in one stub before giving up (the longest, trixie's loader's
// zeCommandListAppendMemoryCopyRegion, has 20 to its `je`: it saves five registers and loads
// six stack arguments first).
constexpr int kMaxStubInstructions = 32;

int32_t Le32(std::span<const uint8_t> c, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, c.data() + at, sizeof(v));
  return static_cast<int32_t>(v);
}

std::optional<uint64_t> NonNull(std::optional<uint64_t> v) {
  if (v && *v == 0) return std::nullopt;
  return v;
}

}  // namespace

const MappedSegment* SegmentAt(std::span<const MappedSegment> segments, uint64_t address) {
  for (const MappedSegment& s : segments)
    if (s.executable && address >= s.start && address < s.end) return &s;
  return nullptr;
}

std::optional<uint64_t> FollowDispatchStub(std::span<const uint8_t> c, uint64_t address,
                                           const ReadWord& read, uint64_t* slot) {
  // What each general-purpose register holds (rax 0 ... r15 15), where known, and where it
  // was loaded from.
  std::array<std::optional<uint64_t>, 16> reg{};
  std::array<uint64_t, 16> from{};
  auto found = [&](int r) {
    if (slot) *slot = from[r];
    return NonNull(reg[r]);
  };
  size_t at = 0;
  auto have = [&](size_t n) { return at + n <= c.size(); };
  for (int step = 0; step < kMaxStubInstructions; ++step) {
    if (have(4) && c[at] == 0xf3 && c[at + 1] == 0x0f && c[at + 2] == 0x1e && c[at + 3] == 0xfa) {
      at += 4;  // endbr64
      continue;
    }
    if (have(2) && c[at] == 0xff && c[at + 1] == 0xe0) return found(0);  // jmp *%rax
    // jne: where a newer loader's teardown flag is set; a live process falls through.
    if (have(2) && c[at] == 0x75) {
      at += 2;
      continue;
    }
    if (have(6) && c[at] == 0x0f && c[at + 1] == 0x85) {
      at += 6;
      continue;
    }
    uint8_t rex = 0;
    if (have(1) && (c[at] & 0xf0) == 0x40) rex = c[at++];
    // push and pop (0x50-0x5f, REX.B for r8-r15): a stub with many arguments saves registers
    // around its jump; the dispatch loads do not use them.
    if (have(1) && c[at] >= 0x50 && c[at] <= 0x5f) {
      ++at;
      continue;
    }
    if (!have(2)) return std::nullopt;
    const uint8_t op = c[at], modrm = c[at + 1];
    const int mod = modrm >> 6;
    const int field = (modrm >> 3) & 7;
    const int r = field | ((rex & 4) ? 8 : 0);
    const int rm = (modrm & 7) | ((rex & 1) ? 8 : 0);
    const bool wide = rex & 8;
    if (wide && op == 0x85 && mod == 3 && r == rm) {  // test %reg,%reg; then je
      at += 2;
      if ((have(1) && c[at] == 0x74) || (have(2) && c[at] == 0x0f && c[at + 1] == 0x84))
        return found(r);
      return std::nullopt;
    }
    // mov r/m64,r64 (8b); mov r64,r/m64 (89) between registers; cmpb $imm8,m8 (80 /7).
    if (op != 0x8b && op != 0x89 && op != 0x80) return std::nullopt;
    at += 2;
    if (mod == 3) {
      if (op == 0x80 || !wide) return std::nullopt;
      if (op == 0x8b) {
        reg[r] = reg[rm];
        from[r] = from[rm];
      } else {
        reg[rm] = reg[r];
        from[rm] = from[r];
      }
      continue;
    }
    if ((modrm & 7) == 4) {
      // A SIB byte: only `mov disp(%rsp),%reg`, a stack argument moved into a register (trixie's
      // stubs of functions with more than six parameters), which the dispatch does not use.
      if (op != 0x8b || !have(1) || c[at] != 0x24 || mod == 0) return std::nullopt;
      at += 1 + (mod == 1 ? 1 : 4);
      if (at > c.size()) return std::nullopt;
      reg[r].reset();
      continue;
    }
    if (op == 0x89) return std::nullopt;        // a store: not a stub
    uint64_t where = 0;
    if (mod == 0 && (modrm & 7) == 5) {  // RIP-relative: from the end of the instruction
      if (!have(4)) return std::nullopt;
      const int32_t disp = Le32(c, at);
      at += 4;
      where = address + at + (op == 0x80 ? 1 : 0) + static_cast<int64_t>(disp);
    } else {
      int64_t disp = 0;
      if (mod == 1) {
        if (!have(1)) return std::nullopt;
        disp = static_cast<int8_t>(c[at]);
        at += 1;
      } else if (mod == 2) {
        if (!have(4)) return std::nullopt;
        disp = Le32(c, at);
        at += 4;
      }
      if (!reg[rm]) return std::nullopt;
      where = *reg[rm] + static_cast<uint64_t>(disp);
    }
    if (op == 0x80) {  // the teardown test: compared, not loaded
      if (field != 7 || !have(1)) return std::nullopt;
      at += 1;
      continue;
    }
    if (!wide) return std::nullopt;
    reg[r] = read(where);
    from[r] = where;
    if (!reg[r]) return std::nullopt;
  }
  return std::nullopt;
}

ReadWord ProcessMemoryReader(uint32_t pid) {
  return [pid](uint64_t address) -> std::optional<uint64_t> {
    uint64_t word = 0;
    iovec local{&word, sizeof(word)};
    iovec remote{reinterpret_cast<void*>(address), sizeof(word)};
    if (process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) !=
        static_cast<ssize_t>(sizeof(word)))
      return std::nullopt;
    return word;
  };
}

}  // namespace xtrace
