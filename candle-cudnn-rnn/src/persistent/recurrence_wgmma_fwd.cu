// One layer's forward as one persistent kernel on the warpgroup tensor-core instruction (wgmma,
// sm_90a), for wide layers at large batches: hidden 1024 at batch 64-128 (inference) and 512 at 128,
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
// samples). The block's gate rows are ordered so that each thread's accumulators hold all the gates
// of one unit (`w_row`): the gate math runs on them in registers, each warpgroup on half of the
// samples, after the two halves of K are summed (each warpgroup hands the other its partial sums
// of the other's samples through shared memory: one barrier). Then each thread adds the step's
// input projection (copied into shared memory while the products ran) and the biases, writes h_t
// to y and into the exchange buffer in the ring's layout for the next step; then the group's
// barrier.
//
// The input projection comes from a GEMM before the launch (`xg`, [T, B, GH]), without biases:
// in half elements with XG_HALF (1; an inference forward's, plan.rs's `Plan::half_projection`),
// else in f32 (a training forward's). With `save` non-null (training), as in recurrence_fwd.cu, the
// gate activations overwrite `xg` (f32) in place and what the cell saves goes to `save`, f32
// [T, B, CELL_SAVED, H], for the backward; with `dropped` non-null, y_t through the dropout mask
// goes there too (the next layer's input). Hidden sizes here are multiples of 256: no padded
// rows (`yp`) are asked for. A GRU's 96 gate rows are r and z from
// registers and n from shared memory, padded with zero rows to wgmma's 64; n's recurrent product
// takes b_hn before r scales it (cell_gru.cuh).
//
// With SUB 2 a block multiplies two subgroups of 32 samples a step (a group of 64): half the
// blocks for the batch, one barrier and one exchange for both; the second subgroup's products
// run while the first's gate math does. Its ring holds both subgroups' h_{t-1}: hidden up to 512.
//
// With WG_UNITS 16 a block takes 16 units, twice the blocks: its 64 gate rows are all in
// registers (no shared-memory rows, no second wgmma a k-step), so a step's products take about
// half as long, where at batch 32 the 32-unit form's two wgmmas a k-step had set the pace
// (results/2026-11-30-h200-wgmma-batch32/). A thread's accumulators then hold two gates of a unit
// (`row_gate`), and the lane 16 apart the other two: the two swap the gates of half their samples
// by shuffles (`gate_sums`), and each runs the cell for 2 samples instead of 4.
//
// With F16_SCALED 1 (an inference forward of f32 operands under TF32 math, f16 elements) the
// layer's tensors are f32 (xg, the biases, the states, y, h_n, c_n) and its products take f16
// operands scaled by powers of two (f16_scaled.cu): W_hh's rows each by `w_scale` (its f32 copy in
// f16 as `w_hh`), h by `h_scale` of its sample (h_0 in f16 as `h0`, scaled likewise; null: no h_0,
// and 2^14), so that every operand keeps TF32's 11 significant bits over f32's range where a
// layer's weights do not fit on chip in f32 (hidden 1024). The recurrent sums are scaled back
// (exactly: powers of two) before the gate math; h goes into the exchange scaled, to y as it is.
//
// Specialised at compile time (NVRTC -D): HID (a multiple of 2 * KC), GROUPS, ELEM_BF16 (1: bf16,
// 0: f16), NWARPS 8 and BATCH 32 (a subgroup's samples), SUB (1 or 2: subgroups a group), WG_UNITS
// (32, or 16 with SUB 1; 32 where not given), XG_HALF, F16_SCALED (0 where not given),
// SMEM_BYTES (kernel.rs's `wgmma_smem`, checked here). Needs the cell (cell_lstm.cuh or cell_gru.cuh), common.cuh,
// dropout.cu and wgmma.cuh before it.

#ifndef SUB
#define SUB 1
#endif
#ifndef WG_UNITS
#define WG_UNITS 32
#endif
#if WG_UNITS != 32 && (WG_UNITS != 16 || SUB != 1)
#error "the wgmma forward takes blocks of 32 units, or of 16 in one subgroup"
#endif
#if BATCH != 32 || NWARPS != 8 || EW != 1 || (SUB != 1 && SUB != 2)
#error "the wgmma forward takes subgroups of 32 samples, 1 or 2 a group, 8 warps and half elements"
#endif
#ifndef XG_HALF
#define XG_HALF 0
#endif
#if F16_SCALED && (ELEM_BF16 || XG_HALF)
#error "the scaled f16 operands' forward takes f16 elements and an f32 projection"
#endif
// Training's forward (the saves, dropout) is the one whose projection is f32: the host sets
// XG_HALF only for inference (or F16_SCALED, whose projection is f32 too); inference keeps none
// of training's code (nor its registers).
#define WG_TRAIN (!XG_HALF && !F16_SCALED)

