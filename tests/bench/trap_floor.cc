// Loading and attaching the empty floor programs.
#include "trap_floor.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <array>
#include <cerrno>
#include <string_view>

#include "capture/bpf/capture_maps.h"
#include "capture/discovery/elf_function_offsets.h"
#include "capture/bpf/uprobe_multi.h"
#include "trap_floor.skel.h"

namespace xtrace::bench {

void TrapFloor::SkeletonDeleter::operator()(::trap_floor* skel) const { trap_floor__destroy(skel); }

TrapFloor::~TrapFloor() {
  links_.clear();  // links before their programs
  multi_links_.clear();
  skel_.reset();
}

Status TrapFloor::AttachEach(int pid, const std::string& library, const std::string& symbol,
                             uint64_t offset, bool with_return) {
  skel_.reset(trap_floor__open_and_load());
  if (!skel_) return Status::Error("loading the trap-floor programs: " + BpfErrorText(errno));
  auto entry = AttachUprobe(skel_->progs.empty_entry, pid, library, symbol, false, 0, offset);
  if (!entry.ok()) return entry.status().WithContext("trap floor");
  links_.push_back(std::move(*entry));
  if (with_return) {
    auto ret = AttachUprobe(skel_->progs.empty_return, pid, library, symbol, true, 0, offset);
    if (!ret.ok()) return ret.status().WithContext("trap floor");
    links_.push_back(std::move(*ret));
  }
  return Status::Ok();
}

Result<std::unique_ptr<TrapFloor>> TrapFloor::Attach(int pid, const std::string& library,
                                                     const std::string& symbol, uint64_t offset,
                                                     bool with_return) {
  std::unique_ptr<TrapFloor> self(new TrapFloor());
  const std::array<std::string_view, 1> names = {symbol};
  auto offsets = FindFunctionOffsets(library, names);
  if (!offsets.ok()) return offsets.status().WithContext("trap floor");
  auto it = offsets->find(symbol);
  if (it == offsets->end()) return Status::Error("trap floor: " + library + " has no " + symbol);
  const uint64_t file_offset[] = {it->second + offset};
  const uint64_t cookie[] = {0};

  self->skel_.reset(trap_floor__open());
  if (!self->skel_) return Status::Error("opening the trap-floor programs: " + BpfErrorText(errno));
  PrepareUprobeMulti(self->skel_->progs.empty_entry);
  PrepareUprobeMulti(self->skel_->progs.empty_return);
  bool multi = trap_floor__load(self->skel_.get()) == 0;
  if (multi) {
    auto entry = AttachUprobeMulti(self->skel_->progs.empty_entry, pid, library, file_offset,
                                   cookie, false);
    multi = entry.ok();
    if (multi) self->multi_links_.push_back(std::move(*entry));
    if (multi && with_return) {
      auto ret = AttachUprobeMulti(self->skel_->progs.empty_return, pid, library, file_offset,
                                   cookie, true);
      if (!ret.ok()) return ret.status().WithContext("trap floor");
      self->multi_links_.push_back(std::move(*ret));
    }
  }
  if (!multi) {  // a kernel before 6.6: the single uprobes the collector falls back to
    self->multi_links_.clear();
    if (Status st = self->AttachEach(pid, library, symbol, offset, with_return); !st.ok()) return st;
  }
  return self;
}

Result<std::unique_ptr<TrapFloor>> TrapFloor::AttachSyscalls() { return AttachTracepoints(false); }

Result<std::unique_ptr<TrapFloor>> TrapFloor::AttachIoctlEvents() { return AttachTracepoints(true); }

Result<std::unique_ptr<TrapFloor>> TrapFloor::AttachTracepoints(bool ioctl_events) {
  std::unique_ptr<TrapFloor> self(new TrapFloor());
  self->skel_.reset(trap_floor__open_and_load());
  if (!self->skel_) return Status::Error("loading the trap-floor programs: " + BpfErrorText(errno));
  const auto& progs = self->skel_->progs;
  const std::array pair = ioctl_events ? std::array{progs.empty_ioctl_enter, progs.empty_ioctl_exit}
                                       : std::array{progs.empty_sys_enter, progs.empty_sys_exit};
  for (bpf_program* prog : pair) {
    // Attached where the section says: a BTF tracepoint or a trace event.
    bpf_link* link = bpf_program__attach(prog);
    if (!link)
      return Status::Error(std::string("trap floor: ") + bpf_program__section_name(prog) + ": " +
                           BpfErrorText(errno));
    self->links_.emplace_back(link);
  }
  return self;
}

std::vector<uint32_t> TrapFloor::program_ids() const {
  std::vector<uint32_t> ids;
  for (bpf_program* prog : {skel_->progs.empty_entry, skel_->progs.empty_return}) {
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) ids.push_back(info.id);
  }
  return ids;
}

}  // namespace xtrace::bench
