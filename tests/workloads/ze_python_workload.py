#!/usr/bin/python3
"""Level Zero driven from Python through ctypes on the real loader, as a Python GPU runtime
does: a context, a module of the simulated GPU (ZE_ENABLE_ALT_DRIVERS names
libxtrace_simze.so), two kernels, a command queue and a regular command list, a host-to-device
copy; each iteration launches from two different lines of step(), copies from a third and
synchronizes from run(). The lines marked "# xt:NAME" are where those calls are made: tests
find them in this file and expect xtrace's Python frames to name them.

usage: ze_python_workload.py [--iterations N] [--wait] [--linger SECONDS]
  --wait     after set-up print "ready <pid>" and wait for a line on stdin before running
  --linger   stay alive this long after "done" (default 1.0), so that a tracer that reads the
             process's code objects after its last call still finds them
Prints "done <iterations>" when the iterations have completed on the device.
"""
import argparse
import ctypes
import os
import sys
import time

ze = ctypes.CDLL("libze_loader.so.1")

MODULE = b"XTRACE-SIMGPU-MODULE 1\nkernel 20000 xt_py_scale\nkernel 30000 xt_py_gemm\n"


class GroupCount(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


class ContextDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32)]


class QueueDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p),
                ("ordinal", ctypes.c_uint32), ("index", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("mode", ctypes.c_uint32),
                ("priority", ctypes.c_uint32)]


class ListDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p),
                ("ordinal", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class ModuleDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p),
                ("format", ctypes.c_uint32), ("inputSize", ctypes.c_size_t),
                ("pInputModule", ctypes.c_char_p), ("pBuildFlags", ctypes.c_char_p),
                ("pConstants", ctypes.c_void_p)]


class KernelDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p),
                ("flags", ctypes.c_uint32), ("pKernelName", ctypes.c_char_p)]


class DeviceAllocDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p),
                ("flags", ctypes.c_uint32), ("ordinal", ctypes.c_uint32)]


class HostAllocDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32)]


def check(what, result):
    if result != 0:
        sys.exit(f"ze_python_workload: {what} failed: ze_result_t 0x{result:x}")


class Gpu:
    def __init__(self):
        for f in ("zeContextCreate", "zeCommandQueueCreate", "zeCommandListCreate",
                  "zeModuleCreate", "zeKernelCreate", "zeMemAllocDevice", "zeMemAllocHost",
                  "zeCommandListAppendLaunchKernel", "zeCommandListAppendMemoryCopy",
                  "zeCommandListClose", "zeCommandListReset",
                  "zeCommandQueueExecuteCommandLists", "zeCommandQueueSynchronize"):
            getattr(ze, f).restype = ctypes.c_int
        check("zeInit", ze.zeInit(0))
        n = ctypes.c_uint32(1)
        self.driver = ctypes.c_void_p()
        check("zeDriverGet", ze.zeDriverGet(ctypes.byref(n), ctypes.byref(self.driver)))
        n = ctypes.c_uint32(1)
        self.device = ctypes.c_void_p()
        check("zeDeviceGet", ze.zeDeviceGet(self.driver, ctypes.byref(n), ctypes.byref(self.device)))
        self.context = ctypes.c_void_p()
        check("zeContextCreate", ze.zeContextCreate(self.driver, ctypes.byref(ContextDesc(0xd, None, 0)),
                                                    ctypes.byref(self.context)))
        self.queue = ctypes.c_void_p()
        check("zeCommandQueueCreate",
              ze.zeCommandQueueCreate(self.context, self.device,
                                      ctypes.byref(QueueDesc(0xe, None, 0, 0, 0, 0, 0)),
                                      ctypes.byref(self.queue)))
        self.list = ctypes.c_void_p()
        check("zeCommandListCreate",
              ze.zeCommandListCreate(self.context, self.device, ctypes.byref(ListDesc(0xf, None, 0, 0)),
                                     ctypes.byref(self.list)))
        self.module = ctypes.c_void_p()
        desc = ModuleDesc(0x1b, None, 1, len(MODULE), MODULE, None, None)
        check("zeModuleCreate", ze.zeModuleCreate(self.context, self.device, ctypes.byref(desc),
                                                  ctypes.byref(self.module), None))
        self.kernels = {}
        for name in (b"xt_py_scale", b"xt_py_gemm"):
            k = ctypes.c_void_p()
            check("zeKernelCreate", ze.zeKernelCreate(self.module, ctypes.byref(KernelDesc(0x1d, None, 0, name)),
                                                      ctypes.byref(k)))
            self.kernels[name.decode()] = k
        self.size = 4096
        self.dst = ctypes.c_void_p()
        check("zeMemAllocDevice", ze.zeMemAllocDevice(self.context, ctypes.byref(DeviceAllocDesc(0x15, None, 0, 0)),
                                                      ctypes.c_size_t(self.size), ctypes.c_size_t(64),
                                                      self.device, ctypes.byref(self.dst)))
        self.src = ctypes.c_void_p()
        check("zeMemAllocHost", ze.zeMemAllocHost(self.context, ctypes.byref(HostAllocDesc(0x16, None, 0)),
                                                  ctypes.c_size_t(self.size), ctypes.c_size_t(64),
                                                  ctypes.byref(self.src)))

    def launch(self, name, x):
        groups = GroupCount(x, 1, 1)
        check("zeCommandListAppendLaunchKernel",
              ze.zeCommandListAppendLaunchKernel(self.list, self.kernels[name], ctypes.byref(groups),  # xt:launch
                                                 None, 0, None))

    def copy(self):
        check("zeCommandListAppendMemoryCopy",
              ze.zeCommandListAppendMemoryCopy(self.list, self.dst, self.src, ctypes.c_size_t(self.size),  # xt:copy
                                               None, 0, None))

    def submit_and_wait(self):
        check("zeCommandListClose", ze.zeCommandListClose(self.list))
        check("zeCommandQueueExecuteCommandLists",
              ze.zeCommandQueueExecuteCommandLists(self.queue, 1, ctypes.byref(self.list), None))  # xt:execute
        check("zeCommandQueueSynchronize",
              ze.zeCommandQueueSynchronize(self.queue, ctypes.c_uint64(2**64 - 1)))  # xt:sync
        check("zeCommandListReset", ze.zeCommandListReset(self.list))


def step(gpu, i):
    gpu.launch("xt_py_scale", 8 + i % 4)  # xt:step-scale
    gpu.launch("xt_py_gemm", 4)  # xt:step-gemm
    gpu.copy()  # xt:step-copy


def run(gpu, iterations):
    for i in range(iterations):
        step(gpu, i)  # xt:run-step
        gpu.submit_and_wait()  # xt:run-wait


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--wait", action="store_true")
    parser.add_argument("--linger", type=float, default=1.0)
    args = parser.parse_args()
    gpu = Gpu()
    if args.wait:
        print(f"ready {os.getpid()}", flush=True)
        sys.stdin.readline()
    run(gpu, args.iterations)  # xt:main-run
    print(f"done {args.iterations}", flush=True)
    time.sleep(args.linger)


if __name__ == "__main__":
    main()
