// Asking a held process about the Level Zero objects it made before the attach: where the
// query functions are in its loader (and a `jmp .` for the calls to return to), and the
// calls made in the held thread that name a kernel, a command list, a queue or an event. What
// was asked, and when, is ze_query.cc's bookkeeping.
#include "capture/sources/ze_query.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "base/hex.h"
#include "base/unique_fd.h"
#include "capture/discovery/elf_symbols.h"
#include "capture/discovery/proc_maps.h"
#include "model/ze_api_views.h"
#include "xtrace/hold.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

constexpr int32_t kZeResultSuccess = 0;

}  // namespace

Result<uint64_t> FindSelfLoop(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error("opening " + path + ": " + std::strerror(errno));
  Elf64_Ehdr eh{};
  if (pread(fd.get(), &eh, sizeof(eh), 0) != static_cast<ssize_t>(sizeof(eh)) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return Status::Error(path + ": not a 64-bit ELF file");
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd.get(), &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * sizeof(ph))) !=
        static_cast<ssize_t>(sizeof(ph)))
      break;
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || ph.p_filesz < 2) continue;
    std::string bytes(ph.p_filesz, '\0');
    if (pread(fd.get(), bytes.data(), bytes.size(), static_cast<off_t>(ph.p_offset)) !=
        static_cast<ssize_t>(bytes.size()))
      return Status::Error("reading " + path + ": " + std::strerror(errno));
    const size_t at = bytes.find("\xeb\xfe");
    if (at != std::string::npos) return ph.p_vaddr + at;
  }
  return Status::Error(path + " has no `jmp .` in its code to return to");
}

Result<QueryTargetAddresses> ResolveQueryTarget(uint32_t pid) {
  auto loaders = FindMappedLibraries(pid, "libze_loader.so");
  if (!loaders.ok()) return loaders.status();
  if (loaders->empty()) return Status::Error("it has no Level Zero loader mapped");
  const MappedLibrary& loader = loaders->front();
  const auto base = LoadBase(pid, loader);
  if (!base) return Status::Error("cannot find where " + loader.path + " is loaded");
  // zeKernelGetName first; then zeDeviceGetProperties and Level Zero 1.9's queries.
  static constexpr std::string_view kLoaderSymbols[] = {
      "zeKernelGetName",          "zeDeviceGetProperties",          "zeCommandListGetDeviceHandle",
      "zeCommandListGetOrdinal",  "zeCommandListImmediateGetIndex", "zeCommandListIsImmediate",
      "zeCommandQueueGetOrdinal", "zeCommandQueueGetIndex",         "zeEventGetEventPool",
      "zeEventPoolGetFlags"};
  // The file it maps, reached whichever way works (a chrooted process's path is from our
  // root, a container's from its own).
  const UniqueFd loader_fd = OpenMappedFile(pid, loader);
  if (!loader_fd.valid()) return Status::Error("cannot open " + loader.path + " as pid " + std::to_string(pid) + " maps it");
  const std::string loader_file = "/proc/self/fd/" + std::to_string(loader_fd.get());
  auto values = ElfExportValues(loader_file, kLoaderSymbols);
  if (!values.ok()) return values.status();
  if (!(*values)[0]) return Status::Error(loader.path + " has no zeKernelGetName");
  QueryTargetAddresses a;
  a.loader = loader.path;
  uint64_t* const slots[] = {&a.kernel_get_name,          &a.device_get_properties,
                             &a.list_get_device,          &a.list_get_ordinal,
                             &a.list_immediate_get_index, &a.list_is_immediate,
                             &a.queue_get_ordinal,        &a.queue_get_index,
                             &a.event_get_pool,           &a.pool_get_flags};
  for (size_t i = 0; i < std::size(slots); ++i) {
    if ((*values)[i]) *slots[i] = *base + *(*values)[i];
    else if (i >= 2 && a.first_missing.empty()) a.first_missing = kLoaderSymbols[i];
  }
  auto loop = FindSelfLoop(loader_file);
  if (!loop.ok()) return loop.status();
  a.loop = *base + *loop;
  // errno lives in the thread's TLS: saved and put back around the calls, through libc's own
  // accessor. Without a libc to ask, the calls go ahead: the loader and driver rarely set it.
  if (auto libcs = FindMappedLibraries(pid, "libc.so"); libcs.ok() && !libcs->empty()) {
    static constexpr std::string_view kLibcSymbols[] = {"__errno_location"};
    const UniqueFd libc_fd = OpenMappedFile(pid, libcs->front());
    auto libc_values = libc_fd.valid()
                           ? ElfExportValues("/proc/self/fd/" + std::to_string(libc_fd.get()), kLibcSymbols)
                           : Result<std::vector<std::optional<uint64_t>>>(Status::Error("unreadable"));
    const auto libc_base = LoadBase(pid, libcs->front());
    if (libc_values.ok() && (*libc_values)[0] && libc_base)
      a.errno_location = *libc_base + *(*libc_values)[0];
  }
  return a;
}

