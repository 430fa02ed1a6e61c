// ELF64 symbol lookup with bounds checks on every table read (the file is the target's: it
// may be anything).
#include "capture/discovery/elf_function_offsets.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "base/unique_fd.h"

namespace xtrace {
namespace {

class MappedFile {
 public:
  ~MappedFile() {
    if (data_) ::munmap(const_cast<void*>(static_cast<const void*>(data_)), size_);
  }
  Status Open(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return Status::Error(path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Status::Error(path + ": " + std::strerror(errno));
    size_ = static_cast<size_t>(st.st_size);
    if (size_ < sizeof(Elf64_Ehdr)) return Status::Error(path + ": too small for an ELF file");
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) return Status::Error(path + ": mmap: " + std::strerror(errno));
    data_ = static_cast<const uint8_t*>(p);
    return Status::Ok();
  }
  // `count` objects of T at `offset`, or nullptr if they do not fit in the file.
  template <typename T>
  const T* At(uint64_t offset, uint64_t count = 1) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The file's ELF header, checked to be one this file reads.
Result<const Elf64_Ehdr*> Header(const MappedFile& file, const std::string& path) {
  const auto* eh = file.At<Elf64_Ehdr>(0);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_phentsize != sizeof(Elf64_Phdr)) {
    return Status::Error(path + ": not a 64-bit little-endian ELF file");
  }
  return eh;
}

}  // namespace

Result<std::vector<FileRange>> ExecutableSegments(const std::string& path) {
  MappedFile file;
  if (Status st = file.Open(path); !st.ok()) return st;
  auto eh = Header(file, path);
  if (!eh.ok()) return eh.status();
  const auto* segments = file.At<Elf64_Phdr>((*eh)->e_phoff, (*eh)->e_phnum);
  if (!segments) return Status::Error(path + ": program headers out of bounds");
  std::vector<FileRange> ranges;
  for (int i = 0; i < (*eh)->e_phnum; ++i)
    if (segments[i].p_type == PT_LOAD && (segments[i].p_flags & PF_X))
      ranges.push_back({segments[i].p_offset, segments[i].p_filesz});
  return ranges;
}

Result<std::map<std::string, uint64_t, std::less<>>> FindFunctionOffsets(
    const std::string& path, std::span<const std::string_view> names) {
  MappedFile file;
  if (Status st = file.Open(path); !st.ok()) return st;
  auto header = Header(file, path);
  if (!header.ok()) return header.status();
  const Elf64_Ehdr* eh = *header;
  const auto* sections = file.At<Elf64_Shdr>(eh->e_shoff, eh->e_shnum);
  const auto* segments = file.At<Elf64_Phdr>(eh->e_phoff, eh->e_phnum);
  if (!sections || !segments) return Status::Error(path + ": section or program headers out of bounds");

  // A symbol's value is a virtual address; uprobes want the file offset behind it.
  auto file_offset = [&](uint64_t vaddr) -> std::optional<uint64_t> {
    for (int i = 0; i < eh->e_phnum; ++i) {
      const Elf64_Phdr& ph = segments[i];
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr &&
          vaddr - ph.p_vaddr < ph.p_filesz)
        return vaddr - ph.p_vaddr + ph.p_offset;
    }
    return std::nullopt;
  };

  const std::set<std::string_view> wanted(names.begin(), names.end());
  std::map<std::string, uint64_t, std::less<>> found;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& sh = sections[i];
    if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) continue;
    if (sh.sh_link >= eh->e_shnum || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    const auto* syms = file.At<Elf64_Sym>(sh.sh_offset, sh.sh_size / sizeof(Elf64_Sym));
    const auto* strs = file.At<char>(strtab.sh_offset, strtab.sh_size);
    if (!syms || !strs) return Status::Error(path + ": symbol table out of bounds");
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      const Elf64_Sym& sym = syms[k];
      const int type = ELF64_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0 || sym.st_name >= strtab.sh_size)
        continue;
      const std::string_view name(strs + sym.st_name, strnlen(strs + sym.st_name, strtab.sh_size - sym.st_name));
      if (!wanted.count(name) || found.count(name)) continue;
      if (auto off = file_offset(sym.st_value)) found.emplace(std::string(name), *off);
    }
  }
  return found;
}

}  // namespace xtrace
