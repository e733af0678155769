// The warpgroup tensor-core instruction (wgmma, sm_90a) as recurrence_wgmma_fwd.cu and the lab's
// probes (scripts/persistent-lab/wgmma_probe.cu) use it: shared-memory matrix descriptors without
// swizzle, the fence, commit and wait, and m64n32k16 products with f32 accumulators, A from shared
// memory or from registers. The operands are the module's half type (ELEM_BF16: 1 bf16, 0 f16).
// Needs common.cuh (smem_addr).

#if ELEM_BF16
#define WG_TYPES ".f32.bf16.bf16"
#else
#define WG_TYPES ".f32.f16.f16"
#endif

// A shared-memory matrix descriptor (no swizzle) of the 8x8 core matrices at `addr`: LBO the bytes
// between core matrices along K, SBO along M or N.
__device__ __forceinline__ u64 wgmma_desc(u32 addr, u32 lbo, u32 sbo) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(lbo >> 4) << 16) | ((u64)(sbo >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// d (+)= A (64 x 16, descriptor a) x B (16 x 32, descriptor b); scale_d 0 overwrites d.
__device__ __forceinline__ void wgmma_ss_n32(float (&d)[16], u64 a, u64 b, int scale_d) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n32k16" WG_TYPES " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "%16, %17, p, 1, 1, 0, 0;\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(scale_d));
}

// d (+)= A (64 x 16, registers a: mma.sync's A fragment of each warp's 16 rows) x B (16 x 32,
// descriptor b); scale_d 0 overwrites d.
__device__ __forceinline__ void wgmma_rs_n32(float (&d)[16], const u32 (&a)[4], u64 b, int scale_d) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %21, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n32k16" WG_TYPES " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, p, 1, 1, 0;\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}

// A barrier of the first `threads` threads of the block, named `id` (0 is __syncthreads').
__device__ __forceinline__ void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