namespace wg {

constexpr int UNITS = WG_UNITS;           // units a block
constexpr bool ALL_IN_REGS = UNITS == 16; // all of the block's gate rows in registers
constexpr int ROWS = GATES * UNITS;       // its gate rows
constexpr int REG_ROWS = 64;              // the rows in registers (wgmma's M)
constexpr int HROWS = ALL_IN_REGS ? REG_ROWS : 2 * REG_ROWS;  // the rows multiplied (a GRU's fourth gate: zeros)
constexpr int NS = ALL_IN_REGS ? 2 : 4;   // samples a thread runs the cell for
constexpr int KC = 128;                   // columns of h a chunk
constexpr int CHUNKS = HID / KC;          // chunks a step: the ring holds all of them
constexpr int HALF = CHUNKS / 2;          // a warpgroup's chunks
constexpr int KSTEPS_CHUNK = KC / 16;
constexpr int KSTEPS_HALF = HID / 32;     // k-steps of a warpgroup's half of K
constexpr int CHUNK_BYTES = BATCH * KC * 2;
constexpr int GB = SUB * BATCH;           // a group's samples
constexpr int B_ALL = GROUPS * GB;        // the batch
static_assert(HID % (2 * KC) == 0, "HID a multiple of 256: whole chunks in each half of K");
static_assert(ALL_IN_REGS ? ROWS <= REG_ROWS : ROWS > REG_ROWS && ROWS <= HROWS,
              "the gate rows past the registers' fit one wgmma");

// Shared memory: the rows past REG_ROWS (wgmma's no-swizzle core matrices), the partial sums each
// warpgroup hands the other ([warpgroup][PART_SUMS][128 threads] f32), the ring ([SUB][CHUNKS]),
// its mbarriers, and the step's input projection of the block's units ([SUB][gate][sample][XP] in
// xg's type, rows
// padded so that a warp's reads fall in distinct banks: a quarter-warp's 2 q rows 8 q banks
// apart, its 8 r0 columns in consecutive banks).
constexpr int W_BYTES = (HROWS - REG_ROWS) * HID * 2;
constexpr int PART_SUMS = ALL_IN_REGS ? 8 : 16;  // 2 sample columns x 4 gate rows (16 units: 2) x 2 samples
constexpr int RED_BYTES = 2 * PART_SUMS * 128 * 4;
constexpr int RING_BYTES = CHUNKS * CHUNK_BYTES;  // a subgroup's h_{t-1}
constexpr int BAR_BYTES = SUB * CHUNKS * 8;
#if XG_HALF
using xg_t = u16;
constexpr int XP = UNITS + 8;             // a row of xs: (gate, sample), 20 words
#else
using xg_t = float;
constexpr int XP = UNITS + 4;             // a row of xs: (gate, sample), 36 words
#endif
constexpr int X_PIECES = UNITS * (int)sizeof(xg_t) / 16;  // 16-byte copies a row of xs
constexpr int XS_ELEMS = GATES * BATCH * XP;  // a subgroup's
constexpr int XS_BYTES = SUB * XS_ELEMS * (int)sizeof(xg_t);
constexpr int SMEM = W_BYTES + RED_BYTES + SUB * RING_BYTES + BAR_BYTES + XS_BYTES;

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

// Row n of a block's gate rows: in wgmma's accumulators, warp w's lane 4 r0 + q holds rows
// 16 w + r0 and 16 w + r0 + 8 of each 64, so those four rows are gates 0-3 of unit 8 w + r0
// (gates 0 and 1 in the registers' 64, 2 and 3 in shared memory's). With 16 units (one 64) its
// two rows are gates 0 and 1 of unit 4 w + r0 where r0 < 4, else gates 2 and 3 of unit
// 4 w + r0 - 4: the lanes 16 apart hold one unit's four gates. A gate past the cell's (a GRU's
// fourth) is a row of zeros.
__device__ __forceinline__ int row_gate(int n) {
    return ALL_IN_REGS ? (n % 16) / 8 + 2 * ((n % 8) / 4) : 2 * (n / REG_ROWS) + (n % 16) / 8;
}
__device__ __forceinline__ int row_unit(int n) {
    return ALL_IN_REGS ? 4 * (n / 16) + n % 4 : 8 * ((n % REG_ROWS) / 16) + n % 8;
}
// Its row of W_hh in block `blk` (row_gate(n) < GATES).
__device__ __forceinline__ size_t w_row(int n, int blk) {
    return (size_t)row_gate(n) * HID + UNITS * blk + row_unit(n);
}

// Warpgroup g's half of K of rows 16 wq + r0 (+ 8) of the block's register rows, mma.sync's A
// fragments (lane 4 r0 + q), from w (rows of HID): register row n is w's row `row(n)`, zeros
// where its gate is past the cell's.
template <typename Row>
__device__ __forceinline__ void load_fragments(u32 (&wa)[KSTEPS_HALF][4], const elem* w, Row row, int g, int wq,
                                               int r0, int q) {
#pragma unroll
    for (int j = 0; j < KSTEPS_HALF; ++j) {
        const int k = (HID / 2) * g + 16 * j + 2 * q;
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int n = 16 * wq + r0 + 8 * (x & 1);
            // (Only a 16-unit GRU's register rows reach a gate past the cell's: such a row loads
            // the row 8 before it, gate 2's, and takes zeros. A load under the condition instead
            // made ptxas spill.)
            const bool zero = ALL_IN_REGS && GATES < 4 && row_gate(n) >= GATES;
            const u32 v = *(const u32*)(w + row(zero ? n - 8 : n) * HID + k + 8 * (x >> 1));
            wa[j][x] = zero ? 0u : v;
        }
    }
}

