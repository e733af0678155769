// One layer's backward through time as one persistent kernel, the mirror of recurrence_fwd.cu, for
// the cell whose pointwise steps come before it in the source (cell_lstm.cuh, cell_gru.cuh).
// Block b owns UNITS hidden units (its own count: the saved activations are laid out by unit,
// not by the forward's blocks). Each step, from the last: the block's threads turn dh_t (the
// output's gradient plus the recurrent part) into the gradients of their units' GATES gate
// pre-activations, written to `dg` (for the weight and input GEMMs after the kernel) and to
// the exchange buffer; after the grid barrier, the block multiplies its units' columns of
// W_hh (transposed, kept in shared memory) by all of the step's gate gradients, streamed from
// L2 in chunks, which is its units' part of dh_{t-1}. A cell with a split gate (a GRU's n,
// whose recurrent product the reset gate multiplies) has different gradients on the recurrent
// product's side for that gate: those go to the exchange buffer and to `dgh` (the recurrent
// weight's GEMM reads it), the input side's to `dg`.
//
// Compile-time: HID, BATCH (a batch group's samples: common.cuh's GROUPS), UNITS (any count),
// NWARPS, ELEM_BF16 or ELEM_F32 (the gate columns, the product's K, counted in 16-bit words:
// common.cuh's EW per element), as the forward, NBUF
// (>= 2), the chunk buffers per warp (NBUF - 1 chunks in flight while one is multiplied), and CL,
// the blocks of a thread-block cluster (1: none). With CL > 1 the CL blocks of a cluster split the
// product's K (the gate columns) instead of each reading all of it: block r of cluster q keeps the
// columns of W_hh of the cluster's CL * UNITS units for its CL-th of the gate rows, multiplies
// them by that CL-th of the step's gate gradients (a CL-th of the L2 traffic), and the cluster
// sums the partial products through distributed shared memory; block r then owns units
// q * CL * UNITS + r * UNITS.. as without clusters (u0 = blockIdx.x * UNITS either way).
// With BWD_WREG (1; plan.rs's Plan::wide_backward, in 16 warps) each warp keeps its fragments of
// the tile in registers for the whole sequence (BwdTile's L2_IN_REGS).
// Stage buffers: `(u16*)(warp_region + i * BUF_BYTES)`, i < NBUF (no pointer array: it would
// live in local memory). The weight tile and the stage buffers hold only the UNITS rows and
// BATCH rows that exist: the tensor-core tiles' rows past them read a real row (clamped) and
// their products are never used, which leaves shared memory for a deeper pipeline.
// `gates` (f32 [T, B, GATES * H], the gate activations) and `cells` (f32
// [T, B, CELL_SAVED, H]) are what the training forward saved; `c0` is the state the cell
// carries at t = 0 (the host passes h_0 for a cell without c). `dgx` is the exchange buffer,
// [2][BROWS][GPAD], zeroed before the launch (columns past XGH stay zero). `db_ih` and `db_hh`
// (either may be null) receive the bias gradient of the block's units, every step's gate
// gradients summed over the batch in f32 (the input side's and the recurrent side's), written
// over what they hold or, with `db_add` non-zero, added to it. With batch groups each group sums
// its samples into `db_parts` (f32 [GROUPS][NSLOT][H]), and the groups' sums are added in order:
// by the first group once every group's are there, or, with `joins` null, after the kernel by
// `rnn_sum_bias_parts`.
//
// With PUSH (1; one layer in one cluster per batch group, ONE_CLUSTER, one chunk of the batch)
// no exchange buffer or barrier serves a step: each block multiplies its own units'
// gate gradients (kept in its shared memory) by their rows of W_hh, all HID columns, which is
// its part of every unit's dh_{t-1}, and each warp stores its rows' parts (f32) with st.async
// into the shared memory of the block that owns those units, in a slot of the sending block's,
// one of two stages taken in turn by the step's parity, where an mbarrier counts the bytes in.
// A block sums its slots once its stage has landed. A block sends one f32 part a unit of the
// layer: half the bytes of pushing its gate gradients to every block (an LSTM's four 16-bit
// values a unit), which took longer than the barrier they spared
// (results/2026-11-27-h100-small-phases/).
//
// With WAVE_LAYERS (2..WAVE_MAX, CL 1) the module's kernel is `wave_bwd` instead: every
// layer of a stack at once, from the top, as a wavefront (the mirror of recurrence_fwd.cu's). Blocks
// 0.. take the lowest layer (UNITS0 units each), the rest the layers above in turn (UNITS1
// each), whose tiles also hold their units' columns of W_ih (transposed): the same product
// with the step's gate gradients then gives, beside dh_{t-1}, the gradient of the layer's
// input at t, which is the layer below's dy_t (`dx`, read through the dropout mask as any dy).
// It is stored after the barrier of the wave step that made it and read after the next one, so
// layer l runs two wave steps behind layer l + 1: its step t at wave step
// 2 (L - 1 - l) + seq - 1 - t; seq + 2 (L - 1) wave steps in all. Each layer has its own
// exchange buffer and `dg`. A split gate's input gradient differs from its recurrent side's
// that the exchange carries: in the wavefront every layer exchanges it too, in a column group
// after the gates' (XGH), which the upper layers' W_ih columns face.

// The exchange buffer's column groups: a step's gate gradients, GATES per unit (a split gate's
// on the recurrent product's side), and in a wavefront of a cell with a split gate one more,
// that gate's gradient on the input's side, which an upper layer's input gradient needs.
#if defined(WAVE_LAYERS) && SPLIT_GATE >= 0
#define SPLIT_X 1
#else
#define SPLIT_X 0
#endif
#define XGH ((GATES + SPLIT_X) * HID)
// A chunk's tensor-core column tiles (common.cuh's NB samples a chunk).
#define NT ((NB + 7) / 8)
#define NPAD (NT * 8)
// Gate columns per chunk (-DCH, 32 or 64).
#ifndef CH
#define CH 32
#endif
// The most tensor-core tiles of accumulators (4 floats a lane each) that one pass over the gate
// columns keeps for the chunks of the batch it takes together (below, BG); -D overrides.
#ifndef BWD_MAX_ACC_TILES
#define BWD_MAX_ACC_TILES 16
#endif
// The 16-byte pieces of a chunk's NB rows, and how many of them each lane copies.
#define PIECES (NB * (CH / 8))
#define PER_LANE ((PIECES + 31) / 32)
// The exchange rows' chunks, and their 16-bit words (XGH elements of EW words each, whole chunks).
#define NCHUNKS ((XGH * EW + CH - 1) / CH)
#define GPAD (NCHUNKS * CH)
// A block's chunks of the gate columns, and their columns (16-bit words).
#define NCR ((NCHUNKS + CL - 1) / CL)
#define KR (NCR * CH)
#if EW > 1 && defined(WAVE_LAYERS)
#error "the wavefront takes half elements"
#endif
// The weight tile's pitch: an odd number of 16-byte pieces (conflict-free ldmatrix).
#define APITCH (KR + 8)
// A chunk buffer's rows are CH wide, unpadded, their 16-byte pieces swizzled instead: piece q of
// row n sits at piece q ^ SWZ(n), so that the 8 rows an ldmatrix reads at one column hit 8
// different bank groups (rows of 128 bytes, CH = 64: each row its own XOR; rows of 64 bytes,
// CH = 32: pairs of rows share a 128-byte line, XOR by the pair). Without the padding a third
// buffer per warp fits PTB large's shared memory.
#define CPIECES (CH / 8)
#define SWZ(n) ((CH == 64 ? (n) : ((n) >> 1)) & (CPIECES - 1))
#define CHUNK_AT(n, q) ((n) * CH + (((q) ^ SWZ(n)) * 8))
#define CPW ((NCR + NWARPS - 1) / NWARPS)
#define BUF_BYTES (NB * CH * 2)
// The exchange buffer's slot of step t: two taken in turn.
#define XSLOT(t) ((size_t)((t) & 1) * BROWS * GPAD)
#if GROUPS > 1 && defined(WAVE_LAYERS)
#error "the wavefront takes the batch in one group"
#endif
#ifndef PUSH
#define PUSH 0
#endif
#if PUSH && (!defined(ONE_CLUSTER) || !ONE_CLUSTER || NCH != 1 || CL != 1 || defined(WAVE_LAYERS))
#error "the pushed backward takes one layer in one cluster, one chunk of the batch"
#endif
// With WT_ROWS (1) `w_hh` is W_hh transposed (common.cuh's WT_PITCH), and the tile is filled
// from whole rows of it, 16 bytes a copy, as the forward fills its tile: read from W_hh itself,
// each block takes a 32-64-byte stripe of every weight row, which took 9.6 µs against 3.0 at
// hidden 512 (results/2026-11-30-h200-fill-rows/).
#ifndef WT_ROWS
#define WT_ROWS 0
#endif
#if WT_ROWS && (PUSH || defined(WAVE_LAYERS))
#error "W_hh transposed serves the layer-by-layer backward's tile, not the pushed one's or the wavefront's"
#endif


