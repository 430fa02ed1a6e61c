// The main of a harness in the regular build (no libFuzzer there): runs every corpus input
// through LLVMFuzzerTestOneInput, then a fixed number of deterministic mutations of each
// (bit flips, byte overwrites, cuts, splices), so that `make test` exercises the harnesses
// and the code under them on every run. The real fuzzing is `make fuzz` (see README.md).
//
//   xtrace_fuzz_<name> [--mutations N] [--seed S] FILE_OR_DIR...
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

// xorshift64*: deterministic across runs and platforms, so a failure reproduces exactly.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed ? seed : 1) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  size_t Below(size_t n) { return n ? static_cast<size_t>(Next() % n) : 0; }

 private:
  uint64_t state_;
};

// One mutation of the kinds libFuzzer's own mutator starts with.
void Mutate(Bytes& b, const Bytes& other, Random& rng) {
  switch (rng.Below(6)) {
    case 0:  // flip one bit
      if (!b.empty()) b[rng.Below(b.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
      break;
    case 1: {  // overwrite a byte with an interesting value
      static constexpr uint8_t kValues[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
      if (!b.empty()) b[rng.Below(b.size())] = kValues[rng.Below(std::size(kValues))];
      break;
    }
    case 2:  // cut the tail
      b.resize(rng.Below(b.size() + 1));
      break;
    case 3:  // erase a range
      if (!b.empty()) {
        const size_t at = rng.Below(b.size());
        const size_t n = 1 + rng.Below(std::min<size_t>(b.size() - at, 64));
        b.erase(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
      }
      break;
    case 4: {  // splice in a piece of another input
      if (other.empty()) break;
      const size_t from = rng.Below(other.size());
      const size_t n = 1 + rng.Below(std::min<size_t>(other.size() - from, 256));
      const size_t at = rng.Below(b.size() + 1);
      b.insert(b.begin() + static_cast<ptrdiff_t>(at), other.begin() + static_cast<ptrdiff_t>(from),
               other.begin() + static_cast<ptrdiff_t>(from + n));
      break;
    }
    case 5:  // overwrite a little-endian word with a random one (sizes, counts, offsets)
      if (b.size() >= 4) {
        const size_t at = rng.Below(b.size() - 3);
        const uint32_t v = static_cast<uint32_t>(rng.Next());
        std::memcpy(&b[at], &v, sizeof(v));
      }
      break;
  }
}

// The input being run, for the crash handler: it is written to kCrashFile so that a failure
// in `make test` leaves the exact bytes to add to the corpus as a regression input.
constexpr const char* kCrashFile = "fuzz-crash-input";
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;

void OnCrash(int sig) {
  const int fd = ::open(kCrashFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    for (size_t done = 0; done < g_current_size;) {
      const ssize_t n = ::write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    static const char kMessage[] = "replay: crashed; the input is in ./fuzz-crash-input\n";
    (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  }
  ::raise(sig);  // SA_RESETHAND: now with the default action
}

void Run(const Bytes& input) {
  g_current = input.data();
  g_current_size = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

bool ReadInput(const std::filesystem::path& path, Bytes* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--mutations" || a == "--seed") && i + 1 < argc) {
      (a == "--seed" ? seed : mutations) = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::filesystem::is_directory(a)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(a))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(a);
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not stable; runs must be
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs (give corpus files or directories)\n", argv[0]);
    return 2;
  }

  std::vector<Bytes> inputs(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    if (!ReadInput(files[i], &inputs[i])) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], files[i].c_str());
      return 2;
    }
  }

  struct sigaction on_crash = {};
  on_crash.sa_handler = OnCrash;
  on_crash.sa_flags = SA_RESETHAND;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE}) sigaction(sig, &on_crash, nullptr);

  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::fprintf(stderr, "replay %s\n", files[i].c_str());
    Run(inputs[i]);
  }
  Random rng(seed);
  for (uint64_t m = 0; m < mutations; ++m) {
    const Bytes& base = inputs[m % inputs.size()];
    Bytes b = base;
    const size_t steps = 1 + rng.Below(4);
    for (size_t s = 0; s < steps; ++s) Mutate(b, inputs[rng.Below(inputs.size())], rng);
    Run(b);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start).count();
  std::printf("%zu corpus inputs and %llu mutations (seed %llu) ran clean in %lld ms\n",
              inputs.size(), static_cast<unsigned long long>(mutations),
              static_cast<unsigned long long>(seed), static_cast<long long>(ms));
  return 0;
}