// Warpgroup G's partial sums of the other warpgroup's samples (accumulator columns of tiles
// 2 (1 - G), + 1) into its slots of `red`, `part` the thread's place in its warpgroup: the rows
// of its first NG gates (all four of the thread's rows with NG 4).
template <int G, int NG = GATES>
__device__ __forceinline__ void hand_over(float* red, const float (&d)[16], const float (&e)[16], int part) {
#pragma unroll
    for (int jj = 0; jj < 2; ++jj)
#pragma unroll
        for (int gt = 0; gt < NG; ++gt)
#pragma unroll
            for (int x = 0; x < 2; ++x) {
                const int j = 2 * (1 - G) + jj, at = 4 * j + 2 * (gt % 2) + x;
                red[((1 - G) * PART_SUMS + 8 * jj + 2 * gt + x) * 128 + part] = gt < 2 ? d[at] : e[at];
            }
}

// Gate `gt` of warpgroup G's thread's unit for its sample s = 2 jj + x (accumulator column tile
// 2 G + jj: sample 8 (2 G + jj) + 2 q + x) in its accumulators.
template <int G>
__device__ __forceinline__ float& acc(float (&d)[16], float (&e)[16], int s, int gt) {
    const int at = 4 * (2 * G + s / 2) + 2 * (gt % 2) + s % 2;
    return gt < 2 ? d[at] : e[at];
}

// The whole gate sums of warpgroup G's thread's samples: the other warpgroup's partial sums added
// to its own, in place (of its first NG gates, as hand_over).
template <int G, int NG = GATES>
__device__ __forceinline__ void take_over(float (&d)[16], float (&e)[16], const float* red, int part) {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int gt = 0; gt < NG; ++gt)
            acc<G>(d, e, s, gt) += red[(G * PART_SUMS + 8 * (s / 2) + 2 * gt + s % 2) * 128 + part];
}

// With 16 units: f(slot, at) for each of warpgroup G's samples' partial sums that a thread
// hands over or takes: its two rows (2 hh + x) of accumulator column tiles 2 G + jj (`at` in its
// accumulators) and their slot of the warpgroup's part of `red`.
template <int G, typename F>
__device__ __forceinline__ void each_row_sum(F f) {
#pragma unroll
    for (int jj = 0; jj < 2; ++jj)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
            for (int x = 0; x < 2; ++x) f(4 * jj + 2 * hh + x, 4 * (2 * G + jj) + 2 * hh + x);
}

// With 16 units: warpgroup G's partial sums of the other warpgroup's samples into their slots of
// `red`, as hand_over.
template <int G>
__device__ __forceinline__ void hand_over_rows(float* red, const float (&d)[16], int part) {
    each_row_sum<1 - G>([&](int slot, int at) { red[((1 - G) * PART_SUMS + slot) * 128 + part] = d[at]; });
}

