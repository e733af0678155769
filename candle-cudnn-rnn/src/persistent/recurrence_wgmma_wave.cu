// A stack's forward as one wavefront launch on the wgmma forward (recurrence_wgmma_fwd.cu): every
// layer's recurrence runs at once, layer l a step or so behind layer l - 1, instead of layer
// after layer. Each layer's recurrence takes the wgmma forward's blocks (HID / 32 for each of its
// GROUPS batch groups); the upper layers' input projections, which layer by layer are GEMMs
// before each launch, are made step by step by blocks of their own: projection block p of layer
// l multiplies rows 128 p .. 128 p + 127 of W_ih (64 in each warpgroup's registers) by layer
// l - 1's output at step t (its y, or what dropout left of it), a batch group at a time as soon
// as layer l - 1's group has stored it, and writes xg of layer l at step t (no biases: the
// recurrence adds them). Layer l's recurrence waits at each step until every
// projection block of its layer has written the step's rows of its batch group.
//
// The counters (u32, SLOT_WORDS apart from `counter`, each on a 128-byte line of its own: the
// polls of one do not slow the arrivals at another; zeroed before the launch: the host fills
// them with the exchange buffer once a call, and nothing here sets them back): layer l's group
// g's barrier at slot l GROUPS + g (an arrival a block a step, one for h_0, and below the top
// one after the last step too); the projection blocks' of layer l and group g at slot
// WAVE_LAYERS GROUPS + (l - 1) GROUPS + g (an arrival a block a step). The recurrence polls the
// projection's counter with thread 0 only, before the group's barrier.
//
// The arguments are recurrence_fwd.cu's WaveArgs (wave.rs's): per layer its LayerArgs as 16
// words (w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset,
// drop_seed, drop_p_layer), then the exchange buffer (each layer's region of 2 B H elements after
// the one below's). Specialised as recurrence_wgmma_fwd.cu (a batch of 128), and WAVE_LAYERS (2
// to 4).

#if !defined(WAVE_LAYERS) || WAVE_LAYERS < 2 || WAVE_LAYERS > 4
#error "the wgmma wavefront takes 2 to 4 layers (WAVE_LAYERS)"
#endif

