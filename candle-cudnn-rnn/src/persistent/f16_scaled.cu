// f32 rows as f16 operands of the tensor cores' products, each row scaled by a power of two
// (recurrence_fwd.cu's and recurrence_wgmma_fwd.cu's F16_SCALED: an inference forward of f32
// operands under TF32 math, in half the bytes of f32 tiles). Scaled so that its largest
// magnitude lies in [2^14, 2^15), a row keeps f16's 11 significant bits (TF32's) down to 2^-28
// of that largest, and cannot overflow; the products are scaled back exactly. One warp a row, in one launch:
// the `a_rows` rows of `a` (W_hh, [GH, H]) and the `b_rows` rows of `b` (h_0, [B, H]; none where
// null), each `cols` long. A row of h is scaled as if its largest were at least 1, which every
// later h_t of the row is below (an LSTM's |h_t| < 1; a GRU's h_t is a convex mix of h_{t-1} and
// values within (-1, 1)), so one scale serves every step. Writes the scaled rows (`a16`, `b16`)
// and each row's scale (`a_scale`, `b_scale`). An infinite or NaN element stays so; a row with an
// infinity keeps scale 1. Needs kernels/half.cuh before it.

// 2^(14 - e) for the row's largest magnitude `most` in [2^e, 2^(e + 1)), within 2^±100 (a row
// of zeros or subnormals takes 2^100), and 1 where `most` is infinite.
__device__ __forceinline__ float f16_row_scale(float most) {
    const int field = (int)((__float_as_uint(most) >> 23) & 0xffu);
    if (field == 0xff) return 1.f;
    const int p = field == 0 ? 100 : min(max(14 - (field - 127), -100), 100);
    return __uint_as_float((u32)(p + 127) << 23);
}

extern "C" __global__ void rows_to_f16_scaled(const float* __restrict__ a, int a_rows, const float* __restrict__ b,
                                              int b_rows, int cols, u16* __restrict__ a16, float* __restrict__ a_scale,
                                              u16* __restrict__ b16, float* __restrict__ b_scale) {
    const int warps = blockDim.x / 32, lane = threadIdx.x % 32;
    const int row = blockIdx.x * warps + threadIdx.x / 32;
    if (row >= a_rows + b_rows) return;
    const bool in_a = row < a_rows;
    const int r = in_a ? row : row - a_rows;
    const float* const src = (in_a ? a : b) + (size_t)r * cols;
    u16* const dst = (in_a ? a16 : b16) + (size_t)r * cols;
    // (fmaxf passes over NaN: a NaN element stays NaN through the scale.)
    float most = in_a ? 0.f : 1.f;
    for (int c = lane; c < cols; c += 32) most = fmaxf(most, fabsf(src[c]));
#pragma unroll
    for (int o = 16; o > 0; o /= 2) most = fmaxf(most, __shfl_xor_sync(0xffffffffu, most, o));
    const float scale = f16_row_scale(most);
    for (int c = lane; c < cols; c += 32) dst[c] = f32_to_f16(src[c] * scale);
    if (lane == 0) (in_a ? a_scale : b_scale)[r] = scale;
}
