// Whether a batch-128, hidden-1024 LSTM (or GRU) forward step can run in about half of cuDNN's
// `Standard` time on fewer, busier multiprocessors: 64 blocks of 16 units (64 gate rows each)
// instead of the library's 128 of 8, the products on the warpgroup tensor-core instruction
// (wgmma, sm_90a) instead of mma.sync, and h_{t-1} multicast over clusters of CS blocks (fewer
// blocks and wider multicast read less of L2 a step, which set the pace at batch 128:
// results/2026-11-29-h200-batch128-exchange/ §1, results/2026-11-29-h200-refill-batch256/ §2).
// Measured (results/2026-11-29-h200-wgmma-eager1024/ §1): the products are fast, but the
// exchange alone takes 7.6-11.8 µs on 64 blocks and multicast slows it, so the premise fails.
// With the batch in two groups (-DGROUPS=2, below) a step took 8.6 µs against one group's 10.3,
// still bound by the exchange's 16 MB of L2 reads a step (results/2026-11-30-h200-wgmma-groups/).
//
// A block holds its 64 rows of W_hh (K = 1024) in shared memory as wgmma's B operand; h_{t-1}
// streams through a ring of NSLOT chunk slots (KC columns of all 128 samples each) as its A
// operand. Warpgroup g (threads 128 g ..) multiplies samples 64 g .. 64 g + 63 by the block's rows,
// m64n64k16, whose accumulators hold every gate of 4 units for 2 samples in each thread, so the
// cell's gate math runs on them in registers (no reduction through shared memory). -DUNITS=8
// takes the library's 128 blocks of 8 units instead (m64n32k16, 2 units a thread): wgmma's
// products with the library's count of blocks. A ninth warp loads the chunks: after the grid
// barrier of the step, each block of a cluster issues a CS-th of every chunk as a bulk copy
// multicast into the cluster's slots; a slot is refilled once every warp of the cluster that
// multiplies it has (an mbarrier per slot that each such warp's lane 0 arrives at in every block
// of the cluster).
//
// h_t goes to global memory in the chunks' layout (wgmma's no-swizzle core matrices: 8 samples x
// 8 columns, 128 bytes each), a 4-byte store a (sample, pair of units), then the grid barrier.
// The input projection is a fixed bias per gate row (the probe times the recurrence only).
//
// Modes (argument 2): 0 products and gate math only (no loads, no barrier: the slots' stale
// bytes), 1 the whole step, 2 the exchange only (1 without the products and the gate math: the
// loads, the slots' release, h_t's stores and the barrier). With CHECK_STEPS (argument 4,
// default 3) steps, mode 1's outputs are compared with a CPU reference in f64 from the same bf16
// operands (h rounded to bf16 each step, as the kernel stores it). Argument 5 swaps the
// descriptors' two byte offsets (a check of which is which, should the comparison fail). Prints
// ns a step (the median of 5 launches) and the last launch's phases by the global timer (see
// `stamp`): where a step waits for its first chunk, multiplies, does its gate math.
//
// -DWREG=1 keeps the weights in registers instead, as wgmma's A operand (mma.sync's fragments,
// 128 registers a thread), h as its B (m64n128k16, all 128 samples), each warpgroup half of K
// (its own ring of NSLOT / 2 slots), the halves summed through shared memory before the gate
// math: half the shared-memory reads of the products, two passes over 32 KB of sums. Its
// consumers take 232 registers by setmaxnreg from a loading warpgroup of 40 (ptxas reports the
// launch's cap of 168, and spills of 32-164 bytes).
//
// -DCELL_GRU makes the step a GRU's (48 rows a block of 16 units; not with WREG).
//
// -DCHUNK_FLAGS=1 (with HYBRID): no barrier of the whole group before a step's copies. Each chunk
// of h (KC columns: the units of KC / UNITS blocks) has a count of its own, which those blocks
// arrive at once they have stored h_t; thread 0 copies each chunk as soon as its count is full,
// so that the first chunks' copies and products need not wait for the last block of the group.
// At batch 32 the 16-unit step was bound by the exchange's latency, not its bytes (4 MB in
// 2.2 µs, 8 MB in 2.5; 1.2 µs to the first chunk: results/2026-11-30-h200-wgmma-batch32/).
//
// -DCHUNK_GREEDY=1 (with CHUNK_FLAGS): each warpgroup's first thread issues every one of its
// chunks whose count is full whenever it looks, not one chunk ahead of its products: one copy
// in flight at a time paid each chunk's latency in turn, 1.28x the barrier's step
// (results/2026-12-01-h200-wgmma-chunk-flags/). (A ninth, loading warp would cap every thread at
// 168 registers, 256 x 288 rounded to warpgroups: spills, and serialized wgmma.)
//
// -DHYBRID=1 (with -DGROUPS=4 -DUNITS=32): the batch in four groups of 32 samples, each on 32
// blocks of 32 units (128 blocks in all), so that each block reads only 64 KB of h_{t-1} a step
// (8 MB of L2 a step in all, half of two groups'), where the exchange alone of 8 MB took about
// 3.7 µs (results/2026-11-29-h200-batch128-exchange/ §1, batch 32). With -DBATCH=32 -DGROUPS=1
// instead, the grid's [*, 32, 1024]: one group on 32 blocks, 2 MB a step, where the library's
// two groups on 128 blocks read 4. Four copies of W_hh (32 MB) do not fit in shared memory: each
// block keeps 128 KB of its 256 KB of rows in registers. The weights are wgmma's A (M: 64 gate
// rows), h its B (N: the group's 32 samples), m64n32k16. Each consumer warpgroup takes half of K
// (its own ring, as WREG): rows 0-63 from registers (128 a thread, mma.sync's A fragments), rows
// 64-127 from shared memory; the halves are summed through shared memory before the gate math (a
// thread: 2 units of 2 samples). The ring holds all of h_{t-1} (-DNSLOT=CHUNKS, required) and
// thread 0 issues its loads at the start of each step: no loading warp, so that 8 warps keep up
// to 255 registers a thread (a ninth caps them at 168). A GRU's 96 gate rows (with -DCELL_GRU)
// take rows 64-95 from shared memory, padded with zero rows to wgmma's 64 (HROWS: the rows
// multiplied). With -DFULL=1 the hybrid's step is also a layer's forward's: it adds each step's
// input projection (`xg`, [T, B, GATES * H] half elements, copied into shared memory while the
// products run: the registers are full) to the pre-activations and writes h_t to `y` ([T, B, H])
// besides the exchange, as the library's inference forward does (the reference adds the same xg).
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a [-DCELL_GRU] [-DUNITS=8]
//     [-DKC=128 -DNSLOT=3] [-DWREG=1 -DNSLOT=8] [-DGROUPS=2]
//     [-DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16] wgmma_probe.cu -o wgmma_probe
//   wgmma_probe [steps] [mode] [cluster size: 1, 2 or 4] [check steps] [swap]

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define HID 1024
#ifndef BATCH
#define BATCH 128                     // (HYBRID also takes 32 or 64: a group of 32 samples each)
#endif
#define ELEM_BF16 1
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
// (common.cuh's tile fills count a block's threads by NWARPS; this probe sets its own THREADS.)
#ifndef NWARPS
#define NWARPS 8
#endif
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"
// The instruction's wrappers (wgmma_desc, the fence, commit and wait, m64n32k16 products,
// named_sync), as the library's wgmma forward has them.
#include "../../candle-cudnn-rnn/src/persistent/wgmma.cuh"
// The cell (GATES, SPLIT_GATE, cell_forward): an LSTM's, or with -DCELL_GRU a GRU's (the
// probe's input projection is the fixed bias, b_hn 0: n = tanh(bias_n + r * (W_hn h))).
#ifdef CELL_GRU
#include "../../candle-cudnn-rnn/src/persistent/cell_gru.cuh"
#else
#include "../../candle-cudnn-rnn/src/persistent/cell_lstm.cuh"
#endif
#include "check.cuh"
#include "cluster_launch.cuh"
#include "host.cuh"
#ifndef UNITS
#define UNITS 16                      // units a block: 16 (64 blocks) or 8 (128, the library's)
#endif
#ifndef HYBRID
#define HYBRID 0
#endif
#ifndef FULL
#define FULL 0
#endif
#ifndef CHUNK_FLAGS
#define CHUNK_FLAGS 0
#endif
#if CHUNK_FLAGS && !HYBRID
#error "CHUNK_FLAGS takes HYBRID"
#endif
#ifndef CHUNK_GREEDY
#define CHUNK_GREEDY 0
#endif
#if CHUNK_GREEDY && !CHUNK_FLAGS
#error "CHUNK_GREEDY takes CHUNK_FLAGS"
#endif
#if FULL && !HYBRID
#error "FULL takes HYBRID"
#endif
#if UNITS != 16 && UNITS != 8 && !(HYBRID && UNITS == 32)
#error "UNITS 16 or 8 (32 with HYBRID)"
#endif
#define ROWS (GATES * UNITS)          // gate rows a block: wgmma's N
#define UH (UNITS / 8)                // the accumulators' unit halves (see row_unit)
#define BLOCKS (HID / UNITS)         // a batch group's blocks
// -DGROUPS=2: the batch in two independent groups of 64 samples, each on BLOCKS blocks of its
// own (128 blocks of 16 units in all), each block reading only its group's h_{t-1} (128 KB a step
// instead of 256), the weight tiles repeated in each group's blocks; each warpgroup then takes
// all 64 samples and half of the block's rows (NSPLIT 2).
#ifndef GROUPS
#define GROUPS 1
#endif
#define GB (BATCH / GROUPS)           // samples a group
#if GB == 128
#define NSPLIT 1                      // warpgroup g: samples 64 g .. 64 g + 63, every row
#elif GB == 64
#define NSPLIT 2                      // warpgroup g: every sample, rows WN g .. WN g + WN - 1
#elif GB == 32 && HYBRID
#define NSPLIT 1                      // (HYBRID: warpgroup g every row and sample, half of K)
#else
#error "GROUPS 1 or 2 (groups of 32 samples with HYBRID)"
#endif
#if GROUPS > 1 && !HYBRID && (WREG || UNITS != 16)
#error "GROUPS takes 16 units a block with the weights in shared memory"
#endif
#if HYBRID ? (GB != 32 || (UNITS != 32 && UNITS != 16)) : BATCH != 128
#error "HYBRID takes the batch in groups of 32 samples, 32 or 16 units a block; the others batch 128"
#endif
#define WN (ROWS / NSPLIT)            // a warpgroup's rows: wgmma's N
#define UHW (UH / NSPLIT)             // a warpgroup's unit halves
#define GRID_BLOCKS (GROUPS * BLOCKS)
#ifndef WREG
#define WREG 0
#endif
#if WREG && HYBRID
#error "WREG or HYBRID"
#endif
// Each consumer warpgroup multiplies half of K, through a ring of its own (WREG, HYBRID).
#define HALF_K (WREG || HYBRID)
#if WREG && (UNITS != 16 || GATES != 4)
#error "WREG takes an LSTM's 16 units a block (wgmma's M of 64 rows)"
#endif
#ifndef FENCE_ONCE
#define FENCE_ONCE 0                  // 1: one proxy fence a step instead of one a copy
#endif
#ifndef WHOLE_CHUNKS
#define WHOLE_CHUNKS 0                // 1: whole chunks, each from one block of the cluster
#endif
#ifndef KC
#define KC 64                         // columns of h a chunk
#endif
#define CHUNKS (HID / KC)             // chunks a step
// CHUNK_FLAGS: a count per chunk of h, which the blocks whose units fill it arrive at, instead of
// the group's one barrier count; each count on a line of its own (32 words apart).
#define COUNTS (CHUNK_FLAGS ? CHUNKS : 1)
#define CHUNK_WRITERS (KC / UNITS)
#if CHUNK_FLAGS && KC % UNITS
#error "CHUNK_FLAGS takes chunks of whole blocks' units"
#endif
#define KSTEPS_CHUNK (KC / 16)
#ifndef NSLOT
#define NSLOT 6
#endif
#if HYBRID && NSLOT != CHUNKS
#error "HYBRID's ring holds all of h_{t-1}: NSLOT = HID / KC"
#endif
#define CONSUMERS 256                 // two warpgroups
// And the loading warp; with WREG a warpgroup of its own, whose registers setmaxnreg gives to
// the consumers' weights (288 threads would cap every thread at 168).
#undef THREADS
#if HYBRID
#define THREADS CONSUMERS             // (thread 0 issues the loads: 8 warps keep 255 registers)
#elif WREG
#define THREADS (CONSUMERS + 128)
#else
#define THREADS (CONSUMERS + 32)
#endif
#define CHUNK_BYTES (GB * KC * 2)
#define REG_ROWS 64                   // WREG, HYBRID: the rows in registers (wgmma's M)
// The rows a block multiplies and keeps, a tile's (HYBRID: two of wgmma's 64, zeros past ROWS;
// with 16 units a block, one: every row in registers, none in shared memory).
#define HROWS (HYBRID ? (ROWS > REG_ROWS ? 2 * REG_ROWS : REG_ROWS) : ROWS)
// HYBRID's gate math: a thread takes a pair of units (UP pairs a block) of samples m_first +
// M_STEP p, p < PASSES.
#define UP (UNITS / 2)
#define M_STEP (CONSUMERS / UP)
#define PASSES (GB / M_STEP)
#if HALF_K
#define W_BYTES ((HROWS - REG_ROWS) * HID * 2)  // the rest in shared memory (HYBRID)
#define RP (GB + 4)                   // a row of the reduction's f32 sums (floats)
#define RED_BYTES (HROWS * RP * 4)
#define KSTEPS_HALF (HID / 32)        // k-steps of a warpgroup's half of K
#else
#define W_BYTES (ROWS * HID * 2)
#define RED_BYTES 0
#endif
// The A operand's (h's) core matrices: LBO along K, SBO along the samples.
#define H_LBO 128
#define H_SBO ((KC / 8) * 128)
// The B operand's (W's): LBO along K, SBO along the rows.
#define W_LBO 128
#define W_SBO ((HID / 8) * 128)

