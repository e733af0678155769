// One layer's backward through time as one persistent kernel on the warpgroup tensor-core
// instruction (wgmma, sm_90a), for wide layers at batch 128: hidden 1024, where the
// layer-by-layer backward (recurrence_bwd.cu) took about 18 µs a step and this design 10.5
// (LSTM) and 9.7 (GRU) in the lab (results/2026-11-30-h200-wgmma-backward-probe/,
// scripts/persistent-lab/wgmma_bwd_probe.cu).
//
// The whole batch is one group (wgmma's N = BATCH = 128) on HID / 16 blocks of 16 units each, in
// clusters of 8 that split the product's K (the 4 H gate rows of an LSTM, 3 H of a GRU). Each
// step, from the last:
// 1. Each thread runs the cell's backward (cell_backward) for 8 units of one sample from the gate
//    activations and what the cell saved (staged in its shared memory a step ahead), dy_t
//    (through the dropout mask after the layer) and the recurrent part of dh_t, which gives the
//    gate gradients dg_t (a split gate's recurrent side apart: the exchange carries it). They
//    go to the exchange buffer in wgmma's B layout (region = the block's cluster, one chunk a
//    gate) and, through shared memory, to `dg` (and a GRU's `dgh`) in whole 16-byte pieces; the
//    bias gradient's sums take them from there too.
// 2. The block arrives at the grid's barrier in memory (before its `dg` stores, which its
//    release then need not wait for), waits for every block, and thread 0 bulk-copies its region
//    of dg_t (the gate rows of the units of cluster `rank`, one chunk a gate: 32 KB each) into its
//    ring, each chunk counted by an mbarrier.
// 3. Each warpgroup multiplies its 64 of the cluster's 128 units of W_hh transposed (the block's
//    gate rows: 128 KB, all in registers, mma.sync's A fragments) by the ring (m64n128k16), a
//    partial dh_{t-1} over the block's share of K. Once every block of the cluster has
//    multiplied (a cluster barrier), each warp stores its 16 units' partial sums into the ring of
//    the block that finishes them (distributed shared memory, a slot per source block); after a
//    second cluster barrier each block sums its 8 slots: the recurrent part of dh_{t-1}.
// After step 0 that sum is dh_0 (a GRU adds its carried z * dh); an LSTM's carried dc is dc_0.
//
// Arguments as `persistent_bwd`'s (recurrence_bwd.cu) where they mean the same: `w` is W_hh, or
// with WT_ROWS (1) W_hh transposed ([HID][WT_PITCH], common.cuh: a fragment's two elements in
// one load), `dgx` the exchange ([2][HID / 128][REGION_BYTES]
// bytes, 2 B GH elements: the layer-by-layer backward's size), `counter` the grid barrier's
// words (zero at the launch; `grid_leave` sets them back). Compile-time (NVRTC -D): HID
// (CLUSTER * 128: 1024), BATCH 128, GROUPS 1, NWARPS 8, ELEM_BF16 (1: bf16, 0: f16), WT_ROWS,
// PARTIAL_BF16 (1: the partial sums go through distributed shared memory in bf16, half the
// bytes: 0.90-0.93x the lab's step, at 7x its largest error), SMEM_BYTES (kernel.rs's
// `wgmma_bwd_smem`, checked here). Needs the cell (cell_lstm.cuh or cell_gru.cuh),
// common.cuh, dropout.cu and wgmma.cuh before it.

#if BATCH != 128 || GROUPS != 1 || NWARPS != 8 || EW != 1
#error "the wgmma backward takes one group of 128 samples, 8 warps and half elements"
#endif
#ifndef WT_ROWS
#define WT_ROWS 0
#endif
#ifndef PARTIAL_BF16
#define PARTIAL_BF16 0
#endif

