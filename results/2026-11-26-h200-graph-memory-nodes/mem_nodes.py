"""What a stream-ordered allocation and free cost inside a replayed CUDA graph.

The same chain of small kernels is captured with and without cuMemAllocAsync/cuMemFreeAsync
pairs between them (what candle's buffers become in a captured call), and with empty kernels
in their place; each graph is replayed in turn and timed with events. Prints one JSON line per
variant: microseconds a replay, the median of the rounds [min, max].
"""
import ctypes, json, statistics, sys
import torch

cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuMemAllocAsync.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.c_void_p]
cuda.cuMemFreeAsync.argtypes = [ctypes.c_uint64, ctypes.c_void_p]

def check(r, what):
    if r != 0:
        sys.exit(f"{what} failed: {r}")

def keep_pool():
    # as the op does: the device's pool keeps freed memory
    pool = ctypes.c_void_p()
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cuda.cuDeviceGetMemPool(ctypes.byref(pool), dev), "cuDeviceGetMemPool")
    thr = ctypes.c_uint64(2**64 - 1)
    check(cuda.cuMemPoolSetAttribute(pool, 4, ctypes.byref(thr)), "cuMemPoolSetAttribute")  # RELEASE_THRESHOLD

KERNELS = 13
x = torch.randn(1 << 18, device="cuda")  # one small kernel a few microseconds long
empty = torch.empty(1, device="cuda")

def chain(pairs, nbytes, empties):
    s = torch.cuda.current_stream().cuda_stream
    held = []
    for i in range(KERNELS):
        if i < pairs:
            p = ctypes.c_uint64()
            check(cuda.cuMemAllocAsync(ctypes.byref(p), nbytes, s), "cuMemAllocAsync")
            held.append(p.value)
        for _ in range(empties if i < pairs else 0):
            empty.add_(0.0)
        x.mul_(1.0000001)
        if i >= 2 and held:
            check(cuda.cuMemFreeAsync(held.pop(0), s), "cuMemFreeAsync")
    while held:
        check(cuda.cuMemFreeAsync(held.pop(0), s), "cuMemFreeAsync")

def capture(**kw):
    chain(**kw)  # eager once
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain(**kw)
    g.replay()
    torch.cuda.synchronize()
    return g

def time_graph(g, replays=400):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(replays):
        g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1000.0 / replays

keep_pool()
variants = {
    "kernels only": dict(pairs=0, nbytes=0, empties=0),
    "+7 alloc/free pairs, 1 MiB": dict(pairs=7, nbytes=1 << 20, empties=0),
    "+7 alloc/free pairs, 64 MiB": dict(pairs=7, nbytes=64 << 20, empties=0),
    "+13 alloc/free pairs, 1 MiB": dict(pairs=13, nbytes=1 << 20, empties=0),
    "+14 empty kernels": dict(pairs=0, nbytes=0, empties=0),
}
graphs = {k: capture(**v) for k, v in variants.items() if k != "+14 empty kernels"}
def with_empties():
    for i in range(KERNELS):
        if i < 7:
            empty.add_(0.0); empty.add_(0.0)
        x.mul_(1.0000001)
with_empties(); torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    with_empties()
graphs["+14 empty kernels"] = g
for g in graphs.values():
    time_graph(g, 50)
rounds = {k: [] for k in graphs}
for _ in range(15):
    for k, g in graphs.items():
        rounds[k].append(time_graph(g))
for k, r in rounds.items():
    print(json.dumps({"variant": k, "us_per_replay": round(statistics.median(r), 2),
                      "min": round(min(r), 2), "max": round(max(r), 2)}))