// The bias gradient's slots per unit: one per gate, and a split gate's recurrent side (`db_parts`,
// and the slots of each sample in a block's sum, BwdTile::NSLOT).
constexpr int BIAS_SLOTS = GATES + (SPLIT_GATE >= 0 ? 1 : 0);

// The tile of a block of UB_ units (UPPER_: an upper wavefront layer's, whose rows also hold
// its units' columns of W_ih), and how its shared memory splits.
template <int UB_, bool UPPER_>
struct BwdTile {
    static constexpr int UB = UB_, CU = CL * UB;
    // The tile's rows: the cluster's units' columns of W_hh (then, UPPER_, of W_ih).
    static constexpr int ROWS = (UPPER_ ? 2 : 1) * CU;
    static constexpr int MTB = (ROWS + 15) / 16, MROWS = MTB * 16;
    // The cluster's partial dh of this block's units for a chunk of the batch, [CL][NB][UB]
    // f32, slot q written by block q of the cluster (CL > 1 only; PPITCH sizes the region).
    static constexpr int PPITCH = CU + 4;
    static constexpr int PART_BYTES = (CL > 1) ? (NB * PPITCH * 4 + 15) / 16 * 16 : 0;
    // The (unit, sample) pairs of a chunk each thread does the pointwise steps of.
    static constexpr int ITEMS = (UB * NB + THREADS - 1) / THREADS;
    // A warp's partial sums, its accumulators' NB real rows (the tiles' rows past them are
    // never stored: clusters of 8 fit in shared memory only so).
    static constexpr int RPB = MROWS + 4, RED_BYTES = NB * RPB * 4;
    static constexpr int WARP_BYTES =
        (((NBUF * BUF_BYTES > RED_BYTES) ? NBUF * BUF_BYTES : RED_BYTES) + 15) / 16 * 16;
    // The bias gradient's slots, one per sample, gate (and a split gate's recurrent side) and
    // unit, after the steps.
    static constexpr int NSLOT = BIAS_SLOTS;
    static constexpr int SLOT_BYTES = BATCH * NSLOT * UB * 4;
    // PUSH: the tile of the block's gate columns' rows of W_hh ([PROWS][PW]: every unit of the
    // cluster, NBLK blocks of UB, by the block's GATES * UB gate columns of EW 16-bit words each,
    // whole K steps), the step's gate gradients ([2][NPAD][PW], by the step's parity: a block
    // barrier then orders every product's reads before the same buffer's next writes, which the
    // mbarriers also do but racecheck does not see), two stages of the parts of dh_{t-1} of the
    // block's units that every block sends ([2][NBLK][UB][PB] f32, samples in pairs; after the
    // steps they take the bias slots), and the stages' mbarriers.
    static constexpr int NBLK = (HID + UB - 1) / UB, PROWS = (NBLK * UB + 15) / 16 * 16;
    static constexpr int PK = (GATES * UB * EW + 15) / 16 * 16, PW = PK + 8, PB = (BATCH + 1) / 2 * 2;
    static constexpr int PUSH_BYTES = NBLK * UB * PB * 4, RECV_BYTES = 2 * PUSH_BYTES;
    // The tile's 16-row tiles, each warp's share of them, and their K steps. PUSH_IN_REGS
    // (-DPUSH_WREG overrides; by default where a warp's tiles take at most 64 registers a
    // thread, 128 with one tile of samples): each warp keeps its tiles in registers for the whole
    // sequence instead of reading them from shared memory at every step. Bit-identical; faster
    // where a warp has many products a step (hidden 256, TF32, groups of 16 at hidden 128), within
    // 2% where it has few (groups of 4 at hidden 128), results/2026-11-29-h200-one-block/; at
    // hidden 384 and 512 in groups of 8 (72 and 128 registers of tiles, 216 in all at 512, no
    // spills) a launch took 0.87x and 0.88x the time from shared memory
    // (results/2026-12-02-h200-push-bandwidth/, section 11); through the op, f16 training at
    // [30, 32, 384] 0.94x (results/2026-12-02-h200-push16-wreg/). (At 512 the backward through
    // L2 stays faster: rules.rs's `shape_one_cluster_pushes`.)
    static constexpr int PMT = PROWS / 16, PMT_PER_WARP = (PMT + NWARPS - 1) / NWARPS, PKSTEPS = PK / 16;
#ifdef PUSH_WREG
    static constexpr bool PUSH_IN_REGS = PUSH && PUSH_WREG;
#else
    static constexpr bool PUSH_IN_REGS = PUSH && PMT_PER_WARP * PKSTEPS * 4 <= (NT == 1 ? 128 : 64);
#endif
    // L2_IN_REGS (-DBWD_WREG=1 asks; off by default): a backward through L2 (not pushed, not in a
    // wavefront, no clusters) keeps each warp's A fragments of the tile (its CPW chunks of K, all
    // MTB tiles of rows) in registers for the whole sequence instead of reading them from shared
    // memory at every step, where they take at most 64 registers a thread in blocks of 16 warps
    // (128 registers a thread in all; kernel.rs's WIDE_BACKWARD_MOST_FRAGMENT_REGISTERS), 128 in
    // blocks of 8. The same products in the same order. In 16 warps the launches were shorter
    // than 8 warps' reading the tile from shared memory; in 8 warps the fragments did not pay
    // (results/2026-12-02-h200-wide-backward/, section 2).
    static constexpr int L2_FRAG_REGS = CPW * (CH / 16) * MTB * 4;
#if defined(BWD_WREG) && !defined(WAVE_LAYERS)
    static constexpr bool L2_IN_REGS =
        !PUSH && !UPPER_ && CL == 1 && BWD_WREG && L2_FRAG_REGS <= (NWARPS > 8 ? 64 : 128);
    static_assert(!BWD_WREG || UPPER_ || L2_IN_REGS, "BWD_WREG: a backward through L2 without clusters whose "
                  "tile's fragments fit in the registers a thread has to spare");
#else
    static constexpr bool L2_IN_REGS = false;
#endif
    static constexpr int PUSH_SMEM = (PROWS + 2 * NPAD) * PW * 2 + (RECV_BYTES > SLOT_BYTES ? RECV_BYTES : SLOT_BYTES) + 16;
    // Shared memory per block (plan.rs's `Plan::backward_smem` says the same).
    static constexpr int SMEM = PUSH ? PUSH_SMEM : ROWS * APITCH * 2 + PART_BYTES + NWARPS * WARP_BYTES;
};

