"""torch_profiler_check.py: a small convolutional model, run once under PyTorch's own profiler
(torch.profiler with with_stack=True, writing its Chrome trace) and once for a tracer that
attaches to the running process, so that a test can compare the Python frames each gives for
the same oneDNN convolutions. The lines that run a convolution end in "# op"; the test finds
them, and the functions they are in, in this file.

The model is written with torch.nn.functional, not nn.Module: PyTorch 2.6's Python tracer
crashes on Python 3.13 (Debian trixie has exactly that pair) when a profiled call goes through
nn.Module.__call__, because it reads the frame's locals as a dict and PEP 667 made them a proxy
(fixed in later PyTorch).

usage: torch_profiler_check.py (--profile TRACE.json | --wait) [--iterations N] [--linger S]
  --profile  run the iterations under torch.profiler and write its Chrome trace there
  --wait     print "ready <pid>" and wait for a line on stdin before running the iterations
One warm-up iteration runs first either way (oneDNN creates its primitives there). Prints
"done <iterations>" at the end, then stays alive --linger seconds (default 1).
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F


class Model:
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.randn(8, 3, 3, 3, generator=g)
        self.w2 = torch.randn(8, 8, 3, 3, generator=g)
        self.w3 = torch.randn(4, 8, 3, 3, generator=g)

    def block(self, x, w):
        y = F.conv2d(x, w, padding=1)  # op
        return F.relu(y)

    def head(self, x):
        return F.conv2d(x, self.w3, padding=1)  # op

    def forward(self, x):
        x = self.block(x, self.w1)
        x = F.conv2d(x, self.w2, padding=1)  # op
        return self.head(x).sum()


def run(model, x, iterations):
    with torch.no_grad():
        for _ in range(iterations):
            model.forward(x)


def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--profile")
    mode.add_argument("--wait", action="store_true")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--linger", type=float, default=1.0)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Model()
    x = torch.randn(4, 3, 16, 16)
    run(model, x, 1)
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            run(model, x, args.iterations)
        prof.export_chrome_trace(args.profile)
    else:
        print(f"ready {os.getpid()}", flush=True)
        sys.stdin.readline()
        run(model, x, args.iterations)
    print(f"done {args.iterations}", flush=True)
    time.sleep(args.linger)


if __name__ == "__main__":
    main()
