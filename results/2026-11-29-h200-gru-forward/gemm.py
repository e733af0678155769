"""The input projection of a [30, 32, 1024] GRU's forward alone ([960, 1024] x [1024, 3072]ᵀ,
f16 in, f32 or f16 out), as cuBLAS's heuristic picks it and as PyTorch's TunableOp finds best
among cuBLASLt's algorithms: µs a product (CUDA graph of 20, median of 15 replays).
  python3 gemm.py"""
import os, statistics, sys
import torch

def timed(fn, reps=15, inner=20):
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    g.replay(); torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(); g.replay(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / inner)
    return statistics.median(times), min(times), max(times)

torch.manual_seed(0)
for (m, n, k) in [(960, 3072, 1024), (960, 4096, 1024), (960, 384, 128), (6400, 3072, 1024)]:
    x = torch.randn(m, k, device="cuda", dtype=torch.half)
    w = torch.randn(n, k, device="cuda", dtype=torch.half)
    out32 = torch.empty(m, n, device="cuda", dtype=torch.float)
    out16 = torch.empty(m, n, device="cuda", dtype=torch.half)
    rows = {
        "f16 out": lambda: torch.mm(x, w.t(), out=out16),
        "f32 out": lambda: out32.copy_(torch.mm(x, w.t(), out_dtype=torch.float32)),
        "f32 out (no copy)": lambda: torch.mm(x, w.t(), out_dtype=torch.float32),
    }
    for name, fn in rows.items():
        try:
            med, lo, hi = timed(fn)
            print(f"{os.environ.get('TAG', 'heuristic')} [{m}x{k}]x[{k}x{n}] {name}: {med:.2f} [{lo:.2f}, {hi:.2f}] us")
        except Exception as e:  # out_dtype unsupported, say
            print(f"[{m}x{k}]x[{k}x{n}] {name}: {type(e).__name__} {e}"[:200])
