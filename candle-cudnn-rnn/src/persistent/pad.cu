// Row copies for the layer's GEMMs (padded.rs): cuBLAS takes its Hopper kernels only for
// operands whose rows are whole multiples of 16 bytes, so narrower rows are copied into padded
// ones, and products made in padded rows are copied or added back into place. The same copies
// move a bidirectional layer's rows: its reverse direction runs on its input flipped in time, and
// each direction's output goes into its columns of the layer's. Every kernel takes (src, src_ld,
// dst, dst_ld, rows, cols, width, flip): blockIdx.y walks the rows, the threads of blockIdx.x the
// columns up to `width`, V elements (V * 2 bytes, one load and one store) each; with `flip`
// nonzero, rows come in blocks of `flip` (one a step, a row a sample) whose order is reversed. The
// host picks the widest V that divides both pitches, the columns and both addresses: these copies
// move whole weight matrices every step, and one element per thread ran far below the memory's
// bandwidth (results/2026-11-23-h100-copies/).

// V half elements moved as one word.
template <int V> struct Word;
template <> struct Word<1> { typedef u16 T; };
template <> struct Word<2> { typedef u32 T; };
template <> struct Word<4> { typedef uint2 T; };

// The row of dst that row r of src goes to: r, or with `flip` (rows in blocks of `flip`) r's
// place in its block in the block as far from the end as r's is from the start.
__device__ __forceinline__ u32 dst_row(u32 r, u32 rows, u32 flip) {
    if (flip == 0) return r;
    const u32 block = r / flip;
    return (rows / flip - 1 - block) * flip + (r - block * flip);
}

// dst[r'][c] = src[r][c] for c < cols and 0 for cols <= c < width, over `rows` rows, r' =
// dst_row(r) (with V dividing cols, a word is all inside or all past them). `width` is dst_ld to
// pad rows, cols to place columns between others.
template <int V>
__device__ __forceinline__ void copy_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                          u32 rows, u32 cols, u32 width, u32 flip) {
    typedef typename Word<V>::T W;
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= width) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y) {
        W v = W();  // zeros
        if (c < cols) v = *(const W*)(src + (unsigned long long)r * src_ld + c);
        *(W*)(dst + (unsigned long long)dst_row(r, rows, flip) * dst_ld + c) = v;
    }
}

// dst[r'][c] += src[r][c] for c < cols (`width`), r' = dst_row(r), summed in f32 and rounded once.
template <int V>
__device__ __forceinline__ void add_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                         u32 rows, u32 cols, u32 width, u32 flip) {
    typedef typename Word<V>::T W;
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= cols || c >= width) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y) {
        W* d = (W*)(dst + (unsigned long long)dst_row(r, rows, flip) * dst_ld + c);
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
                                                 u32 dst_ld, u32 rows, u32 cols, u32 width,     \
                                                 u32 flip) {                                    \
        copy_rows<V>(src, src_ld, dst, dst_ld, rows, cols, width, flip);                        \
    }                                                                                           \
    extern "C" __global__ void rnn_add_rows_##V(const u16* src, u32 src_ld, u16* dst,           \
                                                u32 dst_ld, u32 rows, u32 cols, u32 width,      \
                                                u32 flip) {                                     \
        add_rows<V>(src, src_ld, dst, dst_ld, rows, cols, width, flip);                         \
    }
ROW_KERNELS(1)
ROW_KERNELS(2)
ROW_KERNELS(4)
