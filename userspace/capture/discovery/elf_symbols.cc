// Dynamic-symbol lookup with libelf (mapped, not read: libtorch is hundreds of MB and only
// its .dynsym and .dynstr pages are touched).
#include "capture/discovery/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace xtrace {

Result<std::vector<bool>> ElfExports(const std::string& path,
                                     std::span<const std::string_view> symbols) {
  auto values = ElfExportValues(path, symbols);
  if (!values.ok()) return values.status();
  std::vector<bool> found;
  for (const auto& v : *values) found.push_back(v.has_value());
  return found;
}

namespace {

// Calls `visit(elf, section header, data)` for each section of `type` in the file at `path`,
// the file mapped, not read. A file that is not ELF (or not readable) is an error naming it.
template <typename Visit>
Status VisitSections(const std::string& path, uint32_t type, Visit visit) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Status::Error("libelf: version mismatch");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error("opening " + path + ": " + std::strerror(errno));
  Elf* elf = elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr);
  if (!elf) return Status::Error(path + ": not an ELF file (" + elf_errmsg(-1) + ")");
  const bool is_elf = elf_kind(elf) == ELF_K_ELF;
  for (Elf_Scn* scn = nullptr; is_elf && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || shdr.sh_entsize == 0) continue;
    if (Elf_Data* data = elf_getdata(scn, nullptr)) visit(elf, shdr, data);
  }
  elf_end(elf);
  if (!is_elf) return Status::Error(path + ": not an ELF file");
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::optional<uint64_t>>> ElfExportValues(
    const std::string& path, std::span<const std::string_view> symbols) {
  std::vector<std::optional<uint64_t>> found(symbols.size());
  Status st = VisitSections(path, SHT_DYNSYM, [&](Elf* elf, const GElf_Shdr& shdr, Elf_Data* data) {
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name) continue;
      for (size_t k = 0; k < symbols.size(); ++k)
        if (!found[k] && symbols[k] == name) found[k] = sym.st_value;
    }
  });
  if (!st.ok()) return st;
  return found;
}

Result<std::vector<std::string>> ElfNeeded(const std::string& path) {
  std::vector<std::string> needed;
  Status st = VisitSections(path, SHT_DYNAMIC, [&](Elf* elf, const GElf_Shdr& shdr, Elf_Data* data) {
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag != DT_NEEDED) continue;
      if (const char* name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val)) needed.emplace_back(name);
    }
  });
  if (!st.ok()) return st;
  return needed;
}

}  // namespace xtrace