namespace wg {

constexpr int REC_BLOCKS = HID / UNITS;            // a layer's blocks of a batch group
constexpr int PROJ_ROWS = HROWS;                   // the gate rows of W_ih a projection block multiplies
constexpr int PROJ_BLOCKS = GH / PROJ_ROWS;        // a layer's projection blocks
constexpr int KSTEPS = HID / 16;                   // the k-steps of all of K
constexpr int PCHUNK_BYTES = GB * KC * 2;          // a chunk of KC columns of a group's input
constexpr int PROJ_SMEM = GROUPS * CHUNKS * PCHUNK_BYTES;  // a step's input, the whole batch
constexpr int ONE_LAYER_HX = 2 * B_ALL * HID;      // u16s of a layer's exchange region
constexpr int SLOT_WORDS = 32;                     // u32s between two counters: a 128-byte line each
static_assert(GH % PROJ_ROWS == 0, "whole projection blocks of 128 gate rows");
static_assert(GB == 64, "a projection's products take a group of 64 samples (wgmma's N)");

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
// and `in`, the layer below's output ([T, B, H]), step by step, each batch group as soon as the
// layer below's group (its barrier in `below`, SLOT_WORDS apart) has stored its step: its input
// into shared memory (in chunks of KC columns, the products of each starting once it is in), then
// warpgroup g multiplies rows 64 g .. of the block's (W_ih's in its registers, all of K: wgmma
// m64n64 from registers, which reads only the input from shared memory) by the group's 64
// samples, stores its sums and counts the group finished at `ready` (SLOT_WORDS apart).
__device__ __forceinline__ void project_steps(const elem* __restrict__ w_ih, const elem* in, xg_t* xg,
                                              const u32* below, u32* ready, int p, int seq) {
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const ybuf = smem;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4;
    const int row0 = PROJ_ROWS * p + REG_ROWS * g;  // the warpgroup's first row of W_ih
    u32 wa[KSTEPS][4];
    load_fragments(wa, w_ih, [row0](int n) { return (size_t)(row0 + n); }, 0, wq, r0, q);

    float acc[32];
    for (int t = 0; t < seq; ++t) {
        for (int gr = 0; gr < GROUPS; ++gr) {
            // Every block of the layer below's group has stored its step t (an arrival for h_0
            // and one a step).
            if (tid == 0) wait_acquire(below + SLOT_WORDS * gr, (u32)(REC_BLOCKS * (t + 2)));
            __syncthreads();
            // The group's input at step t, chunk by chunk (one commit group each): a warp's lanes
            // (8 samples by 4 pieces of 16 bytes) write 512 consecutive bytes of the chunk's
            // layout (the ring's of recurrence_wgmma_fwd.cu, 64 samples).
            const elem* const in_t = in + ((size_t)t * B_ALL + GB * gr) * HID;
            unsigned char* const chunks = ybuf + (size_t)gr * CHUNKS * PCHUNK_BYTES;
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
#pragma unroll
                for (int j = 0; j < GB * KC / 8 / THREADS; ++j) {
                    const int unit = warp + NWARPS * j;  // GB / 8 groups of 8 samples by KC / 32 of 4 pieces
                    const int m = 8 * (unit / (KC / 32)) + lane % 8;
                    const int kk = 8 * (4 * (unit % (KC / 32)) + lane / 8);
                    cp_async16((u16*)(chunks + (size_t)c * PCHUNK_BYTES + h_offset(m, kk)),
                               (const u16*)(in_t + (size_t)m * HID + KC * c + kk));
                }
                cp_async_commit();
            }
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                cp_async_wait_upto(CHUNKS - 1 - c);
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                __syncthreads();
                wgmma_fence();
                const u32 slot = smem_addr(chunks + (size_t)c * PCHUNK_BYTES);
#pragma unroll
                for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                    const u64 hb = wgmma_desc(slot + kk * 2 * H_LBO, H_LBO, H_SBO);
                    wgmma_rs_n64(acc, wa[c * KSTEPS_CHUNK + kk], hb, (c | kk) != 0);
                }
                wgmma_commit();
            }
            wgmma_wait<0>();
            // The thread's rows 16 wq + r0 (+ 8) of the warpgroup's and samples 8 j + 2 q + x of
            // the group's.
            xg_t* const out = xg + ((size_t)t * B_ALL + GB * gr + 2 * q) * GH + row0 + 16 * wq + r0;
#pragma unroll
            for (int j = 0; j < GB / 8; ++j)
#pragma unroll
                for (int half = 0; half < 2; ++half)
#pragma unroll
                    for (int x = 0; x < 2; ++x) {
                        const float v = acc[4 * j + 2 * half + x];
                        const size_t o = (size_t)(8 * j + x) * GH + 8 * half;
#if XG_HALF
                        out[o] = from_f(v);
#else
                        out[o] = v;
#endif
                    }
            // Every thread has stored its sums (and read the group's input, which the group's
            // next step overwrites) before the arrival that publishes them.
            __syncthreads();
            if (tid == 0) arrive_release(ready + SLOT_WORDS * gr);
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
    u32* const proj_counters = counter + SLOT_WORDS * WAVE_LAYERS * GROUPS;
    if (bid < rec_blocks) {
        const int layer = bid / (GROUPS * REC_BLOCKS), group = (bid / REC_BLOCKS) % GROUPS, blk = bid % REC_BLOCKS;
        const WaveLayer& a = args.layers[layer];
        u32* const bar = counter + SLOT_WORDS * (layer * GROUPS + group);
        const u32* ready = layer > 0 ? proj_counters + SLOT_WORDS * ((layer - 1) * GROUPS + group) : nullptr;
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
        project_steps((const elem*)a.w_ih, in, (xg_t*)a.xg, counter + SLOT_WORDS * (layer - 1) * GROUPS,
                      proj_counters + SLOT_WORDS * (layer - 1) * GROUPS, p, seq);
    }
}
