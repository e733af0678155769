// Inter-layer dropout of the persistent path. A mask element is a Philox4x32-10 draw
// (kernels/philox.cuh, placed in front) keyed by the module's seed and counted by (element / 4,
// layer, call offset), so the backward redraws the forward's mask from the same offset. The
// offset lives in device memory and advances on the device (`rnn_dropout_take`), so that a
// replayed CUDA graph draws new masks. The recurrences apply the masks themselves (`Dropout`):
// the forward as it stores a layer's output for the next layer, the backward as it loads the
// gradient of that output.

// The dropout after one layer, as a recurrence's launch receives it: `offset` null for none;
// `seed` the module's; `p_layer` the probability's f32 bits (low half) and the layer (high).
struct Dropout {
    const unsigned long long* offset;
    float p, scale;
    u32 seed_lo, seed_hi, layer;
    unsigned long long off;
};

// Reads the call's offset (once per launch, on the device: a replayed graph's differs).
__device__ __forceinline__ Dropout dropout_of(const unsigned long long* offset,
                                              unsigned long long seed,
                                              unsigned long long p_layer) {
    Dropout d;
    d.offset = offset;
    d.p = __uint_as_float((u32)p_layer);
    d.scale = 1.f / (1.f - d.p);
    d.seed_lo = (u32)seed;
    d.seed_hi = (u32)(seed >> 32);
    d.layer = (u32)(p_layer >> 32);
    d.off = offset ? *offset : 0;
    return d;
}

// Whether the mask keeps element i of the layer's output [T, B, H].
__device__ __forceinline__ bool dropout_keep(const Dropout& d, unsigned long long i) {
    u32 c[4] = {(u32)(i / 4), d.layer, (u32)d.off, (u32)(d.off >> 32)};
    philox(c, d.seed_lo, d.seed_hi);
    const int j = (int)(i % 4);
    // A select, not c[j]: an indexed array would live in local memory.
    u32 r = j == 0 ? c[0] : j == 1 ? c[1] : j == 2 ? c[2] : c[3];
    float u = (float)(r >> 8) * (1.f / 16777216.f);
    return u >= d.p;
}

// x through the mask where `keep` (dropout_keep) says: x / (1 - p) or 0.
__device__ __forceinline__ elem dropout_scale(const Dropout& d, bool keep, elem x) {
    return keep ? from_f(to_f(x) * d.scale) : (elem)0;
}

// Element i of the layer's output [T, B, H] through the mask: x / (1 - p) or 0.
__device__ __forceinline__ elem dropout_apply(const Dropout& d, unsigned long long i, elem x) {
    return dropout_scale(d, dropout_keep(d, i), x);
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
