"""What a captured graph's allocation and free nodes cost on the device.

A CUDA graph of KERNELS small kernels (PyTorch's in-place add on a 4 KB tensor) is replayed
as is, and again with ALLOCS stream-ordered allocations (cuMemAllocAsync, 1 MB each, the way
candle allocates a call's buffers) and their frees captured with it: all before the first
kernel and all after the last (the order of an op's call), or each allocation right before
a kernel and its free right after (every node on the chain). The replays are timed with
events; printed as JSON lines, µs a replay (median, min, max of REPS batches of 50 replays).
    python3 graph_alloc_probe.py [--kernels 30] [--allocs 16] [--reps 20]
"""
import argparse
import ctypes
import json
import statistics

import torch

p = argparse.ArgumentParser()
p.add_argument("--kernels", type=int, default=30)
p.add_argument("--allocs", type=int, default=16)
p.add_argument("--reps", type=int, default=20)
a = p.parse_args()

cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuMemAllocAsync.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.c_void_p]
cuda.cuMemFreeAsync.argtypes = [ctypes.c_uint64, ctypes.c_void_p]
cuda.cuMemsetD8Async.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]


def ok(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed: {status}")


def alloc(stream):
    ptr = ctypes.c_uint64()
    ok(cuda.cuMemAllocAsync(ctypes.byref(ptr), 1 << 20, stream), "cuMemAllocAsync")
    return ptr.value


def free(ptr, stream):
    ok(cuda.cuMemFreeAsync(ptr, stream), "cuMemFreeAsync")


x = torch.zeros(1024, device="cuda")


def capture(layout):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.graph(g, stream=s, capture_error_mode="relaxed"):
        h = torch.cuda.current_stream().cuda_stream
        ptrs = []
        if layout in ("around", "around-touched"):
            ptrs = [alloc(h) for _ in range(a.allocs)]
            if layout == "around-touched":
                for q in ptrs:
                    ok(cuda.cuMemsetD8Async(q, 0, 4096, h), "cuMemsetD8Async")
        for i in range(a.kernels):
            q = alloc(h) if layout == "interleaved" and i < a.allocs else None
            x.add_(1.0)
            if q is not None:
                free(q, h)
        for q in ptrs:
            free(q, h)
    return g


def time_graph(g):
    for _ in range(20):
        g.replay()
    torch.cuda.synchronize()
    us = []
    for _ in range(a.reps):
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(50):
            g.replay()
        t1.record()
        torch.cuda.synchronize()
        us.append(t0.elapsed_time(t1) * 1000 / 50)
    return statistics.median(us), min(us), max(us)


graphs = {k: capture(k) for k in ["none", "around", "around-touched", "interleaved"]}
for layout in ["none", "around", "around-touched", "interleaved", "none"]:
    med, lo, hi = time_graph(graphs[layout])
    print(json.dumps({"layout": layout, "kernels": a.kernels, "allocs": a.allocs,
                      "us_median": round(med, 2), "us_min": round(lo, 2), "us_max": round(hi, 2)}))