// Byte offset of (sample m, column k) in a chunk of h, and of (row n, column k) in W's tile.
__host__ __device__ inline u32 h_offset(int m, int k) {
    return (u32)((k / 8) * H_LBO + (m / 8) * H_SBO + (m % 8) * 16 + (k % 8) * 2);
}
__host__ __device__ inline u32 w_offset(int n, int k) {
    return (u32)((k / 8) * W_LBO + (n / 8) * W_SBO + (n % 8) * 16 + (k % 8) * 2);
}
// The gate and block-local unit of the block's row n: the accumulators' column 8 j + 2 q + e
// holds gate j % GATES of unit (j / GATES) * 8 + 2 q + e.
__host__ __device__ inline int row_gate(int n) { return (n / 8) % GATES; }
__host__ __device__ inline int row_unit(int n) { return (n / (8 * GATES)) * 8 + n % 8; }

// An mbarrier of `count` arrivals (common.cuh's mbar_init takes one).
__device__ __forceinline__ void mbar_init_count(u64* bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// An arrival, with release at the cluster's scope, at the mbarrier at `bar`'s offset in block
// `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_remote(u64* bar, u32 rank) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_address(bar, rank))
                 : "memory");
}
__device__ __forceinline__ u32 cluster_nctarank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
// d (+)= A (64 x 16, descriptor a) x B (16 x ROWS, descriptor b); scale_d 0 overwrites d.
__device__ __forceinline__ void wgmma_rows(float (&d)[WN / 2], u64 a, u64 b, int scale_d) {
#if WN == 24
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %14, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, "
        "%12, %13, p, 1, 1, 0, 0;\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
        : "l"(a), "l"(b), "r"(scale_d));
