// The optimizer's vector kernels (blas.rs), computing in f32 whatever the gradient's dtype: axpy
// into an f32 variable (skipped whole when the factor is 0: an overflowed f16 step has a 0
// factor and may have inf gradients), optionally refreshing a bf16/f16 copy of the variable, and
// the norm of a bf16/f16 gradient in two deterministic stages. Compiled after candle_cudnn_rnn's
// half prelude (kernels/half.cuh: bf16, f16, load, store).
//
// Instantiated per gradient type T (suffix N: f32, bf16, f16) and copy type C (bf16, f16):
//   axpy_N(w, g, a, n), one thread per element
//     w     [n] f32    the variable, updated in place: w += a[0] · g
//     g     [n] T      the gradient
//     a     [1] f32    the factor (nothing written when it is 0)
//   axpy_N_into_C(w, g, a, copy, n): axpy_N, and the new w rounded into
//     copy  [n] C      out: w in C (to nearest even), left alone too when a[0] is 0
//   axpy8_N_into_C(w, g, a, copy, n) (T bf16 or f16): axpy_N_into_C eight elements a thread,
//     w, g and copy 16-byte aligned; max(n / 8, n % 8) threads
//   squares_N(g, partial, n, chunk) (T bf16 or f16), one block per partial
//     g        [n] T            the gradient
//     partial  [gridDim.x] f32  out: the sum of squares of block b's chunk g[b·chunk, (b+1)·chunk)
//   nrm2_finish(partial, blocks, out), one block
//     partial  [blocks] f32     squares_N's sums
//     out      [1] f32          out: sqrt of their sum

// The block's sum of v (blockDim.x a multiple of 32), in a fixed order; valid in thread 0.
__device__ float block_sum(float v) {
    __shared__ float warps[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T> __device__ void squares(const T* g, float* partial, long long n, long long chunk) {
    long long lo = blockIdx.x * chunk, hi = min(lo + chunk, n);
    float s = 0.0f;
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) { float v = load(g[i]); s += v * v; }
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void nrm2_finish(const float* partial, int blocks, float* out) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < blocks; i += blockDim.x) s += partial[i];
    s = block_sum(s);
    if (threadIdx.x == 0) *out = sqrtf(s);
}

#define AXPY(T, N) \
extern "C" __global__ void axpy_##N(float* w, const T* g, const float* a, long long n) { \
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
    float alpha = a[0]; \
    if (i < n && alpha != 0.0f) w[i] += alpha * load(g[i]); \
}
#define AXPY_INTO(T, N, C) \
extern "C" __global__ void axpy_##N##_into_##C(float* w, const T* g, const float* a, C* copy, long long n) { \
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
    float alpha = a[0]; \
    if (i < n && alpha != 0.0f) { float v = w[i] + alpha * load(g[i]); w[i] = v; store(copy + i, v); } \
}
// AXPY_INTO eight elements per thread in 16-byte loads and stores (all three arrays 16-byte
// aligned), the n % 8 last ones one per thread: the same arithmetic per element.
#define AXPY8_INTO(T, N, C) \
extern "C" __global__ void axpy8_##N##_into_##C(float* w, const T* g, const float* a, C* copy, long long n) { \
    float alpha = a[0]; \
    if (alpha == 0.0f) return; \
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x, n8 = n / 8; \
    if (j < n8) { \
        float4* wv = (float4*)w + 2 * j; \
        float4 w0 = wv[0], w1 = wv[1]; \
        union { uint4 u; T h[8]; } gv; \
        gv.u = ((const uint4*)g)[j]; \
        union { uint4 u; C h[8]; } out; \
        float v[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w}; \
        for (int k = 0; k < 8; ++k) { v[k] = v[k] + alpha * load(gv.h[k]); store(&out.h[k], v[k]); } \
        wv[0] = make_float4(v[0], v[1], v[2], v[3]); \
        wv[1] = make_float4(v[4], v[5], v[6], v[7]); \
        ((uint4*)copy)[j] = out.u; \
    } \
    if (j < n - n8 * 8) { \
        long long i = n8 * 8 + j; \
        float v = w[i] + alpha * load(g[i]); \
        w[i] = v; \
        store(copy + i, v); \
    } \
}
#define OPS(T, N) AXPY(T, N) AXPY_INTO(T, N, bf16) AXPY_INTO(T, N, f16) \
    AXPY8_INTO(T, N, bf16) AXPY8_INTO(T, N, f16) \
extern "C" __global__ void squares_##N(const T* g, float* partial, long long n, long long chunk) { \
    squares(g, partial, n, chunk); \
}
AXPY(float, f32) AXPY_INTO(float, f32, bf16) AXPY_INTO(float, f32, f16)
OPS(bf16, bf16)
OPS(f16, f16)
