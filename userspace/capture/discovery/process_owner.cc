// Process owners from /proc and user names from the password database.
#include "capture/discovery/process_owner.h"

#include <pwd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace xtrace {

std::optional<ProcessUids> ParseProcessUids(std::string_view text) {
  static constexpr std::string_view kUid = "Uid:";
  size_t at = 0;
  if (!text.starts_with(kUid)) {
    at = text.find("\nUid:");
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  std::string_view line = text.substr(at + kUid.size());
  line = line.substr(0, line.find('\n'));
  std::istringstream fields{std::string(line)};
  ProcessUids uids;
  if (!(fields >> uids.real >> uids.effective >> uids.saved)) return std::nullopt;
  return uids;
}

std::optional<ProcessUids> ReadProcessUids(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseProcessUids(text.str());
}

Result<uid_t> ResolveUser(const std::string& user) {
  if (user.empty()) return Status::Error("'' is not a user");
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found) return found->pw_uid;
  uid_t uid = 0;
  const char* end = user.data() + user.size();
  auto [ptr, ec] = std::from_chars(user.data(), end, uid);
  if (ec != std::errc() || ptr != end) return Status::Error("no user named '" + user + "'");
  return uid;
}

std::string DescribeUser(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
  const std::string number = "uid " + std::to_string(uid);
  return found ? std::string(found->pw_name) + " (" + number + ")" : number;
}

}  // namespace xtrace