#elif WN == 32
    wgmma_ss_n32(d, a, b, scale_d);
#elif WN == 48
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %26, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, "
        "%24, %25, p, 1, 1, 0, 0;\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        : "l"(a), "l"(b), "r"(scale_d));
#else
    // m64n64 into the first 32 accumulators (wider WN too, as this probe always had it).
    wgmma_ss_n64(*reinterpret_cast<float(*)[32]>(&d), a, b, scale_d);
#endif
}

#if HALF_K
// Warpgroup g's half of K of rows 16 wq + r0 (+ 8) of the rows at `wr` (whole rows of HID),
// mma.sync's A fragments (lane r0 * 4 + q).
__device__ __forceinline__ void load_fragments(u32 (&wa)[KSTEPS_HALF][4], const u16* wr, int g, int wq, int r0,
                                               int q) {
#pragma unroll
    for (int j = 0; j < KSTEPS_HALF; ++j) {
        const int k = (HID / 2) * g + 16 * j + 2 * q;
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int row = 16 * wq + r0 + 8 * (x & 1), col = k + 8 * (x >> 1);
            wa[j][x] = *(const u32*)(wr + (size_t)row * HID + col);
        }
    }
}
// A warpgroup's accumulators of J column tiles (row 16 wq + r0 + 8 h, column 8 j + 2 q + x in
// d[4 j + 2 h + x]) written into the reduction's rows row0.., or with ADD added to what is there.
template <int J, bool ADD>
__device__ __forceinline__ void to_sums(float* red, const float (&d)[4 * J], int row0, int wq, int r0, int q) {
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float2* at = (float2*)(red + (row0 + 16 * wq + r0 + 8 * hh) * RP + 8 * j + 2 * q);
            const float2 o = ADD ? *at : make_float2(0.f, 0.f);
            *at = make_float2(o.x + d[4 * j + 2 * hh], o.y + d[4 * j + 2 * hh + 1]);
        }
}
#endif

// The cell's step for one unit of one sample from its gate rows' products and biases (a split
// gate's recurrent product goes to the cell apart, `rec`): h_t in bf16, the carried state updated.
__device__ __forceinline__ u16 cell_step(const float (&acc)[GATES], const float (&bias)[GATES], float& state) {
    float pre[GATES], gate[GATES], saved[CELL_SAVED], rec = 0.f;
#pragma unroll
    for (int gt = 0; gt < GATES; ++gt) {
        pre[gt] = bias[gt] + (gt == SPLIT_GATE ? 0.f : acc[gt]);
        if (gt == SPLIT_GATE) rec = acc[gt];
    }
    return from_f(cell_forward(pre, rec, gate, state, saved));
}

#if HALF_K
// Units 2 up and 2 up + 1 of the block's sample m from the reduction's sums (`products`: else
// zeros) and their biases: their cell steps, then h_t's 4-byte store into `out` (a step's chunks).
// With `xg` (FULL), each gate's input projection of the pair (two half elements) is added to its
// bias, and the pair also goes to `y_row` (the sample's row of y).
__device__ __forceinline__ void pair_from_sums(const float* red, const float (&bias)[GATES][2], float (&state)[2],
                                               int up, int m, int blk, unsigned char* out, bool products,
                                               const u32 (*xg)[GATES] = nullptr, u16* y_row = nullptr) {
    u16 hv[2];
#pragma unroll
    for (int x = 0; x < 2; ++x) {
        float acc[GATES], b[GATES];
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt) {
            acc[gt] = products ? red[(UNITS * gt + 2 * up + x) * RP + m] : 0.f;
            b[gt] = bias[gt][x] + (xg ? to_f((u16)((*xg)[gt] >> (16 * x))) : 0.f);
        }
        hv[x] = cell_step(acc, b, state[x]);
    }
    const int k = UNITS * blk + 2 * up;
    const u32 two = (u32)hv[0] | ((u32)hv[1] << 16);
    *(u32*)(out + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m, k % KC)) = two;
    if (y_row) *(u32*)(y_row + k) = two;
}
#endif

// Where chunk `i` of step t's issue order goes: its columns (K chunk `kc`), its slot, and which
// fill of that slot it is. Without WREG every warp multiplies every chunk, in K's order, through
// one ring of NSLOT slots; with WREG warpgroup g multiplies only its half of K, chunks in turn
// with the other's (i = 2 ii + g), through a ring of its own of NSLOT / 2 slots.
struct Fill {
    int kc, slot;
    u32 number;
};
// One acquire load of a count (CHUNK_GREEDY looks at several without waiting on any).
__device__ __forceinline__ u32 load_acquire(const u32* counter) {
    u32 v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
    return v;
}

