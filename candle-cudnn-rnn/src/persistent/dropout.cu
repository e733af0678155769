// Inter-layer dropout of the persistent path. A mask element is a Philox4x32-10 draw keyed by
// the module's seed and counted by (element / 4, layer, call offset), so the backward redraws
// the forward's mask from the same offset. The offset lives in device memory and advances on
// the device (`rnn_dropout_take`), so that a replayed CUDA graph draws new masks.

__device__ __forceinline__ void philox(u32 k0, u32 k1, u32* c) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        u32 hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
        u32 hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
        u32 n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

// out = in * mask / (1 - p) over n elements (in place allowed): the forward on a layer's
// output, the backward on the gradient of the next layer's input.
extern "C" __global__ void rnn_dropout(const u16* in, u16* out, unsigned long long n, float p,
                                       u32 seed_lo, u32 seed_hi,
                                       const unsigned long long* offset, u32 layer) {
    unsigned long long q = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (q * 4 >= n) return;
    unsigned long long off = *offset;
    u32 c[4] = {(u32)q, layer, (u32)off, (u32)(off >> 32)};
    philox(seed_lo, seed_hi, c);
    float scale = 1.f / (1.f - p);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned long long i = q * 4 + j;
        if (i < n) {
            float u = (float)(c[j] >> 8) * (1.f / 16777216.f);
            out[i] = (u >= p) ? from_f(to_f(in[i]) * scale) : (u16)0;
        }
    }
}

// The offset of this call's masks into `taken`, and the module's counter moved past it
// (one thread: more would race on the counter).
extern "C" __global__ void rnn_dropout_take(unsigned long long* counter,
                                            unsigned long long* taken) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *taken = *counter;
        *counter += 1;
    }
}