// One layer's buffers for the backward (see above; `w_ih` and `dx` for upper wavefront layers
// only).
struct BwdArgs {
    const elem* w_hh;                       // [GH, H]
    const elem* w_ih;                       // [GH, H]
    const float* gates;                     // [T, B, GH]
    const float* cells;                     // [T, B, CELL_SAVED, H]
    const elem* c0;                         // [B, H] or null (zeros)
    const elem* dy;                         // [T, B, H]
    const elem* dh_n;                       // [B, H] or null (zeros)
    const elem* dc_n;                       // [B, H] or null (zeros)
    elem* dg;                               // [T, B, GH]
    u16* dgx;                               // [2, B, GPAD] 16-bit words, zeroed
    elem* dh0;                              // [B, H]
    elem* dc0;                              // [B, H]
    elem* db_ih;                            // [GH] or null
    elem* db_hh;                            // [GH] or null
    elem* dx;                               // [T, B, H]: the layer below's dy
    const unsigned long long* drop_offset;  // dropout.cu's Dropout, or null
    unsigned long long drop_seed, drop_p_layer;
    elem* dgh;                              // [T, B, GH] (a split gate's cell), or null
};

// Unit u's gate g of the bias gradient from the batch groups' sums in `db_parts` (f32
// [GROUPS][NSLOT][H]), added in group order (the same result whatever the timing), written over
// db_ih and db_hh (either may be null) or, with `db_add` non-zero, added to them.
__device__ __forceinline__ void add_group_parts(const float* db_parts, int g, int u, elem* db_ih,
                                                elem* db_hh, unsigned long long db_add) {
    constexpr int NSLOT = BIAS_SLOTS;
    float sum = 0.f, sum_rec = 0.f;
    for (int q = 0; q < GROUPS; ++q) {
        float part_sum = db_parts[((size_t)q * NSLOT + g) * HID + u];
        sum += part_sum;
        sum_rec += (SPLIT_GATE >= 0 && g == SPLIT_GATE) ? db_parts[((size_t)q * NSLOT + GATES) * HID + u]
                                                        : part_sum;
    }
    size_t at_ = (size_t)g * HID + u;
    if (db_ih) db_ih[at_] = from_f(db_add ? to_f(db_ih[at_]) + sum : sum);
    if (db_hh) db_hh[at_] = from_f(db_add ? to_f(db_hh[at_]) + sum_rec : sum_rec);
}

