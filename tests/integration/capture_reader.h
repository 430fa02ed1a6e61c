// Reads a whole capture into vectors by event kind, for integration tests that compare it with
// what a workload or the simulated GPU says happened.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "log/log_reader.h"
#include "model/event.h"

namespace xtrace::testing {

struct Capture {
  std::vector<Event> all;
  std::vector<ApiCall> calls;
  std::vector<KernelLaunch> launches;
  std::vector<KernelCreate> creates;
  std::map<uint32_t, std::string> thread_names;
  StringTable strings;  // a copy of the log's table: ids in the events index it
  bool complete = false;

  std::vector<ApiCall> Calls(uint16_t fn) const {
    std::vector<ApiCall> out;
    for (const auto& c : calls)
      if (c.fn == fn) out.push_back(c);
    return out;
  }
  template <typename T>
  std::vector<T> All() const {
    std::vector<T> out;
    for (const auto& e : all)
      if (const auto* p = std::get_if<T>(&e)) out.push_back(*p);
    return out;
  }
};

inline Capture ReadWholeCapture(const std::string& path) {
  Capture c;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return c;
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    c.all.push_back(e);
    if (auto* a = std::get_if<ApiCall>(&e)) c.calls.push_back(*a);
    if (auto* l = std::get_if<KernelLaunch>(&e)) c.launches.push_back(*l);
    if (auto* k = std::get_if<KernelCreate>(&e)) c.creates.push_back(*k);
    if (auto* t = std::get_if<ThreadInfo>(&e)) c.thread_names[t->tid] = std::string(reader->strings().Get(t->name));
  }
  for (StringId id = 1; id < reader->strings().size(); ++id) c.strings.Intern(reader->strings().Get(id));
  c.complete = reader->complete();
  return c;
}

}  // namespace xtrace::testing
