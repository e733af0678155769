// Per-row softmax cross-entropy (xent.rs): one block per row, a max pass, a Σexp pass, then the
// row's loss (forward) or its gradient row (backward), in f32 whatever the logits' dtype.
// Compiled after candle_cudnn_rnn's half prelude (kernels/half.cuh: bf16, f16, load, store).
//
// Every kernel runs one block per row (blockIdx.x is the row), blockDim.x a multiple of 32, at
// most 1024; `cols` is the number of classes. Instantiated per logits type T by OPS(T, N):
//   xent_fwd_N(x, y, loss, cols)
//     x     [rows, cols] T    the logits
//     y     [rows] u32        each row's target class
//     loss  [rows] f32        out: logsumexp(x[i]) − x[i, y[i]] (NaN for a target ≥ cols)
//   xent_bwd_N(x, y, g, dx, cols)
//     x     [rows, cols] T    the logits
//     y     [rows] u32        each row's target class
//     g     [rows] f32        the gradient of each row's loss
//     dx    [rows, cols] T    out: g[i] · (softmax(x[i]) − onehot(y[i]))

#define NEG_INF __int_as_float(0xff800000)

// Block-wide reduction (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
template <bool MAX> __device__ float block_reduce(float v, float* shared) {
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? fmaxf(v, w) : v + w;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < warps ? shared[lane] : (MAX ? NEG_INF : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? fmaxf(v, w) : v + w;
    }
    return v;
}

// Max and log Σ exp(x − max) of one row.
template <typename T> __device__ void row_stats(const T* r, int cols, float* m, float* lse) {
    __shared__ float shared[32];
    float v = NEG_INF;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) v = fmaxf(v, load(r[i]));
    *m = block_reduce<true>(v, shared);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += expf(load(r[i]) - *m);
    *lse = logf(block_reduce<false>(s, shared));
}

template <typename T> __device__ void forward(const T* x, const unsigned int* y, float* loss, int cols) {
    const T* r = x + (long long)blockIdx.x * cols;
    float m, lse;
    row_stats(r, cols, &m, &lse);
    unsigned int t = y[blockIdx.x];
    if (threadIdx.x == 0) loss[blockIdx.x] = t < (unsigned int)cols ? m + lse - load(r[t]) : __int_as_float(0x7fc00000);
}

template <typename T> __device__ void backward(const T* x, const unsigned int* y, const float* g, T* dx, int cols) {
    long long off = (long long)blockIdx.x * cols;
    float m, lse;
    row_stats(x + off, cols, &m, &lse);
    unsigned int t = y[blockIdx.x];
    float gi = g[blockIdx.x];
    for (int i = threadIdx.x; i < cols; i += blockDim.x)
        store(dx + off + i, gi * (expf(load(x[off + i]) - m - lse) - (i == (int)t ? 1.0f : 0.0f)));
}

#define OPS(T, N) \
extern "C" __global__ void xent_fwd_##N(const T* x, const unsigned int* y, float* loss, int cols) { forward(x, y, loss, cols); } \
extern "C" __global__ void xent_bwd_##N(const T* x, const unsigned int* y, const float* g, T* dx, int cols) { backward(x, y, g, dx, cols); }
OPS(float, f32)
OPS(bf16, bf16)
OPS(f16, f16)
