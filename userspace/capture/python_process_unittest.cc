// Tests for recognising and checking a CPython interpreter, and for resolving its frames,
// against a real python3.11 process: the frame chain is walked here exactly as BPF walks it
// (bpf/python_frames.bpf.h, with the layout BpfLayout gives BPF), and the frames must come
// out as the script's own functions and lines.
#include "capture/python_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "capture/proc_maps.h"

namespace xtrace {
namespace {

constexpr const char* kPython = "/usr/bin/python3.11";

TEST(CPythonBinary, RecognisesInterpretersOnly) {
  EXPECT_TRUE(IsCPythonBinary("/usr/bin/python3.11"));
  EXPECT_TRUE(IsCPythonBinary("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
  EXPECT_TRUE(IsCPythonBinary("/opt/conda/lib/libpython3.13t.so"));
  EXPECT_FALSE(IsCPythonBinary("/usr/bin/python3.11-config"));
  EXPECT_FALSE(IsCPythonBinary("/usr/lib/python3.11/lib-dynload/_ctypes.so"));
  EXPECT_FALSE(IsCPythonBinary("/usr/bin/python"));
}

// A python3.11 child stopped inside a known stack; killed at the end.
class PythonChild {
 public:
  PythonChild() {
    // Line numbers matter: inner() sleeps on line 4, outer() calls it on line 6, the module
    // calls outer() on line 7.
    script_ = "/tmp/xtrace_py_frames_" + std::to_string(getpid()) + ".py";
    std::ofstream(script_) << "import time, sys\n"
                              "def inner():\n"
                              "    print('ready', flush=True)\n"
                              "    time.sleep(60)\n"
                              "def outer():\n"
                              "    inner()\n"
                              "outer()\n";
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      execl(kPython, kPython, script_.c_str(), nullptr);
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
    unlink(script_.c_str());
  }
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }
  const std::string& script() const { return script_; }

 private:
  std::string script_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

std::optional<MappedLibrary> Interpreter(pid_t pid) {
  auto libs = FindMappedLibraries(static_cast<uint32_t>(pid), "");
  if (!libs.ok()) return std::nullopt;
  for (const MappedLibrary& lib : *libs)
    if (IsCPythonBinary(lib.path)) return lib;
  return std::nullopt;
}

uint64_t ReadPtr(ProcessMemory& m, uint32_t pid, uint64_t address) {
  uint64_t v = 0;
  return address && m.Read(pid, address, &v, sizeof(v)) ? v : 0;
}

TEST(CPythonProcess, FramesOfARealInterpreter) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  PythonChild child;
  ASSERT_TRUE(child.ready());
  const auto lib = Interpreter(child.pid());
  ASSERT_TRUE(lib) << "no python3.11 mapped";
  auto found = InspectCPython(static_cast<uint32_t>(child.pid()), *lib);
  if (!found.ok() && found.status().message().find("Operation not permitted") != std::string::npos)
    GTEST_SKIP() << "cannot read another process's memory here: " << found.status().message();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->major, 3u);
  EXPECT_EQ(found->minor, 11u);
  EXPECT_TRUE(found->initialized);

  // The walk BPF makes, through the layout BPF is given.
  const xt_py_layout l = BpfLayout(*found->interpreter.layout, found->interpreter.runtime, 64, 1);
  ProcessVmMemory memory;
  const auto pid = static_cast<uint32_t>(child.pid());
  const uint64_t interp = ReadPtr(memory, pid, l.interp_ptr);
  const uint64_t tstate = ReadPtr(memory, pid, interp + l.tstate_head);
  ASSERT_NE(tstate, 0u);
  EXPECT_NE(ReadPtr(memory, pid, tstate + l.tstate_thread_id), 0u);
  uint64_t frame = ReadPtr(memory, pid, ReadPtr(memory, pid, tstate + l.tstate_frame) + l.cframe_frame);
  std::vector<std::pair<uint64_t, uint64_t>> frames;
  for (int i = 0; frame && i < 64; ++i) {
    frames.emplace_back(ReadPtr(memory, pid, frame + l.frame_code),
                        ReadPtr(memory, pid, frame + l.frame_instr));
    frame = ReadPtr(memory, pid, frame + l.frame_previous);
  }
  ASSERT_EQ(frames.size(), 3u);

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

}  // namespace
}  // namespace xtrace
