// Writes the seed corpus of the record-decoder harness: one well-formed record of every type
// the BPF programs emit, laid out with the real structs of include/xtrace/, with names and
// argument bytes like a capture's. Run once to (re)make tests/fuzz/corpus/record_decoder/:
//   build/bin/xtrace_fuzz_record_seeds tests/fuzz/corpus/record_decoder
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "xtrace/drm_records.h"
#include "xtrace/records.h"

namespace {

using Bytes = std::vector<uint8_t>;

// A record: its fixed part `fixed` (header filled in here) followed by `tail`.
template <typename T>
Bytes Record(T fixed, uint16_t type, std::string_view tail = {}, uint32_t flags = 0) {
  fixed.hdr.type = type;
  fixed.hdr.size = static_cast<uint16_t>(sizeof(T) + tail.size());
  fixed.hdr.flags = flags;
  fixed.hdr.pid = 4242;
  fixed.hdr.tid = 4243;
  fixed.hdr.start_ns = 1'000'000'000;
  fixed.hdr.end_ns = 1'000'002'500;
  Bytes out(sizeof(T));
  std::memcpy(out.data(), &fixed, sizeof(T));
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::string Words(std::initializer_list<uint64_t> words) {
  std::string out(words.size() * sizeof(uint64_t), '\0');
  size_t at = 0;
  for (uint64_t w : words) std::memcpy(&out[at++ * sizeof(w)], &w, sizeof(w));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  std::vector<std::pair<std::string, Bytes>> seeds;

  const std::string kernel = "_ZTSZ4mainEUlN4sycl3_V17nd_itemILi1EEEE_";
  xt_kernel_create create{};
  create.module = 0x55550000a000;
  create.kernel = 0x55550000b000;
  create.name_len = static_cast<uint32_t>(kernel.size());
  seeds.emplace_back("kernel_create", Record(create, XT_REC_KERNEL_CREATE, kernel));
  create.name_len = 40;
  seeds.emplace_back("kernel_create_truncated",
                     Record(create, XT_REC_KERNEL_CREATE, std::string(40, 'k'), XT_FLAG_TRUNCATED));

  xt_launch_kernel launch{};
  launch.command_list = 0x55550000c000;
  launch.kernel = create.kernel;
  launch.group_count[0] = 256;
  launch.group_count[1] = launch.group_count[2] = 1;
  launch.kind = XT_LAUNCH_COOPERATIVE;
  seeds.emplace_back("launch_kernel", Record(launch, XT_REC_LAUNCH_KERNEL));

  xt_thread_name thread{};
  std::memcpy(thread.comm, "pt_main_thread", 14);
  std::memcpy(thread.process_comm, "python3", 7);
  seeds.emplace_back("thread_name", Record(thread, XT_REC_THREAD_NAME));

  xt_ze_call call{};
  call.fn = XT_ZE_MEM_ALLOC_DEVICE;
  call.arg[0] = 0x5555000d0000;
  call.arg[2] = 1 << 20;
  call.data[0] = 0xffff81000000;
  seeds.emplace_back("ze_call", Record(call, XT_REC_ZE_CALL));

  xt_ze_execute execute{};
  execute.queue = 0x55550000e000;
  execute.num_lists = 2;
  seeds.emplace_back("ze_execute",
                     Record(execute, XT_REC_ZE_EXECUTE, Words({0x55550000c000, 0x55550000c100})));

  const std::string domain = "dnnl::primitive::execute";
  xt_itt_name name{};
  name.handle = 0x555500010000;
  name.kind = XT_ITT_NAME_DOMAIN;
  name.name_len = static_cast<uint32_t>(domain.size());
  seeds.emplace_back("itt_name", Record(name, XT_REC_ITT_NAME, domain));

  xt_itt_event task{};
  task.domain = name.handle;
  task.name = 0x555500010100;
  task.op = XT_ITT_TASK_BEGIN;
  seeds.emplace_back("itt_event", Record(task, XT_REC_ITT_EVENT));
  const std::string range = "aten::linear";
  task.domain = task.name = 0;
  task.origin = XT_ITT_FROM_PYTORCH;
  task.name_len = static_cast<uint32_t>(range.size());
  seeds.emplace_back("itt_event_pytorch", Record(task, XT_REC_ITT_EVENT, range));

  xt_itt_state state{};
  state.state = XT_COLLECT_PAUSED;
  seeds.emplace_back("itt_state", Record(state, XT_REC_ITT_STATE));

  // i915 EXECBUFFER2 (DESIGN.md): buffers_ptr, count, batch offset/len, flags, rsvd1 = context.
  xt_drm_ioctl ioctl{};
  ioctl.fd = 5;
  ioctl.cmd = 0x40406469;
  ioctl.rdev = (226u << 20) | 128;
  ioctl.mode = 020660;
  std::string execbuf(64, '\0');
  const uint64_t buffers = 0x7f0000001000, count = 3, flags = 1, context = 7;
  std::memcpy(&execbuf[0], &buffers, 8);
  std::memcpy(&execbuf[8], &count, 4);
  std::memcpy(&execbuf[40], &flags, 8);
  std::memcpy(&execbuf[48], &context, 8);
  ioctl.in_len = static_cast<uint32_t>(execbuf.size());
  seeds.emplace_back("drm_ioctl_i915_execbuffer2", Record(ioctl, XT_REC_DRM_IOCTL, execbuf));
  // xe EXEC: exec_queue_id@8, num_syncs@12, syncs@16, address@24, num_batch_buffer@32.
  ioctl.cmd = 0x40386449;
  std::string exec(56, '\0');
  const uint32_t queue = 2;
  const uint16_t batches = 1;
  std::memcpy(&exec[8], &queue, 4);
  std::memcpy(&exec[32], &batches, 2);
  ioctl.in_len = static_cast<uint32_t>(exec.size());
  seeds.emplace_back("drm_ioctl_xe_exec", Record(ioctl, XT_REC_DRM_IOCTL, exec));

  xt_drm_fence fence{};
  fence.context = 7;
  fence.seqno = 42;
  seeds.emplace_back("drm_fence", Record(fence, XT_REC_DRM_FENCE));

  const std::string argv_tail = std::string("python3\0train.py\0--epochs\0" "3", 27);
  xt_process_event process{};
  process.parent_pid = 1;
  process.ns_pid = 4242;
  std::memcpy(process.comm, "python3", 7);
  process.args_len = static_cast<uint32_t>(argv_tail.size());
  seeds.emplace_back("process_exec", Record(process, XT_REC_PROCESS_EXEC, argv_tail));
  process.args_len = 0;
  seeds.emplace_back("process_fork", Record(process, XT_REC_PROCESS_FORK));
  xt_process_exit exit{};
  exit.exit_code = 256;
  seeds.emplace_back("process_exit", Record(exit, XT_REC_PROCESS_EXIT));
  xt_record_header maps{};
  struct { xt_record_header hdr; } maps_record{maps};
  seeds.emplace_back("process_maps", Record(maps_record, XT_REC_PROCESS_MAPS));

  for (const auto& [file, bytes] : seeds) {
    const std::string path = std::string(argv[1]) + "/" + file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "%s: cannot write %s\n", argv[0], path.c_str());
      return 1;
    }
  }
  std::printf("%zu seeds written to %s\n", seeds.size(), argv[1]);
  return 0;
}