namespace wgb {

constexpr int UNITS = 16;                       // units a block finishes
constexpr int CLUSTER = 8;                      // blocks a cluster: K split in eighths
constexpr int CU = CLUSTER * UNITS;             // a cluster's units: A's M (two warpgroups' 64)
constexpr int BLOCKS = HID / UNITS;
constexpr int KQ = GATES * CU;                  // a block's share of K
constexpr int KC = 128;                         // gate rows a chunk: one gate's of CU units
constexpr int CHUNKS = GATES;
constexpr int KSTEPS = KQ / 16;
constexpr int KSTEPS_CHUNK = KC / 16;
constexpr int CHUNK_BYTES = BATCH * KC * 2;     // 32 KB
constexpr int REGION_BYTES = CHUNKS * CHUNK_BYTES;
constexpr int ITEMS = 8;                        // a thread's (unit, sample) pairs: 8 units
constexpr int RP = BATCH + 8;                   // a slot's row: one unit's samples, padded
// A slot's elements: f32, or with PARTIAL_BF16 bf16; rows 8.. start 16 words further (slot_row).
#if PARTIAL_BF16
using slot_t = u16;
constexpr int SLOT_SHIFT = 32;
#else
using slot_t = float;
constexpr int SLOT_SHIFT = 16;
#endif
constexpr int SLOT_ELEMS = UNITS * RP + 2 * SLOT_SHIFT;
// Block r of each cluster multiplies cluster r's gate rows: the clusters' ranks cover all of K
// only where the clusters number as many as a cluster's blocks.
static_assert(HID == CLUSTER * CU, "hidden 1024: as many clusters as a cluster's blocks");
static_assert(THREADS * ITEMS == UNITS * BATCH, "the pointwise step's items");
static_assert(CLUSTER * SLOT_ELEMS * sizeof(slot_t) <= REGION_BYTES, "the slots fit in the ring");

// A slot's row `row` (a unit of the block): rows 8-15 start 16 words further, so that a
// half-warp's 8-byte stores of rows r and r + 8 fall in distinct banks.
__device__ __forceinline__ int slot_row(int row) { return row * RP + SLOT_SHIFT * (row / 8); }
__device__ __forceinline__ float slot_value(float v) { return v; }
__device__ __forceinline__ float slot_value(u16 v) { return bf16_to_f32(v); }

// The columns a sample's gradients take in shared memory before the stores to `dg`: its gates'
// 16 units each, then (a split gate's cell) that gate's recurrent side; padded so that a
// quarter-warp's 16-byte stores of 8 samples fall in distinct banks.
constexpr int SPLIT_COLS = SPLIT_GATE >= 0 ? UNITS : 0;
constexpr int NCOL = GATES * UNITS + SPLIT_COLS;
constexpr int DSP = NCOL + 4;
static_assert(THREADS % NCOL == 0 && BATCH % (THREADS / NCOL) == 0, "the bias sums' segments");
constexpr int SEGMENTS = THREADS / NCOL;        // of the batch, per column of the bias sums

// Shared memory: the ring (a chunk a gate; after the products, the 8 slots of partial sums), its
// mbarriers, each thread's staged operands (the step's gate activations, what the cell saved, the
// state before the step, f32; dy, 8 elements), the samples' gradients by column.
constexpr int RING = 0;
constexpr int BARS = RING + REGION_BYTES;
constexpr int STAGE = BARS + 64;
constexpr int ST_SAVED = 32 * GATES;
constexpr int ST_PREV = ST_SAVED + 32 * CELL_SAVED;
constexpr int ST_DY = ST_PREV + 32;
constexpr int STAGE_BYTES = ST_DY + 16;
constexpr int DGS = STAGE + THREADS * STAGE_BYTES;
constexpr int SMEM = DGS + BATCH * DSP * 4;
static_assert(STAGE_BYTES % 16 == 0 && STAGE % 16 == 0 && DGS % 16 == 0, "16-byte pieces");
#ifdef SMEM_BYTES
static_assert(SMEM == SMEM_BYTES, "kernel.rs's wgmma_bwd_smem differs from this layout");
#endif

// B's core matrices in a chunk (8 samples x 8 gate rows, 128 bytes each): LBO along K, SBO
// along the samples.
constexpr u32 B_LBO = 128u;
constexpr u32 B_SBO = (KC / 8) * 128u;
__device__ __forceinline__ u32 b_offset(int s, int k) {
    return (u32)((k / 8) * B_LBO + (s / 8) * B_SBO + (s % 8) * 16 + (k % 8) * 2);
}

__device__ __forceinline__ void st_remote_v2(u32 remote, float a, float b) {
    asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(remote), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void st_remote_b64(u32 remote, u32 a, u32 b) {
    asm volatile("st.shared::cluster.v2.b32 [%0], {%1, %2};" ::"r"(remote), "r"(a), "r"(b) : "memory");
}
// Two f32 as bf16 (round to nearest even), the first in the low half.
__device__ __forceinline__ u32 pack_bf16(float lo, float hi) {
    return (u32)f32_to_bf16(lo) | ((u32)f32_to_bf16(hi) << 16);
}

// Eight f32 as eight half elements, in order.
__device__ __forceinline__ uint4 pack8(const float (&v)[8]) {
    u32 w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = (u32)from_f(v[2 * i]) | ((u32)from_f(v[2 * i + 1]) << 16);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace wgb

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_bwd(const elem* __restrict__ w,      // W_hh [GH, H], or WT_ROWS its transpose [HID][WT_PITCH]
          const float* __restrict__ gates, // [T, B, GH]
          const float* __restrict__ cells, // [T, B, CELL_SAVED, H]
          const elem* __restrict__ c0,     // [B, H] or null (zeros)
          const elem* __restrict__ dy,     // [T, B, H]
          const elem* __restrict__ dh_n,   // [B, H] or null (zeros)
          const elem* __restrict__ dc_n,   // [B, H] or null (zeros)
          elem* dg,                        // [T, B, GH]
          unsigned char* dgx,              // the exchange (above)
          elem* dh0, elem* dc0,            // [B, H] (dc0: a cell with c)
          elem* db_ih, elem* db_hh,        // [GH] or null
          unsigned long long db_add,
          const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
          unsigned long long drop_seed, unsigned long long drop_p_layer,
          elem* dgh,                       // [T, B, GH] (a split gate's cell), or null
          u32* counter, int seq) {
    using namespace wgb;
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const ring = smem + RING;
    unsigned long long* const full = (unsigned long long*)(smem + BARS);
    slot_t* const slots = (slot_t*)(smem + RING);
    float* const dgs = (float*)(smem + DGS);
    const Dropout drop = dropout_of(drop_offset, drop_seed, drop_p_layer);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int c = blockIdx.x / CLUSTER, r = (int)ctarank();

    // A: warpgroup g's 64 units (the cluster's 64 g ..) x the block's KQ gate rows, mma.sync's A
    // fragments: lane 4 r0 + q of warp wq holds rows 16 wq + r0 (+ 8), K columns 16 j + 2 q (+ 1,
    // + 8, + 9). K column kk is gate kk / KC's row of unit CU r + kk % KC (a fragment's two
    // elements are adjacent in W_hh transposed's row of the unit).
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4;
    u32 wa[KSTEPS][4];
#pragma unroll
    for (int j = 0; j < KSTEPS; ++j)
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int m = CU * c + 64 * g + 16 * wq + r0 + 8 * (x & 1);
            const int kk = 16 * j + 2 * q + 8 * (x >> 1);
            const int row = (kk / KC) * HID + CU * r + kk % KC;
#if WT_ROWS
            wa[j][x] = *(const u32*)(w + (size_t)m * WT_PITCH + row);
#else
            wa[j][x] = (u32)w[(size_t)row * HID + m] | ((u32)w[(size_t)(row + 1) * HID + m] << 16);
#endif
        }
    if (tid == 0)
        for (int ch = 0; ch < CHUNKS; ++ch) mbar_init(full + ch);

    // The thread's items: sample s, the block's units 8 u8 .. 8 u8 + 7 (the layer's k0 ..).
    const int s = tid % BATCH, u8 = tid / BATCH, ul0 = 8 * u8;
    const int kb = CU * c + UNITS * r, k0 = kb + ul0;
    // The recurrent part of dh_t and the carried gradient (an LSTM's dc, a GRU's z * dh), from
    // the final state's gradients.
    float rec[ITEMS], carry[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        rec[it] = dh_n ? to_f(dh_n[(size_t)s * HID + k0 + it]) : 0.f;
        carry[it] = (CELL_HAS_C && dc_n) ? to_f(dc_n[(size_t)s * HID + k0 + it]) : 0.f;
    }
    // The bias gradient's sums: column `bcol` of the samples' gradients over segment `bseg` of
    // the batch, every step.
    const int bcol = tid % NCOL, bseg = tid / NCOL;
    float bsum = 0.f;
    unsigned char* const stage = smem + STAGE + tid * STAGE_BYTES;
    // Step t's operands of the thread's items into its stage (the state before step 0 is c0's,
    // read where it is used).
    auto load_step = [&](int t) {
        const size_t row = (size_t)t * BATCH + s;
        auto copy32 = [&](int at, const float* src) {
            cp_async16((u16*)(stage + at), (const u16*)src);
            cp_async16((u16*)(stage + at + 16), (const u16*)(src + 4));
        };
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt) copy32(32 * gt, gates + row * GH + gt * HID + k0);
#pragma unroll
        for (int j = 0; j < CELL_SAVED; ++j) copy32(ST_SAVED + 32 * j, cells + (row * CELL_SAVED + j) * HID + k0);
        if (t > 0) copy32(ST_PREV, cells + (row - BATCH) * CELL_SAVED * HID + k0);
        cp_async16((u16*)(stage + ST_DY), dy + row * HID + k0);
        cp_async_commit();
    };
    load_step(seq - 1);
    // The warp's slot in block 4 g + wq of the cluster (its slot `r`): rows (units) r0 and
    // r0 + 8 of that block's 16, samples 8 j + 2 q (+ 1).
    const u32 dest = cluster_address(slots + (size_t)r * SLOT_ELEMS, (u32)(4 * g + wq));
    __syncthreads();
    // Every block of the cluster has started (its mbarriers initialised) before any block
    // stores into another's shared memory.
    cluster_barrier();

    float d[64];
    for (int i = 0; i < seq; ++i) {
        const int t = seq - 1 - i;
        // 1. The pointwise steps of the thread's items.
        cp_async_wait_all();
        const float4* act4 = (const float4*)stage;
        const float4* sv4 = (const float4*)(stage + ST_SAVED);
        const float4* pv4 = (const float4*)(stage + ST_PREV);
        const uint4 dyq = *(const uint4*)(stage + ST_DY);
        const u32 dyw[4] = {dyq.x, dyq.y, dyq.z, dyq.w};
        const size_t row = (size_t)t * BATCH + s;
        unsigned char* const out = dgx + ((size_t)(i & 1) * (HID / CU) + c) * REGION_BYTES;
        u32 dv[GATES][ITEMS / 2];  // the exchange's elements, pairs of items
#pragma unroll
        for (int hq = 0; hq < ITEMS / 4; ++hq) {
            float4 g4[GATES], s4[CELL_SAVED];
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt) g4[gt] = act4[2 * gt + hq];
#pragma unroll
            for (int j = 0; j < CELL_SAVED; ++j) s4[j] = sv4[2 * j + hq];
            const float4 p4 = pv4[hq];
            float dq[GATES][4], rq[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int it = 4 * hq + e;
                auto pick = [e](const float4& v) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; };
                float gate[GATES], saved[CELL_SAVED], dgate[GATES], d_rec = 0.f;
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) gate[gt] = pick(g4[gt]);
#pragma unroll
                for (int j = 0; j < CELL_SAVED; ++j) saved[j] = pick(s4[j]);
                const float prev = t > 0 ? pick(p4) : (c0 ? to_f(c0[(size_t)s * HID + k0 + it]) : 0.f);
                const elem dye = (elem)(dyw[it / 2] >> (16 * (it % 2)));
                const float dyv =
                    to_f(drop.offset ? dropout_scale(drop, dropout_keep(drop, row * HID + k0 + it), dye) : dye);
                cell_backward(gate, saved, prev, dyv, rec[it], carry[it], dgate, d_rec);
                rq[e] = d_rec;
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) {
                    dq[gt][e] = dgate[gt];
                    // (The exchange carries the recurrent product's side: a split gate's d_rec.)
                    const u32 v = (u32)from_f(gt == SPLIT_GATE ? d_rec : dgate[gt]) << (16 * (it % 2));
                    dv[gt][it / 2] = it % 2 ? dv[gt][it / 2] | v : v;
                }
            }
            // The sample's gradients by column (16-byte stores; a quarter-warp's 8 samples in
            // distinct banks).
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt)
                *(float4*)(dgs + (size_t)s * DSP + gt * UNITS + ul0 + 4 * hq) =
                    make_float4(dq[gt][0], dq[gt][1], dq[gt][2], dq[gt][3]);
            if (SPLIT_COLS)
                *(float4*)(dgs + (size_t)s * DSP + GATES * UNITS + ul0 + 4 * hq) = make_float4(rq[0], rq[1], rq[2], rq[3]);
        }
        // dg_t into the exchange: region c, chunk gt, gate rows 16 r + 8 u8 .. (+ 7): 16 bytes.
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt)
            *(uint4*)(out + (size_t)gt * CHUNK_BYTES + b_offset(s, UNITS * r + ul0)) =
                make_uint4(dv[gt][0], dv[gt][1], dv[gt][2], dv[gt][3]);
        // The next step's operands, while this step's barrier and products run (the stage was
        // read above by this thread alone).
        if (t > 0) load_step(t - 1);
        // 2. Every thread has stored its exchange (and read its slots, at the step before)
        // before the block's arrival publishes them.
        __syncthreads();
        if (tid == 0) arrive_release(counter);
        // `dg` (and `dgh`) from the samples' columns: pair p = (sample, gate) takes lanes 2 p
        // and 2 p + 1, 8 units (16 bytes) each; and the bias sums of the step.
        {
            constexpr int PAIRS = BATCH * GATES;
            for (int idx = tid; idx < 2 * PAIRS; idx += THREADS) {
                const int p = idx / 2, h8 = 8 * (idx % 2), sm = p / GATES, gt = p % GATES;
                const float* from = dgs + (size_t)sm * DSP + gt * UNITS + h8;
                const float4 lo = *(const float4*)from, hi = *(const float4*)(from + 4);
                const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
                const size_t at = ((size_t)t * BATCH + sm) * GH + gt * HID + kb + h8;
                *(uint4*)(dg + at) = pack8(v);
                if (SPLIT_COLS && dgh) {
                    if (gt == SPLIT_GATE) {
                        const float* fr = dgs + (size_t)sm * DSP + GATES * UNITS + h8;
                        const float4 rl = *(const float4*)fr, rh = *(const float4*)(fr + 4);
                        const float w[8] = {rl.x, rl.y, rl.z, rl.w, rh.x, rh.y, rh.z, rh.w};
                        *(uint4*)(dgh + at) = pack8(w);
                    } else {
                        *(uint4*)(dgh + at) = pack8(v);
                    }
                }
            }
            constexpr int SEG = BATCH / SEGMENTS;
#pragma unroll 8
            for (int sm = bseg * SEG; sm < (bseg + 1) * SEG; ++sm) bsum += dgs[(size_t)sm * DSP + bcol];
        }
        // 3. Every block's dg_t is in the exchange: the block's region `r` of it into the ring.
        // (The ring's slots were read at the step before, before this step's barrier.)
        if (tid == 0) {
            wait_acquire(counter, (u32)(BLOCKS * (i + 1)));
            // (The slots' generic stores and loads in the ring before the copies' async writes.)
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            const unsigned char* from = dgx + ((size_t)(i & 1) * (HID / CU) + r) * REGION_BYTES;
#pragma unroll
            for (int ch = 0; ch < CHUNKS; ++ch) {
                mbar_expect(full + ch, CHUNK_BYTES);
                bulk_copy(ring + (size_t)ch * CHUNK_BYTES, from + (size_t)ch * CHUNK_BYTES, CHUNK_BYTES, full + ch);
            }
        }
        __syncwarp();
