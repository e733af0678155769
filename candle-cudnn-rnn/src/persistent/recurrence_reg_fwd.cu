// One small layer's forward recurrence with its gates in registers (REG_GATES 1): the module's
// `persistent_fwd` instead of recurrence_fwd.cu's, for its pushed one-cluster plan (ONE_CLUSTER,
// PUSH) where a batch group has at most 8 samples (one tile of 8), the elements are half, the
// blocks have 2 warps for each 4 units, and h has at most 16 K steps (hidden up to 256).
// recurrence_fwd.cu's kernel splits each step's products over its 8 warps along K and sums the
// partial products through shared memory, 8 per gate row and sample; this one does not split K:
//
// - The block's gate rows come in 16-row tiles of 4 units, each unit's 4 slots its gates in
//   order (slot s: gate s of W_hh's rows; zeros past GATES: a GRU's fourth). Gate warp j
//   (0 <= j < UNITS / 4) keeps tile j of W_hh in registers and multiplies it by all of h_{t-1}
//   (RG_CHAINS independent chains of products), so that its accumulators hold every slot of its
//   4 units for the group's samples.
// - A transpose among each 4 lanes (shuffles) then gives each lane one (unit, sample) with its
//   4 slots, whose gate math it does: 32 items a warp.
// - h_t goes to every block of the cluster as in recurrence_fwd.cu's PUSH (st.async into the
//   stage of all of h of the step's parity, counted in by that stage's mbarrier), 8 units of a
//   sample a store where the block's units and h come in whole 8s (RG_PUSH16), else 4.
// - Helper warp j (UNITS / 4 + j) takes the rest off the gate warps' path: it stores step t's
//   outputs from the records that gate warp j leaves in shared memory, and makes step t + 2's
//   input sums for it: with XIN the input projection (tile j of W_ih in its registers times
//   x_{t+2}, whose rows it copies XSTAGES steps ahead into stages of its own), else the items'
//   rows of `xg`. Records and input sums take two slots each, by the step's parity; mbarriers
//   hand them over (no barrier of the whole block in the steps).
//
// The outputs are recurrence_fwd.cu's (store_unit): y, in training the gate activations over
// `xg` and what the cell saves, h_n and c_n, `yp`'s padded rows, y through dropout; with WT_WRITE
// W_hh transposed for the backward. The code takes NT tiles of 8 samples, but 16 samples (two
// tiles) made each step longer than two groups' steps (results/2026-12-02-h200-register-gates/).
// Needs recurrence_fwd.cu before it (LayerArgs, at_group, store_unit, zero_acc, load_b,
// write_transposed_share).

#if REG_GATES
#if !PUSH || EW != 1 || NB > 8 || NCH != 1 || UNITS % 4 || GATES > 4 || KSTEPS > 16 || F16_SCALED || \
    defined(WAVE_LAYERS) || (FOLD && XIN > 256) || NWARPS < 2 * (UNITS / 4)
#error "gates in registers take one pushed cluster, half elements, 8 samples, 2 warps a 4 units, hidden and input up to 256"
#endif

