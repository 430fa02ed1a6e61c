// The per-version tables and the interpreter's own offsets; see cpython_layout.h.
#include "python/cpython_layout.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace xtrace {
namespace {

// CPython 3.11 (checked against Debian's 3.11.2 headers with offsetof; the unit test
// python_process_unittest.cc walks a live python3.11 with it).
constexpr CPythonLayout kCPython311 = [] {
  CPythonLayout l;
  l.major = 3;
  l.minor = 11;
  l.runtime_interp_head = 40;
  l.runtime_interp_main = 48;
  l.interp_threads_head = 16;
  l.interp_runtime = 40;
  l.tstate_next = 8;
  l.tstate_interp = 16;
  l.tstate_frame = 56;  // cframe
  l.cframe_frame = 8;   // _PyCFrame.current_frame
  l.tstate_thread_id = 152;
  l.tstate_native_thread_id = 160;
  l.tstate_datastack_chunk = 296;
  l.frame_code = 32;
  l.frame_previous = 48;
  l.frame_instr = 56;  // prev_instr
  l.code_firstlineno = 72;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_adaptive = 184;
  l.code_header_size = 184;
  return l;
}();

// CPython 3.12 (its headers: PyThreadState lost use_tracing and gained the recursion counters
// before cframe, the interpreter gained monitoring versions before its threads, the frame
// gained return_offset and entry frames owned by the C stack, the code object gained the
// monitoring fields before co_code_adaptive, PEP 393 strings lost wstr). Debian has no 3.12:
// this table has been checked against the headers, not against a running binary; the checks
// at attach (python_process.cc) stand between it and a wrong frame.
constexpr CPythonLayout kCPython312 = [] {
  CPythonLayout l;
  l.major = 3;
  l.minor = 12;
  l.runtime_interp_head = 40;
  l.runtime_interp_main = 48;
  l.interp_threads_head = 72;
  l.interp_runtime = 96;
  l.tstate_next = 8;
  l.tstate_interp = 16;
  l.tstate_frame = 56;  // cframe
  l.cframe_frame = 0;   // _PyCFrame.current_frame
  l.tstate_thread_id = 136;
  l.tstate_native_thread_id = 144;
  l.tstate_datastack_chunk = 232;
  l.frame_code = 0;
  l.frame_previous = 8;
  l.frame_instr = 56;  // prev_instr
  l.frame_owner = 70;
  l.code_firstlineno = 68;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_adaptive = 192;
  l.code_header_size = 192;
  l.unicode_ascii_data = 40;
  l.unicode_compact_data = 56;
  return l;
}();

// Offsets past this are not believed of any structure xtrace reads: a bound against garbage.
constexpr uint64_t kMaxOffset = 1 << 20;

std::string HexText(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

uint64_t U64At(std::span<const uint8_t> bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

// 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h of 3.13): after the cookie,
// version and free_threaded, one group per structure, each a size then its fields' offsets,
// every one a uint64_t. The byte offsets here are of the fields xtrace uses.
namespace debug313 {
constexpr size_t kRuntimeSize = 24, kRuntimeInterpretersHead = 40;
constexpr size_t kInterpSize = 48, kInterpId = 56, kInterpNext = 64, kInterpThreadsHead = 72;
constexpr size_t kThreadSize = 152, kThreadNext = 168, kThreadInterp = 176,
                 kThreadCurrentFrame = 184, kThreadId = 192, kThreadNativeId = 200,
                 kThreadDatastackChunk = 208;
constexpr size_t kFrameSize = 224, kFramePrevious = 232, kFrameExecutable = 240,
                 kFrameInstrPtr = 248, kFrameOwner = 264;
constexpr size_t kCodeSize = 272, kCodeFilename = 280, kCodeName = 288, kCodeQualname = 296,
                 kCodeLinetable = 304, kCodeFirstlineno = 312, kCodeAdaptive = 344;
constexpr size_t kObjectSize = 352, kObjectType = 360;
constexpr size_t kBytesSize = 512, kBytesObSize = 520, kBytesSval = 528;
constexpr size_t kUnicodeSize = 536, kUnicodeState = 544, kUnicodeLength = 552,
                 kUnicodeAsciiSize = 560;
}  // namespace debug313

}  // namespace

const CPythonLayout* CPythonLayoutFor(uint32_t major, uint32_t minor) {
  if (major == 3 && minor == 11) return &kCPython311;
  if (major == 3 && minor == 12) return &kCPython312;
  return nullptr;
}

std::string ReadableVersionsText() { return "3.11 to 3.13"; }

bool HasDebugOffsets(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof(kDebugOffsetsCookie) &&
         std::memcmp(bytes.data(), kDebugOffsetsCookie, sizeof(kDebugOffsetsCookie)) == 0;
}

Result<CPythonLayout> CPythonLayoutFromDebugOffsets(std::span<const uint8_t> bytes,
                                                     uint64_t hex_version) {
  if (!HasDebugOffsets(bytes) || bytes.size() < kDebugOffsetsHeadSize)
    return Status::Error("_PyRuntime does not begin with _Py_DebugOffsets");
  const uint64_t version = U64At(bytes, 8);
  const uint32_t major = (hex_version >> 24) & 0xff, minor = (hex_version >> 16) & 0xff;
  if (version != hex_version)
    return Status::Error("its _Py_DebugOffsets are of another version (" + HexText(version) +
                         ") than the binary (" + HexText(hex_version) + ")");
  if (U64At(bytes, 16) != 0) return Status::Error("a free-threaded build of CPython");
  if (major != 3 || minor != 13)
    return Status::Error("CPython " + VersionText(major, minor) + " (xtrace reads the frames of CPython " +
                         ReadableVersionsText() + ")");
  if (bytes.size() < kDebugOffsets313Size)
    return Status::Error("its _Py_DebugOffsets are cut short");
  using namespace debug313;
  // Each field's offset must lie inside its structure as the table gives its size.
  std::string bad;
  auto field = [&](size_t at, size_t size_at, uint32_t width) -> uint32_t {
    const uint64_t offset = U64At(bytes, at), size = U64At(bytes, size_at);
    if (size > kMaxOffset || offset + width > size) {
      if (bad.empty()) bad = "field at byte " + std::to_string(at) + " of _Py_DebugOffsets";
      return 0;
    }
    return static_cast<uint32_t>(offset);
  };
  CPythonLayout l;
  l.major = major;
  l.minor = minor;
  l.source = "debug offsets";
  l.runtime_size = U64At(bytes, kRuntimeSize);
  l.runtime_interp_head = field(kRuntimeInterpretersHead, kRuntimeSize, 16);
  // interpreters.main follows interpreters.head (a pointer after it); the table does not
  // give it, the checks at attach prove it: the main interpreter is the list's last, id 0.
  l.runtime_interp_main = l.runtime_interp_head + 8;
  l.interp_threads_head = field(kInterpThreadsHead, kInterpSize, 8);
  l.interp_next = field(kInterpNext, kInterpSize, 8);
  l.interp_id = field(kInterpId, kInterpSize, 8);
  l.tstate_next = field(kThreadNext, kThreadSize, 8);
  l.tstate_interp = field(kThreadInterp, kThreadSize, 8);
  l.tstate_frame = field(kThreadCurrentFrame, kThreadSize, 8);  // the frame itself
  l.cframe_frame = XT_PY_NO_OFFSET;
  l.tstate_thread_id = field(kThreadId, kThreadSize, 8);
  l.tstate_native_thread_id = field(kThreadNativeId, kThreadSize, 8);
  l.tstate_datastack_chunk = field(kThreadDatastackChunk, kThreadSize, 8);
  l.frame_code = field(kFrameExecutable, kFrameSize, 8);
  l.frame_previous = field(kFramePrevious, kFrameSize, 8);
  l.frame_instr = field(kFrameInstrPtr, kFrameSize, 8);
  l.frame_owner = field(kFrameOwner, kFrameSize, 1);
  l.code_firstlineno = field(kCodeFirstlineno, kCodeSize, 4);
  l.code_filename = field(kCodeFilename, kCodeSize, 8);
  l.code_name = field(kCodeName, kCodeSize, 8);
  l.code_qualname = field(kCodeQualname, kCodeSize, 8);
  l.code_linetable = field(kCodeLinetable, kCodeSize, 8);
  l.code_adaptive = field(kCodeAdaptive, kCodeSize, 2);
  l.code_header_size = l.code_adaptive;
  l.object_type = field(kObjectType, kObjectSize, 8);
  l.var_size = field(kBytesObSize, kBytesSize, 8);
  l.bytes_data = field(kBytesSval, kBytesSize, 1);
  l.unicode_length = field(kUnicodeLength, kUnicodeSize, 8);
  l.unicode_state = field(kUnicodeState, kUnicodeSize, 4);
  l.unicode_ascii_data = static_cast<uint32_t>(U64At(bytes, kUnicodeAsciiSize));
  // PyCompactUnicodeObject is PyASCIIObject then utf8_length and utf8 (3.12 on).
  l.unicode_compact_data = l.unicode_ascii_data + 16;
  if (l.unicode_ascii_data > kMaxOffset) bad = "sizeof(PyASCIIObject)";
  if (!bad.empty()) return Status::Error("its _Py_DebugOffsets do not hold together (" + bad + ")");
  if (Status st = CheckCPythonLayout(l); !st.ok()) return st;
  return l;
}

Status CheckCPythonLayout(const CPythonLayout& l) {
  auto fail = [&](const std::string& what) {
    return Status::Error("its offsets are not what xtrace can read (" + what + ")");
  };
  // BPF reads XT_PY_FRAME_READ bytes of a frame and takes pointers at offsets masked with 63.
  for (uint32_t off : {l.frame_code, l.frame_previous, l.frame_instr})
    if (off > 63 || off + 8 > XT_PY_FRAME_READ || off % 8 != 0) return fail("a frame's pointers");
  if (l.frame_owner != XT_PY_NO_OFFSET && l.frame_owner >= XT_PY_FRAME_READ)
    return fail("a frame's owner");
  if (l.frame_code == l.frame_previous || l.frame_code == l.frame_instr ||
      l.frame_previous == l.frame_instr)
    return fail("a frame's fields overlap");
  for (uint32_t off : {l.code_filename, l.code_name, l.code_qualname, l.code_linetable,
                       l.object_type})
    if (off + 8 > l.code_header_size) return fail("a code object's fields");
  if (l.code_firstlineno + 4 > l.code_header_size || l.code_adaptive < l.code_header_size)
    return fail("a code object's fields");
  // BPF reads XT_PY_TSTATE_READ bytes of a thread state for these, masked with 504.
  auto in_tstate_read = [](uint32_t off) {
    return off + 8 <= XT_PY_TSTATE_READ && off <= 504 && off % 8 == 0;
  };
  if (!in_tstate_read(l.tstate_frame) || !in_tstate_read(l.tstate_thread_id) ||
      (l.tstate_datastack_chunk != XT_PY_NO_OFFSET && !in_tstate_read(l.tstate_datastack_chunk)))
    return fail("a thread state's fields");
  for (uint32_t off : {l.runtime_interp_main, l.interp_threads_head, l.tstate_next,
                       l.tstate_interp, l.tstate_frame, l.tstate_thread_id})
    if (off > kMaxOffset) return fail("a runtime, interpreter or thread field");
  if (l.unicode_state + 4 > l.unicode_ascii_data || l.unicode_length + 8 > l.unicode_ascii_data ||
      l.unicode_compact_data < l.unicode_ascii_data || l.unicode_compact_data > 256)
    return fail("a string's fields");
  return Status::Ok();
}

xt_py_layout BpfLayout(const CPythonLayout& l, uint64_t runtime, uint32_t max_frames,
                       uint32_t generation) {
  xt_py_layout out{};
  out.interp_ptr = runtime + l.runtime_interp_main;
  out.tstate_head = l.interp_threads_head;
  out.tstate_next = l.tstate_next;
  out.tstate_thread_id = l.tstate_thread_id;
  out.tstate_frame = l.tstate_frame;
  out.cframe_frame = l.cframe_frame;
  out.frame_code = l.frame_code;
  out.frame_previous = l.frame_previous;
  out.frame_instr = l.frame_instr;
  out.frame_owner = l.frame_owner;
  out.owner_cstack = l.frame_owner == XT_PY_NO_OFFSET ? 0x100 : l.owner_cstack;
  out.max_frames = max_frames < XT_PY_MAX_FRAMES ? max_frames : XT_PY_MAX_FRAMES;
  out.generation = generation;
  out.tstate_chunk = l.tstate_datastack_chunk;
  return out;
}

std::string VersionText(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace xtrace