__device__ __forceinline__ Fill fill_of(int t, int i) {
#if HALF_K
    constexpr int RING = NSLOT / 2, HALF = CHUNKS / 2;
    const int g = i % 2, ii = i / 2, seq = t * HALF + ii;
    return Fill{g * HALF + ii, g * RING + seq % RING, (u32)(seq / RING)};
#else
    const int seq = t * CHUNKS + i;
    return Fill{i, seq % NSLOT, (u32)(seq / NSLOT)};
#endif
}

// The global timer at each step's phases, for the first STAMP_STEPS steps of every block: 0 the
// step's start (thread 0, after its previous arrival), 1 its first chunk in (thread 0), 2 its
// products done (thread 0), 3 its gate math and stores done (thread 0), 4 the loader past the
// grid barrier.
#define STAMP_STEPS 64
#define STAMPS 5
__device__ unsigned long long stamps[GRID_BLOCKS * STAMP_STEPS * STAMPS];
__device__ __forceinline__ void stamp(int t, int i) {
    if (t < STAMP_STEPS) {
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        stamps[((size_t)blockIdx.x * STAMP_STEPS + t) * STAMPS + i] = g;
    }
}

struct Args {
    const unsigned char* w;   // [BLOCKS][W_BYTES]: each block's tile in its shared-memory layout
    const float* bias;        // [BLOCKS][ROWS]
    unsigned char* h;         // [GROUPS][2][CHUNKS][CHUNK_BYTES]: h_{t-1} of step t at parity t & 1
    u32* counter;             // each group's barrier counts at counter[32 COUNTS group] (0 at launch)
    int steps, swap;
    const u16* xg;            // FULL: [steps][BATCH][GATES * HID], the input projection
    u16* y;                   // FULL: [steps][BATCH][HID], the outputs
};

