// dom_convert_baseline: the obvious way to convert a log to Chrome JSON, for the benchmark to
// compare the streaming converter with: every event becomes an nlohmann::json object in one
// document, which is then serialised with dump() and written out. Same events, same fields.
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "log/log_reader.h"

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

int Convert(const std::string& in_path, const std::string& out_path) {
  using nlohmann::json;
  auto reader = xtrace::LogReader::Open(in_path);
  if (!reader.ok()) {
    std::fprintf(stderr, "dom_convert_baseline: %s\n", reader.status().message().c_str());
    return 1;
  }
  json doc;
  json& events = doc["traceEvents"] = json::array();
  xtrace::Event event;
  for (;;) {
    auto more = reader->Next(&event);
    if (!more.ok()) {
      std::fprintf(stderr, "dom_convert_baseline: %s\n", more.status().message().c_str());
      return 1;
    }
    if (!*more) break;
    const xtrace::StringTable& s = reader->strings();
    if (const auto* p = std::get_if<xtrace::ProcessInfo>(&event)) {
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", p->pid},
                        {"args", {{"name", s.Get(p->comm)}, {"command_line", s.Get(p->command_line)}}}});
    } else if (const auto* t = std::get_if<xtrace::ThreadInfo>(&event)) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", t->pid}, {"tid", t->tid},
                        {"args", {{"name", s.Get(t->name)}}}});
    } else if (const auto* k = std::get_if<xtrace::KernelCreate>(&event)) {
      events.push_back({{"ph", "X"}, {"name", "zeKernelCreate"}, {"cat", "xpu_runtime"},
                        {"pid", k->pid}, {"tid", k->tid}, {"ts", k->start_ns / 1000.0},
                        {"dur", (k->end_ns - k->start_ns) / 1000.0},
                        {"args", {{"kernel_name", s.Get(k->name)}, {"module", Hex(k->module)},
                                  {"kernel", Hex(k->kernel)}}}});
    } else if (const auto* l = std::get_if<xtrace::KernelLaunch>(&event)) {
      json args = {{"group_count_x", l->group_count[0]}, {"group_count_y", l->group_count[1]},
                   {"group_count_z", l->group_count[2]}, {"kernel", Hex(l->kernel)},
                   {"command_list", Hex(l->command_list)},
                   {"num_wait_events", l->num_wait_events}};
      if (l->signal_event) args["signal_event"] = Hex(l->signal_event);
      events.push_back({{"ph", "X"}, {"name", s.Get(l->kernel_name)}, {"cat", "xpu_runtime"},
                        {"pid", l->pid}, {"tid", l->tid}, {"ts", l->start_ns / 1000.0},
                        {"dur", (l->end_ns - l->start_ns) / 1000.0}, {"args", std::move(args)}});
    }
  }
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"producer", "dom_convert_baseline"}};
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << doc.dump();
  out.flush();
  if (!out) {
    std::fprintf(stderr, "dom_convert_baseline: writing %s failed\n", out_path.c_str());
    return 1;
  }
  std::printf("events %zu\n", events.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: dom_convert_baseline LOG OUTPUT.json\n");
    return 2;
  }
  return Convert(argv[1], argv[2]);
}