// The block's 16-row tiles (its gate warps; as many helper warps follow them), and the layout
// of its shared memory (bytes): the two pushed stages of all of h (NPAD rows of the padded K
// columns, the pitch an odd number of 16-byte chunks); six mbarriers (the stages' and the
// hand-offs', two each); two slots (by the step's parity) of the helpers' input sums (each gate
// warp's NT x 32 items' 4 slots, f32) and of the gate warps' records (each item's h, gate
// activations and saves: 8 f32); with XIN each helper's XSTAGES stages of x.
#define RG_TILES (UNITS / 4)
#define RG_PITCH (KPAD + 8)
#define RG_STAGE (NPAD * RG_PITCH)
#define RG_XKS ((XIN + 15) / 16)
#define RG_XPITCH (RG_XKS * 16 + 8)
#define RG_XSTAGE (NPAD * RG_XPITCH)
#ifndef XSTAGES
#define XSTAGES 2
#endif
#define RG_ITEMS (RG_TILES * NT * 32)
#define RG_BARS (2 * RG_STAGE * 2)
#define RG_INPUTS (RG_BARS + 48)
#define RG_RECORDS (RG_INPUTS + 2 * RG_ITEMS * 16)
#define RG_XSTAGES (RG_RECORDS + 2 * RG_ITEMS * 32)
// RG_PUSH16 (by default where the block's units and h come in whole 8s, one tile of samples):
// each pair of gate warps stages its 8 units' h_t in shared memory (two slots by the step's
// parity, [8 samples][UNITS] 16-bit) and pushes them 8 units a store (16 bytes) instead of 4.
// A block's sending is bound by its count of stores: a step took 0.75x the cycles at hidden
// 256, 0.92x at 128, 0.96-0.97x at 128 in 16 groups and at 64, bit-identical
// (results/2026-12-02-h200-push-bandwidth/, section 8).
#ifndef RG_PUSH16
#define RG_PUSH16 (UNITS % 8 == 0 && HID % 8 == 0 && NT == 1)
#endif
#if RG_PUSH16 && (UNITS % 8 || HID % 8 || NT != 1)
#error "16-byte pushes take pairs of gate warps (8 units) and one tile of samples"
#endif
#define RG_H16 (RG_XSTAGES + (FOLD ? RG_TILES * XSTAGES * RG_XSTAGE * 2 : 0))
#define RG_SMEM (RG_H16 + (RG_PUSH16 ? 2 * 8 * UNITS * 2 : 0))
#if 1 + GATES + CELL_SAVED > 8
#error "a record holds h, the gates and the saves in 8 floats"
#endif
// The bytes a stage's mbarrier counts a step: every sample's h in stores of 4 units.
#define RG_PUSH_BYTES (BATCH * ((HID + 3) / 4 * 4) * 2)
// The products' independent chains of accumulators (K step ks in chain ks % RG_CHAINS, each
// tile of samples apart), summed at the end: shorter chains of dependent products.
#ifndef RG_CHAINS
#define RG_CHAINS (4 / NT)
#endif
// The hand-offs between the gate warps and their helpers, each an mbarrier that all 32 lanes of
// every producing warp arrive at (release) and the consuming warps wait on (acquire), two of each
// by the step's parity: a step's records written (and its input sums read) by the gate warps, and
// a step's input sums written by the helpers. (Named barriers, arrived at by the producers and
// waited at by the consumers, served as well, but racecheck reported their hand-offs as races:
// results/2026-12-02-h200-register-gates/logs/units.log.)
__device__ __forceinline__ void rg_bar_init(unsigned long long* bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void rg_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Tile j's A fragments of `w` ([GH][COLS] 16-bit elements, 4-byte aligned rows) for KS K steps, in
// registers: row r of the tile is slot r % 4 of unit u0 + 4 j + r / 4 (zeros past GATES, HID and
// COLS), loaded straight from memory (once a launch).
template <int KS, int COLS>
__device__ __forceinline__ void load_tile(u32 (&f)[KS][4], const u16* w, int u0, int j, int lane) {
#pragma unroll
    for (int ks = 0; ks < KS; ++ks)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            // a0: row lane / 4, columns 2 (lane % 4) + {0, 1}; a1: row + 8; a2, a3: columns + 8.
            const int r = lane / 4 + (q & 1) * 8, k = ks * 16 + 2 * (lane % 4) + (q >> 1) * 8;
            const int slot = r % 4, u = u0 + 4 * j + r / 4;
            const bool in = slot < GATES && u < HID && k < COLS;
            f[ks][q] = in ? *(const u32*)&w[(size_t)(slot * HID + u) * COLS + k] : 0u;
        }
}

// The products of a tile (fragments `f`, KS K steps) and the NPAD rows of `rows` (pitch
// `pitch`), in RG_CHAINS chains for each tile of 8 samples, summed: acc[nt] the accumulators of
// rows lane / 4 and + 8, samples 8 nt + 2 (lane % 4) + {0, 1}.
template <int KS>
__device__ __forceinline__ void tile_times(float (&acc)[NT][4], const u32 (&f)[KS][4], const u16* rows, int pitch,
                                           int lane) {
    float part[RG_CHAINS][NT][4];
    zero_acc(part);
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
        u32 b[NT][2];
        load_b(b, rows, pitch, ks * 16, lane);
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma(part[ks % RG_CHAINS][nt], f[ks], b[nt]);
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            acc[nt][q] = part[0][nt][q];
#pragma unroll
            for (int c = 1; c < RG_CHAINS; ++c) acc[nt][q] += part[c][nt][q];
        }
}