// Layer `layer`'s backward on block `bl` of its blocks, over `waves` grid-wide steps of which it
// takes seq, from wave step `start` (its step t at wave step start + seq - 1 - t).
template <int UB, bool UPPER>
// With batch groups, `db_parts` and `joins` (the words behind the groups' barriers, or null)
// combine the groups' bias gradients (see above; null in the wavefront).
__device__ __forceinline__ void recurrence_bwd(const BwdArgs& a, unsigned long long db_add,
                                               int start, int bl, u32* counter, int seq,
                                               int waves, float* db_parts, u32* joins) {
    using P = BwdTile<UB, UPPER>;
    constexpr int CU = P::CU, ROWS = P::ROWS, MTB = P::MTB, ITEMS = P::ITEMS, RPB = P::RPB;
    constexpr int PART_BYTES = P::PART_BYTES, WARP_BYTES = P::WARP_BYTES;
    static_assert(!UPPER || CL == 1, "the wavefront runs without clusters");
    extern __shared__ __align__(16) unsigned char smem[];
    // The dropout after this layer: `dy` is the gradient of its output through the mask (the
    // next layer's input gradient), which the loads below take through the mask again.
    const Dropout drop = dropout_of(a.drop_offset, a.drop_seed, a.drop_p_layer);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    MARK(0);
    // at[m][k] = W_hh[k0 + k][cu0 + m]: the cluster's units, the block's gate rows (then, in an
    // upper layer, at[CU + m][k] = W_ih[k0 + k][cu0 + m]).
    u16* at = (u16*)smem;
#if CL > 1
    float* part = (float*)(smem + ROWS * APITCH * 2);
#endif
    unsigned char* warp_region = smem + ROWS * APITCH * 2 + PART_BYTES + warp * WARP_BYTES;
    const float* red = (const float*)(smem + ROWS * APITCH * 2 + PART_BYTES);
    // PUSH's regions (BwdTile).
    u16* const pt = (u16*)smem;
    u16* const gb = pt + P::PROWS * P::PW;
    float* const recv = (float*)(gb + 2 * NPAD * P::PW);
    unsigned long long* const push_bar =
        (unsigned long long*)((unsigned char*)recv + (P::RECV_BYTES > P::SLOT_BYTES ? P::RECV_BYTES : P::SLOT_BYTES));
    const int u0 = bl * UB;
    const u32 rank = cluster_rank();
    const int cu0 = (bl / CL) * CU, k0 = rank * KR;

    // The block's KRE gate columns, elements from k0 / EW, each EW words of its tile row.
    constexpr int KRE = KR / EW;
    // Half elements: the tile's first BLOCK_ROWS rows in 8x8 blocks (8 units by 8 gate columns),
    // FILL blocks in flight a warp. A lane loads two units of one weight row (4 bytes), the
    // warp transposes the block in registers and stores its 8 rows of 16 bytes, each lane 4
    // bytes, into 8 different bank groups: half the loads of the rows one at a time below, and
    // none of their stores four to a bank. The fill still takes twice the forward's (9.5 µs at
    // hidden 512, with 16 or 64 loads in flight a lane alike): each block reads only its units'
    // 32-64 bytes of each weight row, where the forward copies whole rows; the launches 1%
    // faster at hidden 512-1024 (results/2026-11-30-h200-launch-marks/). The blocks take the
    // rows of one matrix each (in an upper layer, W_ih's only where no column is moved, SPLIT_X)
    // and two units a load (an even HID).
    // (WT_ROWS: whole rows of W_hh transposed instead, below.)
    constexpr bool FROM_T = WT_ROWS && !UPPER;
    constexpr int BLOCK_ROWS =
        (EW == 1 && HID % 2 == 0 && !FROM_T) ? ((UPPER && (SPLIT_X || CU % 8)) ? CU : ROWS) / 8 * 8 : 0;
    constexpr int MBLOCKS = BLOCK_ROWS / 8, NBLOCKS = MBLOCKS * (KRE / 8), MB_DIV = MBLOCKS > 0 ? MBLOCKS : 1;
    static_assert(KRE % 8 == 0, "a block's gate columns are whole 16-byte pieces");
    for (int q0 = warp * FILL; !PUSH && q0 < NBLOCKS; q0 += NWARPS * FILL) {
        u32 v[FILL];
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            // (Every load goes, clamped into the matrix, so that none waits behind a branch.)
            int q = min(q0 + j, NBLOCKS - 1), m = q % MB_DIV * 8 + 2 * (lane & 3);
            int kw = k0 + q / MB_DIV * 8 + (lane >> 2);
            const bool ih = UPPER && m >= CU;
            int u = cu0 + (ih ? m - CU : m);
            u32 x = *(const u32*)&(ih ? a.w_ih : a.w_hh)[(size_t)min(kw, GH - 1) * HID + min(u, HID - 2)];
            v[j] = (u < HID && kw < GH) ? x : 0u;
        }
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            const int q = q0 + j;
            if (q < NBLOCKS)
                *(u32*)&at[(q % MB_DIV * 8 + (lane >> 2)) * APITCH + q / MB_DIV * 8 + 2 * (lane & 3)] =
                    movmatrix_trans(v[j]);
        }
    }
    // The other rows one at a time (f32 elements, rows past the blocks): consecutive threads
    // along a row of the weights, FILL loads in flight per thread (one at a time, the fill took
    // a large share of every launch: results/2026-11-23-h100-clusters/).
    constexpr int REST = FROM_T ? 0 : ROWS - BLOCK_ROWS, REST_DIV = REST > 0 ? REST : 1;
    for (int i0 = tid; !PUSH && i0 < REST * KRE; i0 += THREADS * FILL) {
        elem v[FILL];
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            int i = i0 + j * THREADS, k = k0 / EW + i / REST_DIV, m = BLOCK_ROWS + i % REST_DIV;
            const bool ih = UPPER && m >= CU;
            int u = cu0 + (ih ? m - CU : m);
            // The weight row of exchange column k (SPLIT_X: W_ih's of the split gate face its
            // input side's column group, GATES, and none faces its recurrent side's; W_hh's
            // none faces group GATES).
            int kw = k;
            bool none = false;
#if SPLIT_X
            if (ih) {
                none = k / HID == SPLIT_GATE;
                if (k >= GH) kw = k - (GATES - SPLIT_GATE) * HID;
            }
#endif
            // Every load goes (clamped into the matrix), so that none waits behind a branch.
            elem x = (ih ? a.w_ih : a.w_hh)[(size_t)min(kw, GH - 1) * HID + min(u, HID - 1)];
            v[j] = (i < REST * KRE && u < HID && kw < GH && !none) ? mma_elem(x) : (elem)0;
        }
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            int i = i0 + j * THREADS;
            if (i < REST * KRE) *(elem*)&at[(BLOCK_ROWS + i % REST_DIV) * APITCH + i / REST_DIV * EW] = v[j];
        }
    }
    if constexpr (FROM_T) {
        // at[m][k] = W^T[cu0 + m][k0 + k], by `fill_tile` (half elements copied, f32 ones rounded
        // to TF32 on the way); rows past HID and columns past the row are zeros.
        fill_tile<EW == 1, ROWS, APITCH>(at, true, [&](int m, int c) {
            const int u = cu0 + m, k = k0 + c;
            const u16* row = (const u16*)a.w_hh + (size_t)min(u, HID - 1) * WT_PITCH;
            return Piece{row + min(k, WT_PITCH - 2), u < HID && k < WT_PITCH};
        });
        if (EW == 1) cp_async_wait_all();
    }
    if (PUSH) {
        // pt[m][j] = W_hh[g * HID + u0 + ul][m], j = g * UB + ul (zeros past the units and the
        // gate columns), consecutive threads along m, W_hh's rows; K elements of EW words.
        constexpr int R = P::PROWS, K = P::PK / EW;
        for (int i0 = tid; i0 < R * K; i0 += THREADS * FILL) {
            elem v[FILL];
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS, m = i % R, jj = i / R, u = u0 + jj % UB;
                int row = (jj / UB) * HID + u;
                elem x = a.w_hh[(size_t)min(row, GH - 1) * HID + min(m, HID - 1)];
                v[j] = (i < R * K && jj < GATES * UB && u < HID && m < HID) ? mma_elem(x) : (elem)0;
            }
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS;
                if (i < R * K) *(elem*)&pt[(i % R) * P::PW + i / R * EW] = v[j];
            }
        }
        // The gate gradients' rows past the batch are never written; the products read them.
        for (int q = tid; q < NPAD * P::PW; q += THREADS) ((u32*)gb)[q] = 0u;
        // The stages' mbarriers, each armed for its first step's bytes.
        if (tid == 0)
            for (int q = 0; q < 2; ++q) {
                mbar_init(push_bar + q);
                mbar_expect(push_bar + q, P::PUSH_BYTES);
            }
    }

    // PUSH_IN_REGS: the warp's tiles of `pt`, in registers for the whole sequence (a warp past
    // the last tile loads a real one, unused).
    u32 pw[P::PUSH_IN_REGS ? P::PMT_PER_WARP : 1][P::PUSH_IN_REGS ? P::PKSTEPS : 1][4];
    if constexpr (P::PUSH_IN_REGS) {
        __syncthreads();
#pragma unroll
        for (int i = 0; i < P::PMT_PER_WARP; ++i)
#pragma unroll
            for (int kk = 0; kk < P::PKSTEPS; ++kk) {
                int m = min(warp + i * NWARPS, P::PMT - 1) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                ldsm_x4(pw[i][kk], pt + m * P::PW + kk * 16 + (lane >> 4) * 8);
            }
    }

    // The A fragment of the tile's row tile `mt` at K step `kk` of the chunk at column `col`
    // (rows past the tile read a real one, clamped; their products are never used).
    auto tile_fragment = [&](u32(&w4)[4], int mt, int col, int kk) {
        const int m = min(mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ROWS - 1);
        ldsm_x4(w4, at + m * APITCH + col + kk * 16 + (lane >> 4) * 8);
    };
    // L2_IN_REGS: the warp's fragments of the tile, for its chunks of K (a chunk past the
    // block's last loads a real one, unused).
    constexpr bool L2_REGS = P::L2_IN_REGS;
    u32 lw[L2_REGS ? CPW : 1][L2_REGS ? CH / 16 : 1][L2_REGS ? MTB : 1][4];
    if constexpr (L2_REGS) {
        __syncthreads();
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
            for (int kk = 0; kk < CH / 16; ++kk)
#pragma unroll
                for (int mt = 0; mt < MTB; ++mt)
                    tile_fragment(lw[i][kk][mt], mt, min(warp * CPW + i, NCR - 1) * CH, kk);
    }

    MARK(1);
    // Per item: the recurrent part of dh, the gradient the cell carries to the step before
    // (an LSTM's dc; a GRU's z * dh), and the bias gradients summed over the steps (a split
    // gate's recurrent side apart).
    // Items of chunk ch: sample ch * NB + idx / UB.
    float dhr[NCH][ITEMS], dc[NCH][ITEMS], dbias[NCH][ITEMS][GATES], dbias_split[NCH][ITEMS];
