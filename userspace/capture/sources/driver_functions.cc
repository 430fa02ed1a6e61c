// Handed-out driver functions located by build id; see driver_functions.h.
#include "capture/sources/driver_functions.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"
#include "capture/discovery/proc_maps.h"

namespace xtrace {
namespace {

// elf.h: a GNU build id note is named "GNU" (with its NUL) and typed NT_GNU_BUILD_ID.
constexpr char kGnuNoteName[] = "GNU";

}  // namespace

Result<std::string> ElfBuildId(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Status::Error("libelf: version mismatch");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error("opening " + path + ": " + std::strerror(errno));
  Elf* elf = elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr);
  if (!elf) return Status::Error(path + ": not an ELF file (" + elf_errmsg(-1) + ")");
  if (elf_kind(elf) != ELF_K_ELF) {
    elf_end(elf);
    return Status::Error(path + ": not an ELF file");
  }
  std::string id;
  for (Elf_Scn* scn = nullptr; id.empty() && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    GElf_Nhdr note;
    size_t name_at = 0, desc_at = 0;
    for (size_t at = 0; id.empty() && (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
      if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != sizeof(kGnuNoteName) ||
          std::memcmp(static_cast<const char*>(data->d_buf) + name_at, kGnuNoteName,
                      sizeof(kGnuNoteName)) != 0)
        continue;
      const auto* bytes = static_cast<const unsigned char*>(data->d_buf) + desc_at;
      static constexpr char kHex[] = "0123456789abcdef";
      for (size_t i = 0; i < note.n_descsz; ++i) {
        id.push_back(kHex[bytes[i] >> 4]);
        id.push_back(kHex[bytes[i] & 15]);
      }
    }
  }
  elf_end(elf);
  return id;
}

bool DriverFunctions::Add(std::string_view maps_text, std::string_view name, uint64_t address) {
  for (const MappedSegment& s : ParseMappedSegments(maps_text)) {
    if (!s.executable || address < s.start || address >= s.end) continue;
    auto known = build_id_of_path_.find(s.path);
    if (known == build_id_of_path_.end()) {
      auto id = ElfBuildId(s.path);
      known = build_id_of_path_.emplace(s.path, id.ok() ? *id : std::string()).first;
    }
    if (known->second.empty()) return false;
    by_build_id_[known->second][std::string(name)] = address - s.start + s.file_offset;
    return true;
  }
  return false;
}

const DriverFunctions::Offsets* DriverFunctions::Of(const std::string& build_id) const {
  if (build_id.empty()) return nullptr;
  auto it = by_build_id_.find(build_id);
  return it == by_build_id_.end() ? nullptr : &it->second;
}

bool DriverFunctions::HandsOut(std::string_view name) const {
  for (const auto& [build_id, offsets] : by_build_id_)
    if (offsets.find(name) != offsets.end()) return true;
  return false;
}

}  // namespace xtrace
