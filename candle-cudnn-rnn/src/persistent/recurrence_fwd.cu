// One layer's recurrence as one persistent kernel, for the cell whose pointwise steps come
// before it in the source (cell_lstm.cuh, cell_gru.cuh): every block owns UNITS hidden units
// (all GATES gate rows of each) and keeps their rows of W_hh in shared memory for the whole
// sequence, so the weights are read from memory once per call instead of once per step.
// Each step: every group of warps copies its K slice of h_{t-1} from the exchange buffer (L2)
// into its shared-memory stage with 16-byte asynchronous copies, multiplies its rows by it on
// tensor cores, the block sums the groups' partial products and does the gate math for its
// units, writes h_t to y[t] and to the exchange buffer, then one grid-wide barrier. A batch
// over 32 goes through those phases in chunks of 32 samples (common.cuh's NB), one after
// another, within each step (the backward likewise).
//
// Specialised at compile time (NVRTC -D): HID, BATCH (a batch group's samples: common.cuh's
// GROUPS, 1 by default), UNITS, NWARPS, ELEM_BF16 (1: bf16, 0: f16)
// or ELEM_F32 (1: f32 operands, TF32 products; common.cuh's elem, whose K columns are counted in
// 16-bit words: EW per element), and CL, the blocks of a thread-block cluster (1: none). With
// CL > 1 the CL blocks of a cluster split K (the columns of h) instead of each reading all of h:
// block r of cluster q keeps the gate rows of the cluster's CL * UNITS units for its CL-th of the
// columns, multiplies them by that CL-th of h_{t-1} (a CL-th of the L2 traffic), and the cluster
// sums the partial products through distributed shared memory; block r still does the gate math of
// units blockIdx.x * UNITS.. . Warps: MG groups along the rows times KG along K (with CL = 1, one
// row group: each warp has all rows and its own K slice, and the warps of a K group are one warp).
//
// The input projection W_ih x_t is computed before the kernel (one GEMM over all steps) and arrives
// in `xg`, f32 [T, B, GATES * H], without biases (but see XIN below), or with XG_HALF (1; an
// inference forward in half elements) in elem: the GEMM then writes half the bytes, and nothing
// writes activations over it. `hx` is the exchange buffer,
// [2][BROWS][KPAD], zeroed before the launch (its columns past HID are never written and must stay
// zero; a PUSH kernel does not read it). With `save` non-null (training), the gate activations
// overwrite `xg` in place and what the cell saves (CELL_SAVED per unit: an LSTM's c) goes to
// `save`, f32 [T, B, CELL_SAVED, H], for the backward pass. A cell without c (CELL_HAS_C 0) carries
// its h in f32 from `c0`, where the host passes h_0, and writes no `c_n`. With `yp` non-null
// (training, when H needs padding), h_0 and every y_t also go to `yp` in rows of LDP, the GEMMs'
// padded width (`padded.rs`), for the recurrent weight's gradient in the backward.
//
// With MCAST > 1 (common.cuh; one layer, CL 1) the launch groups the blocks in clusters of
// MCAST and all of h_{t-1} arrives at the start of a step by multicast bulk copies into one
// stage of all of its rows and columns (each chunk's rows counted by an mbarrier of their own),
// which every K group reads its columns of, instead of each group's own copies. With MRING (1;
// several chunks, whose whole stage does not fit beside the tile: hidden 1024 at batch 128) the
// stage is a ring of two chunk slots instead: chunks 0 and 1 go out at the start of a step, and
// chunk ch + 2 into chunk ch's slot once every block of the cluster has multiplied chunk ch (the
// cluster's barrier, arrived at after the products and waited on after the gate math), so that
// the next chunk lands while one is multiplied. The ring takes the weight tile's bytes: its
// weights are in registers (IN_REGS) before the ring is first written.
//
// With PUSH (1; one layer in one cluster per batch group, ONE_CLUSTER, one chunk of the batch)
// h_t goes straight from the block that makes it into the shared memory of every block
// of the cluster (distributed shared memory, st.async), into the stage of all of h that the next
// step reads, one of two taken in turn by the step's parity, each with an mbarrier that counts
// the stage's bytes in. A block starts a step once its stage has landed: there is no barrier
// between the steps, whose release (a fence on every store before it) took a third of a small
// step (results/2026-11-27-h100-small-phases/). No block can write a stage before its reader is
// done with it: a block makes h_{t+1}, which goes into the stage that held h_{t-1}, only from all
// of h_t, and each block pushes its h_t only after it has read h_{t-1}.
//
// With XIN (the pushed exchange only) the input projection is made here instead of by a GEMM
// before the launch: each block also keeps its units' rows of W_ih (XIN columns) in shared
// memory, and the warps without gate math (every warp where each has some) split x's K steps:
// each copies its columns of x_t XST steps ahead into one of XST stages (16-byte asynchronous
// copies) and multiplies the block's rows of W_ih by them for step t + 1 at the end of step t,
// once the step's partial sums are read, into accumulators of their own that step t + 1's
// partial sums take in. Warps without gate math do that while the others do the step's gate
// math, off the step's path; a warp with gate math makes its products after its push, where
// they wait for the push's stores (rules.rs's `folds_input` says where the fold pays). A split
// gate's input product stays apart in the sums (in UB columns behind the tile's rows), as its
// recurrent product is scaled on its own. `xg` is then only written (training's activations).
//
// With WT_WRITE (1; the pushed exchange, half elements, HID a multiple of 8) a training forward
// also writes W_hh transposed for its backward's tile (common.cuh's WT_PITCH, recurrence_bwd.cu's
// WT_ROWS) into `w_t` where it is not null: each block moves its share of W_hh's 8x8 tiles after
// its own tile's copies are issued. A pushed forward's blocks leave the GPU half free, and there it
// cost the launch nothing, where the transpose on a side stream (transposed.rs) still delayed the
// backward by about half of what it saves (results/2026-11-30-h200-fill-rows/ §6).
//
// With F16_SCALED (1; a forward of f32 operands under TF32 math, f16 elements) the layer's
// tensors are f32 (xg, the biases, the states, y, h_n, c_n, the output through dropout; training's
// saves are f32 anyway) and its products take f16
// operands scaled by powers of two (f16_scaled.cu, as recurrence_wgmma_fwd.cu's F16_SCALED): W_hh's
// rows each by `w_scale` (its f32 copy in f16 as `w_hh`), h by `h_scale` of its sample (h_0 in f16
// as `h0`, scaled likewise; null: no h_0, and 2^14). A block's recurrent sums are scaled back
// (exactly: powers of two) before the gate math; h goes into the exchange scaled, to y as it is.
// The f16 tiles and exchange take half the bytes of f32's and the products twice the rate.
//
// With WAVE_LAYERS (2..WAVE_MAX, CL 1) the module's kernel is `wave_fwd` instead: every
// layer of a stack at once, as a wavefront. Blocks 0.. take the lowest layer (UNITS0 units
// each, as above); the rest the layers above in turn (UNITS1 units each), whose rows hold the
// layer's W_ih beside its W_hh, so that an upper block multiplies [its input at t, h_{t-1}]
// (2 * KPAD columns) and no input projection is needed (a split gate's two products take row
// groups of their own: UPPER_GROUPS). At wave step s layer l does its step
// s - l, so one grid barrier per wave step serves every layer: seq + L - 1 steps against
// seq * L layer by layer. The exchange rows hold every layer's h and, below the top, its
// output through dropout (the next layer's input): [h_0 | d_0 | h_1 | d_1 | .. | h_{L-1}], KPAD
// columns each; what wave step s writes goes to slot s & 1, read at wave step s + 1.

