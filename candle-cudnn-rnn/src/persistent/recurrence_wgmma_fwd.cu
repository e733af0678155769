// One layer's inference forward as one persistent kernel on the warpgroup tensor-core
// instruction (wgmma, sm_90a), for wide layers at large batches: hidden 1024 at batch 64-128,
// where the layer-by-layer kernel (recurrence_fwd.cu) is bound by the exchange of h_{t-1}
// through L2 and cuDNN's `Standard` led it. The batch runs in groups of 32 samples (common.cuh's
// GROUPS; BATCH is 32), each an independent recurrence on HID / 32 blocks of 32 units, so that a
// block reads only its group's h_{t-1} a step (64 KB at hidden 1024, 8 MB of L2 a step at batch
// 128, half of what two groups read). A block's gate rows (GATES * 32) of W_hh are 256 KB at
// hidden 1024, more than shared memory holds beside the ring: rows 0-63 stay in registers (128 a
// thread) and the rest in shared memory (results/2026-11-30-h200-wgmma-hybrid/: 4.7 µs a step
// against two groups' 8.6 and `Standard`'s 9.3-10.3).
//
// Each step, once every block of the group has stored h_{t-1} (the group's barrier in memory),
// thread 0 copies all of it into the ring (one bulk copy a chunk of KC columns, each counted by
// an mbarrier of its own). Warpgroup g multiplies half of K: wgmma m64n32k16 with the weights as
// A (64 gate rows: from registers, then from shared memory) and h_{t-1} as B (the group's 32
// samples). The halves are summed through shared memory; each thread then does the gate math of
// 2 units of 2 samples (the step's input projection, copied into shared memory while the
// products ran, and the biases added), writes h_t to y, and into the exchange buffer in the
// ring's layout for the next step; then the group's barrier.
//
// The input projection comes from a GEMM before the launch in half elements (`xg`, [T, B, GH],
// kernel.rs's `half_projection`), without biases. A GRU's 96 gate rows are r and z from
// registers and n from shared memory, padded with zero rows to wgmma's 64; n's recurrent product
// takes b_hn before r scales it (cell_gru.cuh).
//
// Specialised at compile time (NVRTC -D): HID (a multiple of 2 * KC), GROUPS, ELEM_BF16 (1: bf16,
// 0: f16), NWARPS 8 and BATCH 32 (a group's samples), SMEM_BYTES (kernel.rs's `wgmma_smem`,
// checked here). Needs the cell (cell_lstm.cuh or cell_gru.cuh), common.cuh and wgmma.cuh before it.

#if BATCH != 32 || NWARPS != 8 || EW != 1
#error "the wgmma forward takes groups of 32 samples, 8 warps and half elements"
#endif