template <int MODE>
__global__ void __launch_bounds__(THREADS, 1) probe(Args a) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The weights in shared memory (without WREG: wgmma's B; HYBRID: the rows past REG_ROWS, its
    // A), then the two halves of K's sums (WREG, HYBRID).
    unsigned char* w_tile = smem;
    float* red = (float*)(smem + W_BYTES);
    (void)w_tile, (void)red;
    unsigned char* slots = smem + W_BYTES + RED_BYTES;
    u64* full = (u64*)(slots + NSLOT * CHUNK_BYTES);
    u64* empty = full + NSLOT;
    // FULL: each consumer thread's slots of the step's input projection ([pair p][gate][thread]).
    u32* xs = (u32*)(empty + NSLOT);
    (void)xs;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const u32 rank = ctarank(), cs = cluster_nctarank();
    const int blk = blockIdx.x % BLOCKS, group = blockIdx.x / BLOCKS;
    unsigned char* const h = a.h + (size_t)group * 2 * CHUNKS * CHUNK_BYTES;
    u32* const counter = a.counter + 32 * COUNTS * group;
    // The consumer warps of the cluster that multiply each slot's bytes.
    constexpr u32 readers = HALF_K ? 4 : 8;

#if !WREG
    // The weight tile, 16 bytes a thread at a time (HYBRID: behind the rows in registers).
    {
        const size_t tile = (size_t)HROWS * HID * 2, regs = HYBRID ? (size_t)REG_ROWS * HID * 2 : 0;
        const uint4* src = (const uint4*)(a.w + (size_t)blk * tile + regs);
        uint4* dst = (uint4*)w_tile;
        for (int i = tid; i < W_BYTES / 16; i += THREADS) dst[i] = src[i];
    }
#endif
    if (tid == 0) {
        for (int s = 0; s < NSLOT; ++s) {
            mbar_init_count(full + s, 1);
            mbar_init_count(empty + s, readers * cs);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    cluster_barrier();

    constexpr bool loads = MODE != 0, products = MODE != 2;
    if (warp >= 8) {
#if WREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
        // The loading warp: lane 0 issues this block's CS-th of every chunk into the cluster.
        if (warp == 8 && lane == 0 && loads) {
            const u32 piece = CHUNK_BYTES / cs;
            const unsigned short mask = (unsigned short)((1u << cs) - 1);
            for (int t = 0; t < a.steps; ++t)
                for (int i = 0; i < CHUNKS; ++i) {
                    if (i == 0 && t > 0) wait_acquire(counter, (u32)(BLOCKS * t));
                    if (i == 0) stamp(t, 4);
                    // The step's one proxy fence (after the barrier's acquire) orders h_t's
                    // stores before every copy of the step.
                    if (FENCE_ONCE && i == 0) asm volatile("fence.proxy.async.global;" ::: "memory");
                    const Fill f = fill_of(t, i);
                    if (f.number > 0) mbar_wait<true>(empty + f.slot, (f.number + 1) & 1);
                    mbar_expect(full + f.slot, CHUNK_BYTES);
#if WHOLE_CHUNKS
                    // Block `rank` issues every cs-th chunk whole, to the cluster.
                    if (i % (int)cs != (int)rank) continue;
                    const unsigned char* src = h + ((size_t)(t & 1) * CHUNKS + f.kc) * CHUNK_BYTES;
                    unsigned char* dst = slots + (size_t)f.slot * CHUNK_BYTES;
                    const u32 bytes = CHUNK_BYTES;
#else
                    const unsigned char* src = h + ((size_t)(t & 1) * CHUNKS + f.kc) * CHUNK_BYTES + rank * piece;
                    unsigned char* dst = slots + (size_t)f.slot * CHUNK_BYTES + rank * piece;
                    const u32 bytes = piece;
#endif
#if FENCE_ONCE
                    asm volatile(
                        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                        "[%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes),
                        "r"(smem_addr(full + f.slot)), "h"(mask)
                        : "memory");
#else
                    bulk_multicast(dst, src, bytes, full + f.slot, mask);
#endif
                }
        }
    } else {
#if WREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
        const int g = warp / 4;           // warpgroup
        const int wq = warp % 4;          // its warp
        const int q = lane % 4, r0 = lane / 4;
        const u32 hl = a.swap ? H_SBO : H_LBO, hs = a.swap ? H_LBO : H_SBO;
        // This warp is done with fill f's slot: an arrival at that slot's mbarrier in every block.
        auto release = [&](const Fill& f) {
            if (loads && lane == 0)
                for (u32 rk = 0; rk < cs; ++rk) mbar_arrive_remote(empty + f.slot, rk);
        };
#if WREG
        // Warpgroup g: rows 16 wq + r0 (+ 8) of its half of K, mma.sync's A fragments; the
        // accumulators' row 16 wq + r0 + 8 h, column (sample) 8 j + 2 q + e in d[4 j + 2 h + e].
        u32 wa[KSTEPS_HALF][4];
        load_fragments(wa, (const u16*)a.w + (size_t)blk * ROWS * HID, g, wq, r0, q);
        // Gate math: thread tid the unit pair tid % 8 of samples tid / 8 + 32 p.
        const int up = tid % 8;
        float bias[GATES][2], c_state[BATCH / 32][2] = {};
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt)
#pragma unroll
            for (int e = 0; e < 2; ++e) bias[gt][e] = a.bias[blk * ROWS + UNITS * gt + 2 * up + e];
        float d[64];
        for (int t = 0; t < a.steps; ++t) {
            if (tid == 0) stamp(t, 0);
#pragma unroll
            for (int ii = 0; ii < CHUNKS / 2; ++ii) {
                const Fill f = fill_of(t, 2 * ii + g);
                if (loads) mbar_wait(full + f.slot, f.number & 1);
                if (ii == 0 && tid == 0) stamp(t, 1);
                if (!products) {
                    release(f);
                    continue;
                }
                wgmma_fence();
                const u32 slot = smem_addr(slots + (size_t)f.slot * CHUNK_BYTES);
#pragma unroll
                for (int kk = 0; kk < KSTEPS_CHUNK; ++kk)
                    wgmma_rs_n128(d, wa[ii * KSTEPS_CHUNK + kk], wgmma_desc(slot + kk * 2 * H_LBO, hl, hs), (ii | kk) != 0);
                wgmma_commit();
                wgmma_wait<1>();
                if (ii > 0) release(fill_of(t, 2 * ii - 2 + g));
            }
            if (products) {
                wgmma_wait<0>();
                release(fill_of(t, CHUNKS - 2 + g));
            }
            if (tid == 0) stamp(t, 2);
            // The two halves of K summed through shared memory, then the gate math from there.
            if (products && g == 1) to_sums<16, false>(red, d, 0, wq, r0, q);
            named_sync(2, CONSUMERS);
            if (products && g == 0) to_sums<16, true>(red, d, 0, wq, r0, q);
            named_sync(2, CONSUMERS);
            unsigned char* out = h + (size_t)((t + 1) & 1) * CHUNKS * CHUNK_BYTES;
#pragma unroll
            for (int p = 0; p < BATCH / 32; ++p)
                pair_from_sums(red, bias, c_state[p], up, tid / 8 + 32 * p, blk, out, products);
            if (tid == 0) stamp(t, 3);
            // Every thread has read the sums before the next step's overwrite them.
            named_sync(1, CONSUMERS);
            if (loads && tid == 0)
                arrive_release(counter);
        }
#elif HYBRID
        // Warpgroup g: its half of K. Rows 16 wq + r0 (+ 8) of the register rows, mma.sync's A
        // fragments; the accumulators d (register rows) and e (rows REG_ROWS + ..): row
        // 16 wq + r0 + 8 h, column (sample) 8 j + 2 q + x in [4 j + 2 h + x].
        u32 wa[KSTEPS_HALF][4];
        load_fragments(wa, (const u16*)a.w + (size_t)blk * HROWS * HID, g, wq, r0, q);
        const u32 wl = a.swap ? W_SBO : W_LBO, ws = a.swap ? W_LBO : W_SBO;
        const u32 w_base = smem_addr(w_tile);
        // Gate math: thread tid units 2 (tid % UP), + 1 of samples tid / UP + M_STEP p.
        const int up = tid % UP, m_first = tid / UP;
        // An LSTM's c; a GRU's h_{t-1} in f32, from h_0.
        float bias[GATES][2], c_state[PASSES][2] = {};
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt)
#pragma unroll
            for (int x = 0; x < 2; ++x) bias[gt][x] = a.bias[blk * ROWS + UNITS * gt + 2 * up + x];
#ifdef CELL_GRU
#pragma unroll
        for (int p = 0; p < PASSES; ++p) {
            const int m = m_first + M_STEP * p, k = UNITS * blk + 2 * up;
            const u32 two = *(const u32*)(h + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m, k % KC));
            c_state[p][0] = to_f((u16)(two & 0xffff));
            c_state[p][1] = to_f((u16)(two >> 16));
        }
#endif
        float d[16], e[16];
        for (int t = 0; t < a.steps; ++t) {
            if (tid == 0) stamp(t, 0);
            // Thread 0 issues all of the step's chunks once every block of the group has stored
            // h_{t-1} (the ring holds all of them: every warp left the slots at the step's end).
            // With CHUNK_FLAGS each warpgroup's first thread copies its own chunks instead, each
            // once the blocks that fill it have arrived at its count, one chunk ahead of the
            // warpgroup's products (the wait for the next chunk's count overlaps this one's
            // products). A block overwrites the buffer of h_{t-1} only in step t + 1, after it has
            // waited for every chunk of h_t, so after every block's arrival at step t's end,
            // which follows its copies of h_{t-1}.
            const bool lead = CHUNK_FLAGS && loads && tid == 128 * g;
            auto copy_chunk = [&](const Fill& f) {
                if (CHUNK_FLAGS && t > 0) wait_acquire(counter + 32 * f.kc, (u32)(CHUNK_WRITERS * t));
                mbar_expect(full + f.slot, CHUNK_BYTES);
                bulk_multicast(slots + (size_t)f.slot * CHUNK_BYTES,
                               h + ((size_t)(t & 1) * CHUNKS + f.kc) * CHUNK_BYTES, CHUNK_BYTES, full + f.slot, 1);
            };
            if (!CHUNK_FLAGS && loads && tid == 0) {
                if (t > 0) wait_acquire(counter, (u32)(BLOCKS * t));
                stamp(t, 4);
                for (int i = 0; i < CHUNKS; ++i) copy_chunk(fill_of(t, i));
            }
            // CHUNK_GREEDY: the warpgroup's chunks of this step issued so far (bit ii); issues
            // every one whose count is full, and looks again until chunk `need` is issued.
            u32 issued = 0;
            auto issue_ready = [&](int need) {
                while (true) {
#pragma unroll
                    for (int jj = 0; jj < CHUNKS / 2; ++jj) {
                        const Fill f = fill_of(t, 2 * jj + g);
                        if ((issued >> jj & 1) ||
                            (t > 0 && load_acquire(counter + 32 * f.kc) < (u32)(CHUNK_WRITERS * t)))
                            continue;
                        mbar_expect(full + f.slot, CHUNK_BYTES);
                        bulk_multicast(slots + (size_t)f.slot * CHUNK_BYTES,
                                       h + ((size_t)(t & 1) * CHUNKS + f.kc) * CHUNK_BYTES, CHUNK_BYTES, full + f.slot, 1);
                        issued |= 1u << jj;
                    }
                    if (issued >> need & 1) return;
                    __nanosleep(32);
                }
            };
            (void)issue_ready;
            if (lead) {
                if (CHUNK_GREEDY) issue_ready(0);
                else copy_chunk(fill_of(t, g));
                if (tid == 0) stamp(t, 4);
            }
            __syncwarp();  // (warp 0 whole again before its wgmma's aligned instructions)
#if FULL
            // This step's input projection of the thread's pairs into its shared-memory slots,
            // in flight during the products (registers are full).
#pragma unroll
            for (int p = 0; p < PASSES; ++p)
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt)
                    cp_async_bytes<4>((u16*)(xs + (p * GATES + gt) * CONSUMERS + tid),
                                      a.xg + ((size_t)t * BATCH + group * GB + m_first + M_STEP * p) * GH + gt * HID +
                                          UNITS * blk + 2 * up);
            cp_async_commit();
#endif
#pragma unroll
            for (int ii = 0; ii < CHUNKS / 2; ++ii) {
                const Fill f = fill_of(t, 2 * ii + g);
                if (loads) mbar_wait(full + f.slot, f.number & 1);
                if (ii == 0 && tid == 0) stamp(t, 1);
                if (products) {
                    wgmma_fence();
                    const u32 slot = smem_addr(slots + (size_t)f.slot * CHUNK_BYTES);
#pragma unroll
                    for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                        const u64 hb = wgmma_desc(slot + kk * 2 * H_LBO, hl, hs);
                        const u64 wsm = wgmma_desc(w_base + (f.kc * KSTEPS_CHUNK + kk) * 2 * W_LBO, wl, ws);
                        wgmma_rs_n32(d, wa[ii * KSTEPS_CHUNK + kk], hb, (ii | kk) != 0);
                        if (HROWS > REG_ROWS) wgmma_ss_n32(e, wsm, hb, (ii | kk) != 0);
                    }
                    wgmma_commit();
                }
                // CHUNK_FLAGS: the warpgroup's next chunk, while these products run.
                if (lead && ii + 1 < CHUNKS / 2) {
                    if (CHUNK_GREEDY) issue_ready(ii + 1);
                    else copy_chunk(fill_of(t, 2 * (ii + 1) + g));
                }
                if (CHUNK_FLAGS) __syncwarp();  // (the lead's warp whole again for the wait)
                if (products) wgmma_wait<1>();
            }
            if (products) wgmma_wait<0>();
            if (tid == 0) stamp(t, 2);
            // The two halves of K summed through shared memory, then the gate math from there.
            if (products && g == 1) {
                to_sums<4, false>(red, d, 0, wq, r0, q);
                if (HROWS > REG_ROWS) to_sums<4, false>(red, e, REG_ROWS, wq, r0, q);
            }
            named_sync(2, CONSUMERS);
            if (products && g == 0) {
                to_sums<4, true>(red, d, 0, wq, r0, q);
                if (HROWS > REG_ROWS) to_sums<4, true>(red, e, REG_ROWS, wq, r0, q);
            }
            named_sync(2, CONSUMERS);
            unsigned char* out = h + (size_t)((t + 1) & 1) * CHUNKS * CHUNK_BYTES;