#define NT ((NB + 7) / 8)
#define NPAD (NT * 8)
// K steps of h's columns, 32 bytes each, and the columns in 16-bit words (common.cuh's elem).
#define KSTEPS ((HID * EW + 15) / 16)
#define KPAD (KSTEPS * 16)
// `yp`'s row pitch in elements: HID in whole 16-byte rows, as padded.rs pads the GEMMs' operands.
#define LDP ((HID * EW + 7) / 8 * 8 / EW)
// The exchange buffer's rows (see above), and its slot of wave step s: two taken in turn.
#ifdef WAVE_LAYERS
#define XP ((2 * WAVE_LAYERS - 1) * KPAD)
#else
#define XP KPAD
#endif
#define XSLOT(s) ((size_t)((s) & 1) * BROWS * XP)
#if EW > 1 && defined(WAVE_LAYERS)
#error "the wavefront takes half elements"
#endif
#if GROUPS > 1 && defined(WAVE_LAYERS)
#error "the wavefront takes the batch in one group"
#endif
#if MCAST > 1 && (CL != 1 || defined(WAVE_LAYERS))
#error "the multicast exchange takes one layer, without clusters of its own"
#endif
#ifndef MRING
#define MRING 0
#endif
#if MRING && (MCAST < 2 || NCH < 3)
#error "the multicast ring takes the multicast exchange and at least three chunks of the batch"
#endif
#ifndef PUSH
#define PUSH 0
#endif
#if PUSH && (!defined(ONE_CLUSTER) || !ONE_CLUSTER || NCH != 1 || MCAST > 1 || (EW == 1 && HID % 2))
#error "the pushed exchange takes one layer in one cluster, one chunk of the batch, an even HID in half elements"
#endif
// XIN (> 0): the layer's input size, whose projection the recurrence makes itself (see above).
#ifndef XIN
#define XIN 0
#endif
#define FOLD (XIN > 0)
#if FOLD && (!PUSH || XIN % 8)
#error "the folded input projection takes the pushed exchange and an input size a multiple of 8"
#endif
// REG_GATES (1): the module's `persistent_fwd` is recurrence_reg_fwd.cu's (gates in registers).
#ifndef REG_GATES
#define REG_GATES 0
#endif
// WT_WRITE (1): the forward writes W_hh transposed (see above).
#ifndef WT_WRITE
#define WT_WRITE 0
#endif
#if WT_WRITE && (!PUSH || EW != 1 || HID % 8 || defined(WAVE_LAYERS))
#error "the forward writes W_hh transposed in a pushed layer of half elements, HID a multiple of 8"
#endif
// F16_SCALED (1): f32 tensors (common.cuh's io_t), scaled f16 operands (see above); one layer at
// a time (no `yp`: f32 rows are never padded).
#if F16_SCALED && (EW != 1 || ELEM_BF16 || FOLD || WT_WRITE || defined(WAVE_LAYERS))
#error "the scaled f16 operands take f16 elements, one layer, neither XIN nor WT_WRITE"
#endif

// The row groups of an upper wavefront layer's tile: one per gate, whose rows hold the gate's
// W_ih beside its W_hh; a split gate's two products stay apart in two groups, its W_ih rows
// (beside zeros) in its own and its W_hh rows (beside zeros) in one more after the gates'.
#if SPLIT_GATE >= 0
#define UPPER_GROUPS (GATES + 1)
#else
#define UPPER_GROUPS GATES
#endif

// The tile of a block of UNITS_ units whose input rows (h_{t-1}, or an upper wavefront
// layer's [input, h_{t-1}]) are KS_ K steps long, with RG_ row groups of its units' rows (GATES,
// or an upper wavefront layer's UPPER_GROUPS), and how its warps and shared memory split it.
template <int UB_, int KS_, int RG_ = GATES>
struct FwdTile {
    static constexpr int UB = UB_, KS = KS_, KIN = KS * 16, RG = RG_;
    // The block's gate rows in whole 16-row tiles (MROWS): rows past ROWS in the last tile are
    // zero, their products unused (an LSTM's 4 rows a unit fill whole tiles; a GRU's 3 may not).
    static constexpr int CU = CL * UB, ROWS = RG * CU, MT = (ROWS + 15) / 16, MROWS = MT * 16;
    // The block's K steps (its first column: rank * KSB * 16).
    static constexpr int KSB = (KS + CL - 1) / CL;
    // Warp groups: MG along the rows (MPW tiles each), KG along K (KPG steps each). (Without
    // clusters, row groups of 2 or 4 warps, fewer partial sums a step for longer chains of
    // products, took 1.06-1.27x the time of one: results/2026-11-30-h200-phases/ §2.)
    static constexpr int MG = (CL == 1) ? 1 : ((MT >= 4) ? 4 : ((MT >= 2) ? 2 : 1));
    static constexpr int KG = NWARPS / MG;
    static constexpr int MPW = (MT + MG - 1) / MG;
    static constexpr int KPG = (KSB + KG - 1) / KG;
    // IN_REGS (-DWREG overrides; by default when a warp's tiles take at most 160 registers per
    // thread): each warp keeps its tiles of the weights in registers for the whole sequence
    // instead of reading them from shared memory at every step (faster for PTB large's
    // forward, results/2026-11-23-h100-chunk-jit/lab/; its 144 registers of tiles leave the kernel at 224
    // registers, no spills).
#ifdef WREG
    static constexpr bool IN_REGS = WREG;
#else
    static constexpr bool IN_REGS = KPG * MPW * 4 <= 160;
#endif
    // Row pitch of the weight tile, in elements: an odd number of 16-byte chunks, so that the
    // eight row addresses of an ldmatrix fall in different banks.
    static constexpr int PITCH = KSB * 16 + 8;
    // The (unit, sample) pairs of a chunk each thread does the gate math of.
    static constexpr int ITEMS = (UB * NB + THREADS - 1) / THREADS;
    // A row of partial sums: the tile's rows, with FOLD and a split gate that gate's input
    // products behind them (at XSPLIT), and 4 floats of padding.
    static constexpr int XSPLIT = MROWS;
    static constexpr int RPITCH = MROWS + (FOLD && SPLIT_GATE >= 0 ? UB : 0) + 4;
    // A K group's stage of h: NPAD rows of its KW columns, the pitch an odd number of 16-byte
    // chunks (conflict-free ldmatrix). After the products the group's partial sums, NPAD rows
    // of RPITCH floats, reuse the same bytes.
    static constexpr int KW = KPG * 16, HSP = KW + 8;
    // The parts of a K group's columns that are copied and multiplied in turn, PKS K steps
    // each: the products of the parts that have landed overlap the copies of the rest (in PTB
    // large's forward, 6 parts of 2 K steps ran faster than copying all first,
    // results/2026-11-23-h100-chunk-jit/lab/; -DPARTS overrides).
#ifdef PARTS
    static constexpr int NPARTS = PARTS;
#else
    static constexpr int NPARTS = KPG < 6 ? KPG : 6;
#endif
    static constexpr int PKS = (KPG + NPARTS - 1) / NPARTS;
    static constexpr int STAGE_BYTES = NPAD * HSP * 2, RED_BYTES = NPAD * RPITCH * 4;
    // (With MRING the groups copy no h of their own: their regions hold the partial sums only.)
    static constexpr int GROUP_BYTES =
        ((STAGE_BYTES > RED_BYTES && !MRING ? STAGE_BYTES : RED_BYTES) + 15) / 16 * 16;
    // The cluster's partial products of this block's units' gate rows for a chunk,
    // [CL][NB][GATES * UB] f32, slot q written by block q of the cluster (CL > 1 only; RPITCH
    // sizes the region).
    static constexpr int PART_BYTES = (CL > 1) ? (NB * RPITCH * 4 + 15) / 16 * 16 : 0;
    // Shared memory per block (kernel.rs's `forward_smem` says the same): with several chunks
    // two stages per K group, taken in turn, so that the next chunk's h is copied while this
    // chunk is multiplied.
    // With MCAST: the stage of all of h_{t-1} that the multicast fills, NPAD rows a chunk of
    // KPAD columns (the pitch an odd number of 16-byte chunks), then an mbarrier per chunk.
    // With PUSH: two such stages, the step's parity choosing, then an mbarrier for each; a
    // stage takes PUSH_BYTES a step, every sample's h in stores of VEC units (8 or 4 in half
    // elements, 4 in f32; UB is a multiple of 4; the last block's last store may reach past
    // HID).
    static constexpr int WPITCH = KPAD + 8;
    static constexpr int PUSH_SLOT = NCH * NPAD * WPITCH;
    static constexpr int VEC = (EW == 1 && UB % 8 == 0) ? 8 : 4;
    static constexpr int PUSH_BYTES = BATCH * ((HID + VEC - 1) / VEC * VEC) * 2 * EW;
    // With MRING two chunk slots (RSLOTS) of NPAD rows and their mbarriers, in the tile's place.
    static constexpr int RSLOTS = MRING ? 2 : NCH;
    static constexpr int WHOLE_BYTES = MCAST > 1 ? RSLOTS * NPAD * WPITCH * 2 + (RSLOTS * 8 + 15) / 16 * 16
                                       : PUSH   ? 2 * PUSH_SLOT * 2 + 16
                                                : 0;
    static constexpr int TILE_BYTES = MROWS * PITCH * 2;
    static constexpr int HEAD = !MRING ? TILE_BYTES : WHOLE_BYTES > TILE_BYTES ? WHOLE_BYTES : TILE_BYTES;
    // With FOLD, behind those: the tile of the units' rows of W_ih (XKS K steps), then XST
    // stages of x's rows, step t's in stage t % XST (both pitches an odd number of 16-byte
    // chunks). The input's products are made by the warps that do no gate math where there are
    // such (from warp XW0, XPW K steps each), else by every warp.
#ifndef XSTAGES
#define XSTAGES 2
#endif
    static constexpr int XKS = (XIN + 15) / 16, XST = XSTAGES;
    static constexpr int ITEM_WARPS = ITEMS > 1 ? NWARPS : (UB * NB + 31) / 32;
#ifdef FOLD_ALL_WARPS
    static constexpr int XW0 = 0;
#else
    static constexpr int XW0 = ITEM_WARPS < NWARPS ? ITEM_WARPS : 0;
#endif
    static constexpr int XPW = (XKS + NWARPS - XW0 - 1) / (NWARPS - XW0);
    // The warps with x's K steps: XW0..XW0 + XWARPS.
    static constexpr int XWARPS = XKS < NWARPS - XW0 ? XKS : NWARPS - XW0;
    static constexpr int XPITCH = XKS * 16 + 8;
    static constexpr int XTILE = FOLD ? MROWS * XPITCH : 0, XSTAGE = FOLD ? NPAD * XPITCH : 0;
    static constexpr int SMEM = HEAD + PART_BYTES + (NCH > 1 ? 2 : 1) * KG * GROUP_BYTES +
                                (MRING ? 0 : WHOLE_BYTES) + (XTILE + XST * XSTAGE) * 2;
};

