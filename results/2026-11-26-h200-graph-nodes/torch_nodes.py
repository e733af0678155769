# On the GPU machine: PyTorch's fp16 LSTM [30, 32, 1024] training step (the input's gradient
# too) captured as a CUDA graph, its nodes counted by type (raw_cuda_graph, cudaGraphGetNodes)
# and its replay timed. python3 results/2026-11-26-h200-graph-nodes/torch_nodes.py
import collections, ctypes, ctypes.util, glob, os, sys, torch
torch.manual_seed(0)
lstm = torch.nn.LSTM(1024, 1024).cuda().half()
x = torch.randn(30, 32, 1024, device="cuda", dtype=torch.half, requires_grad=True)
def step():
    lstm.zero_grad(set_to_none=False)
    y, _ = lstm(x)
    y.sum().backward()
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3): step()
torch.cuda.current_stream().wait_stream(s)
try:
    g = torch.cuda.CUDAGraph(keep_graph=True)
except TypeError as e:
    print("no keep_graph:", e); g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    step()
try:
    cap = g.raw_cuda_graph()
    if isinstance(cap, int):
        ptr = cap
    else:
        ctypes.pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p
        ctypes.pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
        name = ctypes.pythonapi.PyCapsule_GetName(cap)
        ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
        ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        ptr = ctypes.pythonapi.PyCapsule_GetPointer(cap, name)
    libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu13", "lib", "libcudart.so*")) + glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart*.so*"))
    rt = ctypes.CDLL(libs[0]) if libs else ctypes.CDLL("libcudart.so")
    n = ctypes.c_size_t(0)
    print("cudaGraphGetNodes rc", rt.cudaGraphGetNodes(ctypes.c_void_p(ptr), None, ctypes.byref(n)), "nodes", n.value)
    nodes = (ctypes.c_void_p * n.value)()
    rt.cudaGraphGetNodes(ctypes.c_void_p(ptr), nodes, ctypes.byref(n))
    names = {0: "kernel", 1: "memcpy", 2: "memset", 3: "host", 4: "graph", 5: "empty", 6: "wait_event", 7: "event_record", 10: "mem_alloc", 11: "mem_free"}
    c = collections.Counter()
    for nd in nodes:
        t = ctypes.c_int(-1); rt.cudaGraphNodeGetType(ctypes.c_void_p(nd), ctypes.byref(t)); c[names.get(t.value, t.value)] += 1
    print("torch graph nodes:", n.value, dict(c))
except Exception as e:
    print("node count failed:", repr(e))
start = torch.cuda.Event(enable_timing=True); end = torch.cuda.Event(enable_timing=True)
for _ in range(20): g.replay()
torch.cuda.synchronize(); start.record()
for _ in range(100): g.replay()
end.record(); torch.cuda.synchronize()
print(f"torch graphed step: {start.elapsed_time(end) * 1000 / 100 / 32:.2f} us an example")