#if FULL
            cp_async_wait_all();
#endif
#pragma unroll
            for (int p = 0; p < PASSES; ++p) {
#if FULL
                u32 xv[GATES];
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) xv[gt] = xs[(p * GATES + gt) * CONSUMERS + tid];
                u16* y_row = a.y + ((size_t)t * BATCH + group * GB + m_first + M_STEP * p) * HID;
                pair_from_sums(red, bias, c_state[p], up, m_first + M_STEP * p, blk, out, products, &xv, y_row);
#else
                pair_from_sums(red, bias, c_state[p], up, m_first + M_STEP * p, blk, out, products);
#endif
            }
            if (tid == 0) stamp(t, 3);
            // Every thread has read the sums and the slots before the next step's overwrite them.
            named_sync(1, CONSUMERS);
            if (loads && tid == 0)
                arrive_release(CHUNK_FLAGS ? counter + 32 * (UNITS * blk / KC) : counter);
        }
#else
        // Warpgroup g: samples 64 g .. 64 g + 63 of every chunk; the accumulators' row (sample)
        // 64 g + 16 wq + r0 + 8 h, column 8 j + 2 q + e in d[4 j + 2 h + e]: gate j % GATES of
        // unit (j / GATES) * 8 + 2 q + e.
        const u32 wl = a.swap ? W_SBO : W_LBO, ws = a.swap ? W_LBO : W_SBO;
        const u32 w_base = smem_addr(w_tile);
        // This warpgroup's samples and unit halves: with NSPLIT 1 samples 64 g .. and every unit
        // half; with NSPLIT 2 every sample and unit half g (its rows start WN g into the tile).
        const int m0 = NSPLIT == 1 ? 64 * g : 0, uh0 = NSPLIT == 1 ? 0 : g;
        float bias[GATES][UHW][2];        // [gate][unit half uh0 + u][e]
#pragma unroll
        for (int j = 0; j < GATES * UHW; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                bias[j % GATES][j / GATES][e] = a.bias[blk * ROWS + 8 * (GATES * uh0 + j) + 2 * q + e];
        // [sample half][unit half uh0 + u][e]: an LSTM's c; a GRU's h_{t-1} in f32, from h_0.
        float state[2][UHW][2] = {};
#ifdef CELL_GRU
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
            for (int u = 0; u < UHW; ++u) {
                const int m = m0 + 16 * wq + r0 + 8 * hh, k = UNITS * blk + 8 * (uh0 + u) + 2 * q;
                const u32 two = *(const u32*)(h + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m, k % KC));
                state[hh][u][0] = to_f((u16)(two & 0xffff));
                state[hh][u][1] = to_f((u16)(two >> 16));
            }
#endif
        float d[WN / 2];
        for (int t = 0; t < a.steps; ++t) {
            if (tid == 0) stamp(t, 0);
            for (int i = 0; i < CHUNKS; ++i) {
                const Fill f = fill_of(t, i);
                if (loads) mbar_wait(full + f.slot, f.number & 1);
                if (i == 0 && tid == 0) stamp(t, 1);
                if (!products) {
                    release(f);
                    continue;
                }
                wgmma_fence();
                const u32 slot = smem_addr(slots + (size_t)f.slot * CHUNK_BYTES) + m0 / 8 * H_SBO;
#pragma unroll
                for (int kk = 0; kk < KSTEPS_CHUNK; ++kk) {
                    const u64 da = wgmma_desc(slot + kk * 2 * H_LBO, hl, hs);
                    const u64 db = wgmma_desc(w_base + uh0 * GATES * W_SBO + (f.kc * KSTEPS_CHUNK + kk) * 2 * W_LBO, wl, ws);
                    wgmma_rows(d, da, db, (i | kk) != 0);
                }
                wgmma_commit();
                // The chunk before is multiplied: its slot is free in this block for this warp.
                wgmma_wait<1>();
                if (i > 0) release(fill_of(t, i - 1));
            }
            if (products) {
                wgmma_wait<0>();
                release(fill_of(t, CHUNKS - 1));
            }
            if (tid == 0) stamp(t, 2);
            unsigned char* out = h + (size_t)((t + 1) & 1) * CHUNKS * CHUNK_BYTES;
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const int m = m0 + 16 * wq + r0 + 8 * hh;
#pragma unroll
                for (int u = 0; u < UHW; ++u) {
                    u16 hv[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        float acc[GATES], b[GATES];
#pragma unroll
                        for (int gt = 0; gt < GATES; ++gt) {
                            acc[gt] = products ? d[4 * (GATES * u + gt) + 2 * hh + e] : 0.f;
                            b[gt] = bias[gt][u][e];
                        }
                        hv[e] = cell_step(acc, b, state[hh][u][e]);
                    }
                    // Units 16 blk + 8 (uh0 + u) + 2 q, + 1: one 4-byte store.
                    const int k = UNITS * blk + 8 * (uh0 + u) + 2 * q;
                    *(u32*)(out + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m, k % KC)) = (u32)hv[0] | ((u32)hv[1] << 16);
                }
            }
            if (tid == 0) stamp(t, 3);
            if (loads) {
                named_sync(1, CONSUMERS);
                if (tid == 0) arrive_release(counter);
            }
        }
