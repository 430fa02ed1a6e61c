// Python frames as slices on their thread's track, as PyTorch's profiler draws them (Kineto's
// `cat: "python_function"`, names "file(line): function"): each frame of a thread's traced
// calls becomes a slice from the first call that had it to the end of the last consecutive
// call that still had it, so the Python stack encloses the Level Zero calls and ITT tasks it
// made. Frames are the same when file, function and line are: a frame whose line moves starts
// a new slice, so a call sits under the very line that made it. Also remembers each call's
// innermost user frame, for the device slices the call launched.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/trace_writer.h"
#include "model/python_event.h"

namespace xtrace {

class PythonSliceWriter {
 public:
  PythonSliceWriter(const StringTable& strings, TraceWriter& out,
                    std::vector<std::string> skips = DefaultPythonSkips())
      : strings_(strings), out_(out), skips_(std::move(skips)) {}

  void Write(const PythonStack& e);
  // Closes every open slice (the end of the trace).
  void Finish();
  // Closes the open slices of `pid` (its end, or an exec).
  void FinishProcess(uint32_t pid);

  // "file(line): function" of the innermost user frame of the call of (pid, tid) that began
  // at `start_ns`; empty if none is known.
  std::string_view UserFrameOfCall(uint32_t pid, uint32_t tid, uint64_t start_ns) const;

  uint64_t slices() const { return slices_; }

 private:
  struct Open {
    PythonFrame frame;
    uint64_t start_ns;
    uint64_t end_ns;
  };
  struct Thread {
    std::vector<Open> open;  // outermost first
  };
  void Close(uint32_t pid, uint32_t tid, Thread& t, size_t keep);

  // Calls remembered for UserFrameOfCall: a device operation's completion is written long
  // after its launch, but not unboundedly so.
  static constexpr size_t kRememberedCalls = 1 << 20;
  struct CallKey {
    uint32_t pid, tid;
    uint64_t start_ns;
    bool operator==(const CallKey&) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey& k) const {
      return std::hash<uint64_t>{}(k.start_ns ^ (uint64_t{k.pid} << 40) ^ (uint64_t{k.tid} << 20));
    }
  };

  const StringTable& strings_;
  TraceWriter& out_;
  std::vector<std::string> skips_;
  std::map<std::pair<uint32_t, uint32_t>, Thread> threads_;
  std::unordered_map<CallKey, std::string, CallKeyHash> user_frames_;
  std::deque<CallKey> call_order_;
  uint64_t slices_ = 0;
};

}  // namespace xtrace