// A tile's accumulators (`acc`: lane's rows lane / 4 and + 8, samples 2 (lane % 4) + {0, 1}) to
// the lane's item's 4 slots. The 4 lanes that differ in bits 2-3 (s = (lane >> 2) & 3) hold slot s
// of the same 4 items (acc[i]: item i); a transpose in two exchanges (bit 0 of s, then bit 1)
// leaves item s in lane s: unit 4 j + lane / 16 + 2 (s >> 1) of the tile's, sample
// 2 (lane % 4) + (s & 1). Two-way selects on bits of s only (nested selects by s had become
// branches around the shuffles).
__device__ __forceinline__ void to_item(const float (&acc)[4], float (&slot)[4], int lane) {
    const bool b0 = (lane >> 2) & 1, b1 = (lane >> 3) & 1;
    // Items with bit 0 = b0 stay (rows s and s ^ 1 of them after the exchange), the others go.
    const float keep0 = b0 ? acc[1] : acc[0], keep1 = b0 ? acc[3] : acc[2];
    const float recv0 = __shfl_xor_sync(0xffffffffu, b0 ? acc[0] : acc[1], 4);
    const float recv1 = __shfl_xor_sync(0xffffffffu, b0 ? acc[2] : acc[3], 4);
    // Item s stays (rows s, s ^ 1), item s ^ 2 goes; rows s ^ 2 and s ^ 3 of item s come.
    const float ka = b1 ? keep1 : keep0, kb = b1 ? recv1 : recv0;
    const float ra = __shfl_xor_sync(0xffffffffu, b1 ? keep0 : keep1, 8);
    const float rb = __shfl_xor_sync(0xffffffffu, b1 ? recv0 : recv1, 8);
    // Rows s ^ d (d: 0..3: ka, kb, ra, rb) to slots 0..3.
    const float w0 = b0 ? kb : ka, w1 = b0 ? ka : kb, w2 = b0 ? rb : ra, w3 = b0 ? ra : rb;
    slot[0] = b1 ? w2 : w0;
    slot[1] = b1 ? w3 : w1;
    slot[2] = b1 ? w0 : w2;
    slot[3] = b1 ? w1 : w3;
}

__device__ __forceinline__ void reg_gates_recurrence(const LayerArgs& a, const elem* xin, elem* w_t, int seq) {
    extern __shared__ __align__(16) unsigned char smem[];
    u16* const stage = (u16*)smem;  // [2][NPAD][RG_PITCH]
    unsigned long long* const bar = (unsigned long long*)(smem + RG_BARS);  // the stages', by parity
    unsigned long long* const records_bar = bar + 2;                         // by parity
    unsigned long long* const inputs_bar = bar + 4;                          // by parity
    float4* const inputs = (float4*)(smem + RG_INPUTS);    // [2][RG_TILES][NT][32]
    float4* const records = (float4*)(smem + RG_RECORDS);  // [2][RG_TILES][NT][32][2]
    const Dropout drop = dropout_of(a.dropped ? a.drop_offset : nullptr, a.drop_seed, a.drop_p_layer);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int u0 = blockIdx.x * UNITS;
    MARK(0);
    {
        const int t = 0;
        PHASE(7);
    }
    // Gate warp j < RG_TILES, or its helper j = warp - RG_TILES (warps past both: none).
    const bool gate_warp = warp < RG_TILES, helper = !gate_warp && warp < 2 * RG_TILES;
    const int j = gate_warp ? warp : warp - RG_TILES;
    u16* const xstage = (u16*)(smem + RG_XSTAGES) + (size_t)(helper ? j : 0) * XSTAGES * RG_XSTAGE;
    // Slot `p`'s input sums and records of item `nt` of this lane (the gate warp's and its
    // helper's lane alike).
    auto input_at = [&](int p, int nt) { return inputs + ((p * RG_TILES + j) * NT + nt) * 32 + lane; };
    auto record_at = [&](int p, int nt) { return records + (((p * RG_TILES + j) * NT + nt) * 32 + lane) * 2; };

    // The lane's items: unit u, samples n + 8 nt.
    const int s = (lane >> 2) & 3;
    const int u = u0 + 4 * j + lane / 16 + 2 * (s >> 1), n = 2 * (lane % 4) + (s & 1);
    bool live[NT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) live[nt] = (gate_warp || helper) && u < HID && n + 8 * nt < BATCH;
    const bool unit = (gate_warp || helper) && u < HID;

    // The stages start as zeros (their rows past the batch and columns past HID, which the
    // products read, are never written), then h_0 (or zeros) in stage 1, which step 0 reads.
    for (int q = tid; q < RG_STAGE; q += THREADS) ((u32*)stage)[q] = 0u;
    if (FOLD)
        for (int q = tid; q < RG_TILES * XSTAGES * RG_XSTAGE / 2; q += THREADS)
            ((u32*)(smem + RG_XSTAGES))[q] = 0u;
    __syncthreads();
    if (a.h0)
        for (int q = tid; q < BATCH * HID; q += THREADS)
            stage[RG_STAGE + (q / HID) * RG_PITCH + q % HID] = ((const u16*)a.h0)[q];
    if (tid == 0)
        for (int q = 0; q < 2; ++q) {
            mbar_init(bar + q);
            mbar_expect(bar + q, RG_PUSH_BYTES);
            rg_bar_init(records_bar + q, 32 * RG_TILES);
            rg_bar_init(inputs_bar + q, 32 * RG_TILES);
        }
    SIDE_PROLOGUE();
#if WT_WRITE
    if (w_t) write_transposed_share((const u16*)a.w_hh, (u16*)w_t, 0, 1);
#endif

    // The warp's tile in registers: W_hh's (gate warps) or W_ih's (helpers, XIN), in one array.
    constexpr int XK = FOLD ? RG_XKS : 1, XCOLS = FOLD ? XIN : 16;
    constexpr int TK = KSTEPS > XK ? KSTEPS : XK;
    u32 wt[TK][4];
    if (gate_warp) load_tile<KSTEPS, HID>(*(u32(*)[KSTEPS][4])wt, (const u16*)a.w_hh, u0, j, lane);
    if (FOLD && helper) load_tile<XK, XCOLS>(*(u32(*)[XK][4])wt, (const u16*)a.w_ih, u0, j, lane);

    // The items' carried states and h_0's padded rows; the unit's biases (a split gate's
    // recurrent bias apart).
    float c[NT], bias[GATES], bias_split = 0.f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const int m = n + 8 * nt;
        c[nt] = (gate_warp && live[nt] && a.c0) ? io_f(a.c0[m * HID + u]) : 0.f;
        if (gate_warp && live[nt] && a.yp && a.h0) a.yp[m * LDP + u] = a.h0[m * HID + u];
    }
    if (unit && SPLIT_GATE >= 0 && a.b_hh) bias_split = io_f(a.b_hh[SPLIT_GATE * HID + u]);