uint32_t QueryTargetAddresses::Kinds() const {
  uint32_t kinds = 1u << XT_QUERY_KERNEL;
  if (list_get_device && list_get_ordinal && list_immediate_get_index && list_is_immediate &&
      device_get_properties)
    kinds |= 1u << XT_QUERY_COMMAND_LIST;
  if (queue_get_ordinal && queue_get_index) kinds |= 1u << XT_QUERY_COMMAND_QUEUE;
  if (event_get_pool && pool_get_flags) kinds |= 1u << XT_QUERY_EVENT;
  return kinds;
}

namespace {

// What the answer's bytes hold before the call: no ordinal, index, ze_bool_t or canonical
// address has this value, so a driver that says success and writes nothing (Level Zero's null
// driver does) is told from one that answers 0.
constexpr uint64_t kUnwritten = 0xa5a5a5a5a5a5a5a5;

// Level Zero's answer-by-pointer: `function(handle, out)` into the scratch area, `size` bytes.
Result<uint64_t> AskValue(RemoteCallSession& session, uint64_t function, const char* name,
                          uint64_t handle, size_t size, uint64_t timeout_ns) {
  uint64_t value = kUnwritten;
  const uint64_t at = session.scratch();
  if (Status st = session.Write(at, &value, sizeof(value)); !st.ok()) return st;
  auto r = session.Call(function, {handle, at}, timeout_ns);
  if (!r.ok()) return r.status();
  if (static_cast<int32_t>(*r) != kZeResultSuccess)
    return Status::Error(std::string(name) + " returned " + Hex(static_cast<uint32_t>(*r)));
  value = 0;
  if (Status st = session.Read(at, &value, size); !st.ok()) return st;
  const uint64_t unwritten = size < sizeof(value) ? kUnwritten & ((uint64_t{1} << (8 * size)) - 1) : kUnwritten;
  if (value == unwritten) return Status::Error(std::string(name) + " returned success without writing its answer");
  return value;
}

// ze_device_properties_t (x86-64): stype at 0, pNext at 8, the 16-byte uuid at 96, 368 bytes
// with the name; asked with room to spare.
constexpr uint32_t kStructureTypeDeviceProperties = 0x3;  // ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES
constexpr size_t kDevicePropertiesUuid = 96;
constexpr size_t kDevicePropertiesRoom = 1024;

// A learned creation: the call `fn` on the held thread, over the hold.
ApiCall LearnedCallOf(uint16_t fn, uint32_t pid, uint32_t tid) {
  ApiCall call;
  call.pid = pid;
  call.tid = tid;
  call.fn = fn;
  call.learned = true;
  return call;
}

}  // namespace

