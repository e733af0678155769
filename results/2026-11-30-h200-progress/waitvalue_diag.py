# Which allocations cuStreamWaitValue32 accepts: cuMemAlloc against cuMemAllocAsync (pool).
import ctypes as C
cu = C.CDLL("libcuda.so.1")
def ck(name, *a):
    r = getattr(cu, name)(*a); print(f"{name}: {r}"); return r
ck("cuInit", 0)
dev = C.c_int(); ck("cuDeviceGet", C.byref(dev), 0)
ctx = C.c_void_p(); ck("cuDevicePrimaryCtxRetain", C.byref(ctx), dev); ck("cuCtxSetCurrent", ctx)
s = C.c_void_p(); ck("cuStreamCreate", C.byref(s), 1)
plain = C.c_uint64(); ck("cuMemAlloc_v2", C.byref(plain), C.c_size_t(64))
pool = C.c_uint64(); ck("cuMemAllocAsync", C.byref(pool), C.c_size_t(64), s); ck("cuStreamSynchronize", s)
for name, p in [("cuMemAlloc", plain), ("cuMemAllocAsync", pool)]:
    r = cu.cuStreamWaitValue32_v2(s, p, C.c_uint32(0), C.c_uint(0))
    print(f"cuStreamWaitValue32_v2 on {name} memory: {r}")
    ck("cuStreamSynchronize", s)
