// Reference-counted probe links per library file.
#include "capture/discovery/library_attachments.h"

#include <iterator>

namespace xtrace {

LibraryAttachments::Outcome LibraryAttachments::Use(size_t owner, const MappedLibrary& lib,
                                                    uint32_t pid, bool per_process,
                                                    const AttachFn& attach, std::string* error) {
  const int64_t scope = per_process ? int64_t{pid} : -1;
  const Key key{owner, lib.dev_major, lib.dev_minor, lib.inode, scope};
  by_pid_[pid].insert(key);
  auto [it, added] = files_.try_emplace(key);
  it->second.users.insert(pid);
  if (!added) return Outcome::kShared;
  it->second.path = lib.path;
  auto links = attach(lib, per_process ? static_cast<int>(pid) : -1);
  if (!links.ok()) {
    if (error) *error = links.status().message();
    return Outcome::kFailed;
  }
  it->second.links = std::move(*links);
  return it->second.links.empty() ? Outcome::kFailed : Outcome::kAttached;
}

bool LibraryAttachments::HasLinks(size_t owner, uint32_t pid) const {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return false;
  for (const Key& key : it->second) {
    if (std::get<0>(key) != owner) continue;
    auto file = files_.find(key);
    if (file != files_.end() && !file->second.links.empty()) return true;
  }
  return false;
}

void LibraryAttachments::Release(uint32_t pid, uint64_t now_ns) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return;
  for (const Key& key : it->second) {
    auto file = files_.find(key);
    if (file == files_.end()) continue;
    file->second.users.erase(pid);
    if (!file->second.users.empty()) continue;
    if (std::get<4>(key) >= 0) Drop(file);  // per process: its links go now
    else file->second.idle_since_ns = now_ns;
  }
  by_pid_.erase(it);
}

void LibraryAttachments::ExpireIdle(uint64_t now_ns, uint64_t grace_ns) {
  for (auto it = files_.begin(); it != files_.end();) {
    auto next = std::next(it);
    if (it->second.users.empty() && now_ns - it->second.idle_since_ns >= grace_ns) Drop(it);
    it = next;
  }
}

void LibraryAttachments::Drop(std::map<Key, Attachment>::iterator file) {
  reaper_.Destroy(std::move(file->second.links));
  files_.erase(file);
}

void LibraryAttachments::Clear() {
  while (!files_.empty()) Drop(files_.begin());
  by_pid_.clear();
}

size_t LibraryAttachments::link_count() const {
  size_t n = 0;
  for (const auto& [key, file] : files_) n += file.links.size();
  return n;
}

}  // namespace xtrace