#pragma unroll
    for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
            bool live = idx < UB * NB && IN_BATCH(n) && u < HID;
            dhr[ch][it] = (live && a.dh_n) ? to_f(a.dh_n[n * HID + u]) : 0.f;
#if CELL_HAS_C
            dc[ch][it] = (live && a.dc_n) ? to_f(a.dc_n[n * HID + u]) : 0.f;
#else
            dc[ch][it] = 0.f;
#endif
#pragma unroll
            for (int g = 0; g < GATES; ++g) dbias[ch][it][g] = 0.f;
            dbias_split[ch][it] = 0.f;
        }
    // A step's saved activations, cell states and output gradient, loaded a step ahead (while
    // the previous step's products run) so that their latency leaves the recurrence. (`dy` of a
    // layer below the top in the wavefront is written during the launch by other blocks: its
    // loads bypass L1, which may hold a line of it from an earlier step's row.) `dy` stays in
    // its element type until the step uses it: converted (and masked) where it is loaded, its
    // load's whole latency stalled every step (the pushed backward's steps took 1.37x as long,
    // results/2026-11-29-h200-one-block/). Which of its elements the mask keeps (dropout after
    // the layer) is worked out with the loads, off the step's path as before.
    float ga[NCH][ITEMS][GATES], sv[NCH][ITEMS][CELL_SAVED], cp[NCH][ITEMS];
    elem dyr[NCH][ITEMS];
    bool keep[NCH][ITEMS];
    auto load_step = [&](int t) {
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
                if (idx < UB * NB && IN_BATCH(n) && u < HID) {
                    size_t row = (size_t)t * BROWS + n;
                    const float* gs = a.gates + row * GH + u;
#pragma unroll
                    for (int g = 0; g < GATES; ++g) ga[ch][it][g] = gs[g * HID];
#pragma unroll
                    for (int k = 0; k < CELL_SAVED; ++k)
                        sv[ch][it][k] = a.cells[(row * CELL_SAVED + k) * HID + u];
                    cp[ch][it] = t > 0 ? a.cells[(row - BROWS) * CELL_SAVED * HID + u]
                                       : (a.c0 ? to_f(a.c0[n * HID + u]) : 0.f);
                    dyr[ch][it] = __ldcg(a.dy + row * HID + u);
                    // (The mask's elements are counted from the batch's first sample.)
                    keep[ch][it] = !drop.offset || dropout_keep(drop, (row + first_sample()) * HID + u);
                }
            }
    };
    if (start == 0) load_step(seq - 1);
    // Where each of the lane's pieces of a chunk lands in a stage buffer and comes from in a
    // row of the exchange buffer, worked out once: the chunk loop's copies then cost no
    // division (its address arithmetic was a visible share of the issued instructions).
    // (Rows of a chunk of the batch: piece_row, for the last chunk, which may end early.)
    int piece_smem[PER_LANE], piece_gmem[PER_LANE], piece_row[PER_LANE];
#pragma unroll
    for (int p = 0; p < PER_LANE; ++p) {
        int q = lane + 32 * p, n = q / (CH / 8), j = (q % (CH / 8)) * 8;
        bool live = q < PIECES;
        piece_smem[p] = live ? CHUNK_AT(n, j / 8) : -1;
        piece_gmem[p] = n * GPAD + j;
        piece_row[p] = n;
    }
    __syncthreads();
#if CL > 1
    // Every block of the cluster has started before any block stores into another's shared
    // memory (as in the forward).
    cluster_sync();
#endif
    // The same for the pushed parts, whose mbarriers are then initialised.
    if (PUSH) cluster_barrier();
    MARK(2);

    for (int s = 0; s < waves; ++s) {
        // The layer's step (every thread of the block agrees whether it has one).
        const int t = start + seq - 1 - s;
        const bool active = t >= 0 && t < seq;
        u16* xch = a.dgx + XSLOT(t);
        // PUSH: the step's gate gradients and stage.
        u16* const gbt = gb + (t & 1) * NPAD * P::PW;
        float* const stage = recv + (t & 1) * (P::PUSH_BYTES / 4);
        // The gradients of the block's gate pre-activations at step t (a split gate's
        // recurrent side apart: the exchange buffer takes it).
        elem dgb[NCH][ITEMS][GATES], dgs[NCH][ITEMS];
        if (active) {
            PHASE(0);
#pragma unroll
            for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
                    if (idx < UB * NB && IN_BATCH(n) && u < HID) {
                        const elem dy = dyr[ch][it];
                        const float dyv = to_f(drop.offset ? dropout_scale(drop, keep[ch][it], dy) : dy);
                        float d[GATES], d_rec = 0.f;
                        cell_backward(ga[ch][it], sv[ch][it], cp[ch][it], dyv, dhr[ch][it],
                                      dc[ch][it], d, d_rec);
                        dbias_split[ch][it] += d_rec;
                        dgs[ch][it] = from_f(d_rec);
#pragma unroll
                        for (int g = 0; g < GATES; ++g) {
                            dbias[ch][it][g] += d[g];
                            dgb[ch][it][g] = from_f(d[g]);
                            const elem x = mma_elem(g == SPLIT_GATE ? dgs[ch][it] : dgb[ch][it][g]);
                            if (PUSH)
                                *(elem*)&gbt[(idx / UB) * P::PW + (g * UB + idx % UB) * EW] = x;
                            else
                                *(elem*)&xch[n * GPAD + (g * HID + u) * EW] = x;
                        }
#if SPLIT_X
                        *(elem*)&xch[n * GPAD + (GH + u) * EW] = mma_elem(dgb[ch][it][SPLIT_GATE]);
#endif
                    }
                }
            PHASE(1);
        }
        if (PUSH) {
            // Every warp's rows of the cluster's units (16 a tile) by the block's gate columns,
            // once the block's gate gradients are in; each lane's sums, two samples of a unit
            // a store, go to the block that owns the unit, into this block's slot of the
            // step's stage.
            __syncthreads();
            const u32 me = ctarank();
#pragma unroll
            for (int i = 0; i < P::PMT_PER_WARP; ++i) {
                const int mt = warp + i * NWARPS;
                if (mt >= P::PMT) break;
                float acc[NT][4];
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int q = 0; q < 4; ++q) acc[nt][q] = 0.f;
#pragma unroll
                for (int kk = 0; kk < P::PKSTEPS; ++kk) {
                    u32 w4[4];
                    if constexpr (P::PUSH_IN_REGS) {
#pragma unroll
                        for (int q = 0; q < 4; ++q) w4[q] = pw[i][kk][q];
                    } else {
                        int m = mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                        ldsm_x4(w4, pt + m * P::PW + kk * 16 + (lane >> 4) * 8);
                    }
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        u32 bf[2];
                        ldsm_x2(bf, gbt + (nt * 8 + (lane & 7)) * P::PW + kk * 16 + ((lane >> 3) & 1) * 8);
                        mma(acc[nt], w4, bf);
                    }
                }
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const int n = nt * 8 + (lane & 3) * 2;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int m = mt * 16 + (lane >> 2) + h * 8;
                        if (n < P::PB && m < P::NBLK * UB)
                            push_pair(stage + ((me * UB + m % UB) * P::PB + n), push_bar + (t & 1), m / UB,
                                      __float_as_uint(acc[nt][2 * h]), __float_as_uint(acc[nt][2 * h + 1]));
                    }
                }
            }
        } else {
            // `dg` is read only after the launch: its stores follow the block's arrival at the
            // barrier, so that the release waits only for the exchange buffer's (faster:
            // results/2026-11-23-h100-chunk-jit/lab/).
            grid_arrive(counter);
        }
        if (active) {
            PHASE(6);
#pragma unroll
            for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
                    if (idx < UB * NB && IN_BATCH(n) && u < HID) {
                        const size_t at_ = ((size_t)t * BROWS + n) * GH + u;
#pragma unroll
                        for (int g = 0; g < GATES; ++g) a.dg[at_ + g * HID] = dgb[ch][it][g];
                        if (SPLIT_GATE >= 0)
#pragma unroll
                            for (int g = 0; g < GATES; ++g)
                                a.dgh[at_ + g * HID] = g == SPLIT_GATE ? dgs[ch][it] : dgb[ch][it][g];
                    }
                }
        }
        // The next step's inputs (a layer below the top: from the wave step before its first),
        // a single layer's before the barrier's wait, so that their latency hides behind it (in
        // a wavefront a lower layer's `dy` is stored by other blocks before this barrier: after
        // it).