#pragma unroll
    for (int g = 0; g < GATES; ++g) {
        float b = 0.f;
        if (unit && a.b_ih) b += io_f(a.b_ih[g * HID + u]);
        if (unit && a.b_hh && g != SPLIT_GATE) b += io_f(a.b_hh[g * HID + u]);
        bias[g] = b;
    }

    // The helpers' input sums of step t into slot t & 1: with XIN, x_t's products (its rows
    // copied XSTAGES steps ahead into the helper's stage t % XSTAGES, 16-byte copies, one group
    // a step, also past the last step, so that waiting for all but XSTAGES - 1 groups waits for
    // step t's); else the items' rows of `xg`.
    auto copy_x = [&](int t) {
        if (t < seq) {
            u16* const xs = xstage + (t % XSTAGES) * RG_XSTAGE;
            const u16* const src = (const u16*)xin + (size_t)t * BROWS * XCOLS;
            for (int q = lane; q < BATCH * (XCOLS / 8); q += 32) {
                const int row = q / (XCOLS / 8), col = q % (XCOLS / 8) * 8;
                cp_async16(xs + row * RG_XPITCH + col, src + (size_t)row * XCOLS + col);
            }
        }
        cp_async_commit();
    };
    auto make_inputs = [&](int t) {
        float v[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int g = 0; g < 4; ++g) v[nt][g] = 0.f;
        if constexpr (FOLD) {
            cp_async_wait_pending(XSTAGES - 1);
            __syncwarp();
            float acc[NT][4];
            tile_times<XK>(acc, *(u32(*)[XK][4])wt, xstage + (t % XSTAGES) * RG_XSTAGE, RG_XPITCH, lane);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) to_item(acc[nt], v[nt], lane);
            __syncwarp();
            copy_x(t + XSTAGES);
        } else {
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int g = 0; g < GATES; ++g)
                    if (live[nt])
                        v[nt][g] = xg_f(a.xg[((size_t)t * BROWS + n + 8 * nt) * GATES * HID + g * HID + u]);
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) *input_at(t & 1, nt) = make_float4(v[nt][0], v[nt][1], v[nt][2], v[nt][3]);
    };
    if (helper) {
        if (FOLD)
            for (int t = 0; t < XSTAGES; ++t) copy_x(t);
        for (int t = 0; t < 2 && t < seq; ++t) make_inputs(t);
    }
    MARK(1);
    // Every block's stages are zeros and its mbarriers armed before any block pushes into it.
    __syncthreads();
    cluster_barrier();
    MARK(2);

    if (gate_warp) {
        for (int t = 0; t < seq; ++t) {
            PHASE(0);
            // Step t's input sums (steps 0 and 1: from the prologue; step t's made at the
            // helpers' step t - 2, the ((t - 2) / 2)-th phase of its slot's mbarrier).
            if (t >= 2) mbar_wait(inputs_bar + (t & 1), ((t - 2) >> 1) & 1);
            // h_{t-1}: h_0 here, or every block's pushes into the stage of t - 1's parity; its
            // mbarrier is armed again for h_{t+1}, which no block pushes before this block has
            // pushed its h_t below.
            u16* const hs = stage + ((t + 1) & 1) * RG_STAGE;
            if (t > 0) {
                mbar_wait<true>(bar + ((t + 1) & 1), ((t - 1) >> 1) & 1);
                if (tid == 0 && t + 2 < seq) mbar_expect(bar + ((t + 1) & 1), RG_PUSH_BYTES);
            }
            PHASE(1);
            float acc[NT][4];
            tile_times<KSTEPS>(acc, *(u32(*)[KSTEPS][4])wt, hs, RG_PITCH, lane);
            PHASE(2);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                float hsum[4];
                to_item(acc[nt], hsum, lane);
                const float4 xv = *input_at(t & 1, nt);
                const float xsum[4] = {xv.x, xv.y, xv.z, xv.w};
                if (nt == 0) PHASE(3);
                // Each gate's bias, input and recurrent products (a split gate's recurrent
                // product apart, from its own bias), then the cell.
                float pre[GATES], rec = bias_split, gate[GATES], saved[CELL_SAVED];
#pragma unroll
                for (int g = 0; g < GATES; ++g) {
                    pre[g] = bias[g] + xsum[g];
                    if (g == SPLIT_GATE)
                        rec += hsum[g];
                    else
                        pre[g] += hsum[g];
                }
                const float h = cell_forward(pre, rec, gate, c[nt], saved);
                const elem hb = from_f(h);
                if (nt == 0) PHASE(4);
                // h_t into every block's stage of t's parity (units past HID and samples past
                // the batch: zeros, not stored). RG_PUSH16: each lane puts its item's h into the
                // slot of t's parity, the pair of gate warps j & ~1, j | 1 meets at its named
                // barrier (whose next step's meeting also orders these reads before the slot's
                // next writes), then the pair's lane i stores sample i % 8's 8 units to block
                // i / 8, 64 stores apart.
#if RG_PUSH16
                if (t + 1 < seq) {
                    u16* const h16 = (u16*)(smem + RG_H16) + (t & 1) * 8 * UNITS;
                    const int ul = 4 * j + lane / 16 + 2 * (s >> 1);  // the lane's unit in the block
                    h16[n * UNITS + ul] = live[nt] ? *(const u16*)&hb : (u16)0;
                    named_sync(1 + j / 2, 64);
                    const int pair_lane = (j & 1) * 32 + lane, u8 = 8 * (j / 2);
                    if (u0 + u8 < HID)
                        for (u32 i = pair_lane; i < 8 * gridDim.x; i += 64) {
                            const int ns = i % 8;
                            const uint4 v = *(const uint4*)&h16[ns * UNITS + u8];
                            if (ns < BATCH)
                                push_v4(cluster_address(stage + (t & 1) * RG_STAGE + ns * RG_PITCH + u0 + u8, i / 8),
                                        cluster_address(bar + (t & 1), i / 8), v.x, v.y, v.z, v.w);
                        }
                }
#else
                // Else lanes 0..7 gather the 4 units of their sample (lanes + 16, + 8, + 24 hold
                // units 1, 2, 3), then lane l stores sample l % 8's to blocks l / 8, l / 8 + 4, ...
                if (t + 1 < seq) {
                    const u32 bits = live[nt] ? (u32) * (const u16*)&hb : 0u;
                    const u32 w0 = bits | __shfl_down_sync(0xffffffffu, bits, 16) << 16;
                    const u32 w1 =
                        __shfl_down_sync(0xffffffffu, bits, 8) | __shfl_down_sync(0xffffffffu, bits, 24) << 16;
                    const int from = lane & 7;
                    const u32 v0 = __shfl_sync(0xffffffffu, w0, from), v1 = __shfl_sync(0xffffffffu, w1, from);
                    const int ns = 8 * nt + 2 * (from % 4) + (from >> 2);  // lane `from`'s sample
                    if (ns < BATCH && u0 + 4 * j < HID) {
                        const u16* at = stage + (t & 1) * RG_STAGE + ns * RG_PITCH + u0 + 4 * j;
                        for (u32 q = lane >> 3; q < gridDim.x; q += 4) push_pair(at, bar + (t & 1), q, v0, v1);
                    }
                }
#endif
                if (nt == 0) PHASE(5);
                // The step's record for the helper, which stores the outputs.
                float r[8] = {h};
#pragma unroll
                for (int g = 0; g < GATES; ++g) r[1 + g] = gate[g];
#pragma unroll
                for (int k = 0; k < CELL_SAVED; ++k) r[1 + GATES + k] = saved[k];
                float4* const rec_at = record_at(t & 1, nt);
                rec_at[0] = make_float4(r[0], r[1], r[2], r[3]);
                rec_at[1] = make_float4(r[4], r[5], r[6], r[7]);
                const int m = n + 8 * nt;
                if (live[nt] && t == seq - 1) {
                    a.h_n[m * HID + u] = hb;
#if CELL_HAS_C
                    a.c_n[m * HID + u] = to_io(c[nt]);
#endif
                }
            }
            rg_arrive(records_bar + (t & 1));
            PHASE(6);
            SIDE_STEP(t);
        }
    } else if (helper) {
        for (int t = 0; t < seq; ++t) {
            // The gate warps' step t is done: its outputs from the records, then the input sums
            // of step t + 2 into the slot that step t read.
            PHASE(0);
            mbar_wait(records_bar + (t & 1), (t >> 1) & 1);
            PHASE(8);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                const float4* const rec_at = record_at(t & 1, nt);
                const float4 r0 = rec_at[0], r1 = rec_at[1];
                const float r[8] = {r0.x, r0.y, r0.z, r0.w, r1.x, r1.y, r1.z, r1.w};
                if (live[nt]) {
                    float gate[GATES], saved[CELL_SAVED];
#pragma unroll
                    for (int g = 0; g < GATES; ++g) gate[g] = r[1 + g];
#pragma unroll
                    for (int k = 0; k < CELL_SAVED; ++k) saved[k] = r[1 + GATES + k];
                    store_unit(u, n + 8 * nt, t, from_f(r[0]), r[0], nullptr, gate, saved, a, drop);
                }
            }
            PHASE(9);
            if (t + 2 < seq) {
                make_inputs(t + 2);
                rg_arrive(inputs_bar + (t & 1));
            }
            PHASE(10);
        }
    }
    MARK(3);
    MARK(5);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
