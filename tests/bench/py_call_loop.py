#!/usr/bin/python3
"""py_call_loop: the Python frames benchmark's target. Level Zero through ctypes on the real
loader and the simulated GPU (ze_python_workload.Gpu, from tests/workloads on PYTHONPATH),
launching from a chosen depth of Python frames, so that a tracer's cost per call can be timed
with the frames it reads and without.

Prints "ready <pid>", then reads commands from stdin, one per line:
  launch D N   N x zeCommandListAppendLaunchKernel made at a Python depth of D frames (as
               sys._getframe counts them at the call; at least the frames the loop itself
               sits in) -> "done launch calls=N ns=<wall time> cpu_ns=<this thread's CPU time>
               depth=<frames at the call>"
  quit
The regular command list is reset every 1024 appends (the reset is part of the loop), as
ze_call_loop does.
"""
import ctypes
import os
import sys
import time

import ze_python_workload as zp

APPENDS_PER_RESET = 1024


def frames_here():
    frame, n = sys._getframe(1), 0
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


class Loop:
    def __init__(self):
        self.gpu = zp.Gpu()
        self.launch = zp.ze.zeCommandListAppendLaunchKernel
        self.launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p]
        self.reset = zp.ze.zeCommandListReset
        self.groups = zp.GroupCount(4, 1, 1)

    def run(self, n):
        """The timed loop; its frame is the innermost one of every launch."""
        launch, reset = self.launch, self.reset
        cmdlist, kernel = self.gpu.list.value, self.gpu.kernels["xt_py_gemm"].value
        groups = ctypes.addressof(self.groups)
        depth = frames_here()
        wall, cpu = time.monotonic_ns(), time.thread_time_ns()
        for i in range(n):
            if launch(cmdlist, kernel, groups, None, 0, None):
                sys.exit("py_call_loop: zeCommandListAppendLaunchKernel failed")
            if i % APPENDS_PER_RESET == APPENDS_PER_RESET - 1:
                reset(self.gpu.list)
        cpu, wall = time.thread_time_ns() - cpu, time.monotonic_ns() - wall
        reset(self.gpu.list)
        return wall, cpu, depth

    def at_depth(self, extra, n):
        """run() under `extra` more frames of this method."""
        if extra <= 0:
            return self.run(n)
        return self.at_depth(extra - 1, n)


def main():
    loop = Loop()
    sys.setrecursionlimit(10000)
    print(f"ready {os.getpid()}", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words == ["quit"]:
            break
        if len(words) != 3 or words[0] != "launch":
            sys.exit(f"py_call_loop: unknown command {line.strip()!r}")
        want, n = int(words[1]), int(words[2])
        # Here, run() would be two frames deeper (at_depth, run).
        wall, cpu, depth = loop.at_depth(want - (frames_here() + 2), n)
        print(f"done launch calls={n} ns={wall} cpu_ns={cpu} depth={depth}", flush=True)


if __name__ == "__main__":
    main()
