// A matrix's rows widened with a column and zeros, and narrowed back (columns.rs), in 8-byte
// words where the host found that the columns, the pitch and the start allow, else one element
// per thread. Compiled after candle_cudnn_rnn's half prelude (kernels/half.cuh), for its u16,
// u32 and u64.
//
// blockIdx.y walks the rows (striding by gridDim.y), the threads of blockIdx.x a row's words.
// Instantiated by OPS(E, W, V, N) for elements E moved V at a time as one word W: e2 (any 2-byte
// type, one at a time), e2_words (four per 8-byte word), e4 and e4_words (4-byte types, one or
// two). With V > 1, V divides cols and ld.
//   widen_N(w, column, has_column, out, rows, cols, ld)
//     w           [rows, cols] E    the matrix
//     column      [rows] E          the added column (read only when has_column)
//     has_column  whether column `cols` of out is `column`, or a zero
//     out         [rows, ld] E      out: w's row, then the column if has_column, then zeros
//   narrow_N(m, out, rows, cols, ld)
//     m           [rows, ld] E      the wide matrix
//     out         [rows, cols] E    out: m's first cols columns

// out[r][c] = w[r][c] (c < cols), column[r] (c == cols, when has_column), else 0. With V > 1,
// V divides cols and ld, so a word lies all inside w's columns or all past them.
template <typename E, typename W, int V>
__device__ void widen(const E* w, const E* column, int has_column, E* out, u32 rows, u32 cols,
                      u32 ld) {
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= ld) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y) {
        union { W word; E e[V]; } u;
        if (c < cols) {
            u.word = *(const W*)(w + (u64)r * cols + c);
        } else {
            for (int j = 0; j < V; ++j) u.e[j] = (has_column && c + j == cols) ? column[r] : (E)0;
        }
        *(W*)(out + (u64)r * ld + c) = u.word;
    }
}

// out[r][c] = m[r][c] for c < cols.
template <typename E, typename W, int V>
__device__ void narrow(const E* m, E* out, u32 rows, u32 cols, u32 ld) {
    const u32 c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= cols) return;
    for (u32 r = blockIdx.y; r < rows; r += gridDim.y)
        *(W*)(out + (u64)r * cols + c) = *(const W*)(m + (u64)r * ld + c);
}

#define OPS(E, W, V, N) \
extern "C" __global__ void widen_##N(const E* w, const E* column, int has_column, E* out, \
        u32 rows, u32 cols, u32 ld) { widen<E, W, V>(w, column, has_column, out, rows, cols, ld); } \
extern "C" __global__ void narrow_##N(const E* m, E* out, u32 rows, u32 cols, u32 ld) { \
        narrow<E, W, V>(m, out, rows, cols, ld); }
OPS(u16, u16, 1, e2)
OPS(u16, uint2, 4, e2_words)
OPS(u32, u32, 1, e4)
OPS(u32, uint2, 2, e4_words)