// The input projection's element (XG_HALF, see above), and its value as f32.
#ifndef XG_HALF
#define XG_HALF 0
#endif
#if XG_HALF && !ELEM_F32
#if F16_SCALED
#error "the scaled f16 operands take an f32 projection"
#endif
typedef elem xg_t;
__device__ __forceinline__ float xg_f(xg_t v) { return to_f(v); }
#else
typedef float xg_t;
__device__ __forceinline__ float xg_f(float v) { return v; }
#endif

// One layer's buffers (GH: GATES * H; see above; the wavefront's upper layers also read
// `w_ih`, and their `xg` is only written, in training). Null `y`: the output is not kept.
struct LayerArgs {
    const elem* w_ih;                       // [GH, H] (upper wavefront layers)
    const elem* w_hh;                       // [GH, H] (F16_SCALED: scaled)
    xg_t* xg;                               // [T, B, GH]
    const io_t* b_ih;                       // [GH] or null
    const io_t* b_hh;                       // [GH] or null
    const elem* h0;                         // [B, H] or null (zeros; F16_SCALED: scaled)
    const io_t* c0;                         // [B, H] or null (zeros)
    io_t* y;                                // [T, B, H] or null
    io_t* h_n;                              // [B, H]
    io_t* c_n;                              // [B, H]
    float* save;                            // [T, B, CELL_SAVED, H], or null
    elem* yp;                               // [T + 1, B, LDP], zeroed, or null
    io_t* dropped;                          // [T, B, H], or null (no dropout after)
    const unsigned long long* drop_offset;  // dropout.cu's Dropout, or null
    unsigned long long drop_seed, drop_p_layer;
};

// `a` (the whole batch's buffers, as a kernel takes them) from the block's batch group's first
// sample on (common.cuh's GROUPS).
__device__ __forceinline__ LayerArgs at_group(LayerArgs a) {
    const size_t b0 = first_sample();
    a.xg += b0 * GATES * HID;
    a.h0 = from_elem(a.h0, b0 * HID);
    a.c0 = from_elem(a.c0, b0 * HID);
    a.y = from_elem(a.y, b0 * HID);
    a.h_n += b0 * HID;
    a.c_n = from_elem(a.c_n, b0 * HID);
    a.save = from_elem(a.save, b0 * CELL_SAVED * HID);
    a.yp = from_elem(a.yp, b0 * LDP);
    a.dropped = from_elem(a.dropped, b0 * HID);
    return a;
}

// The 8x8 tiles [part, part + 1) / parts of this block's share of W_hh's (`w`, [GH][HID] 16-bit
// elements) written transposed into `w_t` ([HID][WT_PITCH], WT_PITCH = GH where HID is a multiple
// of 8): tile q holds gate rows q / (HID / 8) * 8.. and units q % (HID / 8) * 8... A warp loads
// IN_FLIGHT tiles at once, 4 bytes of each a lane, and transposes them in registers.
template <int IN_FLIGHT = 8>
__device__ __forceinline__ void write_transposed_share(const u16* w, u16* w_t, int part, int parts) {
    static_assert(IN_FLIGHT > 0 && HID % 8 == 0 && EW == 1, "whole 8x8 tiles of half elements");
    constexpr int CT = HID / 8;
    constexpr long long TILES = (long long)GH / 8 * CT;
    const int nb = gridDim.x * gridDim.y, b = blockIdx.y * gridDim.x + blockIdx.x;
    const long long b0 = TILES * b / nb, b1 = TILES * (b + 1) / nb;
    const int q0 = (int)(b0 + (b1 - b0) * part / parts), q1 = (int)(b0 + (b1 - b0) * (part + 1) / parts);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // (q is the same in every lane of a warp: movmatrix's warp takes it whole.)
    for (int qb = q0 + warp; qb < q1; qb += NWARPS * IN_FLIGHT) {
        u32 v[IN_FLIGHT];
#pragma unroll
        for (int j = 0; j < IN_FLIGHT; ++j) {
            const int q = min(qb + j * NWARPS, q1 - 1);
            const int g = q / CT * 8 + (lane >> 2), u = q % CT * 8 + 2 * (lane & 3);
            v[j] = *(const u32*)&w[(size_t)g * HID + u];
        }
#pragma unroll
        for (int j = 0; j < IN_FLIGHT; ++j) {
            const int q = qb + j * NWARPS;
            const int u = q % CT * 8 + (lane >> 2), g = q / CT * 8 + 2 * (lane & 3);
            if (q < q1) *(u32*)&w_t[(size_t)u * WT_PITCH + g] = movmatrix_trans(v[j]);
        }
    }
}

// The warps of K group `kg` wait for each other (with one warp per group: the warp).
template <int MG>
__device__ __forceinline__ void group_sync(int kg) {
    if constexpr (MG == 1) {
        __syncwarp();
    } else {
        asm volatile("bar.sync %0, %1;" ::"r"(1 + kg), "r"(MG * 32) : "memory");
    }
}

// Whether `fill_tile` copies asynchronously: half elements (f32 ones are rounded to TF32 on the
// way), except in a GRU's kernels that fold the input in (FOLD). There the step loop's code came
// out different with them (the loop's source unchanged), and a step took 0.1 µs longer (0.05
// with the split gate's stores made by every warp); an LSTM's folded forward gained 5%
// (results/2026-11-29-h200-gru-forward/, results/2026-11-29-h200-gru-close/).
#if (defined(ELEM_F32) && ELEM_F32) || (FOLD && SPLIT_GATE >= 0)
#define ASYNC_FILL 0
#else
#define ASYNC_FILL 1
#endif

// A warp's accumulators, zeros.
template <int MPW>
__device__ __forceinline__ void zero_acc(float (&acc)[MPW][NT][4]) {
#pragma unroll
    for (int i = 0; i < MPW; ++i)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][nt][q] = 0.f;
}

// The NT 8-sample tiles of `rows` (pitch `pitch`) at column `col`, one K step: the products' B.
__device__ __forceinline__ void load_b(u32 (&b)[NT][2], const u16* rows, int pitch, int col, int lane) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) ldsm_x2(b[nt], rows + (nt * 8 + (lane & 7)) * pitch + col + ((lane >> 3) & 1) * 8);
}

// acc[i] += the 16-row tile mg * MPW + i (those below MT) of `tile` (pitch `pitch`) at column
// `col`, one K step, times b.
template <int MPW, int MT>
__device__ __forceinline__ void tile_products(float (&acc)[MPW][NT][4], const u32 (&b)[NT][2], const u16* tile,
                                              int pitch, int col, int mg, int lane) {
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        int mt = mg * MPW + i;
        if (mt < MT) {
            u32 wt[4];
            int row = mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
            ldsm_x4(wt, tile + row * pitch + col + (lane >> 4) * 8);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) mma(acc[i][nt], wt, b[nt]);
        }
    }
}