#ifndef WAVE_LAYERS
        if (t - 1 >= 0 && t - 1 < seq) load_step(t - 1);
#endif
        if (PUSH) {
            // Every block's parts of the block's units have landed in the step's stage, whose
            // mbarrier is armed again for step t - 2: no block pushes that before this block has
            // pushed step t - 1's, after every thread here has read this stage.
            PHASE(7);
            mbar_wait<true>(push_bar + (t & 1), ((seq - 1 - t) >> 1) & 1);
            if (tid == 0 && t >= 2) mbar_expect(push_bar + (t & 1), P::PUSH_BYTES);
            PHASE(2);
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                int idx = tid + it * THREADS, ul = idx % UB, nl = idx / UB;
                float sum = 0.f;
                if (idx < UB * NB)
                    for (int q = 0; q < P::NBLK; ++q) sum += stage[(q * UB + ul) * P::PB + nl];
                dhr[0][it] = sum;
            }
            continue;
        }
        if (active) PHASE(7);
        grid_wait(counter, (u32)(s + 1) * gridDim.x);
        PHASE(2);
#ifdef WAVE_LAYERS
        if (t - 1 >= 0 && t - 1 < seq) load_step(t - 1);
#endif
        if (!active) continue;

        // dh_{t-1} for the block's units: its columns of W_hh times all gate gradients, the
        // warp's chunks of K streamed through its NBUF stage buffers (an upper layer's rows of
        // W_ih give its input's gradient at t in the same product). The batch's chunks (NB
        // samples from n0) go in groups of BG: one pass over the warp's chunks of K takes every
        // chunk of a group in turn, so that the copies' pipeline fills and drains once a group,
        // not once a chunk of the batch (at batch 128 the backward took 4.2x batch 32's time,
        // its loop's fixed work paid once a chunk: results/2026-11-26-h200-chunk-profile/).
        // BG is every chunk where their accumulators fit in registers, else one; one in a
        // wavefront, whose lower layer's accumulators would add to the upper layers' registers
        // (the 3-layer wavefront at batch 128 spilled more).
#ifdef WAVE_LAYERS
        constexpr int BG = 1;
#else
        constexpr int BG = (NCH * MTB * NT <= BWD_MAX_ACC_TILES) ? NCH : 1;
#endif
#pragma unroll
        for (int g0 = 0; g0 < NCH; g0 += BG) {
            float acc[BG][MTB][NT][4];
#pragma unroll
            for (int cg = 0; cg < BG; ++cg)
#pragma unroll
                for (int mt = 0; mt < MTB; ++mt)
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                        for (int q = 0; q < 4; ++q) acc[cg][mt][nt][q] = 0.f;
            // The warp's chunks, counted from the block's first; past the last real one, none.
            const int c_begin = warp * CPW;
            // (A lower layer's tile is zero past GH: its chunks end there.)
            const int c_real = min(NCR, (UPPER ? NCHUNKS : (GH * EW + CH - 1) / CH) - (int)rank * NCR);
            const int c_count = max(0, min(CPW, c_real - c_begin));
            // Stage j is chunk j / BG of K for the group's chunk j % BG of the batch; it goes to
            // buffer j % NBUF, and every call commits a group of copies (empty past the warp's
            // stages) so that "stage j has landed" is always "at most NBUF - 2 groups pending".
            auto issue = [&](int j) {
                if (j < c_count * BG) {
                    const int i = j / BG, n0 = (g0 + j % BG) * NB;
                    u16* b = (u16*)(warp_region + (j % NBUF) * BUF_BYTES);
                    const u16* src = xch + (size_t)n0 * GPAD + k0 + (c_begin + i) * CH;
#pragma unroll
                    for (int p = 0; p < PER_LANE; ++p)
                        if (piece_smem[p] >= 0 && IN_BATCH(n0 + piece_row[p]))
                            cp_async16(b + piece_smem[p], src + piece_gmem[p]);
                }
                cp_async_commit();
            };
#pragma unroll
            for (int j = 0; j < NBUF - 1; ++j) issue(j);
            // Chunk i of the warp's K for every chunk of the group's batch, its tile rows'
            // fragments from the warp's registers (L2_REGS: i is then a constant of the unrolled
            // loop below) or from the tile in shared memory.
            auto multiply = [&](int i) {
#pragma unroll
                for (int cg = 0; cg < BG; ++cg) {
                    const int j = i * BG + cg;
                    cp_async_wait_pending(NBUF - 2);
                    // Stage j is visible to the warp, and every lane is done with stage j - 1,
                    // whose buffer the next issue refills.
                    __syncwarp();
                    issue(j + NBUF - 1);
                    const u16* b = (const u16*)(warp_region + (j % NBUF) * BUF_BYTES);
                    const int col = (c_begin + i) * CH;
#pragma unroll
                    for (int kk = 0; kk < CH / 16; ++kk) {
                        u32 bf[NT][2];
#pragma unroll
                        for (int nt = 0; nt < NT; ++nt) {
                            int n = min(nt * 8 + (lane & 7), NB - 1);
                            ldsm_x2(bf[nt], b + CHUNK_AT(n, kk * 2 + ((lane >> 3) & 1)));
                        }
#pragma unroll
                        for (int mt = 0; mt < MTB; ++mt) {
                            u32 w4[4];
                            if constexpr (L2_REGS) {
#pragma unroll
                                for (int q = 0; q < 4; ++q) w4[q] = lw[i][kk][mt][q];
                            } else {
                                tile_fragment(w4, mt, col, kk);
                            }
#pragma unroll
                            for (int nt = 0; nt < NT; ++nt) mma(acc[cg][mt][nt], w4, bf[nt]);
                        }
                    }
                }
            };
            if constexpr (L2_REGS) {
#pragma unroll
                for (int i = 0; i < CPW; ++i)
                    if (i < c_count) multiply(i);
            } else {
                for (int i = 0; i < c_count; ++i) multiply(i);
            }
            PHASE(3);
            // The partial sums below reuse the buffers: nothing may still be landing in them.
            cp_async_wait_all();
            __syncwarp();
#pragma unroll
            for (int cg = 0; cg < BG; ++cg) {
                const int ch = g0 + cg, n0 = ch * NB;
                float* rw = (float*)warp_region;
#pragma unroll
                for (int mt = 0; mt < MTB; ++mt)
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        int m = mt * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
                        if (n < NB) {
                            rw[n * RPB + m] = acc[cg][mt][nt][0];
                            rw[n * RPB + m + 8] = acc[cg][mt][nt][2];
                        }
                        if (n + 1 < NB) {
                            rw[(n + 1) * RPB + m] = acc[cg][mt][nt][1];
                            rw[(n + 1) * RPB + m + 8] = acc[cg][mt][nt][3];
                        }
                    }
                __syncthreads();
                PHASE(4);
#if CL > 1
                // The block's partial dh of the cluster's units goes straight into the shared
                // memory of the block that owns each unit, in this block's slot (remote stores
                // need no round trip, unlike remote loads, and ran faster:
                // results/2026-11-23-h100-chunk-jit/lab/); after the cluster's barrier each block
                // sums its slots.
                for (int i = tid; i < min(NB, BATCH - n0) * CU; i += THREADS) {
                    int n = i / CU, m = i % CU;
                    float sum = 0.f;
                    for (int q = 0; q < NWARPS; ++q) sum += red[q * (WARP_BYTES / 4) + n * RPB + m];
                    st_cluster(part + (rank * NB + n) * UB + m % UB, m / UB, sum);
                }
                cluster_sync();
                PHASE(5);
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    int idx = tid + it * THREADS, ul = idx % UB, nl = idx / UB;
                    float sum = 0.f;
                    if (idx < UB * NB && IN_BATCH(n0 + nl))
                        for (int q = 0; q < CL; ++q)
                            sum += part[(q * NB + nl) * UB + ul];
                    dhr[ch][it] = sum;
                }
                // A block writes into its cluster's `part`s again only after the next cluster
                // barrier: the next chunk's below, or the next grid barrier, which every block
                // reaches after these reads.
