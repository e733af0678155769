# Which dimension keeps cuBLAS on its sm80 align2 kernels: hidden K (1500 vs 1504) or rows M
# (700 vs 704)? Contiguous operands, bf16, median of 50, CUDA events; kernel names per case.
import torch, json, sys
dev = "cuda"; dt = torch.bfloat16
def t(fn, reps=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
def kname(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        fn(); torch.cuda.synchronize()
    ks = [e.key for e in p.key_averages() if "gemm" in e.key.lower() or "xmma" in e.key.lower() or "cutlass" in e.key.lower()]
    return ks[0][:110] if ks else "?"
res = []
for H in (1500, 1504, 1536):
    for M in (700, 704):
        G, V = 4 * H, 10000
        x = torch.randn(M, H, device=dev, dtype=dt); w = torch.randn(G, H, device=dev, dtype=dt)
        dg = torch.randn(M, G, device=dev, dtype=dt)
        for name, fn in {"xg = x W^T": lambda: x @ w.t(), "dW = dg^T x": lambda: dg.t() @ x,
                         "dx = dg W": lambda: dg @ w}.items():
            us = t(fn); fl = 2 * M * H * G / us / 1e6
            k = kname(fn)
            res.append(dict(H=H, M=M, gemm=name, us=us, tflops=fl, kernel=k))
            print(f"H {H} M {M} {name:12s} {us:7.1f} us {fl:5.0f} TFLOP/s  {k}")
json.dump(res, open(sys.argv[1], "w"), indent=1)