namespace wg {

constexpr int UNITS = 32;                 // units a block
constexpr int ROWS = GATES * UNITS;       // its gate rows
constexpr int REG_ROWS = 64;              // the rows in registers (wgmma's M)
constexpr int HROWS = 2 * REG_ROWS;       // the rows multiplied (zeros past ROWS: a GRU's)
constexpr int KC = 128;                   // columns of h a chunk
constexpr int CHUNKS = HID / KC;          // chunks a step: the ring holds all of them
constexpr int HALF = CHUNKS / 2;          // a warpgroup's chunks
constexpr int KSTEPS_CHUNK = KC / 16;
constexpr int KSTEPS_HALF = HID / 32;     // k-steps of a warpgroup's half of K
constexpr int CHUNK_BYTES = BATCH * KC * 2;
constexpr int PAIRS = BATCH / 16;         // a thread's samples (m_first + 16 p)
static_assert(HID % (2 * KC) == 0, "HID a multiple of 256: whole chunks in each half of K");
static_assert(ROWS > REG_ROWS && ROWS <= HROWS, "the gate rows past the registers' fit one wgmma");

// Shared memory: the rows past REG_ROWS (wgmma's no-swizzle core matrices), the reduction's f32
// sums ([HROWS][RP]), the ring, its mbarriers, and each thread's slots of the step's input
// projection ([pair][gate][thread], 2 half elements each).
constexpr int W_BYTES = (HROWS - REG_ROWS) * HID * 2;
constexpr int RP = BATCH + 4;
constexpr int RED_BYTES = HROWS * RP * 4;
constexpr int RING_BYTES = CHUNKS * CHUNK_BYTES;
constexpr int BAR_BYTES = CHUNKS * 8;
constexpr int XS_BYTES = PAIRS * GATES * THREADS * 4;
constexpr int SMEM = W_BYTES + RED_BYTES + RING_BYTES + BAR_BYTES + XS_BYTES;

// h's core matrices in a chunk (B: 8 samples x 8 columns, 128 bytes each): LBO along K, SBO along
// the samples; the weights' (A) likewise along K and the rows.
constexpr u32 H_LBO = 128, H_SBO = (KC / 8) * 128;
constexpr u32 W_LBO = 128, W_SBO = (HID / 8) * 128;

// Byte offset of (sample m, column k) in a chunk of h, and of (row n, column k) in the tile.
__device__ __forceinline__ u32 h_offset(int m, int k) {
    return (u32)((k / 8) * H_LBO + (m / 8) * H_SBO + (m % 8) * 16 + (k % 8) * 2);
}
__device__ __forceinline__ u32 w_offset(int n, int k) {
    return (u32)((k / 8) * W_LBO + (n / 8) * W_SBO + (n % 8) * 16 + (k % 8) * 2);
}

// The row of W_hh that is row n of block `blk`'s gate rows: gate n / UNITS of unit n % UNITS.
__device__ __forceinline__ size_t w_row(int n, int blk) {
    return (size_t)(n / UNITS) * HID + UNITS * blk + n % UNITS;
}

// `bytes` from global `src` into this block's shared memory at `dst`, counted by the mbarrier
// `bar`. The fence orders the generic-proxy view of `src` (other blocks' stores, before the
// barrier this thread has passed) before the copy's async-proxy read.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, u32 bytes, unsigned long long* bar) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(dst)),
        "l"(src), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
}

// Warpgroup g's half of K of rows 16 wq + r0 (+ 8) of the block's register rows, mma.sync's A
// fragments (lane 4 r0 + q), from W_hh.
__device__ __forceinline__ void load_fragments(u32 (&wa)[KSTEPS_HALF][4], const elem* w_hh, int blk, int g,
                                               int wq, int r0, int q) {
#pragma unroll
    for (int j = 0; j < KSTEPS_HALF; ++j) {
        const int k = (HID / 2) * g + 16 * j + 2 * q;
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int n = 16 * wq + r0 + 8 * (x & 1);
            wa[j][x] = *(const u32*)(w_hh + w_row(n, blk) * HID + k + 8 * (x >> 1));
        }
    }
}

