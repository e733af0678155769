// Row copies for the layer's GEMMs (padded.rs): cuBLAS takes its Hopper kernels only for
// operands whose rows are whole multiples of 16 bytes, so narrower rows are copied into padded
// ones, and products made in padded rows are copied or added back into place. Every kernel
// takes (src, src_ld, dst, dst_ld, rows, cols): blockIdx.y walks the rows, the threads of
// blockIdx.x the columns, V elements (V * 2 bytes, one load and one store) each. The host picks
// the widest V that divides both pitches, the columns and both addresses: these copies move
// whole weight matrices every step, and one element per thread ran far below the memory's
// bandwidth (results/2026-11-23-h100-copies/).

// V half elements moved as one word.
template <int V> struct Word;
template <> struct Word<1> { typedef u16 T; };
template <> struct Word<2> { typedef u32 T; };
template <> struct Word<4> { typedef uint2 T; };

// dst[r][c] = src[r][c] for c < cols and 0 for cols <= c < dst_ld, over `rows` rows (with V
// dividing cols, a word is all inside or all past them).
template <int V>
__device__ __forceinline__ void copy_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                          u32 rows, u32 cols) {
    typedef typename Word<V>::T W;
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= dst_ld) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y) {
        W v = W();  // zeros
        if (c < cols) v = *(const W*)(src + (unsigned long long)r * src_ld + c);
        *(W*)(dst + (unsigned long long)r * dst_ld + c) = v;
    }
}

// dst[r][c] += src[r][c] for c < cols, summed in f32 and rounded once.
template <int V>
__device__ __forceinline__ void add_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                         u32 rows, u32 cols) {
    typedef typename Word<V>::T W;
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= cols) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y) {
        W* d = (W*)(dst + (unsigned long long)r * dst_ld + c);
        W a = *d, b = *(const W*)(src + (unsigned long long)r * src_ld + c);
        u16* x = (u16*)&a;
        const u16* y = (const u16*)&b;
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = from_f(to_f(x[j]) + to_f(y[j]));
        *d = a;
    }
}

#define ROW_KERNELS(V)                                                                          \
    extern "C" __global__ void rnn_copy_rows_##V(const u16* src, u32 src_ld, u16* dst,          \
                                                 u32 dst_ld, u32 rows, u32 cols) {              \
        copy_rows<V>(src, src_ld, dst, dst_ld, rows, cols);                                     \
    }                                                                                           \
    extern "C" __global__ void rnn_add_rows_##V(const u16* src, u32 src_ld, u16* dst,           \
                                                u32 dst_ld, u32 rows, u32 cols) {               \
        add_rows<V>(src, src_ld, dst, dst_ld, rows, cols);                                      \
    }
ROW_KERNELS(1)
ROW_KERNELS(2)
ROW_KERNELS(4)
