#!/usr/bin/python3
"""Python frames, checked against what the interpreter itself says: Level Zero calls through
ctypes on the simulated GPU (set up by ze_python_workload.Gpu, beside this file) from the main
thread and from a second thread, at several depths (a recursion, a method, a closure, a
recursion through C that puts the interpreter's entry frames between its frames, a
generator). Each
traced call stands alone on its line, wrapped in said(...): right after the call returns,
said() writes the stack of that line as the interpreter gives it (sys._getframe: the code's
file and qualified name, the frame's current line; innermost first) to the stack log, one JSON
object a line: {"call": launch|copy|execute|sync, "tid": native thread id, "stack": [[file,
function, line], ...]}. A tracer's Python frames of that call must be exactly these.

usage: py_frames_workload.py --stack-log FILE [--iterations N] [--wait] [--linger SECONDS]
  --wait     after set-up print "ready <pid>" and wait for a line on stdin before running
  --linger   stay alive this long after "done" (default 1.0), so that a tracer that reads the
             process's code objects after its last call still finds them
Prints "done <calls logged>" when both threads have finished.
"""
import argparse
import ctypes
import json
import os
import sys
import threading
import time

import ze_python_workload as zp

ze = zp.ze
log_lock = threading.Lock()
log = None


def said(call, result):
    zp.check(call, result)
    frame = sys._getframe(1)
    stack = []
    while frame is not None:
        stack.append([frame.f_code.co_filename, frame.f_code.co_qualname, frame.f_lineno])
        frame = frame.f_back
    with log_lock:
        log.write(json.dumps({"call": call, "tid": threading.get_native_id(), "stack": stack}) + "\n")


class Worker:
    def __init__(self):
        self.gpu = zp.Gpu()

    def launch(self, name, x):
        g, groups = self.gpu, zp.GroupCount(x, 1, 1)
        said("launch", ze.zeCommandListAppendLaunchKernel(g.list, g.kernels[name], ctypes.byref(groups), None, 0, None))

    def copy(self):
        g = self.gpu
        said("copy", ze.zeCommandListAppendMemoryCopy(g.list, g.dst, g.src, ctypes.c_size_t(g.size), None, 0, None))

    def submit(self):
        g = self.gpu
        zp.check("zeCommandListClose", ze.zeCommandListClose(g.list))
        said("execute", ze.zeCommandQueueExecuteCommandLists(g.queue, 1, ctypes.byref(g.list), None))
        said("sync", ze.zeCommandQueueSynchronize(g.queue, ctypes.c_uint64(2**64 - 1)))
        zp.check("zeCommandListReset", ze.zeCommandListReset(g.list))


def nested(worker, depth):
    if depth == 0:
        return worker.launch("xt_py_gemm", 2)
    return nested(worker, depth - 1)


# Levels of through_c: each is two frames of code and, from CPython 3.12 on, one of the
# interpreter's entry frames (map calls back into Python from C), so the launch at its bottom
# has 48 frames of code under 24 entry frames: more than the 64 frames a stack keeps if entry
# frames counted, fewer if they do not.
THROUGH_C_LEVELS = 24


def through_c(worker, depth):
    if depth == 0:
        return worker.launch("xt_py_gemm", 3)
    return list(map(lambda _: through_c(worker, depth - 1), [0]))


def launches_from_a_generator(worker):
    """A generator's frame lives in the generator object on the heap, not in the thread's
    data stack: the chain goes from the stack to the heap and back."""
    yield worker.launch("xt_py_scale", 5)


def step(worker, i):
    worker.launch("xt_py_scale", 8 + i % 4)
    if i == 3:
        through_c(worker, THROUGH_C_LEVELS)
    if i == 4:
        for _ in launches_from_a_generator(worker):
            pass
    if i % 2:
        nested(worker, i % 5)
    else:
        copy_later = lambda: worker.copy()
        copy_later()
    worker.launch("xt_py_gemm", 4)


def run(worker, iterations):
    for i in range(iterations):
        step(worker, i)
        worker.submit()


def main():
    global log
    parser = argparse.ArgumentParser()
    parser.add_argument("--stack-log", required=True)
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--wait", action="store_true")
    parser.add_argument("--linger", type=float, default=1.0)
    args = parser.parse_args()
    log = open(args.stack_log, "w")
    workers = [Worker(), Worker()]
    if args.wait:
        print(f"ready {os.getpid()}", flush=True)
        sys.stdin.readline()
    second = threading.Thread(target=run, args=(workers[1], args.iterations), name="second")
    second.start()
    run(workers[0], args.iterations)
    second.join()
    log.close()
    with open(args.stack_log) as f:
        print(f"done {sum(1 for _ in f)}", flush=True)
    time.sleep(args.linger)


if __name__ == "__main__":
    main()
