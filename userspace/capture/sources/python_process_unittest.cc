// Tests for recognising and checking a CPython interpreter, and for resolving its frames,
// against a real process of the host's python3.11 and of Debian trixie's python3.13 (its
// layout from its own debug offsets) under chroot: the frame chain is walked here exactly as BPF walks it
// (bpf/python_frames.bpf.h, with the layout BpfLayout gives BPF), and the frames must come
// out as the script's own functions and lines.
#include "capture/sources/python_process.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "capture/discovery/proc_maps.h"

namespace xtrace {
namespace {

TEST(CPythonBinary, RecognisesInterpretersOnly) {
  EXPECT_TRUE(IsCPythonBinary("/usr/bin/python3.11"));
  EXPECT_TRUE(IsCPythonBinary("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
  EXPECT_TRUE(IsCPythonBinary("/opt/conda/lib/libpython3.13t.so"));
  EXPECT_FALSE(IsCPythonBinary("/usr/bin/python3.11-config"));
  EXPECT_FALSE(IsCPythonBinary("/usr/lib/python3.11/lib-dynload/_ctypes.so"));
  EXPECT_FALSE(IsCPythonBinary("/usr/bin/python"));
}

// An interpreter linked against libpython is read through that library: the executable is
// named for it, the library and an interpreter that holds CPython itself are not.
TEST(CPythonBinary, AnInterpreterLinkedAgainstLibpythonNamesIt) {
  MappedLibrary shared;
  shared.path = shared.host_path = SHARED_PYTHON_BIN;
  EXPECT_TRUE(CPythonLibraryOf(shared).starts_with("libpython3.")) << CPythonLibraryOf(shared);
  MappedLibrary library;
  library.path = library.host_path = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
  EXPECT_EQ(CPythonLibraryOf(library), "");
  MappedLibrary whole;
  whole.path = whole.host_path = "/usr/bin/python3.11";  // Debian's: CPython in the executable
  EXPECT_EQ(CPythonLibraryOf(whole), "");
}

// Where a CPython runs: the host's python3.11, or Debian trixie's python3.13 under chroot in
// the tree scripts/trixie-rootfs.sh builds (skipped where it is not built).
struct Interpreter {
  std::string name;
  std::vector<std::string> argv;  // up to the script
  std::string root;               // "" or the chroot the script is written under
  uint32_t minor = 0;
};

void PrintTo(const Interpreter& i, std::ostream* os) { *os << i.name; }

std::string TrixieRoot() {
  const char* env = std::getenv("XTRACE_TRIXIE_ROOT");
  return env && *env ? env : "/var/cache/xtrace/trixie";
}

// Why `interp` cannot run here, or "".
std::string WhyNot(const Interpreter& interp) {
  if (!interp.root.empty()) {
    if (getuid() != 0) return "chroot needs root";
    if (access((interp.root + "/.xtrace-stamp").c_str(), R_OK) != 0)
      return interp.root + " is not built (scripts/trixie-rootfs.sh)";
  }
  if (access((interp.root + interp.argv.back()).c_str(), X_OK) != 0)
    return interp.root + interp.argv.back() + " is not installed";
  return "";
}

// A CPython child stopped inside a known stack; killed at the end.
class PythonChild {
 public:
  explicit PythonChild(const Interpreter& interp) {
    // Line numbers matter: inner() sleeps on line 4, outer() calls it on line 6, the module
    // calls outer() on line 7.
    script_ = "/tmp/xtrace_py_frames_" + std::to_string(getpid()) + ".py";
    host_script_ = interp.root + script_;
    std::ofstream(host_script_) << "import time, sys\n"
                                   "def inner():\n"
                                   "    print('ready', flush=True)\n"
                                   "    time.sleep(60)\n"
                                   "def outer():\n"
                                   "    inner()\n"
                                   "outer()\n";
    std::vector<std::string> args = interp.argv;
    args.push_back(script_);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    char buf[8] = {};
    ready_ = read(fds[0], buf, 5) == 5;
    close(fds[0]);
    // From "ready" (line 3) into the sleep (line 4).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ~PythonChild() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    unlink(host_script_.c_str());
  }
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }
  // The script's path as the interpreter sees it.
  const std::string& script() const { return script_; }

 private:
  std::string script_, host_script_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

std::optional<MappedLibrary> InterpreterOf(pid_t pid) {
  auto libs = FindMappedLibraries(static_cast<uint32_t>(pid), "");
  if (!libs.ok()) return std::nullopt;
  // As the capture does: an executable linked against libpython is read through the library.
  for (const MappedLibrary& lib : *libs)
    if (IsCPythonBinary(lib.path) && CPythonLibraryOf(lib).empty()) return lib;
  return std::nullopt;
}

uint64_t ReadPtr(ProcessMemory& m, uint32_t pid, uint64_t address) {
  uint64_t v = 0;
  return address && m.Read(pid, address, &v, sizeof(v)) ? v : 0;
}

class CPythonProcessTest : public testing::TestWithParam<Interpreter> {};

TEST_P(CPythonProcessTest, FramesOfARealInterpreter) {
  const Interpreter& interp = GetParam();
  if (const std::string why = WhyNot(interp); !why.empty()) GTEST_SKIP() << why;
  PythonChild child(interp);
  ASSERT_TRUE(child.ready());
  auto lib = InterpreterOf(child.pid());
  ASSERT_TRUE(lib) << "no CPython mapped";
  // The file as the capture reaches it, whatever the process's root.
  const UniqueFd file = OpenMappedFile(static_cast<uint32_t>(child.pid()), *lib);
  ASSERT_TRUE(file.valid()) << lib->path;
  lib->host_path = "/proc/self/fd/" + std::to_string(file.get());
  auto found = InspectCPython(static_cast<uint32_t>(child.pid()), *lib);
  if (!found.ok() && found.status().message().find("Operation not permitted") != std::string::npos)
    GTEST_SKIP() << "cannot read another process's memory here: " << found.status().message();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->major, 3u);
  EXPECT_EQ(found->minor, interp.minor);
  EXPECT_TRUE(found->initialized);

  // The walk BPF makes, through the layout BPF is given: the thread state, its frame (through
  // the C frame where there is one), the chain, the interpreter's own entry frames skipped.
  const xt_py_layout l = BpfLayout(*found->interpreter.layout, found->interpreter.runtime, 64, 1);
  ProcessVmMemory memory;
  const auto pid = static_cast<uint32_t>(child.pid());
  const uint64_t interpreter = ReadPtr(memory, pid, l.interp_ptr);
  const uint64_t tstate = ReadPtr(memory, pid, interpreter + l.tstate_head);
  ASSERT_NE(tstate, 0u);
  EXPECT_NE(ReadPtr(memory, pid, tstate + l.tstate_thread_id), 0u);
  uint64_t frame = ReadPtr(memory, pid, tstate + l.tstate_frame);
  if (l.cframe_frame != XT_PY_NO_OFFSET) frame = ReadPtr(memory, pid, frame + l.cframe_frame);
  // The innermost frame lies in the data stack's current chunk, as BPF takes it to (it then
  // reads the frames below it from the chunk's start).
  ASSERT_NE(l.tstate_chunk, XT_PY_NO_OFFSET);
  const uint64_t chunk = ReadPtr(memory, pid, tstate + l.tstate_chunk);
  EXPECT_GT(frame, chunk);
  EXPECT_LE(frame + XT_PY_FRAME_READ, chunk + XT_PY_MIN_CHUNK);
  std::vector<std::pair<uint64_t, uint64_t>> frames;
  size_t skipped = 0;
  for (int i = 0; frame && i < 64; ++i) {
    uint8_t owner = 0;
    if (l.frame_owner != XT_PY_NO_OFFSET &&
        memory.Read(pid, frame + l.frame_owner, &owner, 1) && owner == l.owner_cstack) {
      ++skipped;
    } else {
      frames.emplace_back(ReadPtr(memory, pid, frame + l.frame_code),
                          ReadPtr(memory, pid, frame + l.frame_instr));
    }
    frame = ReadPtr(memory, pid, frame + l.frame_previous);
  }
  ASSERT_EQ(frames.size(), 3u);
  // 3.11 has no entry frames; from 3.12 on the interpreter's entry sits below <module>.
  EXPECT_EQ(skipped > 0, interp.minor >= 12);

  PythonInterpreters interpreters;
  interpreters.Set(pid, found->interpreter);
  StringTable strings;
  PythonFrameResolver resolver(interpreters, memory, strings);
  auto resolved = resolver.Resolve(pid, frames);
  ASSERT_TRUE(resolved);
  ASSERT_EQ(resolved->size(), 3u);
  const std::pair<const char*, uint32_t> expected[] = {{"inner", 4}, {"outer", 6}, {"<module>", 7}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(strings.Get((*resolved)[i].file), child.script()) << i;
    EXPECT_EQ(strings.Get((*resolved)[i].function), expected[i].first) << i;
    EXPECT_EQ((*resolved)[i].line, expected[i].second) << i;
  }
  EXPECT_EQ(resolver.stats().code_objects, 3u);

  // Not a code object (the thread state itself): the stack is not resolved.
  frames[1].first = tstate;
  EXPECT_FALSE(resolver.Resolve(pid, frames));
  // A process with no checked interpreter gets nothing.
  EXPECT_FALSE(resolver.Resolve(pid + 1000000, frames));
}

INSTANTIATE_TEST_SUITE_P(
    Interpreters, CPythonProcessTest,
    testing::Values(Interpreter{"host_python311", {"/usr/bin/python3.11"}, "", 11},
                    // The same CPython in libpython3.11.so, the executable linked against it.
                    Interpreter{"host_python311_shared", {SHARED_PYTHON_BIN}, "", 11},
                    Interpreter{"trixie_python313",
                                {"/usr/sbin/chroot", TrixieRoot(), "/usr/bin/python3.13"},
                                TrixieRoot(),
                                13}),
    [](const testing::TestParamInfo<Interpreter>& info) { return info.param.name; });

// A process holding `path` (a libpython) as the dynamic linker holds it after mapping it and
// before relocating it: each PT_LOAD segment at its address from one base, read-only, nothing
// written. Sends a byte on `ready` once mapped, then waits to be killed. Only system calls in
// the child (it is forked from a threaded test).
pid_t MapUnrelocated(const char* path, int ready) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  Elf64_Ehdr eh{};
  Elf64_Phdr ph[32]{};
  if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_phnum > 32 ||
      pread(fd, ph, sizeof(Elf64_Phdr) * eh.e_phnum, static_cast<off_t>(eh.e_phoff)) <= 0)
    _exit(1);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t span = 0;
  for (int i = 0; i < eh.e_phnum; ++i)
    if (ph[i].p_type == PT_LOAD) span = std::max(span, ph[i].p_vaddr + ph[i].p_memsz);
  void* reserved = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) _exit(1);
  const auto base = reinterpret_cast<uint64_t>(reserved);
  for (int i = 0; i < eh.e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD) continue;
    const uint64_t start = ph[i].p_vaddr & ~(page - 1), file_end = ph[i].p_vaddr + ph[i].p_filesz;
    if (mmap(reinterpret_cast<void*>(base + start), file_end - start, PROT_READ,
             MAP_PRIVATE | MAP_FIXED, fd, static_cast<off_t>(ph[i].p_offset & ~(page - 1))) ==
        MAP_FAILED)
      _exit(1);
    // Past the file's part: zeros (.bss), as the dynamic linker maps it.
    const uint64_t zero_from = (file_end + page - 1) & ~(page - 1);
    const uint64_t end = (ph[i].p_vaddr + ph[i].p_memsz + page - 1) & ~(page - 1);
    if (end > zero_from && mmap(reinterpret_cast<void*>(base + zero_from), end - zero_from,
                                PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                                0) == MAP_FAILED)
      _exit(1);
  }
  if (write(ready, "r", 1) != 1) _exit(1);
  for (;;) pause();
}