// The outputs of unit u of sample n (of the group) at step t that no other block reads during
// the launch: y (and its padded copy, and with dropout after the layer, y through the mask in
// `dropped`: `hd` when the step already made it, else null), and in training the gate
// activations (over the step's input projection in `xg`) and what the cell saves. (F16_SCALED: y
// from `hf`, h unscaled in f32; `hb` holds it scaled.)
__device__ __forceinline__ void store_unit(int u, int n, int t, elem hb, float hf, const elem* hd,
                                           const float (&gate)[GATES], const float (&saved)[CELL_SAVED],
                                           const LayerArgs& a, const Dropout& drop) {
    size_t row = (size_t)t * BROWS + n;
#if F16_SCALED
    if (a.y) a.y[row * HID + u] = hf;
#else
    if (a.y) a.y[row * HID + u] = hb;
#endif
    if (!F16_SCALED && a.yp) a.yp[(row + BROWS) * LDP + u] = hb;
    // (The mask's elements are counted from the batch's first sample, not the group's.)
#if F16_SCALED
    // (y through the mask, from h unscaled in f32.)
    if (a.dropped)
        a.dropped[row * HID + u] = dropout_keep(drop, (row + first_sample()) * HID + u) ? hf * drop.scale : 0.f;
#else
    if (a.dropped)
        a.dropped[row * HID + u] = hd ? *hd : dropout_apply(drop, (row + first_sample()) * HID + u, hb);
#endif
    if (a.save) {
        // (Training's projection is f32: the host sets XG_HALF only for inference.)
        float* gs = (float*)a.xg + row * GATES * HID + u;
#pragma unroll
        for (int g = 0; g < GATES; ++g) gs[g * HID] = gate[g];
#pragma unroll
        for (int k = 0; k < CELL_SAVED; ++k) a.save[(row * CELL_SAVED + k) * HID + u] = saved[k];
    }
}

// Item `it`'s outputs (of the chunk whose first sample is n0): store_unit's.
template <int UB, int ITEMS>
__device__ __forceinline__ void store_outputs(int it, int n0, int t, const elem* hb, const float* hf,
                                              const elem* hd, const float (*gate)[GATES],
                                              const float (*saved)[CELL_SAVED],
                                              const LayerArgs& a, int u0, const Dropout& drop) {
    int idx = threadIdx.x + it * THREADS;
    store_unit(u0 + idx % UB, n0 + idx / UB, t, hb[it], hf[it], hd ? hd + it : nullptr, gate[it], saved[it], a,
               drop);
}

// Layer `layer`'s recurrence on block `bl` of its blocks, over `waves` grid-wide steps of which
// it takes seq, from wave step `layer` (UPPER: an upper layer of the wavefront, whose tile
// holds W_ih beside W_hh and whose input comes through the exchange buffer).
// F16_SCALED: `w_scale` [GH] and `h_scale` [B] (the group's samples; null: no h_0) scale the
// products' operands (see above).
template <int UB, int KS, bool UPPER>
__device__ __forceinline__ void recurrence(const LayerArgs& a, u16* hx, int layer, int bl,
                                           u32* counter, int seq, int waves,
                                           const elem* xin = nullptr, elem* w_t = nullptr,
                                           const float* w_scale = nullptr, const float* h_scale = nullptr) {
    using P = FwdTile<UB, KS, UPPER ? UPPER_GROUPS : GATES>;
    constexpr int CU = P::CU, ROWS = P::ROWS, MT = P::MT, MROWS = P::MROWS, KSB = P::KSB;
    // A split gate's recurrent product in a row group of its own (an upper wavefront layer's),
    // rather than in the gate's (whose rows then hold only its input product).
    constexpr bool APART = UPPER && UPPER_GROUPS > GATES;
    constexpr int MG = P::MG, KG = P::KG;
    constexpr int MPW = P::MPW, KPG = P::KPG, PITCH = P::PITCH, ITEMS = P::ITEMS;
    constexpr int RPITCH = P::RPITCH, KW = P::KW, HSP = P::HSP, NPARTS = P::NPARTS;
    constexpr int PKS = P::PKS, GROUP_BYTES = P::GROUP_BYTES, PART_BYTES = P::PART_BYTES;
    constexpr int XKS = P::XKS, XPITCH = P::XPITCH, XST = P::XST, XW0 = P::XW0, XPW = P::XPW;
    extern __shared__ __align__(16) unsigned char smem[];
    u16* w = (u16*)smem;                               // [MROWS][PITCH]
    const Dropout drop = dropout_of(a.dropped ? a.drop_offset : nullptr, a.drop_seed, a.drop_p_layer);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    MARK(0);
    // A timing harness's mark of the block's start (phase 7 of step 0).
    {
        const int t = 0;
        PHASE(7);
    }
    const int mg = warp % MG, kg = warp / MG;
    // FOLD: this warp's K steps of x: j-th at xk0 + j * XKSTRIDE (none before warp XW0).
    constexpr int XKSTRIDE = NWARPS - XW0;
    const int xk0 = warp >= XW0 ? warp - XW0 : XKS;
    // The first stage: this group's region (its h, [NPAD][HSP], then its partial sums), and
    // every group's (group q's at q * GROUP_BYTES). With several chunks a second stage follows,
    // STAGE_STRIDE on.
    unsigned char* const group_first = smem + P::HEAD + PART_BYTES + kg * GROUP_BYTES;
    unsigned char* const stage_first = smem + P::HEAD + PART_BYTES;
    constexpr int STAGE_STRIDE = KG * GROUP_BYTES;
#if CL > 1
    float* part = (float*)(smem + P::HEAD);
#endif
    // The multicast's stage and its chunks' mbarriers (MCAST), behind the groups' regions (with
    // MRING the ring's slots, in the tile's place), and the parity of the mbarriers' phase that
    // the next exchange completes (with MRING, bit q for slot q).
    u16* const whole = MRING ? (u16*)smem : (u16*)(stage_first + (NCH > 1 ? 2 : 1) * STAGE_STRIDE);
    unsigned long long* const whole_bar = (unsigned long long*)(whole + P::RSLOTS * NPAD * P::WPITCH);
    u32 whole_parity = 0;
    // The pushed stages' mbarriers (PUSH).
    unsigned long long* const push_bar = (unsigned long long*)(whole + 2 * P::PUSH_SLOT);
    // FOLD: the W_ih tile and x's two stages, behind them.
    u16* const xw = (u16*)(stage_first + (NCH > 1 ? 2 : 1) * STAGE_STRIDE + (MRING ? 0 : P::WHOLE_BYTES));
    u16* const xstage = xw + P::XTILE;
    // A K group's stage pitch: its own stage's, or the multicast's (or pushed) whole rows.
    constexpr int SP = (MCAST > 1 || PUSH) ? P::WPITCH : HSP;
    const u32 rank = cluster_rank();
    const int u0 = bl * UB, cu0 = (bl / CL) * CU;
    const int kb0 = rank * KSB * 16;  // the block's first column of its input rows
    // The layer's columns of the exchange rows: where its input rows start, where it writes
    // h_t, and (when a layer above reads it from there) its output through dropout.
    const int x_in = UPPER ? (2 * layer - 1) * KPAD : 0, x_h = 2 * layer * KPAD;
    const bool feeds = x_h + KPAD < XP;

    // Row r of the tile is gate r / CU of unit cu0 + r % CU, columns kb0.. of W_hh (of an upper
    // layer: W_ih's in the first KPAD, then W_hh's); rows of units past H, rows past ROWS and
    // columns past HID are zero. With APART, the split gate's rows hold zeros beside its W_ih,
    // and group GATES holds its W_hh rows beside zeros.
    // By `fill_tile`, in pairs of elements (rows start 4-byte aligned: HID and kb0 are even),
    // or 8 (16 bytes) where the matrices and their rows start 16-byte aligned.
    const bool wide = HID * EW % 8 == 0 && aligned16(a.w_hh) && (!UPPER || aligned16(a.w_ih));
    fill_tile<ASYNC_FILL, MROWS, PITCH>(w, wide, [&](int r, int c) {
        const int k = kb0 + c;
        int gr = min(r / CU, P::RG - 1), u = cu0 + r % CU;
        int g = (APART && gr == GATES) ? SPLIT_GATE : gr;  // the gate of the row's weights
        const bool ih = UPPER && k < KPAD;
        const bool none = APART && (ih ? gr == GATES : gr == SPLIT_GATE);
        const int kk = (UPPER && !ih) ? k - KPAD : k;
        // The matrix in 16-bit words (rows of HID * EW; kk counts them too).
        const u16* m = (const u16*)(ih ? a.w_ih : a.w_hh);
        size_t at = (size_t)(g * HID + min(u, HID - 1)) * (HID * EW) + min(kk, HID * EW - 2);
        return Piece{m + at, r < ROWS && u < HID && kk < HID * EW && !none};
    });
    // FOLD: row r of the W_ih tile likewise, its XIN columns (zeros past them; XIN is a multiple
    // of 8).
    if (FOLD) {
        static_assert(!FOLD || (MG == 1 && !UPPER), "the folded input takes one warp per K group");
        fill_tile<ASYNC_FILL, MROWS, XPITCH>(xw, aligned16(a.w_ih), [&](int r, int k) {
            int g = min(r / CU, GATES - 1), u = cu0 + r % CU;
            size_t at = (size_t)(g * HID + min(u, HID - 1)) * XIN + min(k, XIN - 2);
            return Piece{(const u16*)a.w_ih + at, r < ROWS && u < HID && k < XIN};
        });
    }
    SIDE_PROLOGUE();
#if WT_WRITE
    if (w_t) write_transposed_share((const u16*)a.w_hh, (u16*)w_t, 0, 1);
#endif

    // The warp's tiles of the weights, in registers for the whole sequence (IN_REGS).
    u32 wa[P::IN_REGS ? KPG : 1][P::IN_REGS ? MPW : 1][4];
    if constexpr (P::IN_REGS) {
        if (ASYNC_FILL) cp_async_wait_all();
        __syncthreads();
#pragma unroll
        for (int j = 0; j < KPG; ++j)
#pragma unroll
            for (int i = 0; i < MPW; ++i) {
                int mt = mg * MPW + i;
                int row = min(mt, MT - 1) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                ldsm_x4(wa[j][i], w + row * PITCH + (kg * KW + j * 16) + (lane >> 4) * 8);
            }
        // With MRING the ring takes the tile's bytes from here: every warp has its tiles.
        if (MRING) __syncthreads();
    }
    static_assert(!MRING || P::IN_REGS, "the multicast ring takes the tile's bytes: the weights in registers");
    // The carried state (the cell's: an LSTM's c, a GRU's h in f32), from `c0` (for a cell
    // without c, the host passes h_0 there); the bias of each gate, and a split gate's
    // recurrent bias apart (SPLIT_GATE).
    // An item's unit is the same in every chunk: so are its biases.
    float c[NCH][ITEMS], bias[ITEMS][GATES], bias_split[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = u0 + idx % UB;
        bool unit = idx < UB * NB && u < HID;
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch) {
            int n = ch * NB + idx / UB;
            bool live = unit && IN_BATCH(n);
            c[ch][it] = (live && a.c0) ? io_f(a.c0[n * HID + u]) : 0.f;
            if (!F16_SCALED && live && a.yp && a.h0) a.yp[n * LDP + u] = a.h0[n * HID + u];
            // An upper layer reads h_0 from the exchange slot of the wave step before its first
            // (the buffer is zeroed before the launch, and no other layer writes these columns).
            if (UPPER && live && a.h0) *(elem*)&hx[XSLOT(layer - 1) + n * XP + x_h + u * EW] = a.h0[n * HID + u];
        }
#pragma unroll
        for (int g = 0; g < GATES; ++g) {
            float b = 0.f;
            if (unit && a.b_ih) b += io_f(a.b_ih[g * HID + u]);
            if (unit && a.b_hh && g != SPLIT_GATE) b += io_f(a.b_hh[g * HID + u]);
            bias[it][g] = b;
        }
        bias_split[it] = (SPLIT_GATE >= 0 && unit && a.b_hh) ? io_f(a.b_hh[SPLIT_GATE * HID + u]) : 0.f;
    }
