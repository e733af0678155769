// Row copies for the layer's GEMMs (padded.rs): cuBLAS takes its Hopper kernels only for
// operands whose rows are whole multiples of 16 bytes, so narrower rows are copied into padded
// ones, and products made in padded rows are copied or added back into place. Both kernels
// take (src, src_ld, dst, dst_ld, rows, cols), one thread per element written.

// dst[r][c] = src[r][c] for c < cols and 0 for cols <= c < dst_ld, over `rows` rows.
extern "C" __global__ void rnn_copy_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                         u32 rows, u32 cols) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned long long)rows * dst_ld) return;
    u32 r = (u32)(i / dst_ld), c = (u32)(i % dst_ld);
    dst[i] = c < cols ? src[(unsigned long long)r * src_ld + c] : (u16)0;
}

// dst[r][c] += src[r][c] for c < cols, summed in f32 and rounded once.
extern "C" __global__ void rnn_add_rows(const u16* src, u32 src_ld, u16* dst, u32 dst_ld,
                                        u32 rows, u32 cols) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned long long)rows * cols) return;
    u32 r = (u32)(i / cols), c = (u32)(i % cols);
    u16* d = dst + (unsigned long long)r * dst_ld + c;
    *d = from_f(to_f(*d) + to_f(src[(unsigned long long)r * src_ld + c]));
}