#endif
    }
    // No block leaves while others of its cluster may still arrive at its barriers.
    __syncthreads();
    cluster_barrier();
}

int main(int argc, char** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 300;
    const int mode = argc > 2 ? atoi(argv[2]) : 1;
    const int cs = argc > 3 ? atoi(argv[3]) : 2;
    const int check_steps = argc > 4 ? atoi(argv[4]) : 3;
    const int swap = argc > 5 ? atoi(argv[5]) : 0;
    if (cs != 1 && cs != 2 && cs != 4) {
        fprintf(stderr, "cluster size 1, 2 or 4, not %d\n", cs);
        return 2;
    }
    if (HYBRID && cs != 1) {
        fprintf(stderr, "HYBRID takes clusters of 1 (its loads are not multicast), not %d\n", cs);
        return 2;
    }
    if (mode < 0 || mode > 2) {
        fprintf(stderr, "mode 0, 1 or 2, not %d\n", mode);
        return 2;
    }
    // Operands: W_hh [4 H, H] (gate-major rows, as PyTorch's), a bias per row, h_0, all bf16
    // values (the bias f32).
    const float scale = 1.f / sqrtf((float)HID);
    std::vector<u16> w((size_t)GATES * HID * HID), h0((size_t)BATCH * HID);
    std::vector<float> bias((size_t)GATES * HID);
    for (auto& v : w) v = to_bits(uniform(-scale, scale));
    for (auto& v : bias) v = uniform(-0.2f, 0.2f);
    for (auto& v : h0) v = to_bits(uniform(-0.8f, 0.8f));
    // Each block's rows and bias in the kernel's order: without WREG its shared-memory tile
    // (row n gate row_gate(n) of unit row_unit(n)); with WREG whole rows (HYBRID: the first
    // REG_ROWS, then the others as a shared-memory tile), row n gate n / UNITS
    // of unit n % UNITS.
    const size_t tile_bytes = (size_t)HROWS * HID * 2;  // (zeros past ROWS: HYBRID's padding)
    std::vector<unsigned char> tiles((size_t)BLOCKS * tile_bytes);
    std::vector<float> bias_blk((size_t)BLOCKS * ROWS);
    for (int b = 0; b < BLOCKS; ++b)
        for (int n = 0; n < ROWS; ++n) {
            const int gate = HALF_K ? n / UNITS : row_gate(n), unit = HALF_K ? n % UNITS : row_unit(n);
            const size_t row = (size_t)gate * HID + UNITS * b + unit;
            bias_blk[(size_t)b * ROWS + n] = bias[row];
            for (int k = 0; k < HID; ++k) {
                const size_t at = (WREG || (HYBRID && n < REG_ROWS)) ? ((size_t)n * HID + k) * 2
                                  : HYBRID ? (size_t)REG_ROWS * HID * 2 + w_offset(n - REG_ROWS, k)
                                           : w_offset(n, k);
                memcpy(&tiles[(size_t)b * tile_bytes + at], &w[row * HID + k], 2);
            }
        }
    // Sample m is sample m % GB of group m / GB, whose buffers start at group_at(m).
    const size_t group_bytes = (size_t)2 * CHUNKS * CHUNK_BYTES;
    auto group_at = [&](int m) { return (size_t)(m / GB) * group_bytes; };
    std::vector<unsigned char> hbuf((size_t)GROUPS * group_bytes, 0);
    for (int m = 0; m < BATCH; ++m)
        for (int k = 0; k < HID; ++k)
            memcpy(&hbuf[group_at(m) + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m % GB, k % KC)],
                   &h0[(size_t)m * HID + k], 2);

    unsigned char *d_w, *d_h;
    float* d_bias;
    u32* d_counter;
    CHECK(cudaMalloc(&d_w, tiles.size()));
    CHECK(cudaMalloc(&d_h, hbuf.size()));
    CHECK(cudaMalloc(&d_bias, bias_blk.size() * 4));
    CHECK(cudaMalloc(&d_counter, 128 * GROUPS * COUNTS));
    CHECK(cudaMemcpy(d_w, tiles.data(), tiles.size(), cudaMemcpyHostToDevice));
    // FULL: the input projection of every step (uniform in [-1, 1], bf16) and the outputs.
    const int xg_steps = FULL ? std::max(steps, check_steps) : 0;
    std::vector<u16> xg((size_t)xg_steps * BATCH * GATES * HID);
    for (auto& v : xg) v = to_bits(uniform(-1.f, 1.f));
    u16 *d_xg = nullptr, *d_y = nullptr;
    if (FULL) {
        CHECK(cudaMalloc(&d_xg, xg.size() * 2));
        CHECK(cudaMalloc(&d_y, (size_t)xg_steps * BATCH * HID * 2));
        CHECK(cudaMemcpy(d_xg, xg.data(), xg.size() * 2, cudaMemcpyHostToDevice));
    }
    CHECK(cudaMemcpy(d_bias, bias_blk.data(), bias_blk.size() * 4, cudaMemcpyHostToDevice));
    const size_t smem = (size_t)W_BYTES + RED_BYTES + (size_t)NSLOT * CHUNK_BYTES + 2 * NSLOT * 8 +
                        (FULL ? (size_t)PASSES * GATES * CONSUMERS * 4 : 0);
    void (*kernel)(Args) = mode == 0 ? probe<0> : mode == 1 ? probe<1> : probe<2>;
    ClusterLaunch launch;
    cluster_launch(launch, kernel, GRID_BLOCKS, THREADS, smem, cs);
    const int clusters = launch.resident;
    printf("HID=%d BATCH=%d GROUPS=%d UNITS=%d blocks=%d KC=%d NSLOT=%d WREG=%d HYBRID=%d CHUNK_FLAGS=%d CHUNK_GREEDY=%d "
           "cluster=%d (resident clusters %d) smem=%zu mode=%d swap=%d\n",
           HID, BATCH, GROUPS, UNITS, GRID_BLOCKS, KC, NSLOT, WREG, HYBRID, CHUNK_FLAGS, CHUNK_GREEDY, cs, clusters, smem,
           mode, swap);
    if (clusters * cs < GRID_BLOCKS) {
        fprintf(stderr, "the blocks are not all resident at once: no grid barrier\n");
        return 1;
    }
    auto run = [&](int n) -> float {
        CHECK(cudaMemcpy(d_h, hbuf.data(), hbuf.size(), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(d_counter, 0, 128 * GROUPS * COUNTS));
        Args args{d_w, d_bias, d_h, d_counter, n, swap, d_xg, d_y};
        return timed_launch(launch, kernel, args);
    };
    if (mode == 1 && check_steps > 0) {
        run(check_steps);
        std::vector<unsigned char> got(hbuf.size());
        CHECK(cudaMemcpy(got.data(), d_h, got.size(), cudaMemcpyDeviceToHost));
        // The reference: the same steps in f64 from the bf16 operands, h rounded to bf16 for the
        // products and the outputs (as the kernel stores it); the carried state (an LSTM's c, a
        // GRU's h) unrounded.
        std::vector<double> wd(w.size()), hd((size_t)BATCH * HID), cd((size_t)BATCH * HID, 0.0);
        for (size_t i = 0; i < w.size(); ++i) wd[i] = from_bits(w[i]);
        for (size_t i = 0; i < hd.size(); ++i) hd[i] = from_bits(h0[i]);
        if (GATES == 3) cd = hd;
        std::vector<double> pre((size_t)GATES * HID), rec((size_t)GATES * HID), hn(hd.size());
        auto sg = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
        for (int t = 0; t < check_steps; ++t) {
            for (int m = 0; m < BATCH; ++m) {
                const double* hm = &hd[(size_t)m * HID];
                // rec: each row's recurrent product; pre: with its bias and (FULL) input projection.
                const u16* xm = FULL ? &xg[((size_t)t * BATCH + m) * GATES * HID] : nullptr;
                for (int r = 0; r < GATES * HID; ++r) {
                    const double* wr = &wd[(size_t)r * HID];
                    double s = 0;
                    for (int k = 0; k < HID; ++k) s += wr[k] * hm[k];
                    rec[r] = s;
                    pre[r] = s + bias[r] + (FULL ? from_bits(xm[r]) : 0.0);
                }
                for (int u = 0; u < HID; ++u) {
                    double out;
                    if (GATES == 3) {
                        // n's recurrent product (no bias: b_hn is 0 here) scaled by r.
                        const double in = bias[2 * HID + u] + (FULL ? from_bits(xm[2 * HID + u]) : 0.0);
                        const double r = sg(pre[u]), z = sg(pre[HID + u]);
                        const double n = std::tanh(in + r * rec[2 * HID + u]);
                        double& h = cd[(size_t)m * HID + u];
                        h = (1 - z) * n + z * h;
                        out = h;
                    } else {
                        double& c = cd[(size_t)m * HID + u];
                        c = sg(pre[HID + u]) * c + sg(pre[u]) * std::tanh(pre[2 * HID + u]);
                        out = sg(pre[3 * HID + u]) * std::tanh(c);
                    }
                    hn[(size_t)m * HID + u] = from_bits(to_bits((float)out));
                }
            }
            hd.swap(hn);
        }
        const unsigned char* last = got.data() + (size_t)(check_steps & 1) * CHUNKS * CHUNK_BYTES;
        double worst = 0, mean = 0;
        int off = 0;
        for (int m = 0; m < BATCH; ++m)
            for (int k = 0; k < HID; ++k) {
                u16 v;
                memcpy(&v, last + group_at(m) + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m % GB, k % KC), 2);
                const double diff = std::fabs(from_bits(v) - hd[(size_t)m * HID + k]);
                worst = std::max(worst, diff);
                mean += diff;
                off += diff > 1.5e-2;
            }
        printf("check after %d steps: max |diff| %.3e, mean %.3e, %d of %d past 1.5e-2 -> %s\n", check_steps, worst,
               mean / (BATCH * HID), off, BATCH * HID, worst < 3e-2 ? "ok" : "MISMATCH");
        if (FULL) {
            // y's last step is the same h_t as the exchange's (the same bits).
            std::vector<u16> y_last((size_t)BATCH * HID);
            CHECK(cudaMemcpy(y_last.data(), d_y + (size_t)(check_steps - 1) * BATCH * HID, y_last.size() * 2,
                             cudaMemcpyDeviceToHost));
            int differ = 0;
            for (int m = 0; m < BATCH; ++m)
                for (int k = 0; k < HID; ++k) {
                    u16 v;
                    memcpy(&v, last + group_at(m) + (size_t)(k / KC) * CHUNK_BYTES + h_offset(m % GB, k % KC), 2);
                    differ += v != y_last[(size_t)m * HID + k];
                }
            printf("y's step %d: %d of %d elements differ from the exchange's -> %s\n", check_steps - 1, differ,
                   BATCH * HID, differ ? "MISMATCH" : "ok");
        }
    }
    std::vector<float> times;
    for (int rep = 0; rep < 6; ++rep) times.push_back(run(steps));
    // The last launch's phases: medians over blocks and steps 2 .. of the intervals, ns.
    {
        std::vector<unsigned long long> st((size_t)GRID_BLOCKS * STAMP_STEPS * STAMPS);
        CHECK(cudaMemcpyFromSymbol(st.data(), stamps, st.size() * 8));
        const char* names[] = {"start -> first chunk in", "first chunk in -> products done",
                               "products done -> gate math and stores done", "gate math done -> next step's start",
                               "loader past the barrier -> first chunk in"};
        std::vector<std::vector<double>> iv(5);
        const int last = std::min(steps, STAMP_STEPS);
        for (int b = 0; b < GRID_BLOCKS; ++b)
            for (int t = 2; t + 1 < last; ++t) {
                const unsigned long long* x = &st[((size_t)b * STAMP_STEPS + t) * STAMPS];
                const unsigned long long* y = x + STAMPS;
                iv[0].push_back((double)(x[1] - x[0]));
                iv[1].push_back((double)(x[2] - x[1]));
                iv[2].push_back((double)(x[3] - x[2]));
                iv[3].push_back((double)(y[0] - x[3]));
                if (mode != 0) iv[4].push_back((double)x[1] - (double)x[4]);
            }
        for (int k = 0; k < 5; ++k) {
            if (iv[k].empty()) continue;
            std::sort(iv[k].begin(), iv[k].end());
            printf("  %-45s median %6.0f ns (p10 %6.0f, p90 %6.0f)\n", names[k], iv[k][iv[k].size() / 2],
                   iv[k][iv[k].size() / 10], iv[k][iv[k].size() * 9 / 10]);
        }
    }
    std::sort(times.begin() + 1, times.end());
    printf("WREG %d HYBRID %d mode %d cluster %d: %.0f ns a step (median of 5 launches of %d steps; min %.0f, max %.0f)\n", WREG, HYBRID, mode, cs,
           1e6 * times[3] / steps, steps, 1e6 * times[1] / steps, 1e6 * times.back() / steps);
    return 0;
}
