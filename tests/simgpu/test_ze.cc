// Level Zero test helpers (see test_ze.h). Everything goes through libze_loader.so.1.
#include "test_ze.h"

#include <time.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace simgpu_test {

void ze_check(ze_result_t r, const char* what) {
  if (r != ZE_RESULT_SUCCESS) {
    std::ostringstream msg;
    msg << what << " returned 0x" << std::hex << static_cast<uint32_t>(r);
    throw std::runtime_error(msg.str());
  }
}

uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

Session& session() {
  static Session* s = [] {
    auto* out = new Session;
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t n = 1;
    ZE_CHECK(zeDriverGet(&n, &out->driver));
    uint32_t nd = 0;
    ZE_CHECK(zeDeviceGet(out->driver, &nd, nullptr));
    out->devices.resize(nd);
    ZE_CHECK(zeDeviceGet(out->driver, &nd, out->devices.data()));
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(out->driver, &cd, &out->context));
    return out;
  }();
  return *s;
}

ze_module_handle_t make_module(const std::string& text) {
  ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV,
                        text.size(), reinterpret_cast<const uint8_t*>(text.data()), nullptr,
                        nullptr};
  ze_module_handle_t m = nullptr;
  ZE_CHECK(zeModuleCreate(session().context, session().device(), &desc, &m, nullptr));
  return m;
}

ze_kernel_handle_t make_kernel(ze_module_handle_t module, const std::string& name) {
  ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name.c_str()};
  ze_kernel_handle_t k = nullptr;
  ZE_CHECK(zeKernelCreate(module, &desc, &k));
  return k;
}

ze_command_queue_handle_t make_queue(uint32_t ordinal) {
  ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t q = nullptr;
  ZE_CHECK(zeCommandQueueCreate(session().context, session().device(), &desc, &q));
  return q;
}

ze_command_list_handle_t make_list(uint32_t ordinal) {
  ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, ordinal, 0};
  ze_command_list_handle_t l = nullptr;
  ZE_CHECK(zeCommandListCreate(session().context, session().device(), &desc, &l));
  return l;
}

ze_command_list_handle_t make_immediate(uint32_t ordinal) {
  ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t l = nullptr;
  ZE_CHECK(zeCommandListCreateImmediate(session().context, session().device(), &desc, &l));
  return l;
}

ze_event_pool_handle_t make_event_pool(uint32_t count, bool kernel_timestamps) {
  ze_event_pool_desc_t desc{
      ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
      ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (kernel_timestamps ? static_cast<ze_event_pool_flags_t>(ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) : 0u),
      count};
  ze_device_handle_t dev = session().device();
  ze_event_pool_handle_t pool = nullptr;
  ZE_CHECK(zeEventPoolCreate(session().context, &desc, 1, &dev, &pool));
  return pool;
}

ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index) {
  ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, index, ZE_EVENT_SCOPE_FLAG_HOST,
                       ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t e = nullptr;
  ZE_CHECK(zeEventCreate(pool, &desc, &e));
  return e;
}

ze_fence_handle_t make_fence(ze_command_queue_handle_t queue) {
  ze_fence_desc_t desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t f = nullptr;
  ZE_CHECK(zeFenceCreate(queue, &desc, &f));
  return f;
}

std::vector<Truth> read_ground_truth(const std::string& path) {
  std::vector<Truth> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    size_t pos = 0;
    for (;;) {
      size_t tab = line.find('\t', pos);
      f.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
      if (tab == std::string::npos) break;
      pos = tab + 1;
    }
    if (f.size() != 14) throw std::runtime_error("ground truth line with " +
                                                 std::to_string(f.size()) + " fields: " + line);
    Truth t;
    t.kind = f[0];
    t.name = f[1];
    t.start_mono = std::stoull(f[2]);
    t.end_mono = std::stoull(f[3]);
    t.start_ticks = std::stoull(f[4]);
    t.end_ticks = std::stoull(f[5]);
    t.queue = std::stoull(f[6], nullptr, 16);
    t.submission = std::stoull(f[7]);
    t.pid = std::stoi(f[8]);
    t.device = static_cast<uint32_t>(std::stoul(f[9]));
    t.cmdlist = std::stoull(f[10], nullptr, 16);
    t.submit_mono = std::stoull(f[11]);
    t.submit_tid = std::stoi(f[12]);
    t.bytes = std::stoull(f[13]);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace simgpu_test