// With 16 units: the other warpgroup's partial sums added to the thread's own, as take_over.
template <int G>
__device__ __forceinline__ void take_over_rows(float (&d)[16], const float* red, int part) {
    each_row_sum<G>([&](int slot, int at) { d[at] += red[(G * PART_SUMS + slot) * 128 + part]; });
}

// With 16 units: every gate's whole sum of the thread's two samples, sum[s][gate]. The thread
// holds two gates (`hi`: 2 and 3, else 0 and 1) of its unit for 4 samples of warpgroup G (column
// tiles 2 G and 2 G + 1); the lane 16 apart holds the unit's other two for the same samples. A
// thread keeps tile 2 G + hi's two samples and hands the lane its sums of the other tile's.
template <int G>
__device__ __forceinline__ void gate_sums(float (&sum)[2][4], const float (&d)[16], bool hi) {
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            const float lo_tile = d[4 * (2 * G) + 2 * hh + s], hi_tile = d[4 * (2 * G + 1) + 2 * hh + s];
            const float other = __shfl_xor_sync(0xffffffffu, hi ? lo_tile : hi_tile, 16);
            const float mine = hi ? hi_tile : lo_tile;
            sum[s][hh] = hi ? other : mine;
            sum[s][2 + hh] = hi ? mine : other;
        }
}

// With F16_SCALED, a thread's scales of its products' operands (else none): s_w of its unit's gate
// rows (inverted, for the sums), and s_h of each of its samples (and its inverse) in each subgroup.
struct Scales {
#if F16_SCALED
    float w_inv[GATES];
    float h[SUB][NS], h_inv[SUB][NS];
#endif
};

// A thread's gate math for its unit and its NS samples first + 8 (s / 2) + s % 2 (`first`: the
// thread's first sample of its warpgroup's) of subgroup `sub`, from the whole sums (`sum(s, gate)`;
// with F16_SCALED scaled back by `sc`), the step's input projection (`xq`: xs at the first sample
// and the unit) and the biases; the carried state updated; h_t of each sample into hv as the
// exchange takes it (F16_SCALED: scaled by s_h), and with F16_SCALED unscaled in f32 into hf. In
// training (`gs` non-null: the step's gate activations in xg at the thread's first sample and unit,
// `ss` what the cell saves likewise) it stores those for the backward.
template <typename Sum>
__device__ __forceinline__ void cell_steps(u16 (&hv)[NS], float (&hf)[NS], Sum sum_of, const xg_t* xq,
                                           const float (&bias)[GATES], float bias_split, float (&state)[NS],
                                           const Scales& sc, int sub, float* gs, float* ss) {
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        float pre[GATES], gate[GATES], saved[CELL_SAVED], rec = 0.f;
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt) {
#if XG_HALF
            const float in = to_f(xq[(gt * BATCH + 8 * (s / 2) + s % 2) * XP]);
#else
            const float in = xq[(gt * BATCH + 8 * (s / 2) + s % 2) * XP];
#endif
#if F16_SCALED
            const float sum = sum_of(s, gt) * sc.w_inv[gt] * sc.h_inv[sub][s];
#else
            const float sum = sum_of(s, gt);
#endif
            pre[gt] = bias[gt] + in + (gt == SPLIT_GATE ? 0.f : sum);
            if (gt == SPLIT_GATE) rec = bias_split + sum;
        }
        const float h = cell_forward(pre, rec, gate, state[s], saved);
#if F16_SCALED
        hf[s] = h;
        hv[s] = from_f(h * sc.h[sub][s]);
#else
        hv[s] = from_f(h);
#endif
        if (WG_TRAIN && gs) {
            // Sample row 8 (s / 2) + s % 2 past the thread's first.
            const int row = 8 * (s / 2) + s % 2;
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt) gs[row * GH + gt * HID] = gate[gt];
#pragma unroll
            for (int j = 0; j < CELL_SAVED; ++j) ss[(row * CELL_SAVED + j) * HID] = saved[j];
        }
    }
}

