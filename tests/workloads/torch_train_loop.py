"""torch_train_loop.py: a training-style loop with real PyTorch (Debian's python3-torch,
oneDNN inside) that runs until SIGTERM or --seconds, for tests and the benchmark that attach
to a running training job.

After a warm-up it prints "ready <pid>", then every --report-every seconds a line
"torch_loop: iterations N seconds S rate R it/s" (N counted since "ready", S on CLOCK_MONOTONIC
since "ready", R over the last report period). With --log FILE it appends
"<iteration>\t<start_ns>\t<end_ns>" per iteration, CLOCK_MONOTONIC as BPF timestamps are, so
a test can tell which ITT tasks fell in which iteration.

One intra-op thread by default: on a machine shared with other work, OpenMP workers waiting at
their barriers make each iteration tens of times slower and its time erratic (measured: 80
iterations per second with one thread, 1 with two, on a loaded 2-core VM).

usage: python3 torch_train_loop.py [--seconds S] [--report-every S] [--log FILE] [--threads T]
"""
import argparse
import os
import signal
import sys
import time

import torch

stopping = False


def stop(signum, frame):
    global stopping
    stopping = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=0, help="0: until SIGTERM")
    parser.add_argument("--report-every", type=float, default=0.5)
    parser.add_argument("--log")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, stop)

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 16 * 16, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 3, 16, 16)
    target = torch.randint(0, 10, (8,))

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()

    for _ in range(5):
        step()
    log = open(args.log, "a", buffering=1) if args.log else None
    print("ready %d" % os.getpid(), flush=True)

    start = time.monotonic_ns()
    last_report, last_count, n = start, 0, 0
    while not stopping:
        began = time.monotonic_ns()
        step()
        ended = time.monotonic_ns()
        if log:
            log.write("%d\t%d\t%d\n" % (n, began, ended))
        n += 1
        if ended - last_report >= args.report_every * 1e9:
            rate = (n - last_count) * 1e9 / (ended - last_report)
            print("torch_loop: iterations %d seconds %.3f rate %.1f it/s" %
                  (n, (ended - start) / 1e9, rate), flush=True)
            last_report, last_count = ended, n
        if args.seconds and ended - start >= args.seconds * 1e9:
            break
    if log:
        log.close()
    print("torch_loop: done after %d iterations" % n, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