// A warpgroup's accumulators (row 16 wq + r0 + 8 h, column (sample) 8 j + 2 q + x in
// d[4 j + 2 h + x]) written into the sums' rows row0.., or with ADD added to what is there.
template <bool ADD>
__device__ __forceinline__ void to_sums(float* red, const float (&d)[16], int row0, int wq, int r0, int q) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float2* at = (float2*)(red + (row0 + 16 * wq + r0 + 8 * hh) * RP + 8 * j + 2 * q);
            const float2 o = ADD ? *at : make_float2(0.f, 0.f);
            *at = make_float2(o.x + d[4 * j + 2 * hh], o.y + d[4 * j + 2 * hh + 1]);
        }
}

}  // namespace wg

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_fwd(const elem* __restrict__ w_hh,  // [GH, H]
          const elem* __restrict__ xg,    // [T, B, GH] (the half projection)
          const elem* __restrict__ b_ih,  // [GH] or null
          const elem* __restrict__ b_hh,  // [GH] or null
          const elem* h0,                 // [B, H] or null (zeros)
          const elem* __restrict__ c0,    // [B, H] or null (zeros; a GRU's: h_0)
          elem* y,                        // [T, B, H]
          elem* h_n, elem* c_n,           // [B, H] (c_n: null without c)
          u16* hx,                        // [GROUPS][2][CHUNKS][CHUNK_BYTES / 2]: h_{t-1} of
                                          // step t at parity t & 1
          float*, elem*, elem*,           // (recurrence_fwd.cu's save, yp, dropped: unused)
          const unsigned long long*, unsigned long long, unsigned long long,  // (dropout)
          const elem*, const elem*, elem*,  // (w_ih, x, w_t: unused)
          u32* counter, int seq) {
    using namespace wg;
#ifdef SMEM_BYTES
    static_assert(SMEM <= SMEM_BYTES, "kernel.rs's wgmma_smem is short of the layout");
#endif
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const w_tile = smem;
    float* const red = (float*)(smem + W_BYTES);
    unsigned char* const ring = smem + W_BYTES + RED_BYTES;
    unsigned long long* const full = (unsigned long long*)(ring + RING_BYTES);
    u32* const xs = (u32*)(full + CHUNKS);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int blk = blockIdx.x, group = blockIdx.y;
    const int b0 = group * BATCH;  // the group's first sample
    unsigned char* const h = (unsigned char*)hx + (size_t)group * 2 * RING_BYTES;
    u32* const bar = group_counter(counter);

    // The shared-memory rows (REG_ROWS.. of the block's, zeros past ROWS), 16 bytes a copy (W_hh
    // starts at an even element, choose.rs's `ours_take_operands`: where not at 16 bytes, in four
    // 4-byte loads).
    const bool wide = aligned16(w_hh);
    for (int i = tid; i < (HROWS - REG_ROWS) * (HID / 8); i += THREADS) {
        const int n = i / (HID / 8), k = (i % (HID / 8)) * 8;
        u16* dst = (u16*)(w_tile + w_offset(n, k));
        const elem* src = w_hh + w_row(REG_ROWS + n, blk) * HID + k;
        if (REG_ROWS + n >= ROWS)
            *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
        else if (wide)
            cp_async16(dst, src);
        else
            *(uint4*)dst = make_uint4(((const u32*)src)[0], ((const u32*)src)[1], ((const u32*)src)[2],
                                      ((const u32*)src)[3]);
    }
    cp_async_commit();
    if (tid == 0) {
        for (int c = 0; c < CHUNKS; ++c) mbar_init(full + c);
    }

    // Warpgroup g, warp wq of it, lane 4 r0 + q: its fragments of the register rows.
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4;
    u32 wa[KSTEPS_HALF][4];
    load_fragments(wa, w_hh, blk, g, wq, r0, q);

    // The gate math: thread tid, units 2 up and 2 up + 1 of the block (unit k, k + 1 of the
    // layer) of samples m_first + 16 p; their biases (a split gate's b_hh apart), the carried
    // state (an LSTM's c, a GRU's h in f32) and h_0 into the exchange at parity 0.
    const int up = tid % 16, m_first = tid / 16, k = UNITS * blk + 2 * up;
    float bias[GATES][2], bias_split[2], state[PAIRS][2];
#pragma unroll
    for (int x = 0; x < 2; ++x) {
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt) {
            float b = b_ih ? to_f(b_ih[gt * HID + k + x]) : 0.f;
            if (b_hh && gt != SPLIT_GATE) b += to_f(b_hh[gt * HID + k + x]);
            bias[gt][x] = b;
        }
        bias_split[x] = (SPLIT_GATE >= 0 && b_hh) ? to_f(b_hh[SPLIT_GATE * HID + k + x]) : 0.f;
    }