#if F16_SCALED
    // Each item's scales: 1 / s_w of its unit's gate rows; s_h of its sample in each chunk, and
    // its inverse.
    float w_inv[ITEMS][GATES], h_s[NCH][ITEMS], h_inv[NCH][ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = min(u0 + idx % UB, HID - 1);
#pragma unroll
        for (int g = 0; g < GATES; ++g) w_inv[it][g] = 1.f / w_scale[g * HID + u];
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch) {
            int n = min(ch * NB + idx / UB, BATCH - 1);
            h_s[ch][it] = h_scale ? h_scale[n] : F16_H_SCALE_NONE;
            h_inv[ch][it] = 1.f / h_s[ch][it];
        }
    }
#endif
    // The multicast's stage rows past the batch (a chunk's rows nb..NPAD), which the products
    // read (their columns of the sums are dropped) and no copy writes, are zeros: written once,
    // before any block of the cluster may multicast into this one, so that no step reads
    // shared memory nothing wrote.
    if (MRING)
        for (int q = tid; q < P::RSLOTS * NPAD * P::WPITCH / 2; q += THREADS) ((u32*)whole)[q] = 0u;
    else if (MCAST > 1)
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch) {
            const int nb = min(NB, BATCH - ch * NB);
            u32* const rows = (u32*)(whole + (ch * NPAD + nb) * P::WPITCH);
            for (int q = tid; q < (NPAD - nb) * P::WPITCH / 2; q += THREADS) rows[q] = 0u;
        }
    // The chunks' mbarriers, by one thread behind a branch: initialised by threads 0..NCH, every
    // warp ran the initialisation's address loop, and racecheck reported the skipped init of
    // the warps without one as a write at a stale address in the weight tile
    // (results/2026-11-27-h100-mcast-racecheck/).
    if (MCAST > 1 && tid == 0)
        for (int q = 0; q < P::RSLOTS; ++q) mbar_init(whole_bar + q);
    // The pushed stages start as zeros: their rows past the batch and columns past HID, which
    // the products read, are never written.
    if (PUSH)
        for (int q = tid; q < P::PUSH_SLOT; q += THREADS) ((u32*)whole)[q] = 0u;
    // So do x's stages (FOLD; their rows past the batch and columns past XIN).
    if (FOLD)
        for (int q = tid; q < XST * P::XSTAGE / 2; q += THREADS) ((u32*)xstage)[q] = 0u;
    // Their mbarriers, each armed for its first stage (h_0's and h_1's bytes).
    if (PUSH && tid == 0)
        for (int q = 0; q < 2; ++q) {
            mbar_init(push_bar + q);
            mbar_expect(push_bar + q, P::PUSH_BYTES);
        }
    // With h_0 zeros (null), the lowest layer's first step has no recurrent product: its blocks
    // skip that step's products and wait for their weight tiles' copies only at the step's end,
    // before the barrier (whose wait publishes them to every thread), so that the copies land
    // while the step's gate math and exchange run. (Pushed and folded kernels, and tiles in
    // registers, wait here: their first products come before any barrier.)
    const bool first_unmultiplied = !UPPER && !PUSH && !FOLD && !P::IN_REGS && ASYNC_FILL && !a.h0;
    // The tiles' copies have landed (every thread's, past the barrier).
    if (ASYNC_FILL && !first_unmultiplied) cp_async_wait_all();
    MARK(1);
    __syncthreads();
#if CL > 1
    // Every block of the cluster has started before any block stores into another's shared
    // memory (CUDA's rule for distributed shared memory; the grid barriers order the steps, but
    // racecheck cannot see that).
    cluster_sync();
#endif
    // The same for the multicast, whose mbarriers are then initialised, and for the pushed
    // exchange, whose stages are then zeros.
    if (MCAST > 1 || PUSH) cluster_barrier();
    MARK(2);

    // A step's input projection (the lowest layer's; an upper layer's are zeros). In one layer
    // with one chunk of the batch (PREFETCH_X) it is loaded a step ahead, while the block waits
    // at the barrier before the step, where the step's products left part of its latency
    // showing (graphed training at [30, 32, 512-1024] 2% faster; PTB medium's wavefront 0.9%
    // slower so, results/2026-11-26-h200-h100-smem-exchange/); else at the start of the step,
    // behind the products (with several chunks, registers run short).
#ifdef WAVE_LAYERS
    constexpr bool PREFETCH_X = false;
#else
    constexpr bool PREFETCH_X = NCH == 1 && !FOLD;