#else
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    // Row nl of the chunk's sums, sample n of the batch.
                    int idx = tid + it * THREADS, ul = idx % UB, nl = idx / UB, n = n0 + nl;
                    float sum = 0.f;
                    if (idx < UB * NB && IN_BATCH(n))
                        for (int q = 0; q < NWARPS; ++q)
                            sum += red[q * (WARP_BYTES / 4) + nl * RPB + ul];
                    dhr[ch][it] = sum;
                    if constexpr (UPPER) {
                        // The layer's input gradient at t for the block's units: the layer
                        // below's dy.
                        int u = u0 + ul;
                        if (idx < UB * NB && IN_BATCH(n) && u < HID) {
                            float dx = 0.f;
                            for (int q = 0; q < NWARPS; ++q)
                                dx += red[q * (WARP_BYTES / 4) + nl * RPB + CU + ul];
                            a.dx[((size_t)t * BROWS + n) * HID + u] = from_f(dx);
                        }
                    }
                }
#endif
                // The next chunk's sums (or copies) take the warps' regions, whose sums every
                // thread has just read (with clusters, every block of the cluster its `part`).
                if (ch + 1 < NCH) chunk_sync();
            }
        }
        // The stage buffers (which hold the sums just read) are refilled after the next
        // step's barrier, which begins with __syncthreads.
    }
    MARK(3);
#pragma unroll
    for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
            if (idx < UB * NB && IN_BATCH(n) && u < HID) {
#if CELL_HAS_C
                a.dh0[n * HID + u] = from_f(dhr[ch][it]);
                a.dc0[n * HID + u] = from_f(dc[ch][it]);
#else
                // The carried gradient reaches h_0 directly.
                a.dh0[n * HID + u] = from_f(dhr[ch][it] + dc[ch][it]);
#endif
            }
        }
    // The bias gradient of the block's units (no other block has their gate gradients):
    // each item's step sums in a slot of its own, then each (gate, unit) adds its samples in
    // order, so that the result does not depend on timing. The slots take the warps' regions,
    // whose last sums every thread has read after the barrier (with clusters, `part` before it
    // stays the cluster's).
    // A split gate's recurrent side has a slot of its own, after the gates' (NSLOT).
    if (a.db_ih || a.db_hh) {
        constexpr int NSLOT = P::NSLOT;
        static_assert(PUSH || P::SLOT_BYTES <= NWARPS * WARP_BYTES, "bias slots exceed the warp regions");
        // [BATCH][NSLOT][UB] (PUSH: the stages, whose last bytes have landed)
        float* slots = PUSH ? recv : (float*)(smem + ROWS * APITCH * 2 + PART_BYTES);
        __syncthreads();
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                int idx = tid + it * THREADS, ul = idx % UB, n = ch * NB + idx / UB;
                if (idx < UB * NB && IN_BATCH(n)) {
#pragma unroll
                    for (int g = 0; g < GATES; ++g) slots[(n * NSLOT + g) * UB + ul] = dbias[ch][it][g];
                    if (SPLIT_GATE >= 0) slots[(n * NSLOT + GATES) * UB + ul] = dbias_split[ch][it];
                }
            }
        __syncthreads();
        for (int i = tid; i < GATES * UB; i += THREADS) {
            int g = i / UB, ul = i % UB, u = u0 + ul;
            if (u < HID) {
                float sum = 0.f;
                for (int n = 0; n < BATCH; ++n) sum += slots[(n * NSLOT + g) * UB + ul];
                float sum_rec = sum;
#if SPLIT_GATE >= 0
                if (g == SPLIT_GATE) {
                    sum_rec = 0.f;
                    for (int n = 0; n < BATCH; ++n) sum_rec += slots[(n * NSLOT + GATES) * UB + ul];
                }
#endif
                if (GROUPS > 1) {
                    db_parts[((size_t)blockIdx.y * NSLOT + g) * HID + u] = sum;
                    if (SPLIT_GATE >= 0 && g == SPLIT_GATE)
                        db_parts[((size_t)blockIdx.y * NSLOT + GATES) * HID + u] = sum_rec;
                } else {
                    size_t at_ = (size_t)g * HID + u;
                    if (a.db_ih) a.db_ih[at_] = from_f(db_add ? to_f(a.db_ih[at_]) + sum : sum);
                    if (a.db_hh) a.db_hh[at_] = from_f(db_add ? to_f(a.db_hh[at_]) + sum_rec : sum_rec);
                }
            }
        }
        if (GROUPS > 1 && joins) {
            // Every block arrives once its group's sums are stored; the first group's blocks,
            // once all have, add the groups' sums of their units in group order (the same
            // result whatever the timing), then leave as from a barrier (`grid_leave`: the last
            // of them sets both words back to 0 for the next launch).
            __syncthreads();
            if (tid == 0) arrive_release(joins);
            if (blockIdx.y == 0) {
                if (tid == 0) wait_acquire(joins, GROUPS * gridDim.x);
                __syncthreads();
                for (int i = tid; i < GATES * UB; i += THREADS) {
                    int g = i / UB, u = u0 + i % UB;
                    if (u < HID) add_group_parts(db_parts, g, u, a.db_ih, a.db_hh, db_add);
                }
                grid_leave(joins);
            }
        }
    }
    MARK(4);