// A thread's h_t (hv) of unit k and its partner's k ^ 1 (lane ^ 4) for its samples
// first + 8 (s / 2) + s % 2 into the exchange `out` (the ring's layout) and y's row `y_t` (step
// t's first sample of the group), in 4-byte stores: a lane of an even unit stores the first half
// of its samples of the pair, its partner the second. With F16_SCALED y takes each thread's own
// unscaled f32 h_t (hf) instead.
__device__ __forceinline__ void store_h(const u16 (&hv)[NS], const float (&hf)[NS], unsigned char* out, io_t* y_t,
                                        int k, int first, bool even) {
    const int k0 = k & ~1;
    unsigned char* const oq = out + (size_t)(k0 / KC) * CHUNK_BYTES + ((k0 % KC) / 8) * H_LBO + (k0 % 8) * 2 +
                              (first / 8) * H_SBO + (first % 8) * 16;
#if F16_SCALED
    float* const yq = y_t + (size_t)first * HID + k;
#else
    elem* const yq = y_t + (size_t)first * HID + k0;
#endif
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        const u16 other = (u16)__shfl_xor_sync(0xffffffffu, (u32)hv[s], 4);
#if F16_SCALED
        yq[(8 * (s / 2) + s % 2) * HID] = hf[s];
#endif
        if (even != (s < NS / 2)) continue;
        const u32 two = even ? (u32)hv[s] | ((u32)other << 16) : (u32)other | ((u32)hv[s] << 16);
        // Sample first + 8 (s / 2) + s % 2: core-matrix row group first / 8 + s / 2 (first % 8 is
        // even).
        *(u32*)(oq + (s / 2) * H_SBO + (s % 2) * 16) = two;
#if !F16_SCALED
        *(u32*)(yq + (8 * (s / 2) + s % 2) * HID) = two;
#endif
    }
}

