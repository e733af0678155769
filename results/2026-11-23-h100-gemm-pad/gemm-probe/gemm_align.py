# Does the row stride of PTB large's GEMM operands (1500 bf16 = 3000 bytes, not 16-byte aligned)
# keep cuBLAS off its Hopper kernels? Times each GEMM of a step with ld 1500 and with ld 1504
# (the same 1500 columns, rows padded), median of 50 after 10 warm-up, CUDA events.
import torch, json, sys
torch.backends.cuda.matmul.allow_tf32 = True
dev = "cuda"
def t(fn, reps=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
def mat(r, c, ld, dt):
    return torch.randn(r, ld, device=dev, dtype=dt)[:, :c]
res = []
for dt in (torch.bfloat16, torch.float16):
    for ld in (1500, 1504, 1536):
        M, H, G, V = 700, 1500, 6000, 10000
        x = mat(M, H, ld, dt); w = mat(G, H, ld, dt); dg = torch.randn(M, G, device=dev, dtype=dt)
        ws = mat(V, H, ld, dt); dl = torch.randn(M, V, device=dev, dtype=dt)
        cases = {
            "xg = x W_ih^T [700x1500]x[1500x6000]": lambda: x @ w.t(),
            "dW = dg^T x": lambda: dg.t() @ x,
            "dx = dg W": lambda: dg @ w,
            "logits = h Ws^T [700x1500]x[1500x10000]": lambda: x @ ws.t(),
            "dWs = dl^T h": lambda: dl.t() @ x,
            "dh = dl Ws": lambda: dl @ ws,
        }
        for name, fn in cases.items():
            us = t(fn)
            flop = 2 * M * H * (V if "Ws" in name or "dl" in name else G)
            res.append(dict(dtype=str(dt), ld=ld, gemm=name, us=us, tflops=flop / us / 1e6))
            print(f"{str(dt):15s} ld {ld}: {name:45s} {us:8.1f} us {flop/us/1e6:6.0f} TFLOP/s")
prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
with prof:
    for ld in (1500, 1504):
        x = mat(700, 1500, ld, torch.bfloat16); w = mat(6000, 1500, ld, torch.bfloat16)
        (x @ w.t()); torch.cuda.synchronize()
for e in prof.key_averages():
    print("kernel:", e.key[:120])
json.dump(res, open(sys.argv[1], "w"), indent=1)