#if CL > 1
    // No block may leave while another of its cluster may still write into its `part`.
    cluster_sync();
#endif
    // Nor, pushed, while its last stores into another's stage may be in flight.
    if (PUSH) cluster_barrier();
    MARK(5);
}

#ifndef WAVE_LAYERS
// One layer, UNITS units per block.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
persistent_bwd(const elem* __restrict__ w_hh,  // [GH, H]
                    const float* __restrict__ gates, // [T, B, GH]
                    const float* __restrict__ cells, // [T, B, H]
                    const elem* __restrict__ c0,     // [B, H] or null (zeros)
                    const elem* __restrict__ dy,     // [T, B, H]
                    const elem* __restrict__ dh_n,   // [B, H] or null (zeros)
                    const elem* __restrict__ dc_n,   // [B, H] or null (zeros)
                    elem* dg,                        // [T, B, GH]
                    u16* dgx,                        // [2, B, GPAD] 16-bit words, zeroed
                    elem* dh0, elem* dc0,            // [B, H]
                    elem* db_ih, elem* db_hh,        // [GH] or null
                    unsigned long long db_add,
                    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
                    unsigned long long drop_seed, unsigned long long drop_p_layer,
                    elem* dgh,                       // [T, B, GH] (a split gate's cell), or null
                    float* db_parts,                 // [GROUPS, NSLOT, H] with batch groups
                    u32* joins,                      // behind the groups' barrier words, or null
                    u32* counter, int seq) {
    // The block's group's samples (common.cuh's GROUPS).
    const size_t b0 = first_sample();
    const BwdArgs a = {w_hh, nullptr, gates + b0 * GH, cells + b0 * CELL_SAVED * HID,
                       from_elem(c0, b0 * HID), dy + b0 * HID, from_elem(dh_n, b0 * HID),
                       from_elem(dc_n, b0 * HID), dg + b0 * GH, dgx + b0 * GPAD, dh0 + b0 * HID,
                       from_elem(dc0, b0 * HID), db_ih, db_hh, nullptr, drop_offset, drop_seed,
                       drop_p_layer, from_elem(dgh, b0 * GH)};
#ifdef SMEM_BYTES
    // What the host sized the launch's shared memory by (plan.rs's `Plan::backward_smem`).
    static_assert(BwdTile<UNITS, false>::SMEM <= SMEM_BYTES, "backward_smem is short of the tile");
#endif
    recurrence_bwd<UNITS, false>(a, db_add, 0, blockIdx.x, group_counter(counter), seq, seq, db_parts, joins);
    // Pushed, the blocks met at no barrier in memory, whose words stay as the call zeroed them
    // (as in the forward): leaving it took each block 0.5-0.7 µs at the launch's end
    // (results/2026-11-30-h200-launch-marks/, marks 5 to 6).
    if (!PUSH) grid_leave(group_counter(counter));
    MARK(6);
}

// W_hh transposed for the backward's tile (WT_ROWS): w_t[u][g] = w_hh[g][u], rows of WT_PITCH
// 16-bit words (GH elements, then zeros). The forward of a training call launches it on a side
// stream beside its recurrence (transposed.rs). A block of 32 x 8 threads moves a 32 x 32 tile
// through shared memory, reads and writes along rows; grid (WT_PITCH / EW / 32, HID / 32), rounded up.
extern "C" __global__ void rnn_transpose_w_hh(const elem* __restrict__ w_hh, elem* __restrict__ w_t) {
    __shared__ elem tile[32][33];
    constexpr int COLS = WT_PITCH / EW;
    const int g0 = blockIdx.x * 32, u0 = blockIdx.y * 32, x = threadIdx.x;
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int g = g0 + j, u = u0 + x;
        tile[j][x] = (g < GH && u < HID) ? w_hh[(size_t)g * HID + u] : (elem)0;
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
        const int u = u0 + j, g = g0 + x;
        if (u < HID && g < COLS) w_t[(size_t)u * COLS + g] = tile[x][j];
    }
}

// The bias gradient of a layer whose batch ran in groups, where persistent_bwd had `joins` null:
// the groups' sums that it left in `db_parts` added in group order (the same result whatever the
// timing), written over db_ih and db_hh (either may be null) or, with `db_add` non-zero, added
// to them; a thread a (gate, unit). The host launches it where the layer's weight gradients go
// to side streams, after the input gradient's product, so that it runs beside theirs instead of
// every group's blocks waiting for the slowest group at the kernel's end
// (results/2026-11-30-h200-bias-parts/).
extern "C" __global__ void rnn_sum_bias_parts(const float* __restrict__ db_parts, elem* db_ih,
                                              elem* db_hh, unsigned long long db_add) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < GATES * HID) add_group_parts(db_parts, i / HID, i % HID, db_ih, db_hh, db_add);
}
#else
// Every layer at once (see above): blocks of the lowest layer, then each upper layer's.
#define WAVE_MAX 4
#if CL != 1 || WAVE_LAYERS < 2 || WAVE_LAYERS > WAVE_MAX
#error "the wavefront takes 2..WAVE_MAX layers, without clusters"
#endif
struct WaveBwdArgs {
    BwdArgs layer[WAVE_MAX];
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wave_bwd(const WaveBwdArgs args, unsigned long long db_add, u32* counter, int seq) {
    constexpr int LOWER = (HID + UNITS0 - 1) / UNITS0, UPPER = (HID + UNITS1 - 1) / UNITS1;
#ifdef SMEM_BYTES
    // What the host sized the launch's shared memory by (wave.rs's `smem_bytes`).
    static_assert(BwdTile<UNITS0, false>::SMEM <= SMEM_BYTES && BwdTile<UNITS1, true>::SMEM <= SMEM_BYTES,
                  "the wavefront's shared memory is short of a tile");
#endif
    const int waves = seq + 2 * (WAVE_LAYERS - 1);
    if (blockIdx.x < LOWER) {
        const int start = 2 * (WAVE_LAYERS - 1);
        recurrence_bwd<UNITS0, false>(args.layer[0], db_add, start, blockIdx.x, counter, seq, waves, nullptr,
                                      nullptr);
    } else {
        const int r = blockIdx.x - LOWER, layer = 1 + r / UPPER;
        const BwdArgs a = args.layer[layer];
        const int start = 2 * (WAVE_LAYERS - 1 - layer);
        recurrence_bwd<UNITS1, true>(a, db_add, start, r % UPPER, counter, seq, waves, nullptr, nullptr);
    }
    grid_leave(counter);
}
#endif
