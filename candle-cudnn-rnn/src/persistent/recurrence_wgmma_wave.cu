// A stack's forward as one wavefront launch on the wgmma forward (recurrence_wgmma_fwd.cu): every
// layer's recurrence runs at once, layer l a step or so behind layer l - 1, instead of layer
// after layer. Each layer's recurrence takes the wgmma forward's blocks (HID / 32 for each of its
// GROUPS batch groups); the upper layers' input projections, which layer by layer are GEMMs
// before each launch, are made step by step by blocks of their own: projection block p of layer
// l multiplies rows 128 p .. 128 p + 127 of W_ih (all in shared memory) by layer l - 1's output
// at step t (its y, or what dropout left of it), each warpgroup half of the batch as soon as
// layer l - 1's groups of those samples have stored it, and writes xg of layer l at step t (no
// biases: the recurrence adds them). Layer l's recurrence waits at each step until every
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
// The arguments (wgmma_wave.rs's WgmmaWaveArgs, a __grid_constant__ parameter whose tensor maps
// the projections' copies read in place): the tensor maps of the inputs of the layers above the
// lowest (their y, or what dropout left of it), then per layer its LayerArgs as 16 words (w_ih,
// w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset, drop_seed,
// drop_p_layer: recurrence_fwd.cu's), then the exchange buffer (each layer's region of 2 B H
// elements after the one below's). Specialised as recurrence_wgmma_fwd.cu (a batch of 128), and WAVE_LAYERS (2
// to 4).

#if !defined(WAVE_LAYERS) || WAVE_LAYERS < 2 || WAVE_LAYERS > 4
#error "the wgmma wavefront takes 2 to 4 layers (WAVE_LAYERS)"
#endif

namespace wg {

static_assert(UNITS == 32, "the wavefront's projection blocks take the 32-unit form's 128 rows");
constexpr int REC_BLOCKS = HID / UNITS;            // a layer's blocks of a batch group
constexpr int PROJ_ROWS = HROWS;                   // the gate rows of W_ih a projection block multiplies
constexpr int PROJ_BLOCKS = GH / PROJ_ROWS;        // a layer's projection blocks
constexpr int PN = B_ALL / 2;                      // a projection warpgroup's samples (wgmma's N)
constexpr int PCHUNK_BYTES = PN * KC * 2;          // a chunk of KC columns of its samples' input
constexpr int PSLOTS = 2;                          // the chunks a warpgroup's ring holds
constexpr int PW_BYTES = PROJ_ROWS * HID * 2;      // the block's rows of W_ih
constexpr int PROJ_SMEM = PW_BYTES + 2 * PSLOTS * PCHUNK_BYTES + 2 * PSLOTS * 8;  // and the slots' mbarriers
// A chunk as the tensor copy lays it out (its box: 8 columns, PN samples, KC / 8 column groups):
// wgmma's no-swizzle core matrices, LBO along K (a column group of every sample), SBO along N.
constexpr u32 P_LBO = PN * 16, P_SBO = 128;
constexpr int ONE_LAYER_HX = 2 * B_ALL * HID;      // u16s of a layer's exchange region
constexpr int SLOT_WORDS = 32;                     // u32s between two counters: a 128-byte line each
static_assert(GH % PROJ_ROWS == 0, "whole projection blocks of 128 gate rows");
static_assert(PN == 64 && PN % GB == 0, "a projection warpgroup takes whole groups, 64 samples (wgmma's N)");
static_assert(CHUNKS % PSLOTS == 0, "every slot takes as many chunks a step");

// The layer's arguments (recurrence_fwd.cu's LayerArgs, as words).
struct WaveLayer {
    unsigned long long w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset, drop_seed,
        drop_p_layer;
};
// A tensor map (CUtensorMap, which the host encodes): a layer's input as [T][H / 8][B][8].
struct alignas(128) TensorMap {
    unsigned long long words[16];
};
struct WgWaveArgs {
    TensorMap inputs[3];  // of the layers above the lowest
    WaveLayer layers[4];
    unsigned long long exchange;
};

// Box (0, m0, ko0, t) of the tensor map at `map` (a kernel parameter's address) into this block's
// shared memory at `dst`, counted by the mbarrier `bar`. The fence orders the generic-proxy view
// of the layer below's stores (before the barrier this thread has passed) before the copy's
// async-proxy read.
__device__ __forceinline__ void tensor_load(void* dst, const TensorMap* map, int m0, int ko0, int t,
                                            unsigned long long* bar) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5}], [%6];" ::"r"(smem_addr(dst)),
        "l"(map), "r"(0), "r"(m0), "r"(ko0), "r"(t), "r"(smem_addr(bar))
        : "memory");
}