persistent_fwd(const elem* __restrict__ w_hh,  // [GH, H]
                    xg_t* xg,                        // [T, B, GH]
                    const io_t* __restrict__ b_ih,   // [GH] or null
                    const io_t* __restrict__ b_hh,   // [GH] or null
                    const elem* h0,                  // [B, H] or null (zeros)
                    const io_t* __restrict__ c0,     // [B, H] or null (zeros)
                    io_t* y,                         // [T, B, H]
                    io_t* h_n, io_t* c_n,            // [B, H]
                    u16* hx,                         // unread (recurrence_fwd.cu's exchange buffer)
                    float* save,                     // [T, B, CELL_SAVED, H], or null
                    elem* yp,                        // [T + 1, B, LDP], zeroed, or null
                    io_t* dropped,                   // [T, B, H], or null (no dropout after)
                    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
                    unsigned long long drop_seed, unsigned long long drop_p_layer,
                    const elem* __restrict__ w_ih,   // [GH, XIN] (XIN), or null
                    const elem* __restrict__ x,      // [T, B, XIN] (XIN), or null
                    elem* w_t,                       // [HID, WT_PITCH] (WT_WRITE), or null
                    u32* counter, int seq) {         // (unread)
#ifdef SMEM_BYTES
    // What the host sized the launch's shared memory by (kernel.rs's `reg_gates_smem`).
    static_assert(RG_SMEM <= SMEM_BYTES, "reg_gates_smem is short of the layout");
#endif
    const LayerArgs a = at_group({w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset,
                                  drop_seed, drop_p_layer});
    reg_gates_recurrence(a, from_elem(x, first_sample() * XIN), w_t, seq);
    MARK(6);
}
#endif