#endif
    float xv[NCH][ITEMS][GATES];
    auto load_x = [&](int t) {
#pragma unroll
        for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
                bool live = !UPPER && idx < UB * NB && IN_BATCH(n) && u < HID;
#pragma unroll
                for (int g = 0; g < GATES; ++g)
                    xv[ch][it][g] = live ? xg_f(a.xg[((size_t)t * BROWS + n) * GATES * HID + g * HID + u]) : 0.f;
            }
    };
    if (PREFETCH_X) load_x(0);
    // FOLD: x_t's rows into x's stage t % XST, each warp its K steps' columns of every sample,
    // 16 bytes a copy; one group of copies a step, also when there is none to make, so that
    // waiting for all but the last XST - 1 groups waits for step t's.
    auto copy_x = [&](int t) {
        if (t < seq) {
            u16* const xs = xstage + (t % XST) * P::XSTAGE;
            const u16* const src = (const u16*)xin + (size_t)t * BROWS * XIN;
            constexpr int PIECES = XPW > 0 ? XPW * 2 : 2;
            for (int q = lane; q < BATCH * PIECES; q += 32) {
                int n = q / PIECES, col = (xk0 + (q % PIECES) / 2 * XKSTRIDE) * 16 + q % 2 * 8;
                if (col < XIN) cp_async16(xs + n * XPITCH + col, src + (size_t)n * XIN + col);
            }
        }
        cp_async_commit();
    };
    // FOLD: this warp's rows of W_ih times its K steps of x_t, into `xacc` (zeros for a warp
    // without any, which makes no copies either), once x_t's copies have landed: this warp
    // made them.
    const bool x_warp = xk0 < XKS;
    float xacc[MPW][NT][4];
    zero_acc(xacc);
    auto x_products = [&](int t) {
        cp_async_wait_pending(XST - 1);
        __syncwarp();
        const u16* const xs = xstage + (t % XST) * P::XSTAGE;
        zero_acc(xacc);
#pragma unroll
        for (int j = 0; j < XPW; ++j) {
            const int ks = xk0 + j * XKSTRIDE;
            if (ks < XKS) {
                u32 b[NT][2];
                load_b(b, xs, XPITCH, ks * 16, lane);
                tile_products<MPW, MT>(xacc, b, xw, XPITCH, ks * 16, mg, lane);
            }
        }
    };
    if (FOLD && x_warp) {
        for (int t = 0; t < XST; ++t) copy_x(t);
        x_products(0);
    }

    for (int s = 0; s < waves; ++s) {
        // The layer's step (every thread of the block agrees whether it has one).
        const int t = s - layer;
        const bool active = t >= 0 && t < seq;
        float gate[NCH][ITEMS][GATES], saved[NCH][ITEMS][CELL_SAVED];
        elem hb[NCH][ITEMS], hd[NCH][ITEMS];
        float hf[NCH][ITEMS];  // (F16_SCALED: h_t unscaled)
        if (active) {
            PHASE(0);
            if (!PREFETCH_X && !FOLD) load_x(t);

            // The group's rows times the input rows: K group kg takes KPG of the block's K
            // steps, from column kw0 of the block's (kb0 + kw0 of the row); its MG warps copy
            // them together, in NPARTS parts of PKS K steps, and multiply each part as soon as
            // it has landed (the copies wait on L2, which every block reads at once; the
            // products of the parts that have landed overlap the copies of the rest).
            const int kw0 = kg * KW, gl = mg * 32 + lane;
            // The input rows in the exchange buffer, from the block's first column (the lowest
            // layer's h_0 comes from `h0` instead).
            const bool exchanged = UPPER || t > 0;
            // MRING: chunk c of h_{t-1} into ring slot c & 1 of every block of the cluster, rows
            // rank, rank + MCAST, .. of it from this block, onto the slot's mbarrier (armed here
            // for this block's own slot: its previous phase, the chunk two before, has
            // completed, and a peer's bytes that come first only run its count ahead).
            auto ring_issue = [&](int c) {
                const int nb = min(NB, BATCH - c * NB);
                if (tid == 0) mbar_expect(whole_bar + (c & 1), nb * KPAD * 2);
                for (int n = ctarank() + MCAST * tid; n < nb; n += MCAST * THREADS)
                    bulk_multicast(whole + ((c & 1) * NPAD + n) * P::WPITCH,
                                   hx + XSLOT(s - 1) + (size_t)(c * NB + n) * XP, KPAD * 2, whole_bar + (c & 1),
                                   (unsigned short)((1u << MCAST) - 1));
            };
            // Chunk ch's h into `hs` (its group's stage), in NPARTS groups of copies.
            auto copy_chunk = [&](int ch, u16* hs) {
                const int n0 = ch * NB, nb = min(NB, BATCH - n0);
                const u16* src = hx + XSLOT(s > 0 ? s - 1 : 0) + (size_t)n0 * XP + x_in + kb0;
#pragma unroll
                for (int p = 0; p < NPARTS; ++p) {
                    // The part's 16-byte pieces per row, and its first column.
                    const int pieces = min(PKS, KPG - p * PKS) * 2, col = p * PKS * 16;
                    for (int q = gl; q < nb * pieces; q += MG * 32) {
                        int n = q / pieces, j = col + (q % pieces) * 8;
                        if (kb0 + kw0 + j < P::KIN) cp_async16(hs + n * HSP + j, src + n * XP + kw0 + j);
                    }
                    cp_async_commit();
                }
            };
#pragma unroll
            for (int ch = 0; ch < NCH; ++ch) {
                // The chunk's samples n0.. (nb of them) in rows 0.. of the stage.
                const int n0 = ch * NB, nb = min(NB, BATCH - n0);
                // The chunk's stage (with several chunks, the two in turn).
                const int here = ch % 2 * STAGE_STRIDE, there = (ch + 1) % 2 * STAGE_STRIDE;
                unsigned char* const group_region = group_first + here;
                // The pushed stage of h_{t-1}: the one wave step s - 1 wrote (at step 0, h_0's).
                u16* const pushed = whole + ((s + 1) & 1) * P::PUSH_SLOT;
                u16* const hs = MCAST > 1 ? whole + (MRING ? ch & 1 : ch) * NPAD * P::WPITCH + kw0
                                : PUSH    ? pushed + ch * NPAD * P::WPITCH + kw0
                                          : (u16*)group_region;
                float* const red = (float*)(stage_first + here);
                // The next chunk's copies go out now, into the other stage (which the chunk
                // before this one left at its end), so that they land while this one is
                // multiplied.
                const bool ahead = exchanged && ch + 1 < NCH;
                if (exchanged && MRING) {
                    // Chunks 0 and 1 at the first (chunk ch + 2 goes out below), then this
                    // chunk's slot has landed.
                    if (ch == 0) {
                        ring_issue(0);
                        ring_issue(1);
                    }
                    mbar_wait(whole_bar + (ch & 1), (whole_parity >> (ch & 1)) & 1);
                    whole_parity ^= 1u << (ch & 1);
                } else if (exchanged && MCAST > 1) {
                    // At the first chunk, rows rank, rank + MCAST, .. of h_{t-1} from this block
                    // into every block of the cluster, each onto its chunk's mbarrier; then the
                    // chunk's rows here.
                    if (ch == 0) {
                        if (tid < NCH) mbar_expect(whole_bar + tid, min(NB, BATCH - tid * NB) * KPAD * 2);
                        for (int n = ctarank() + MCAST * tid; n < BATCH; n += MCAST * THREADS)
                            bulk_multicast(whole + ((n / NB) * NPAD + n % NB) * P::WPITCH,
                                           hx + XSLOT(s - 1) + (size_t)n * XP, KPAD * 2, whole_bar + n / NB,
                                           (unsigned short)((1u << MCAST) - 1));
                    }
                    mbar_wait(whole_bar + ch, whole_parity);
                    if (ch + 1 == NCH) whole_parity ^= 1;
                } else if (exchanged && PUSH) {
                    // Every block's h_{t-1} has landed in the stage; its mbarrier is armed again
                    // for h_{t+1}, which no block pushes before this block has pushed its h_t
                    // below.
                    mbar_wait<true>(push_bar + ((t + 1) & 1), ((t - 1) >> 1) & 1);
                    if (tid == 0 && t + 2 < seq) mbar_expect(push_bar + ((t + 1) & 1), P::PUSH_BYTES);
                } else if (exchanged) {
                    if (ch == 0) copy_chunk(0, hs);
                    if (ahead) copy_chunk(ch + 1, (u16*)(group_first + there));
                } else if (!exchanged && !first_unmultiplied) {
                    // h_0 (rows of HID * EW 16-bit words, 4-byte aligned) or zeros; columns past
                    // HID are zero.
                    for (int q = gl; q < nb * (KW / 2); q += MG * 32) {
                        int n = q / (KW / 2), j = (q % (KW / 2)) * 2, k = kb0 + kw0 + j;
                        const u16* h0 = (const u16*)a.h0;
                        u32 v = (a.h0 && k < HID * EW) ? mma_word(*(const u32*)(h0 + (n0 + n) * (HID * EW) + k)) : 0u;
                        if ((MCAST == 1 && !PUSH) || kw0 + j < KPAD) *(u32*)(hs + n * SP + j) = v;
                    }
                }
                float acc[MPW][NT][4];
                zero_acc(acc);
#pragma unroll
                for (int p = 0; p < NPARTS; ++p) {
                    // Part p has landed (for every warp of the group) once at most NPARTS - 1 - p
                    // of this thread's groups of copies are pending, besides the next chunk's.
                    // (Pushed, h's stage is not copied: the only copies in flight are x's.)
                    if (exchanged && !PUSH) cp_async_wait_upto(NPARTS - 1 - p + (ahead ? NPARTS : 0));
                    group_sync<MG>(kg);
                    if (p == 0) PHASE(1);
#pragma unroll
                    for (int j = p * PKS; j < min(KPG, (p + 1) * PKS); ++j) {
                        int ks = rank * KSB + kg * KPG + j;  // K step of the input rows
                        if (kg * KPG + j < KSB && ks < KS && (exchanged || !first_unmultiplied)) {
                            u32 b[NT][2];
                            load_b(b, hs, SP, j * 16, lane);
                            if constexpr (P::IN_REGS) {
#pragma unroll
                                for (int i = 0; i < MPW; ++i)
                                    if (mg * MPW + i < MT)
#pragma unroll
                                        for (int nt = 0; nt < NT; ++nt) mma(acc[i][nt], wa[j][i], b[nt]);
                            } else {
                                tile_products<MPW, MT>(acc, b, w, PITCH, kw0 + j * 16, mg, lane);
                            }
                        }
                    }
                }
                PHASE(2);
                // The stage is read (by every warp of the group); the group's partial sums take its
                // place, each warp writing its rows.
                group_sync<MG>(kg);
                float* rw = (float*)group_region;
#pragma unroll
                for (int i = 0; i < MPW; ++i) {
                    int mt = mg * MPW + i;
                    if (mt < MT)
#pragma unroll
                        for (int nt = 0; nt < NT; ++nt) {
                            int r = mt * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
                            // FOLD: the input product with the recurrent one, but a split gate's
                            // apart, at XSPLIT.
                            auto put = [&](int n, int r, float h, float x) {
                                if (!FOLD) {
                                    rw[n * RPITCH + r] = h;
                                } else if (SPLIT_GATE >= 0 && r / CU == SPLIT_GATE) {
                                    rw[n * RPITCH + r] = h;
                                    if (x_warp) rw[n * RPITCH + P::XSPLIT + r % CU] = x;
                                } else {
                                    rw[n * RPITCH + r] = h + x;
                                }
                            };
                            put(n, r, acc[i][nt][0], xacc[i][nt][0]);
                            put(n + 1, r, acc[i][nt][1], xacc[i][nt][1]);
                            put(n, r + 8, acc[i][nt][2], xacc[i][nt][2]);
                            put(n + 1, r + 8, acc[i][nt][3], xacc[i][nt][3]);
                        }
                }
                __syncthreads();
                PHASE(3);
                // MRING: this block has read the chunk's slot; once every block of the cluster
                // has, chunk ch + 2 goes into it, before this chunk's gate math rather than after
                // it, so that its copy overlaps the gate math (a step 1.2-1.7% shorter in the lab,
                // results/2026-11-29-h200-batch128-exchange/ §7).
                const bool refill = MRING && exchanged && ch + 2 < NCH;
                if (refill) {
                    cluster_barrier();
                    ring_issue(ch + 2);
                }
#if CL > 1
                // The block's partial products of the cluster's rows, stored into the shared memory
                // of the block that owns each row's unit, in this block's slot (remote stores need
                // no round trip, unlike remote loads).
                for (int i = tid; i < nb * ROWS; i += THREADS) {
                    int n = i / ROWS, r = i % ROWS;
                    float sum = 0.f;
                    for (int q = 0; q < KG; ++q) sum += red[q * (GROUP_BYTES / 4) + n * RPITCH + r];
                    int g = r / CU, cu = r % CU;
                    st_cluster(part + (rank * NB + n) * GATES * UB + g * UB + cu % UB, cu / UB, sum);
                }
                cluster_sync();
#endif

                // Gate math for the block's (unit, sample) pairs; the cell state stays in registers.
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    // Sample n of the batch, row nl of the chunk's partial sums.
                    int idx = tid + it * THREADS, ul = idx % UB, u = u0 + ul, nl = idx / UB, n = n0 + nl;
#if PUSH
                    u32 pushed_bits = 0;  // this (unit, sample)'s h_t (its EW words), for the push below
#endif
                    if (idx < UB * NB && IN_BATCH(n) && u < HID) {
                        // Each gate's bias, input and recurrent products, summed in this order (a
                        // split gate's recurrent product apart, from its own bias).
                        float pre[GATES], rec = 0.f;
#pragma unroll
                        for (int g = 0; g < GATES; ++g) {
                            float sum = FOLD ? bias[it][g] : bias[it][g] + xv[ch][it][g];
                            if (g == SPLIT_GATE) rec = bias_split[it];
                            float& acc = (g == SPLIT_GATE) ? rec : sum;
#if CL > 1 && F16_SCALED
                            float r = 0.f;
                            for (int q = 0; q < CL; ++q) r += part[(q * NB + nl) * GATES * UB + g * UB + ul];
                            acc += r * w_inv[it][g] * h_inv[ch][it];
#elif CL > 1
                            for (int q = 0; q < CL; ++q)
                                acc += part[(q * NB + nl) * GATES * UB + g * UB + ul];
#else
                            // APART: the split gate's rows give its input product, group
                            // GATES its recurrent one.
                            if (APART && g == SPLIT_GATE) {
                                for (int q = 0; q < KG; ++q)
                                    sum += red[q * (GROUP_BYTES / 4) + nl * RPITCH + g * UB + ul];
                                for (int q = 0; q < KG; ++q)
                                    rec += red[q * (GROUP_BYTES / 4) + nl * RPITCH + GATES * UB + ul];
                            } else if (FOLD && g == SPLIT_GATE) {
                                // FOLD: the split gate's input products (the x warps' groups:
                                // one warp a group), then its recurrent ones.
                                for (int q = XW0; q < XW0 + P::XWARPS; ++q)
                                    sum += red[q * (GROUP_BYTES / 4) + nl * RPITCH + P::XSPLIT + ul];
                                for (int q = 0; q < KG; ++q)
                                    rec += red[q * (GROUP_BYTES / 4) + nl * RPITCH + g * UB + ul];
                            } else {
#if F16_SCALED
                                // (The recurrent sums scaled back: s_w of the row, s_h of the
                                // sample.)
                                float r = 0.f;
                                for (int q = 0; q < KG; ++q)
                                    r += red[q * (GROUP_BYTES / 4) + nl * RPITCH + g * UB + ul];
                                acc += r * w_inv[it][g] * h_inv[ch][it];
#else
                                for (int q = 0; q < KG; ++q)
                                    acc += red[q * (GROUP_BYTES / 4) + nl * RPITCH + g * UB + ul];
#endif
                            }
#endif
                            pre[g] = sum;
                        }
                        PHASE(8);
#if F16_SCALED
                        hf[ch][it] = cell_forward(pre, rec, gate[ch][it], c[ch][it], saved[ch][it]);
                        hb[ch][it] = from_f(hf[ch][it] * h_s[ch][it]);
#else
                        hb[ch][it] = from_f(cell_forward(pre, rec, gate[ch][it], c[ch][it], saved[ch][it]));
#endif
                        PHASE(9);
                        u16* row = hx + XSLOT(s) + n * XP;
#if PUSH
                        const elem e = mma_elem(hb[ch][it]);
#if EW == 1
                        pushed_bits = *(const u16*)&e;
#else
                        pushed_bits = __float_as_uint(e);
#endif
#else
                        *(elem*)&row[x_h + u * EW] = mma_elem(hb[ch][it]);
#endif
                        // The layer above reads this step's output, through dropout, next wave step.
                        if (feeds) {
                            size_t i = ((size_t)t * BROWS + first_sample() + n) * HID + u;
                            hd[ch][it] = a.dropped ? dropout_apply(drop, i, hb[ch][it]) : hb[ch][it];
                            *(elem*)&row[x_h + KPAD + u * EW] = mma_elem(hd[ch][it]);
                        }
                        if (t == seq - 1) {
#if F16_SCALED
                            a.h_n[n * HID + u] = hf[ch][it];
#else
                            a.h_n[n * HID + u] = hb[ch][it];
#endif
#if CELL_HAS_C
                            a.c_n[n * HID + u] = to_io(c[ch][it]);
#endif
                        }
                    }
#if PUSH
                    // Into every block's stage of this step's parity, where the next step reads
                    // it (none after the last step), VEC units a store (units past HID zeros, as
                    // the stage's columns there).
                    constexpr int VEC = P::VEC;
                    push_units<VEC, EW>(whole + (t & 1) * P::PUSH_SLOT + (ch * NPAD + nl) * P::WPITCH + u * EW,
                                        push_bar + (t & 1), gridDim.x, pushed_bits,
                                        idx < UB * NB && ul % VEC == 0 && u < HID && t + 1 < seq);
                    PHASE(10);
#endif
                }
                // The next chunk's stage takes the bytes of these partial sums: every thread has
                // read them first (with clusters, every block of the cluster has read the parts
                // that the next chunk's stores overwrite).
                if (ch + 1 < NCH) chunk_sync();
            }
            PHASE(4);
        }
        // The barrier's release waits only for the stores above (h_t, which other blocks read):
        // the block's arrival comes first, then its outputs (read after the launch), then the
        // wait (faster for PTB large, results/2026-11-23-h100-chunk-jit/lab/). A block writes into its cluster's
        // `part`s again only after the next barrier, which every block reaches after reading
        // its own.
        // (The weight tiles' copies, where the first step had no products: see above.)
        if (first_unmultiplied && s == 0) cp_async_wait_all();
        if (!PUSH && s + 1 < waves) grid_arrive(counter);
        // FOLD: x_{t+XST}'s copies go out, and x_{t+1}'s products are made now: a warp without
        // gate math comes here as soon as the partial sums are read, while others still do
        // theirs (multiplied at the start of the step instead, they held up the products of
        // h_{t-1}: results/2026-11-29-h200-folded-input/).
        if (FOLD && active && x_warp) {
            copy_x(t + XST);
            if (t + 1 < seq) x_products(t + 1);
        }
        if (active) {
            PHASE(5);
#pragma unroll
            for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
                for (int it = 0; it < ITEMS; ++it) {
                    int idx = tid + it * THREADS, u = u0 + idx % UB, n = ch * NB + idx / UB;
                    if (idx < UB * NB && IN_BATCH(n) && u < HID)
                        store_outputs<UB, ITEMS>(it, ch * NB, t, hb[ch], hf[ch], feeds ? hd[ch] : nullptr,
                                                 gate[ch], saved[ch], a, u0, drop);
                }
        }
        // The next step's input projection (row t + 1, which no block writes during the
        // launch; this block overwrites row t only).
        if (PREFETCH_X && active && t + 1 < seq) load_x(t + 1);
        if (active) PHASE(6);
        SIDE_STEP(t);
        if (!PUSH && s + 1 < waves) grid_wait(counter, (u32)(s + 1) * gridDim.x);
        // Pushed, the next step's partial sums take the bytes that this step's gate math read.
        if (PUSH) __syncthreads();
    }
    MARK(3);