// Where sample s's sum of row `row` (of the block's 128) lies in the staged sums: a sample's
// rows one after the other, their groups of 8 swizzled by bits 1-2 of the sample, so that a
// warp's stores (8 rows of samples 2 q + x, q = 0..3) take distinct banks; a piece of 8 rows
// (16 bytes of half sums, two pieces of f32 ones) stays whole.
__device__ __forceinline__ int stage_at(int s, int row) { return s * PROJ_ROWS + (row ^ (((s >> 1) & 3) << 3)); }
static_assert(PN * PROJ_ROWS * (int)sizeof(xg_t) <= PSLOTS * PCHUNK_BYTES, "a warpgroup's sums fit its ring");

// Projection block p of a layer: xg (rows t B_ALL .. of [T, B, GH], columns 128 p ..) from W_ih
// and the layer below's output ([T, B, H], through its tensor map `in`), step by step as the
// layer below's groups (their barriers `below`, SLOT_WORDS apart) finish each step. Warpgroup g
// takes samples PN g .. (whole groups: it waits for theirs only), all 128 rows (two wgmma tiles of
// 64, from shared memory) over all of K in chunks of KC columns through a ring of its own (a
// tensor copy a chunk, which its first thread issues), and counts each of its groups finished at
// `ready` (SLOT_WORDS apart).
__device__ __forceinline__ void project_steps(const elem* __restrict__ w_ih, const TensorMap* in, xg_t* xg,
                                              const u32* below, u32* ready, int p, int seq) {
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const w_tile = smem;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4, part = tid % 128;
    unsigned char* const ring = smem + PW_BYTES + (size_t)g * PSLOTS * PCHUNK_BYTES;
    unsigned long long* const full = (unsigned long long*)(smem + PW_BYTES + 2 * PSLOTS * PCHUNK_BYTES) + PSLOTS * g;
    const int row0 = PROJ_ROWS * p;
    constexpr int GROUPS_WG = PN / GB;  // the warpgroup's batch groups
    const int group0 = GROUPS_WG * g;

    // The block's rows of W_ih into shared memory (the tile's layout for rows 0..127).
    const bool wide = aligned16(w_ih);
    for (int i = tid; i < PROJ_ROWS * (HID / 8); i += THREADS) {
        const int n = i / (HID / 8), k = (i % (HID / 8)) * 8;
        u16* dst = (u16*)(w_tile + w_offset(n, k));
        const elem* src = w_ih + (size_t)(row0 + n) * HID + k;
        if (wide)
            cp_async16(dst, src);
        else
            *(uint4*)dst = make_uint4(((const u32*)src)[0], ((const u32*)src)[1], ((const u32*)src)[2],
                                      ((const u32*)src)[3]);
    }
    cp_async_commit();
    if (part == 0)
        for (int i = 0; i < PSLOTS; ++i) mbar_init(full + i);
    cp_async_wait_all();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const u32 w_base = smem_addr(w_tile);

    float acc[2][32];
    for (int t = 0; t < seq; ++t) {
        // Every block of the warpgroup's groups of the layer below has stored its step t (an
        // arrival for h_0 and one a step).
        if (part == 0)
            for (int gr = group0; gr < group0 + GROUPS_WG; ++gr)
                wait_acquire(below + SLOT_WORDS * gr, (u32)(REC_BLOCKS * (t + 2)));
        named_sync(2 + g, 128);
        // Chunk c of the warpgroup's samples at step t into ring slot c % PSLOTS: a tensor copy
        // (its box: every column of the chunk, the warpgroup's samples), counted by the slot's
        // mbarrier.
        auto load = [&](int c) {
            if (part == 0) {
                unsigned long long* const bar = full + c % PSLOTS;
                mbar_expect(bar, PCHUNK_BYTES);
                tensor_load(ring + (size_t)(c % PSLOTS) * PCHUNK_BYTES, in, PN * g, (KC / 8) * c, t, bar);
            }
        };
#pragma unroll
        for (int c = 0; c < PSLOTS; ++c) load(c);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            if (c >= 1 && c + PSLOTS - 1 < CHUNKS) {
                // Chunk c - 1's products done in every warp before its slot takes chunk c + PSLOTS - 1.
                wgmma_wait<0>();
                named_sync(2 + g, 128);
                load(c + PSLOTS - 1);
            }
            // The slot's use of this step: CHUNKS / PSLOTS a step, its phases alternating.
            mbar_wait(full + c % PSLOTS, (u32)((t * (CHUNKS / PSLOTS) + c / PSLOTS) & 1));
            wgmma_fence();
            const u32 slot = smem_addr(ring + (size_t)(c % PSLOTS) * PCHUNK_BYTES);
#pragma unroll
            for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                const u64 hb = wgmma_desc(slot + kk * 2 * P_LBO, P_LBO, P_SBO);
#pragma unroll
                for (int tile = 0; tile < 2; ++tile) {
                    const u64 ws = wgmma_desc(w_base + tile * 8 * W_SBO + (c * KSTEPS_CHUNK + kk) * 2 * W_LBO, W_LBO,
                                              W_SBO);
                    wgmma_ss_n64(acc[tile], ws, hb, (c | kk) != 0);
                }
            }
            wgmma_commit();
        }
        wgmma_wait<0>();
        // The sums through the warpgroup's ring (free: the step's chunks are all consumed, and
        // the next step's copies start after the barrier that opens it), so that the stores to
        // xg are whole 16-byte pieces of a sample's rows: from the registers each warp's store
        // would write 8 rows of 4 samples, 4 lines of 16 bytes. The thread holds rows
        // 64 tile + 16 wq + 8 half + r0 of samples 8 j + 2 q + x.
        xg_t* const stage = (xg_t*)ring;
