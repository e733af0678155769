// A stack's forward as one wavefront launch on the wgmma forward (recurrence_wgmma_fwd.cu): every
// layer's recurrence runs at once, layer l a step or so behind layer l - 1, instead of layer
// after layer. Each layer's recurrence takes the wgmma forward's blocks (HID / 32 for each of its
// GROUPS batch groups); the upper layers' input projections, which layer by layer are GEMMs
// before each launch, are made step by step by blocks of their own: projection block p of layer
// l multiplies rows 128 p .. 128 p + 127 of W_ih (64 in registers, 64 in shared memory) by
// layer l - 1's output at step t (its y, or what dropout left of it), the whole batch, once every
// block of layer l - 1 has stored it, and writes xg of layer l at step t (no biases: the
// recurrence adds them). Layer l's recurrence waits at each step until every projection block of
// its layer has written the step's rows of its batch group.
//
// The counters (u32, GROUP_WORDS apart from `counter`, zeroed before the launch: the host fills
// them with the exchange buffer once a call, and nothing here sets them back): layer l's group
// g's barrier at slot l GROUPS + g (an arrival a block a step, one for h_0, and below the top
// one after the last step too); the projection blocks' of layer l and group g at slot
// WAVE_LAYERS GROUPS + (l - 1) GROUPS + g (an arrival a block a step).
//
// The arguments are recurrence_fwd.cu's WaveArgs (wave.rs's): per layer its LayerArgs as 16
// words (w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset,
// drop_seed, drop_p_layer), then the exchange buffer (each layer's region of 2 B H elements after
// the one below's). Specialised as recurrence_wgmma_fwd.cu, and WAVE_LAYERS (2 to 4).

#if !defined(WAVE_LAYERS) || WAVE_LAYERS < 2 || WAVE_LAYERS > 4
#error "the wgmma wavefront takes 2 to 4 layers (WAVE_LAYERS)"
#endif