// A libpython seen as it is mapped (a process that starts under `record`), before the dynamic
// linker relocated it: PyCode_Type's type pointer is still the file's 0, the interpreter not
// initialised. That is an interpreter to wait for, not a layout mismatch.
TEST(CPythonProcess, ALibpythonNotYetRelocatedIsWaitedFor) {
  const char* kLibpython = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
  ASSERT_EQ(access(kLibpython, R_OK), 0) << kLibpython << " (libpython3-dev, install-deps.sh)";
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = MapUnrelocated(kLibpython, pipe_fds[1]);
  ASSERT_GT(pid, 0);
  close(pipe_fds[1]);
  char byte = 0;
  const bool mapped = read(pipe_fds[0], &byte, 1) == 1;
  close(pipe_fds[0]);
  std::optional<MappedLibrary> lib;
  if (mapped) lib = InterpreterOf(pid);
  Result<CPythonProcess> found = Status::Error("not inspected");
  if (lib) {
    lib->host_path = lib->path;
    found = InspectCPython(static_cast<uint32_t>(pid), *lib);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(mapped) << "the child could not map " << kLibpython;
  ASSERT_TRUE(lib) << "no libpython in the child's maps";
  if (!found.ok() && found.status().message().find("Operation not permitted") != std::string::npos)
    GTEST_SKIP() << "cannot read another process's memory here: " << found.status().message();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->minor, 11u);
  EXPECT_FALSE(found->initialized);
}

}  // namespace
}  // namespace xtrace