#if CL > 1
    // No block may leave while another of its cluster may still write into its `part`.
    cluster_sync();
#endif
    // Nor while a multicast it issued may still be in flight.
    if (MCAST > 1) cluster_barrier();
    MARK(5);
}

#if !defined(WAVE_LAYERS) && !REG_GATES
// One layer, UNITS units per block (REG_GATES: recurrence_reg_fwd.cu's kernel instead).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
persistent_fwd(const elem* __restrict__ w_hh,  // [GH, H] (F16_SCALED: scaled)
                    xg_t* xg,                        // [T, B, GH]
                    const io_t* __restrict__ b_ih,   // [GH] or null
                    const io_t* __restrict__ b_hh,   // [GH] or null
                    const elem* h0,                  // [B, H] or null (zeros; F16_SCALED: scaled)
                    const io_t* __restrict__ c0,     // [B, H] or null (zeros)
                    io_t* y,                         // [T, B, H]
                    io_t* h_n, io_t* c_n,            // [B, H]
                    u16* hx,                         // [2, B, KPAD] 16-bit words, zeroed
                                                     // (B: every group's samples; unread
                                                     // with PUSH, as is `counter`)
                    float* save,                     // [T, B, CELL_SAVED, H], or null
                    elem* yp,                        // [T + 1, B, LDP], zeroed, or null
                    io_t* dropped,                   // [T, B, H], or null (no dropout after)
                    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
                    unsigned long long drop_seed, unsigned long long drop_p_layer,
                    // [GH, XIN] (XIN), or null; F16_SCALED: W_hh's rows' scales, f32 [GH]
                    const elem* __restrict__ w_ih,
                    // [T, B, XIN] (XIN), or null; F16_SCALED: h's samples' scales, f32 [B], or null
                    const elem* __restrict__ x,
                    elem* w_t,                       // [HID, WT_PITCH] (WT_WRITE), or null
                    u32* counter, int seq) {
    // The block's group's samples (common.cuh's GROUPS).
    const size_t b0 = first_sample();
    const LayerArgs a = at_group({w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, drop_offset,
                                  drop_seed, drop_p_layer});
#ifdef SMEM_BYTES
    // What the host sized the launch's shared memory by (kernel.rs's `forward_smem`).
    static_assert(FwdTile<UNITS, KSTEPS>::SMEM <= SMEM_BYTES, "forward_smem is short of the tile");
#endif
#if F16_SCALED
    recurrence<UNITS, KSTEPS, false>(a, hx + b0 * XP, 0, blockIdx.x, group_counter(counter), seq, seq, nullptr,
                                     nullptr, (const float*)w_ih, from_elem((const float*)x, b0));
#else
    recurrence<UNITS, KSTEPS, false>(a, hx + b0 * XP, 0, blockIdx.x, group_counter(counter), seq, seq,
                                     from_elem(x, b0 * XIN), w_t);
#endif
    // Pushed, the blocks met at no barrier in memory (its words may hold anything: forward.rs).
    if (!PUSH) grid_leave(group_counter(counter));
    MARK(6);
}
#elif defined(WAVE_LAYERS)
// Every layer at once (see above): blocks of the lowest layer, then each upper layer's.
#define WAVE_MAX 4
#if CL != 1 || WAVE_LAYERS < 2 || WAVE_LAYERS > WAVE_MAX
#error "the wavefront takes 2..WAVE_MAX layers, without clusters"
#endif
struct WaveArgs {
    LayerArgs layer[WAVE_MAX];
    u16* hx;  // [2, B, XP], zeroed
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wave_fwd(const WaveArgs args, u32* counter, int seq) {
    constexpr int LOWER = (HID + UNITS0 - 1) / UNITS0, UPPER = (HID + UNITS1 - 1) / UNITS1;
#ifdef SMEM_BYTES
    // What the host sized the launch's shared memory by (wave.rs's `smem_bytes`).
    static_assert(FwdTile<UNITS0, KSTEPS>::SMEM <= SMEM_BYTES &&
                      FwdTile<UNITS1, 2 * KSTEPS, UPPER_GROUPS>::SMEM <= SMEM_BYTES,
                  "the wavefront's shared memory is short of a tile");
#endif
    const int waves = seq + WAVE_LAYERS - 1;
    if (blockIdx.x < LOWER) {
        recurrence<UNITS0, KSTEPS, false>(args.layer[0], args.hx, 0, blockIdx.x, counter, seq, waves);
    } else {
        const int r = blockIdx.x - LOWER, layer = 1 + r / UPPER;
        const LayerArgs a = args.layer[layer];
        recurrence<UNITS1, 2 * KSTEPS, true>(a, args.hx, layer, r % UPPER, counter, seq, waves);
    }
    grid_leave(counter);
}
#endif