#pragma unroll
        for (int ch = 0; ch < CHUNKS; ++ch) {
            mbar_wait(full + ch, (u32)(i & 1));
            wgmma_fence();
            const u32 base = smem_addr(ring + (size_t)ch * CHUNK_BYTES);
#pragma unroll
            for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                const u64 b = wgmma_desc(base + kk * 2 * B_LBO, B_LBO, B_SBO);
                wgmma_rs_n128(d, wa[ch * KSTEPS_CHUNK + kk], b, (ch | kk) != 0);
            }
            wgmma_commit();
        }
        wgmma_wait<0>();
        // Every block of the cluster has multiplied its ring (and read `dgs`), which now takes
        // the slots: the partial sums into the finishing block's slot, unit r0 + 8 h, samples
        // 8 j + 2 q.
        cluster_barrier();
#if PARTIAL_BF16
        // Lanes q and q ^ 1 swap a pair in bf16: the even lane then stores row r0's samples
        // 8 j + 2 q .. + 3, the odd one row r0 + 8's 8 j + 2 q - 2 .. + 1 (8 bytes a store).
        {
            const bool even = (q & 1) == 0;
            const u32 at = dest + (u32)((slot_row(even ? r0 : r0 + 8) + 2 * (q & ~1)) * 2);
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                const u32 lo = pack_bf16(d[4 * j], d[4 * j + 1]), hi = pack_bf16(d[4 * j + 2], d[4 * j + 3]);
                const u32 got = __shfl_xor_sync(~0u, even ? hi : lo, 1);
                st_remote_b64(at + 16u * j, even ? lo : got, even ? got : hi);
            }
        }
