// A parent that mirrors its child's stops as nsenter, unshare --fork, sudo and su do: it runs
// its command as a child, stops itself whenever the child stops, and once continued sends the
// child a SIGCONT, here only after a delay drawn anew each time between 0 and MAX_DELAY_US
// microseconds. The delay stands for a loaded machine on which the continued parent waits for
// a CPU: its SIGCONT (the echo) reaches the child late, possibly in the middle of the child's
// next hold (tests/integration/attach_query_integration_test.cc).
//   mirror_parent MAX_DELAY_US COMMAND [ARG...]
// Exits as the child did.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: mirror_parent MAX_DELAY_US COMMAND [ARG...]\n");
    return 2;
  }
  const long max_delay_us = std::strtol(argv[1], nullptr, 10);
  std::srand(static_cast<unsigned>(getpid()));
  const pid_t child = fork();
  if (child < 0) {
    std::perror("mirror_parent: fork");
    return 1;
  }
  if (child == 0) {
    execv(argv[2], argv + 2);
    std::perror("mirror_parent: execv");
    _exit(127);
  }
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(child, &status, WUNTRACED);
    if (r < 0 && errno == EINTR) continue;
    if (r != child) return 1;
    if (WIFSTOPPED(status)) {
      kill(getpid(), SIGSTOP);  // as the child stopped, so do we
      const long us = max_delay_us > 0 ? std::rand() % (max_delay_us + 1) : 0;
      const timespec pause{us / 1'000'000, (us % 1'000'000) * 1000L};
      nanosleep(&pause, nullptr);
      kill(child, SIGCONT);  // continued: the child goes on too
      continue;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
  }
}