// One block's part of a layer's forward: block `blk` of batch group `group` (its samples
// GB group ..), the group's `blocks` blocks meeting at `bar`. In a wavefront
// (recurrence_wgmma_wave.cu) `xg_ready` counts the blocks that have written the step's input
// projection (each step adds `xg_blocks`; null: written before the launch), and `arrive_last`
// has the block arrive after its last step too (the layer above's projection waits for it).
__device__ __forceinline__ void layer_forward(
    const elem* __restrict__ w_hh,  // [GH, H] (F16_SCALED: scaled by w_scale)
    void* xg,                       // [T, B, GH]: elem with XG_HALF, else f32 (training:
                                    // the gate activations overwrite it)
    const io_t* __restrict__ b_ih,  // [GH] or null
    const io_t* __restrict__ b_hh,  // [GH] or null
    const elem* h0,                 // [B, H] or null (zeros; F16_SCALED: scaled by h_scale)
    const io_t* __restrict__ c0,    // [B, H] or null (zeros; a GRU's: h_0)
    io_t* y,                        // [T, B, H]
    io_t* h_n, io_t* c_n,           // [B, H] (c_n: null without c)
    u16* hx,                        // [GROUPS][2][SUB][CHUNKS][CHUNK_BYTES / 2]: h_{t-1}
                                    // of step t at parity t & 1
    float* save,                    // [T, B, CELL_SAVED, H], or null (inference)
    elem* dropped,                  // [T, B, H], or null (no dropout after)
    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
    unsigned long long drop_seed, unsigned long long drop_p_layer,
    u32* bar, int seq, int blk, int group, int blocks,
    const u32* xg_ready, u32 xg_blocks, bool arrive_last,
    const float* w_scale,           // F16_SCALED: [GH], each row's s_w (else unused)
    const float* h_scale) {         // F16_SCALED: [B], each sample's s_h, or null (2^14)
#ifdef SMEM_BYTES
    static_assert(SMEM <= SMEM_BYTES, "kernel.rs's wgmma_smem is short of the layout");
#endif
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const w_tile = smem;
    float* const red = (float*)(smem + W_BYTES);
    unsigned char* const ring = smem + W_BYTES + RED_BYTES;
    unsigned long long* const full = (unsigned long long*)(ring + SUB * RING_BYTES);
    xg_t* const xs = (xg_t*)(full + SUB * CHUNKS);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int b0 = group * GB;  // the group's first sample
    unsigned char* const h = (unsigned char*)hx + (size_t)group * 2 * SUB * RING_BYTES;

    // The shared-memory rows (REG_ROWS.. of the block's, zeros past ROWS), 16 bytes a copy (W_hh
    // starts at an even element, choose.rs's `ours_take_operands`: where not at 16 bytes, in four
    // 4-byte loads).
    const bool wide = aligned16(w_hh);
    for (int i = tid; i < (HROWS - REG_ROWS) * (HID / 8); i += THREADS) {
        const int n = i / (HID / 8), k = (i % (HID / 8)) * 8;
        u16* dst = (u16*)(w_tile + w_offset(n, k));
        const elem* src = w_hh + w_row(REG_ROWS + n, blk) * HID + k;
        if (row_gate(REG_ROWS + n) >= GATES)
            *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
        else if (wide)
            cp_async16(dst, src);
        else
            *(uint4*)dst = make_uint4(((const u32*)src)[0], ((const u32*)src)[1], ((const u32*)src)[2],
                                      ((const u32*)src)[3]);
    }
    cp_async_commit();
    if (tid == 0) {
        for (int c = 0; c < SUB * CHUNKS; ++c) mbar_init(full + c);
    }

    // Warpgroup g, warp wq of it, lane 4 r0 + q: its fragments of the register rows.
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4;
    u32 wa[KSTEPS_HALF][4];
    load_fragments(wa, w_hh, [blk](int n) { return w_row(n, blk); }, g, wq, r0, q);

    // The gate math: the thread's unit u of the block (unit k of the layer: every gate of it is
    // in its accumulators, `w_row`; with 16 units, after `gate_sums`) for its warpgroup's samples
    // m(s) = first + 8 (s / 2) + s % 2 (s < NS; with 16 units the tile of the thread's `hi` half
    // of the lanes); its biases (a split gate's b_hh apart), the carried state (an LSTM's c, a
    // GRU's h in f32), and h_0 into the exchange at parity 0.
    const bool hi = ALL_IN_REGS && r0 >= 4;
    const int u = ALL_IN_REGS ? 4 * wq + r0 % 4 : 8 * wq + r0, k = UNITS * blk + u, part = tid % 128;
    const int first = 16 * g + 8 * (int)hi + 2 * q;
    // The input projection's copies: thread tid's piece, sample and first gate (xs below); a
    // gate's rows take THREADS / (BATCH * X_PIECES) of the threads' copies (2 in half elements,
    // 1 in f32), and each thread copies its piece of every X_GATE_STEP-th gate.
    static_assert(THREADS % (BATCH * X_PIECES) == 0 && GATES <= 4, "whole gates of copies a pass");
    constexpr int X_GATE_STEP = THREADS / (BATCH * X_PIECES);
    static_assert(GATES <= 2 * X_GATE_STEP || X_GATE_STEP == 1, "at most two copies a thread in half elements");
    const int x_piece = tid % X_PIECES, x_sample = (tid / X_PIECES) % BATCH, x_gate = tid / (BATCH * X_PIECES);
    // (In xg's step, in its elements; a subgroup's BATCH * GH further.)
    const int x_from = (b0 + x_sample) * GH + x_gate * HID + UNITS * blk + (16 / (int)sizeof(xg_t)) * x_piece;
    auto sample = [&](int s) { return first + 8 * (s / 2) + s % 2; };
    float bias[GATES], bias_split, state[SUB][NS];
#pragma unroll
    for (int gt = 0; gt < GATES; ++gt) {
        float b = b_ih ? io_f(b_ih[gt * HID + k]) : 0.f;
        if (b_hh && gt != SPLIT_GATE) b += io_f(b_hh[gt * HID + k]);
        bias[gt] = b;
    }
    bias_split = (SPLIT_GATE >= 0 && b_hh) ? io_f(b_hh[SPLIT_GATE * HID + k]) : 0.f;
    Scales sc;
#if F16_SCALED
#pragma unroll
    for (int gt = 0; gt < GATES; ++gt) sc.w_inv[gt] = 1.f / w_scale[gt * HID + k];
#pragma unroll
    for (int sub = 0; sub < SUB; ++sub)
#pragma unroll
        for (int s = 0; s < NS; ++s) {
            const float hs = h_scale ? h_scale[b0 + BATCH * sub + sample(s)] : F16_H_SCALE_NONE;
            sc.h[sub][s] = hs;
            sc.h_inv[sub][s] = 1.f / hs;
        }
#endif
#pragma unroll
    for (int sub = 0; sub < SUB; ++sub)
#pragma unroll
        for (int s = 0; s < NS; ++s) {
            const size_t at = (size_t)(b0 + BATCH * sub + sample(s)) * HID + k;
            state[sub][s] = c0 ? io_f(c0[at]) : 0.f;
            *(u16*)(h + (size_t)sub * RING_BYTES + (size_t)(k / KC) * CHUNK_BYTES + h_offset(sample(s), k % KC)) =
                h0 ? h0[at] : (u16)0;
        }
    cp_async_wait_all();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    // h_0 is the group's first exchange: one arrival before the steps'.
    if (tid == 0) arrive_release(bar);
    const u32 w_base = smem_addr(w_tile);

    float d[SUB][16], e[SUB][16];
    for (int t = 0; t < seq; ++t) {
        // Thread 0 copies all of h_{t-1} once every block of the group has stored it (each warp
        // left the ring at the end of the step before).
        if (tid == 0) {
            // (In a wavefront, first the step's input projection.)
            if (xg_ready) wait_acquire(xg_ready, xg_blocks * (u32)(t + 1));
            wait_acquire(bar, (u32)(blocks * (t + 1)));
            const unsigned char* from = h + (size_t)(t & 1) * SUB * RING_BYTES;
            for (int c = 0; c < SUB * CHUNKS; ++c) {
                mbar_expect(full + c, CHUNK_BYTES);
                bulk_copy(ring + (size_t)c * CHUNK_BYTES, from + (size_t)c * CHUNK_BYTES, CHUNK_BYTES, full + c);
            }
        }
        // (Warp 0 whole again before its wgmma's aligned instructions; in a wavefront every warp
        // waits for thread 0's sight of the input projection before copying it.)
        if (xg_ready)
            __syncthreads();
        else
            __syncwarp();
        // This step's input projection of the block's units into xs, 16 bytes a copy, in flight
        // during the products (the registers are full): piece x_piece of sample x_sample's row of
        // gate x_gate, and of every X_GATE_STEP-th gate after it, of each subgroup.
#pragma unroll
        for (int sub = 0; sub < SUB; ++sub) {
            const xg_t* src = (const xg_t*)xg + ((size_t)t * B_ALL + BATCH * sub) * GH + x_from;
            xg_t* const dst =
                xs + sub * XS_ELEMS + (x_gate * BATCH + x_sample) * XP + (16 / (int)sizeof(xg_t)) * x_piece;
#pragma unroll
            for (int gt = 0; gt < GATES; gt += X_GATE_STEP)
                if (x_gate + gt < GATES) cp_async16((u16*)(dst + gt * BATCH * XP), (const u16*)(src + gt * HID));
        }
        cp_async_commit();
        // Each subgroup's products (SUB 2: all issued before the first's gate math, which then
        // runs while the second's products do).
#pragma unroll
        for (int sub = 0; sub < SUB; ++sub) {
#pragma unroll
            for (int ii = 0; ii < HALF; ++ii) {
                const int c = sub * CHUNKS + g * HALF + ii;
                mbar_wait(full + c, (u32)(t & 1));
                wgmma_fence();
                const u32 slot = smem_addr(ring + (size_t)c * CHUNK_BYTES);
#pragma unroll
                for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                    const u64 hb = wgmma_desc(slot + kk * 2 * H_LBO, H_LBO, H_SBO);
                    const u64 ws = wgmma_desc(w_base + ((g * HALF + ii) * KSTEPS_CHUNK + kk) * 2 * W_LBO, W_LBO, W_SBO);
                    wgmma_rs_n32(d[sub], wa[ii * KSTEPS_CHUNK + kk], hb, (ii | kk) != 0);
                    if (!ALL_IN_REGS) wgmma_ss_n32(e[sub], ws, hb, (ii | kk) != 0);
                }
                wgmma_commit();
                if (SUB == 1) wgmma_wait<1>();
            }
        }
        unsigned char* const out = h + (size_t)((t + 1) & 1) * SUB * RING_BYTES;
#pragma unroll
        for (int sub = 0; sub < SUB; ++sub) {
            // The subgroup's products done (SUB 2: the first's HALF groups of the 2 HALF issued).
            if (sub + 1 < SUB)
                wgmma_wait<HALF>();
            else
                wgmma_wait<0>();
            // The two halves of K summed: each warpgroup hands the other its partial sums of the
            // other's samples.
            if (ALL_IN_REGS) {
                if (g == 0)
                    hand_over_rows<0>(red, d[sub], part);
                else
                    hand_over_rows<1>(red, d[sub], part);
            } else if (g == 0) {
                hand_over<0>(red, d[sub], e[sub], part);
            } else {
                hand_over<1>(red, d[sub], e[sub], part);
            }
            if (sub == 0) cp_async_wait_all();
            named_sync(1, THREADS);
            u16 hv[NS];
            float hf[NS];
            // Training's stores: the thread's first sample's row of step t (one base address each).
            const size_t first_row = (size_t)t * B_ALL + b0 + BATCH * sub + first;
            float* const gs = WG_TRAIN && save ? (float*)xg + first_row * GH + k : nullptr;
            float* const ss = WG_TRAIN && save ? save + first_row * CELL_SAVED * HID + k : nullptr;
            // (One base address, the rest immediate offsets.)
            const xg_t* const xq = xs + sub * XS_ELEMS + first * XP + u;
            if (ALL_IN_REGS) {
                float sum[2][4];
                if (g == 0) {
                    take_over_rows<0>(d[sub], red, part);
                    gate_sums<0>(sum, d[sub], hi);
                } else {
                    take_over_rows<1>(d[sub], red, part);
                    gate_sums<1>(sum, d[sub], hi);
                }
                cell_steps(hv, hf, [&](int s, int gt) { return sum[s % 2][gt]; }, xq, bias, bias_split, state[sub],
                           sc, sub, gs, ss);
            } else if (g == 0) {
                take_over<0>(d[sub], e[sub], red, part);
                cell_steps(hv, hf, [&](int s, int gt) { return acc<0>(d[sub], e[sub], s, gt); }, xq, bias,
                           bias_split, state[sub], sc, sub, gs, ss);
            } else {
                take_over<1>(d[sub], e[sub], red, part);
                cell_steps(hv, hf, [&](int s, int gt) { return acc<1>(d[sub], e[sub], s, gt); }, xq, bias,
                           bias_split, state[sub], sc, sub, gs, ss);
            }
            if (WG_TRAIN && dropped) {
                // y_t through the mask, the next layer's input (its elements counted over [T, B, H]).
                // (The mask's state is read each step rather than held: the registers are full.)
                const Dropout drop = dropout_of(drop_offset, drop_seed, drop_p_layer);
#pragma unroll
                for (int s = 0; s < NS; ++s) {
                    const size_t at = (first_row + 8 * (s / 2) + s % 2) * HID + k;
                    dropped[at] = dropout_apply(drop, at, hv[s]);
                }
            }
            io_t* const y_t = y + ((size_t)t * B_ALL + b0 + BATCH * sub) * HID;
            store_h(hv, hf, out + (size_t)sub * RING_BYTES, y_t, k, first, (r0 & 1) == 0);
            if (t == seq - 1) {
                // h_n and c_n: the group's rows of the thread's samples (one base address each).
                const size_t at = (size_t)(b0 + BATCH * sub + first) * HID + k;
#pragma unroll
                for (int s = 0; s < NS; ++s) {
                    const int row = 8 * (s / 2) + s % 2;
#if F16_SCALED
                    h_n[at + row * HID] = hf[s];
#if CELL_HAS_C
                    c_n[at + row * HID] = state[sub][s];
#endif
#else
                    h_n[at + row * HID] = hv[s];
#if CELL_HAS_C
                    c_n[at + row * HID] = from_f(state[sub][s]);
#endif
#endif
                }
            }
            // Every thread has read the sums and its slots before the next subgroup's (or step's)
            // overwrite them, and has stored its h_t before the block's arrival publishes it.
            named_sync(1, THREADS);
        }
        if (tid == 0 && (t + 1 < seq || arrive_last)) arrive_release(bar);
    }
}

}  // namespace wg

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wgmma_fwd(const elem* __restrict__ w_hh, void* xg, const io_t* __restrict__ b_ih,
          const io_t* __restrict__ b_hh, const elem* h0, const io_t* __restrict__ c0, io_t* y,
          io_t* h_n, io_t* c_n, u16* hx, float* save,
          elem*,  // (recurrence_fwd.cu's yp: never asked for here)
          elem* dropped, const unsigned long long* drop_offset, unsigned long long drop_seed,
          unsigned long long drop_p_layer,
          // F16_SCALED's scales (layer_forward's), in persistent_fwd's places of W_ih and x; w_t
          // unused.
          const float* w_scale, const float* h_scale, elem*,
          u32* counter, int seq) {
    u32* const bar = group_counter(counter);
    wg::layer_forward(w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, hx, save, dropped, drop_offset, drop_seed,
                      drop_p_layer, bar, seq, blockIdx.x, blockIdx.y, gridDim.x, nullptr, 0, false, w_scale,
                      h_scale);
    grid_leave(bar);
}