#else
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                st_remote_v2(dest + (u32)((slot_row(r0 + 8 * h) + 8 * j + 2 * q) * 4), d[4 * j + 2 * h],
                             d[4 * j + 2 * h + 1]);
#endif
        cluster_barrier();
        // The recurrent part of dh_{t-1}: the 8 slots' sums.
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            float sum = 0.f;
#pragma unroll
            for (int src = 0; src < CLUSTER; ++src) sum += slot_value(slots[src * SLOT_ELEMS + slot_row(ul0 + it) + s]);
            rec[it] = sum;
        }
    }
    // dh_0 (a GRU's carried z * dh reaches h_0 directly) and an LSTM's dc_0: 16 bytes each.
    {
        float h[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) h[it] = CELL_HAS_C ? rec[it] : rec[it] + carry[it];
        *(uint4*)(dh0 + (size_t)s * HID + k0) = pack8(h);
        if (CELL_HAS_C) *(uint4*)(dc0 + (size_t)s * HID + k0) = pack8(carry);
    }
    // The bias gradient of the block's units: the segments' sums in order (the same result
    // whatever the timing), written over db_ih and db_hh or, with `db_add`, added to them; a
    // split gate's recurrent side (its own columns) goes to db_hh. (`dgs` is free: every block
    // of the cluster passed its last barrier after reading it.)
    __syncthreads();
    dgs[bseg * NCOL + bcol] = bsum;
    __syncthreads();
    if ((db_ih || db_hh) && tid < GATES * UNITS) {
        const int gt = tid / UNITS, ul = tid % UNITS;
        float sum = 0.f, sum_rec;
        for (int q2 = 0; q2 < SEGMENTS; ++q2) sum += dgs[q2 * NCOL + tid];
        sum_rec = sum;
        if (SPLIT_COLS && gt == SPLIT_GATE) {
            sum_rec = 0.f;
            for (int q2 = 0; q2 < SEGMENTS; ++q2) sum_rec += dgs[q2 * NCOL + GATES * UNITS + ul];
        }
        const size_t at = (size_t)gt * HID + kb + ul;
        if (db_ih) db_ih[at] = from_f(db_add ? to_f(db_ih[at]) + sum : sum);
        if (db_hh) db_hh[at] = from_f(db_add ? to_f(db_hh[at]) + sum_rec : sum_rec);
    }
    grid_leave(counter);
}