#pragma unroll
    for (int p = 0; p < PAIRS; ++p) {
        const size_t at = (size_t)(b0 + m_first + 16 * p) * HID + k;
#pragma unroll
        for (int x = 0; x < 2; ++x) state[p][x] = c0 ? to_f(c0[at + x]) : 0.f;
        const u32 two = h0 ? *(const u32*)(h0 + at) : 0u;
        *(u32*)(h + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m_first + 16 * p, k % KC)) = two;
    }
    cp_async_wait_all();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    // h_0 is the group's first exchange: one arrival before the steps'.
    if (tid == 0) arrive_release(bar);
    const u32 w_base = smem_addr(w_tile);

    float d[16], e[16];
    for (int t = 0; t < seq; ++t) {
        // Thread 0 copies all of h_{t-1} once every block of the group has stored it (each warp
        // left the ring at the end of the step before).
        if (tid == 0) {
            wait_acquire(bar, (u32)(gridDim.x * (t + 1)));
            const unsigned char* from = h + (size_t)(t & 1) * RING_BYTES;
            for (int c = 0; c < CHUNKS; ++c) {
                mbar_expect(full + c, CHUNK_BYTES);
                bulk_copy(ring + (size_t)c * CHUNK_BYTES, from + (size_t)c * CHUNK_BYTES, CHUNK_BYTES, full + c);
            }
        }
        __syncwarp();  // (warp 0 whole again before its wgmma's aligned instructions)
        // This step's input projection of the thread's units into its slots, in flight during the
        // products (the registers are full).
#pragma unroll
        for (int p = 0; p < PAIRS; ++p)
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt)
                cp_async_bytes<4>((u16*)(xs + (p * GATES + gt) * THREADS + tid),
                                  xg + ((size_t)t * GROUPS * BATCH + b0 + m_first + 16 * p) * GH + gt * HID + k);
        cp_async_commit();
#pragma unroll
        for (int ii = 0; ii < HALF; ++ii) {
            const int c = g * HALF + ii;
            mbar_wait(full + c, (u32)(t & 1));
            wgmma_fence();
            const u32 slot = smem_addr(ring + (size_t)c * CHUNK_BYTES);
#pragma unroll
            for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                const u64 hb = wgmma_desc(slot + kk * 2 * H_LBO, H_LBO, H_SBO);
                const u64 ws = wgmma_desc(w_base + (c * KSTEPS_CHUNK + kk) * 2 * W_LBO, W_LBO, W_SBO);
                wgmma_rs_n32(d, wa[ii * KSTEPS_CHUNK + kk], hb, (ii | kk) != 0);
                wgmma_ss_n32(e, ws, hb, (ii | kk) != 0);
            }
            wgmma_commit();
            wgmma_wait<1>();
        }
        wgmma_wait<0>();
        // The two halves of K summed through shared memory.
        if (g == 1) {
            to_sums<false>(red, d, 0, wq, r0, q);
            to_sums<false>(red, e, REG_ROWS, wq, r0, q);
        }
        named_sync(1, THREADS);
        if (g == 0) {
            to_sums<true>(red, d, 0, wq, r0, q);
            to_sums<true>(red, e, REG_ROWS, wq, r0, q);
        }
        named_sync(1, THREADS);
        cp_async_wait_all();
        unsigned char* const out = h + (size_t)((t + 1) & 1) * RING_BYTES;
#pragma unroll
        for (int p = 0; p < PAIRS; ++p) {
            const int m = m_first + 16 * p;
            const size_t row = (size_t)t * GROUPS * BATCH + b0 + m;
            u16 hv[2];
#pragma unroll
            for (int x = 0; x < 2; ++x) {
                float pre[GATES], gate[GATES], saved[CELL_SAVED], rec = 0.f;
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) {
                    const float sum = red[(UNITS * gt + 2 * up + x) * RP + m];
                    const float in = to_f((u16)(xs[(p * GATES + gt) * THREADS + tid] >> (16 * x)));
                    pre[gt] = bias[gt][x] + in + (gt == SPLIT_GATE ? 0.f : sum);
                    if (gt == SPLIT_GATE) rec = bias_split[x] + sum;
                }
                hv[x] = from_f(cell_forward(pre, rec, gate, state[p][x], saved));
            }
            const u32 two = (u32)hv[0] | ((u32)hv[1] << 16);
            *(u32*)(out + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m, k % KC)) = two;
            *(u32*)(y + row * HID + k) = two;
            if (t == seq - 1) {
                *(u32*)(h_n + (size_t)(b0 + m) * HID + k) = two;
#if CELL_HAS_C
                *(u32*)(c_n + (size_t)(b0 + m) * HID + k) = (u32)from_f(state[p][0]) | ((u32)from_f(state[p][1]) << 16);
#endif
            }
        }
        // Every thread has read the sums and its slots before the next step overwrites them, and
        // has stored its h_t before the block's arrival publishes it.
        named_sync(1, THREADS);
        if (tid == 0 && t + 1 < seq) arrive_release(bar);
    }
    grid_leave(bar);
}
