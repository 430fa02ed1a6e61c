// The ITT integration tests' shared helpers (itt_test_support.h).
#include "itt_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <variant>

#include "log/log_reader.h"

namespace xtrace::itt_test {
namespace {

std::string KindText(IttTaskKind kind) {
  switch (kind) {
    case IttTaskKind::kTask: return "task";
    case IttTaskKind::kOverlappedTask: return "overlapped_task";
    case IttTaskKind::kRegion: return "region";
    case IttTaskKind::kFrame: return "frame";
  }
  return "?";
}

}  // namespace

IttCapture ReadIttCapture(const std::string& path) {
  IttCapture c;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return c;
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    const StringTable& s = reader->strings();
    if (auto* t = std::get_if<IttTask>(&e)) {
      c.tasks.push_back({*t, std::string(s.Get(t->domain)), std::string(s.Get(t->name))});
    } else if (auto* m = std::get_if<IttMarker>(&e)) {
      c.markers.push_back({*m, std::string(s.Get(m->domain)), std::string(s.Get(m->name))});
    } else if (auto* ch = std::get_if<CollectionChange>(&e)) {
      c.changes.push_back(*ch);
    } else if (auto* l = std::get_if<KernelLaunch>(&e)) {
      c.launches.push_back(*l);
      c.launch_names.emplace_back(s.Get(l->kernel_name));
    } else if (auto* th = std::get_if<ThreadInfo>(&e)) {
      c.thread_names[th->tid] = std::string(s.Get(th->name));
    }
  }
  c.complete = reader->complete();
  return c;
}

// The capture as itt_workload logs itself: "<tid>\t<kind>\t<domain>\t<name>".
std::vector<std::string> AsLabelLines(const IttCapture& c) {
  std::vector<std::string> lines;
  for (const Span& s : c.tasks)
    lines.push_back(std::to_string(s.task.tid) + '\t' + KindText(s.task.kind) + '\t' + s.domain +
                    '\t' + s.name);
  for (const Mark& m : c.markers)
    lines.push_back(std::to_string(m.marker.tid) + "\tmarker\t" + m.domain + '\t' + m.name);
  for (size_t i = 0; i < c.launches.size(); ++i)
    lines.push_back(std::to_string(c.launches[i].tid) + "\tlaunch\tze\t" + c.launch_names[i]);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A workload log ("<round>\t<rest>"), keeping the lines of `rounds` (all if empty) without
// their round.
std::vector<std::string> LogLines(const std::string& path, const std::set<int>& rounds) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) {
    const size_t tab = l.find('\t');
    if (!rounds.empty() && !rounds.count(std::stoi(l.substr(0, tab)))) continue;
    lines.push_back(l.substr(tab + 1));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

bool Encloses(const IttTask& outer, uint64_t start, uint64_t end) {
  return outer.start_ns <= start && end <= outer.end_ns;
}

size_t CountLinesWith(const std::string& text, const std::string& needle) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace xtrace::itt_test
