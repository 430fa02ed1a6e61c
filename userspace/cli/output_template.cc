// Expanding %r, %p, %h in output names.
#include "cli/output_template.h"

#include <unistd.h>

#include <climits>

#include "correlate/process_rank.h"

extern char** environ;

namespace xtrace {

OutputTemplateValues CurrentOutputTemplateValues() {
  OutputTemplateValues v;
  // The same block /proc/self/environ holds: NAME=VALUE entries, each ending in a NUL.
  std::string block;
  for (char** e = environ; e && *e; ++e) {
    block += *e;
    block += '\0';
  }
  v.rank = RankFromEnviron(block);
  v.pid = static_cast<uint32_t>(getpid());
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) v.host = host;
  v.host = v.host.substr(0, v.host.find('.'));
  return v;
}

Result<std::string> ExpandOutputTemplate(std::string_view pattern, const OutputTemplateValues& v) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (++i == pattern.size())
      return Status::Error("'" + std::string(pattern) + "' ends in a lone %; write %% for a percent sign");
    switch (pattern[i]) {
      case 'r':
        if (!v.rank)
          return Status::Error("'" + std::string(pattern) + "': %r needs a rank, and none of RANK, "
                               "PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID, ... is "
                               "set (run xtrace under mpirun or srun, or use %p)");
        out += std::to_string(*v.rank);
        break;
      case 'p': out += std::to_string(v.pid); break;
      case 'h':
        if (v.host.empty()) return Status::Error("%h: the host has no name");
        out += v.host;
        break;
      case '%': out += '%'; break;
      default:
        return Status::Error("'" + std::string(pattern) + "': unknown %" + pattern[i] +
                             " (templates: %r rank, %p pid, %h host, %% percent sign)");
    }
  }
  return out;
}

}  // namespace xtrace