Result<std::vector<ApiCall>> ZeQueries::AskObject(RemoteCallSession& session,
                                                  const QueryTargetAddresses& t, uint32_t pid,
                                                  uint64_t handle, uint8_t kind) {
  std::vector<ApiCall> calls;
  const uint32_t tid = slot_->tid;
  if (kind == XT_QUERY_COMMAND_LIST) {
    auto immediate = AskValue(session, t.list_is_immediate, "zeCommandListIsImmediate", handle, 1, CallBound());
    if (!immediate.ok()) return immediate.status();
    auto device = AskValue(session, t.list_get_device, "zeCommandListGetDeviceHandle", handle, 8, CallBound());
    if (!device.ok()) return device.status();
    auto ordinal = AskValue(session, t.list_get_ordinal, "zeCommandListGetOrdinal", handle, 4, CallBound());
    if (!ordinal.ok()) return ordinal.status();
    uint64_t index = 0;
    if (*immediate) {
      auto i = AskValue(session, t.list_immediate_get_index, "zeCommandListImmediateGetIndex", handle, 4, CallBound());
      if (!i.ok()) return i.status();
      index = *i;
    }
    // Which device the handle is: its UUID, as a process's own zeDeviceGetProperties says.
    if (*device && !devices_known_.count({pid, *device})) {
      std::vector<uint8_t> props(kDevicePropertiesRoom, 0);
      std::memcpy(props.data(), &kStructureTypeDeviceProperties, sizeof(uint32_t));
      const uint64_t at = session.scratch();
      if (Status st = session.Write(at, props.data(), props.size()); !st.ok()) return st;
      auto r = session.Call(t.device_get_properties, {*device, at}, CallBound());
      if (!r.ok()) return r.status();
      if (static_cast<int32_t>(*r) != kZeResultSuccess)
        return Status::Error("zeDeviceGetProperties returned " + Hex(static_cast<uint32_t>(*r)));
      uint64_t uuid[2] = {0, 0};
      if (Status st = session.Read(at + kDevicePropertiesUuid, uuid, sizeof(uuid)); !st.ok()) return st;
      constexpr uint16_t kProps = XT_ZE_DEVICE_GET_PROPERTIES;
      ApiCall props_call = LearnedCallOf(kProps, pid, tid);
      props_call.arg[kZeArgSlot<kProps, "device">] = *device;
      props_call.arg[kZeArgSlot<kProps, "uuid_lo">] = uuid[0];
      props_call.arg[kZeArgSlot<kProps, "uuid_hi">] = uuid[1];
      calls.push_back(props_call);
      devices_known_.insert({pid, *device});
    }
    if (*immediate) {
      constexpr uint16_t kFn = XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE;
      ApiCall c = LearnedCallOf(kFn, pid, tid);
      c.arg[kZeArgSlot<kFn, "device">] = *device;
      c.arg[kZeArgSlot<kFn, "ordinal">] = *ordinal;
      c.arg[kZeArgSlot<kFn, "index">] = index;
      c.arg[kZeArgSlot<kFn, "command_list">] = handle;
      calls.push_back(c);
    } else {
      constexpr uint16_t kFn = XT_ZE_COMMAND_LIST_CREATE;
      ApiCall c = LearnedCallOf(kFn, pid, tid);
      c.arg[kZeArgSlot<kFn, "device">] = *device;
      c.arg[kZeArgSlot<kFn, "ordinal">] = *ordinal;
      c.arg[kZeArgSlot<kFn, "command_list">] = handle;
      calls.push_back(c);
    }
  } else if (kind == XT_QUERY_COMMAND_QUEUE) {
    // Level Zero has no question for a queue's device: its lists' device stands for it.
    auto ordinal = AskValue(session, t.queue_get_ordinal, "zeCommandQueueGetOrdinal", handle, 4, CallBound());
    if (!ordinal.ok()) return ordinal.status();
    auto index = AskValue(session, t.queue_get_index, "zeCommandQueueGetIndex", handle, 4, CallBound());
    if (!index.ok()) return index.status();
    constexpr uint16_t kFn = XT_ZE_COMMAND_QUEUE_CREATE;
    ApiCall c = LearnedCallOf(kFn, pid, tid);
    c.arg[kZeArgSlot<kFn, "ordinal">] = *ordinal;
    c.arg[kZeArgSlot<kFn, "index">] = *index;
    c.arg[kZeArgSlot<kFn, "command_queue">] = handle;
    calls.push_back(c);
  } else if (kind == XT_QUERY_EVENT) {
    auto pool = AskValue(session, t.event_get_pool, "zeEventGetEventPool", handle, 8, CallBound());
    if (!pool.ok()) return pool.status();
    if (*pool == 0) return calls;  // an event of no pool (counter-based): nothing more to say
    if (!pool_flags_.count({pid, *pool})) {
      auto flags = AskValue(session, t.pool_get_flags, "zeEventPoolGetFlags", *pool, 4, CallBound());
      if (!flags.ok()) return flags.status();
      constexpr uint16_t kFn = XT_ZE_EVENT_POOL_CREATE;
      ApiCall c = LearnedCallOf(kFn, pid, tid);
      c.arg[kZeArgSlot<kFn, "flags">] = *flags;
      c.arg[kZeArgSlot<kFn, "event_pool">] = *pool;
      calls.push_back(c);
      pool_flags_[{pid, *pool}] = static_cast<uint32_t>(*flags);
    }
    constexpr uint16_t kFn = XT_ZE_EVENT_CREATE;
    ApiCall c = LearnedCallOf(kFn, pid, tid);
    c.arg[kZeArgSlot<kFn, "event_pool">] = *pool;
    c.arg[kZeArgSlot<kFn, "event">] = handle;
    calls.push_back(c);
  } else {
    return Status::Error("an object of unknown kind " + std::to_string(kind));
  }
  return calls;
}

Result<LearnedKernel> ZeQueries::AskKernelName(RemoteCallSession& session, uint64_t function,
                                               uint64_t kernel) {
  // zeKernelGetName(hKernel, size_t *pSize, char *pName): the size first, then the name.
  const uint64_t size_at = session.scratch();
  const uint64_t name_at = session.scratch() + 16;
  const uint64_t room = session.scratch_bytes() - 16;
  uint64_t size = 0;
  if (Status st = session.Write(size_at, &size, sizeof(size)); !st.ok()) return st;
  auto r = session.Call(function, {kernel, size_at, 0}, CallBound());
  if (!r.ok()) return r.status();
  if (static_cast<int32_t>(*r) != kZeResultSuccess)
    return Status::Error("zeKernelGetName returned " + Hex(static_cast<uint32_t>(*r)));
  if (Status st = session.Read(size_at, &size, sizeof(size)); !st.ok()) return st;
  if (size == 0 || size > room)
    return Status::Error("zeKernelGetName gave a size of " + std::to_string(size) + " bytes (room: " +
                         std::to_string(room) + ")");
  if (Status st = session.Write(size_at, &size, sizeof(size)); !st.ok()) return st;
  r = session.Call(function, {kernel, size_at, name_at}, CallBound());
  if (!r.ok()) return r.status();
  if (static_cast<int32_t>(*r) != kZeResultSuccess)
    return Status::Error("zeKernelGetName returned " + Hex(static_cast<uint32_t>(*r)));
  std::string name(size, '\0');
  if (Status st = session.Read(name_at, name.data(), size); !st.ok()) return st;
  name.resize(std::strlen(name.c_str()));
  return LearnedKernel{kernel, std::move(name)};
}

}  // namespace xtrace