#pragma unroll
        for (int tile = 0; tile < 2; ++tile)
#pragma unroll
            for (int j = 0; j < PN / 8; ++j)
#pragma unroll
                for (int half = 0; half < 2; ++half)
#pragma unroll
                    for (int x = 0; x < 2; ++x) {
                        const float v = acc[tile][4 * j + 2 * half + x];
                        const int s = 8 * j + 2 * q + x, row = REG_ROWS * tile + 16 * wq + 8 * half + r0;
#if XG_HALF
                        stage[stage_at(s, row)] = from_f(v);
#else
                        stage[stage_at(s, row)] = v;
#endif
                    }
        named_sync(2 + g, 128);
        constexpr int PIECE = 16 / (int)sizeof(xg_t);  // sums in 16 bytes
        xg_t* const out = xg + ((size_t)t * B_ALL + PN * g) * GH + row0;
#pragma unroll 4
        for (int i = part; i < PN * PROJ_ROWS / PIECE; i += 128) {
            const int s = i / (PROJ_ROWS / PIECE), row = PIECE * (i % (PROJ_ROWS / PIECE));
            *(uint4*)(out + (size_t)s * GH + row) = *(const uint4*)(stage + stage_at(s, row));
        }
        // The ring's generic reads ordered before the next step's tensor copies into it.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        // Every thread of the warpgroup has stored its sums (and read the ring) before the
        // arrivals that publish them.
        named_sync(2 + g, 128);
        if (part == 0)
            for (int gr = group0; gr < group0 + GROUPS_WG; ++gr) arrive_release(ready + SLOT_WORDS * gr);
    }
}

}  // namespace wg

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_wave_fwd(const __grid_constant__ wg::WgWaveArgs args, u32* counter, int seq) {
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
                      REC_BLOCKS, ready, PROJ_BLOCKS, layer + 1 < WAVE_LAYERS, nullptr, nullptr);
    } else {
        const int layer = 1 + (bid - rec_blocks) / PROJ_BLOCKS, p = (bid - rec_blocks) % PROJ_BLOCKS;
        const WaveLayer& a = args.layers[layer];
        project_steps((const elem*)a.w_ih, &args.inputs[layer - 1], (xg_t*)a.xg, counter + SLOT_WORDS * (layer - 1) * GROUPS,
                      proj_counters + SLOT_WORDS * (layer - 1) * GROUPS, p, seq);
    }
}