namespace wg {

constexpr int REC_BLOCKS = HID / UNITS;            // a layer's blocks of a batch group
constexpr int PROJ_ROWS = HROWS;                   // the gate rows of W_ih a projection block multiplies
constexpr int PROJ_BLOCKS = GH / PROJ_ROWS;        // a layer's projection blocks
constexpr int PROJ_SUBS = B_ALL / BATCH;           // subgroups of 32 samples in the batch
constexpr int Y_BYTES = PROJ_SUBS * RING_BYTES;    // a step's input, the whole batch, in the ring's layout
constexpr int PROJ_SMEM = W_BYTES + RED_BYTES + Y_BYTES;
constexpr int ONE_LAYER_HX = 2 * B_ALL * HID;      // u16s of a layer's exchange region
static_assert(GH % PROJ_ROWS == 0, "whole projection blocks of 128 gate rows");
static_assert(HID % 256 == 0 && PROJ_SUBS <= 8, "the loads' pieces and commit groups");

// The layer's arguments (recurrence_fwd.cu's LayerArgs, as words).
struct WaveLayer {
    unsigned long long w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset, drop_seed,
        drop_p_layer;
};
struct WgWaveArgs {
    WaveLayer layers[4];
    unsigned long long exchange;
};

// Projection block p of a layer: xg (rows t B_ALL .. of [T, B, GH], columns 128 p ..) from W_ih
// and `in`, the layer below's output ([T, B, H]), step by step as the layer below's groups
// (their barriers `below`, GROUP_WORDS apart) finish each step; each finished group of samples
// counted at `ready` (GROUP_WORDS apart).
__device__ __forceinline__ void project_steps(const elem* __restrict__ w_ih, const elem* in, xg_t* xg,
                                              const u32* below, u32* ready, int p, int seq) {
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const w_tile = smem;
    float* const red = (float*)(smem + W_BYTES);
    unsigned char* const ybuf = smem + W_BYTES + RED_BYTES;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4, part = tid % 128;
    const int row0 = PROJ_ROWS * p;

    // Rows 64.. of the block's into shared memory, the first 64 into registers.
    const bool wide = aligned16(w_ih);
    for (int i = tid; i < (PROJ_ROWS - REG_ROWS) * (HID / 8); i += THREADS) {
        const int n = i / (HID / 8), k = (i % (HID / 8)) * 8;
        u16* dst = (u16*)(w_tile + w_offset(n, k));
        const elem* src = w_ih + (size_t)(row0 + REG_ROWS + n) * HID + k;
        if (wide)
            cp_async16(dst, src);
        else
            *(uint4*)dst = make_uint4(((const u32*)src)[0], ((const u32*)src)[1], ((const u32*)src)[2],
                                      ((const u32*)src)[3]);
    }
    cp_async_commit();
    u32 wa[KSTEPS_HALF][4];
    load_fragments(wa, w_ih, [row0](int n) { return (size_t)(row0 + n); }, g, wq, r0, q);
    cp_async_wait_all();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const u32 w_base = smem_addr(w_tile);

    float d[16], e[16];
    for (int t = 0; t < seq; ++t) {
        // Every block of the layer below has stored its step t (an arrival for h_0 and one a step).
        if (tid == 0)
            for (int gr = 0; gr < GROUPS; ++gr) wait_acquire(below + GROUP_WORDS * gr, (u32)(REC_BLOCKS * (t + 2)));
        __syncthreads();
        // Warpgroup g loads its half of K of every sample (what its products read), subgroup by
        // subgroup, one commit group each: lane (8 samples by 4 pieces of 16 bytes) writes 512
        // consecutive bytes of the ring's layout.
        const elem* const in_t = in + (size_t)t * B_ALL * HID;
#pragma unroll
        for (int s = 0; s < PROJ_SUBS; ++s) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int unit = wq + 4 * j;  // 4 groups of 8 samples by 8 groups of 4 pieces
                const int m = 8 * (unit / 8) + lane % 8, k = (HID / 2) * g + 8 * (4 * (unit % 8) + lane / 8);
                cp_async16((u16*)(ybuf + (size_t)(s * CHUNKS + k / KC) * CHUNK_BYTES + h_offset(m, k % KC)),
                           (const u16*)(in_t + (size_t)(BATCH * s + m) * HID + k));
            }
            cp_async_commit();
        }
#pragma unroll
        for (int s = 0; s < PROJ_SUBS; ++s) {
            cp_async_wait_upto(PROJ_SUBS - 1 - s);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            named_sync(2 + g, 128);
#pragma unroll
            for (int ii = 0; ii < HALF; ++ii) {
                const int c = g * HALF + ii;
                wgmma_fence();
                const u32 slot = smem_addr(ybuf + (size_t)(s * CHUNKS + c) * CHUNK_BYTES);
#pragma unroll
                for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                    const u64 hb = wgmma_desc(slot + kk * 2 * H_LBO, H_LBO, H_SBO);
                    const u64 ws = wgmma_desc(w_base + (c * KSTEPS_CHUNK + kk) * 2 * W_LBO, W_LBO, W_SBO);
                    wgmma_rs_n32(d, wa[ii * KSTEPS_CHUNK + kk], hb, (ii | kk) != 0);
                    wgmma_ss_n32(e, ws, hb, (ii | kk) != 0);
                }
                wgmma_commit();
            }
            wgmma_wait<0>();
            // The two halves of K summed, each warpgroup taking half of the subgroup's samples
            // (all four of a thread's rows).
            if (g == 0)
                hand_over<0, 4>(red, d, e, part);
            else
                hand_over<1, 4>(red, d, e, part);
            named_sync(1, THREADS);
            if (g == 0)
                take_over<0, 4>(d, e, red, part);
            else
                take_over<1, 4>(d, e, red, part);
            // The thread's rows 16 wq + r0 (+ 8) of each 64 and samples 8 (2 g + jj) + 2 q + x.
            xg_t* const out = xg + ((size_t)t * B_ALL + BATCH * s + 16 * g + 2 * q) * GH + row0 + 16 * wq + r0;
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int x = 0; x < 2; ++x)
#pragma unroll
                    for (int slot = 0; slot < 4; ++slot) {
                        const int at = 4 * (2 * g + jj) + 2 * (slot % 2) + x;
                        const float v = slot < 2 ? d[at] : e[at];
                        const size_t o = (size_t)(8 * jj + x) * GH + REG_ROWS * (slot / 2) + 8 * (slot % 2);
#if XG_HALF
                        out[o] = from_f(v);
#else
                        out[o] = v;
#endif
                    }
            // Every thread has read `red` and stored its sums before the next subgroup's
            // overwrite them, and before the arrival that publishes a whole group.
            named_sync(1, THREADS);
            if (tid == 0 && (s + 1) % SUB == 0) arrive_release(ready + GROUP_WORDS * (s / SUB));
        }
    }
}

}  // namespace wg

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_wave_fwd(const wg::WgWaveArgs args, u32* counter, int seq) {
    using namespace wg;
#ifdef SMEM_BYTES
    static_assert(PROJ_SMEM <= SMEM_BYTES, "wgmma_wave.rs's shared memory is short of the projection's layout");
#endif
    const int rec_blocks = WAVE_LAYERS * GROUPS * REC_BLOCKS;
    const int bid = blockIdx.x;
    u32* const proj_counters = counter + GROUP_WORDS * WAVE_LAYERS * GROUPS;
    if (bid < rec_blocks) {
        const int layer = bid / (GROUPS * REC_BLOCKS), group = (bid / REC_BLOCKS) % GROUPS, blk = bid % REC_BLOCKS;
        const WaveLayer& a = args.layers[layer];
        u32* const bar = counter + GROUP_WORDS * (layer * GROUPS + group);
        const u32* ready = layer > 0 ? proj_counters + GROUP_WORDS * ((layer - 1) * GROUPS + group) : nullptr;
        layer_forward((const elem*)a.w_hh, (void*)a.xg, (const elem*)a.b_ih, (const elem*)a.b_hh, (const elem*)a.h0,
                      (const elem*)a.c0, (elem*)a.y, (elem*)a.h_n, (elem*)a.c_n,
                      (u16*)args.exchange + (size_t)layer * ONE_LAYER_HX, (float*)a.save, (elem*)a.dropped,
                      (const unsigned long long*)a.drop_offset, a.drop_seed, a.drop_p_layer, bar, seq, blk, group,
                      REC_BLOCKS, ready, PROJ_BLOCKS, layer + 1 < WAVE_LAYERS);
    } else {
        const int layer = 1 + (bid - rec_blocks) / PROJ_BLOCKS, p = (bid - rec_blocks) % PROJ_BLOCKS;
        const WaveLayer& a = args.layers[layer];
        const WaveLayer& below = args.layers[layer - 1];
        const elem* in = (const elem*)(below.dropped ? below.dropped : below.y);
        project_steps((const elem*)a.w_ih, in, (xg_t*)a.xg, counter + GROUP_WORDS * (layer - 1) * GROUPS,
                      proj_counters + GROUP_WORDS * (layer - 1) * GROUPS, p, seq);
    }
}
