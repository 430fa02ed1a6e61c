// Reading logs and process facts for integration tests.
#include "log_contents.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <variant>

#include "log/log_reader.h"

namespace xtrace::testing {

LogContents ReadLogContents(const std::string& path) {
  LogContents c;
  auto reader = LogReader::Open(path);
  if (!reader.ok()) {
    c.error = reader.status().message();
    return c;
  }
  c.header = reader->header();
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    if (!more.ok()) {
      c.error = more.status().message();
      return c;
    }
    if (!*more) break;
    ++c.events;
    std::visit(
        [&](const auto& ev) {
          // Device-wide records (memory totals) name no process: pid 0.
          if constexpr (requires { ev.pid; })
            if (ev.pid != 0) ++c.events_by_pid[ev.pid];
        },
        e);
    const StringTable& s = reader->strings();
    if (auto* l = std::get_if<KernelLaunch>(&e)) {
      std::ostringstream groups;
      groups << s.Get(l->kernel_name) << '\t' << l->group_count[0] << ',' << l->group_count[1]
             << ',' << l->group_count[2];
      c.launches[l->pid].push_back(std::to_string(l->tid) + "\t" + groups.str());
      c.launches_no_tid[l->pid].push_back(groups.str());
    } else if (auto* t = std::get_if<IttTask>(&e)) {
      c.itt_labels[t->pid].push_back(std::string(s.Get(t->domain)) + "\t" + std::string(s.Get(t->name)));
      c.itt_tasks.push_back({*t, std::string(s.Get(t->domain)), std::string(s.Get(t->name))});
    } else if (auto* m = std::get_if<IttMarker>(&e)) {
      c.itt_labels[m->pid].push_back(std::string(s.Get(m->domain)) + "\t" + std::string(s.Get(m->name)));
    } else if (auto* a = std::get_if<ApiCall>(&e)) {
      c.api_calls[a->pid].push_back(a->fn);
    } else if (auto* p = std::get_if<ProcessInfo>(&e)) {
      c.processes[p->pid] = ProcessIdentity{p->ns_pid, std::string(s.Get(p->comm)),
                                            std::string(s.Get(p->command_line)),
                                            std::string(s.Get(p->cgroup)),
                                            std::string(s.Get(p->container_id))};
      c.identities[p->pid].push_back(c.processes[p->pid]);
    }
  }
  c.readable = true;
  c.complete = reader->complete();
  c.summary = reader->summary();
  return c;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> ReadLaunchLog(const std::string& path, bool strip_tid) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);)
    lines.push_back(strip_tid ? l.substr(l.find('\t') + 1) : l);
  return Sorted(lines);
}

namespace {

uint32_t ParentOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), {});
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string state;
  uint32_t ppid = 0;
  fields >> state >> ppid;
  return ppid;
}

}  // namespace

uint32_t FindChildPid(uint32_t parent_pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      if (ParentOf(name) == parent_pid) return static_cast<uint32_t>(std::stoul(name));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return 0;
}

size_t CountOpenFds(uint32_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

size_t SettledFdCount(uint32_t pid) {
  size_t least = CountOpenFds(pid);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    least = std::min(least, CountOpenFds(pid));
  }
  return least;
}

}  // namespace xtrace::testing
