// Device helpers of the persistent kernels (placed in front of each kernel's source, after
// kernels/half.cuh, whose u16, u32, to_f and from_f they use): shared-memory matrix loads,
// tensor-core products, asynchronous copies and the grid-wide barrier. Needs ELEM_BF16 (1: bf16,
// 0: f16), or ELEM_F32 (1) for f32 operands.

// The element type of a module's operands, `elem`: with ELEM_F32 (1) f32, whose products run
// on tensor cores in TF32 (m16n8k8); else the half type of ELEM_BF16. EW is its width in 16-bit
// words. The kernels lay out every K dimension, in shared memory and in the exchange buffers, in
// 16-bit words: a K step is 32 bytes either way (16 half elements or 8 f32 ones), and ldmatrix's
// b16 fragments of f32 rows are exactly the tf32 fragments of an m16n8k8 product (a thread's
// 32-bit word i of an 8x8 b16 matrix's row is element i of that row's 4 f32).
#if defined(ELEM_F32) && ELEM_F32
typedef float elem;
#define EW 2
#else
typedef u16 elem;
#define EW 1
#endif

// F16_SCALED (1; the forwards': recurrence_fwd.cu, recurrence_wgmma_fwd.cu) marks a module of f32
// tensors whose products take f16 operands (elem), each row of W_hh and of h scaled by a power
// of two (f16_scaled.cu). `io_t` is the type of a layer's tensors other than its products'
// operands: f32 there, else the elements'; io_f and to_io convert it from and to f32.
#ifndef F16_SCALED
#define F16_SCALED 0
#endif
#if F16_SCALED
typedef float io_t;
__device__ __forceinline__ float io_f(float v) { return v; }
__device__ __forceinline__ float to_io(float v) { return v; }
#else
typedef elem io_t;
__device__ __forceinline__ float io_f(elem v) { return to_f(v); }
__device__ __forceinline__ elem to_io(float v) { return from_f(v); }
#endif
// s_h where a call has no h_0: h_t of an LSTM or a GRU from zeros stays within (-1, 1), so 2^14
// keeps it in f16's normal range (f16_scaled.cu's scale of h_0's rows, whose largest is at least
// 1).
#define F16_H_SCALE_NONE 16384.f

// A 32-bit word of the products' operands as the tensor cores take it: an f32 rounded to TF32's
// 10 mantissa bits (to nearest, away from zero on ties; the products would otherwise drop the
// bits), or a pair of half elements unchanged.
__device__ __forceinline__ u32 mma_word(u32 v) {
#if defined(ELEM_F32) && ELEM_F32
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(v)));
    return r;
#else
    return v;
#endif
}

// An element of h as another block's products take it from the exchange buffer (mma_word's
// rounding of an f32).
__device__ __forceinline__ elem mma_elem(elem v) {
#if defined(ELEM_F32) && ELEM_F32
    return __uint_as_float(mma_word(__float_as_uint(v)));
#else
    return v;
#endif
}

// A block's threads (NWARPS, -D).
#define THREADS (NWARPS * 32)

// Loads in flight per thread while a kernel fills its weight tile.
#define FILL 16

// A step's product takes the batch (BATCH, -D) in chunks of NB samples, one after another (the
// accumulators of more than 32 would not fit in registers): NCH chunks, one for batches up to
// 32. IN_BATCH(n): whether sample n of a chunk is in the batch (only the last of several
// chunks may end early).
#define NB (BATCH < 32 ? BATCH : 32)
#define NCH ((BATCH + NB - 1) / NB)
#define IN_BATCH(n) (NCH == 1 || (n) < BATCH)

// Batch groups (GROUPS > 1, plan.rs's `Plan::groups`): a step's BROWS samples split into
// GROUPS slices of BATCH, each an independent recurrence (the samples of a batch never meet in
// one) on gridDim.x blocks of its own, group blockIdx.y from sample first_sample(): each has its
// own copy of the weight tiles and its own grid barrier, and its blocks take in only its
// slice's h_{t-1} (the backward: gate gradients) each step, not the whole batch's. The pointers
// a kernel is given start at the batch's first sample; a group's start at its own, their steps
// BROWS rows apart.
#ifndef GROUPS
#define GROUPS 1
#endif
#define BROWS (GROUPS * BATCH)

__device__ __forceinline__ int first_sample() { return GROUPS > 1 ? (int)blockIdx.y * BATCH : 0; }

// `p` from element `at` on, null staying null (an optional buffer).
template <typename T>
__device__ __forceinline__ T* from_elem(T* p, size_t at) {
    return p ? p + at : p;
}

// PHASE(i) marks the end of phase i of a step for a timing harness that defines it (see
// scripts/persistent-lab/); the library's builds leave it empty.
#ifndef PHASE
#define PHASE(i) do {} while (0)
#endif

// MARK(i) marks point i of a launch (its start, the end of its prologue, of its steps, of its
// epilogue) for a timing harness that defines it, as PHASE does a step's; empty in the library.
#ifndef MARK
#define MARK(i) do {} while (0)
#endif

// SIDE_PROLOGUE() and SIDE_STEP(t): work beside the forward's recurrence, after its tile's copies
// are issued and at the end of step t before its barrier, for a harness that measures what such
// work costs the launch (scripts/persistent-lab/: W_hh transposed for the backward); empty in the
// library.
#ifndef SIDE_PROLOGUE
#define SIDE_PROLOGUE() do {} while (0)
#endif
#ifndef SIDE_STEP
#define SIDE_STEP(t) do {} while (0)
#endif

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u32 s;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(s) : "l"(p));
    return s;
}

__device__ __forceinline__ void ldsm_x4(u32* r, const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x2(u32* r, const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_addr(p)));
}

// The gate rows of a layer (GATES: the cell's, cell_lstm.cuh or cell_gru.cuh, which follow).
#define GH (GATES * HID)
// W_hh transposed, for the backward's tile (recurrence_bwd.cu's WT_ROWS): [HID][WT_PITCH 16-bit
// words], GH elements a row and then zeros, so that rows are whole 16-byte pieces. The forward
// writes it (recurrence_fwd.cu's WT_WRITE), or `rnn_transpose_w_hh` on a side stream.
#define WT_PITCH ((GH * EW + 7) / 8 * 8)

// An 8x8 matrix of 16-bit elements transposed in the warp's registers: lane 4r + c holds row r's
// columns 2c and 2c + 1 (the lower column in the lower half), as ldmatrix gives them, and gets
// the same of the transpose (the original's column r, rows 2c and 2c + 1).
__device__ __forceinline__ u32 movmatrix_trans(u32 v) {
    u32 r;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(r) : "r"(v));
    return r;
}

// 16 bytes global -> shared, cached in L2 only (the source was written by other blocks).
__device__ __forceinline__ void cp_async16(u16* dst, const u16* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src)
                 : "memory");
}

// 16 or 4 bytes global -> shared (16: cached in L2 only; 4: the smallest copy, which L1 caches).
template <int BYTES>
__device__ __forceinline__ void cp_async_bytes(u16* dst, const u16* src) {
    static_assert(BYTES == 16 || BYTES == 4, "cp_async_bytes copies 16 or 4 bytes");
    if constexpr (BYTES == 16)
        cp_async16(dst, src);
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;" ::: "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most `n` (a compile-time constant) committed groups are still in flight.
#define cp_async_wait_pending(n) asm volatile("cp.async.wait_group %0;" ::"n"(n) : "memory")

// The same for `n` known only once loops are unrolled (at most 11; more waits for all).
__device__ __forceinline__ void cp_async_wait_upto(int n) {
    switch (n) {
        case 0: cp_async_wait_pending(0); break;
        case 1: cp_async_wait_pending(1); break;
        case 2: cp_async_wait_pending(2); break;
        case 3: cp_async_wait_pending(3); break;
        case 4: cp_async_wait_pending(4); break;
        case 5: cp_async_wait_pending(5); break;
        case 6: cp_async_wait_pending(6); break;
        case 7: cp_async_wait_pending(7); break;
        case 8: cp_async_wait_pending(8); break;
        case 9: cp_async_wait_pending(9); break;
        case 10: cp_async_wait_pending(10); break;
        case 11: cp_async_wait_pending(11); break;
        default: cp_async_wait_all();
    }
}

// Whether `p` is 16-byte aligned.
__device__ __forceinline__ bool aligned16(const void* p) { return ((size_t)p & 15) == 0; }

// A barrier named `id` (0 is __syncthreads') of `threads` threads, whole warps: it waits for
// that many to arrive at it.
__device__ __forceinline__ void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Where a piece of a weight tile comes from: `src`, inside the matrix (clamped into it where the
// piece is not `live`), and whether it is (else zeros).
struct Piece {
    const u16* src;
    bool live;
};

// `fill_tile`'s copies of half elements, V 16-bit words each.
template <int V, int MROWS, int PITCH, typename At>
__device__ __forceinline__ void copy_tile(u16* tile, At& at) {
    constexpr int PIECES = PITCH / V, TOTAL = MROWS * PIECES;
    for (int i = threadIdx.x; i < TOTAL; i += THREADS) {
        u16* const dst = tile + (i / PIECES) * PITCH + (i % PIECES) * V;
        const Piece p = at(i / PIECES, (i % PIECES) * V);
        if (p.live) {
            cp_async_bytes<V * 2>(dst, p.src);
        } else {
#pragma unroll
            for (int q = 0; q < V / 2; ++q) ((u32*)dst)[q] = 0u;
        }
    }
}

// Fills `tile`, MROWS rows of PITCH 16-bit words, consecutive threads along a row: `at(r, c)` is
// row r's piece from column c. With ASYNC by asynchronous copies, every one in flight at once
// (a hidden-128 block's prologue took 2.5 µs so, 3.1-4.5 in rounds of FILL loads a thread:
// results/2026-11-29-h200-gru-forward/), 16 bytes a copy where `wide` (every row and piece
// 16-byte aligned), else 4; the caller waits for them (cp_async_wait_all) before a barrier.
// Else through registers, each word rounded (mma_word), in pairs, FILL loads in flight per thread
// (one at a time, the fill took a large share of every launch: results/2026-11-23-h100-clusters/),
// every load clamped into the matrix, so that none waits behind a branch.
template <bool ASYNC, int MROWS, int PITCH, typename At>
__device__ __forceinline__ void fill_tile(u16* tile, bool wide, At at) {
    if constexpr (ASYNC) {
        if (wide)
            copy_tile<8, MROWS, PITCH>(tile, at);
        else
            copy_tile<2, MROWS, PITCH>(tile, at);
    } else {
        constexpr int PAIRS = PITCH / 2, TOTAL = MROWS * PAIRS;
        for (int i0 = threadIdx.x; i0 < TOTAL; i0 += THREADS * FILL) {
            u32 v[FILL];
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS;
                const Piece p = at(i / PAIRS, 2 * (i % PAIRS));
                u32 x = mma_word(*(const u32*)p.src);
                v[j] = (i < TOTAL && p.live) ? x : 0u;
            }
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS;
                if (i < TOTAL) ((u32*)(tile + (i / PAIRS) * PITCH))[i % PAIRS] = v[j];
            }
        }
    }
}

// d += a b on tensor cores, one 16x8 tile: a K step of 32 bytes (k16 in half, k8 in TF32, whose
// fragments take the same registers), f32 accumulation.
__device__ __forceinline__ void mma(float* d, const u32* a, const u32* b) {
#if defined(ELEM_F32) && ELEM_F32
    asm(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif ELEM_BF16
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// tanh and the sigmoid through the hardware's approximate tanh (tanh.approx.f32, relative error
// about 2^-11, below a bf16 or f16 output's rounding) instead of tanhf and a division: a faster
// forward step, with errors against f64 unchanged (results/2026-11-24-h100-trials/).
__device__ __forceinline__ float gate_tanh(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float sigmoid(float x) { return fmaf(0.5f, gate_tanh(0.5f * x), 0.5f); }

// The grid-wide barrier of every step (`counter` starts at 0, `grid_leave` below; every
// block arrives once per step). A block's arrival, by its thread 0 after the block's
// __syncthreads: a release add that returns nothing (it publishes the whole block's writes
// before it: release is cumulative); a fence plus an atomic that returns its old value cost a
// round trip more.
__device__ __forceinline__ void arrive_release(u32* counter) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(counter), "r"(1u) : "memory");
}

// Spins with acquire loads until `counter` reaches `target`, a short sleep between loads: fewer
// loads of the line that every block's arrival adds to (faster than loads back to back, while
// 128 ns slowed the forwards: results/2026-11-26-h100-weight-workers/).
__device__ __forceinline__ void wait_acquire(const u32* counter, u32 target) {
    u32 v;
    while (true) {
        asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
        if (v >= target) break;
        __nanosleep(32);
    }
}

// The barrier in two halves, so that a block can store what no other block reads in between:
// the block's arrival (after all its threads' writes so far) ...
// With ONE_CLUSTER (1, sm_90: each batch group's blocks, the whole grid in one group, are one
// thread-block cluster, launched so by the host), the cluster's hardware barrier serves instead
// of the counter in memory: every thread
// arrives with release and waits with acquire (cluster scope covers the global memory the
// blocks exchange through), so that no thread spins on L2.
#if defined(ONE_CLUSTER) && ONE_CLUSTER
#if CL != 1 || defined(WAVE_LAYERS)
#error "ONE_CLUSTER takes one layer whose blocks each read all of K (CL 1)"
#endif
__device__ __forceinline__ void grid_arrive(u32*) {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

__device__ __forceinline__ void grid_wait(const u32*, u32) {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
#else
__device__ __forceinline__ void grid_arrive(u32* counter) {
    __syncthreads();
    if (threadIdx.x == 0) arrive_release(counter);
}

// ... and its wait for every block's.
__device__ __forceinline__ void grid_wait(const u32* counter, u32 target) {
    if (threadIdx.x == 0) wait_acquire(counter, target);
    __syncthreads();
}
#endif

// The barrier words of the block's group (launch.rs's `GROUP_WORDS` apart: a 32-byte sector
// each, so that one group's polls do not wait on another's arrivals) from the launch's
// `counter`; after the last group's, the words that join the groups at a launch's end.
#define GROUP_WORDS 8
__device__ __forceinline__ u32* group_counter(u32* counter) { return counter + GROUP_WORDS * blockIdx.y; }

// Every block leaves a launch through here, after its last barrier. The barrier's counter and,
// in the word after it, the count of blocks that have left: the last block out sets both back
// to 0, so that the next launch on them (in stream order) finds them zeroed with no fill before
// it (the host zeroes them once per call, behind an exchange buffer). Its acquire sees every
// other block's leaving, which each block's thread 0 does after its last read of the counter,
// so no block reads the counter after the reset.
__device__ __forceinline__ void grid_leave(u32* counter) {
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 left;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
                     : "=r"(left) : "l"(counter + 1), "r"(1u) : "memory");
        if (left == gridDim.x - 1) {
            counter[0] = 0;
            counter[1] = 0;
        }
    }
}

// The block's rank in its thread-block cluster (sm_90), and the cluster's barrier, which
// publishes shared-memory writes to the other blocks of the cluster.
__device__ __forceinline__ u32 ctarank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_barrier() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The cluster's barrier in two halves, work between them (every thread of every block calls both).
__device__ __forceinline__ void cluster_arrive() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address in block `rank`'s shared memory (of the cluster's shared window) of what `p` points
// at in this block's.
__device__ __forceinline__ u32 cluster_address(u32 local, u32 rank) {
    u32 remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

__device__ __forceinline__ u32 cluster_address(const void* p, u32 rank) { return cluster_address(smem_addr(p), rank); }

// Thread-block clusters that split K (CL > 1): the block's rank in its cluster, the cluster's
// barrier, and a store into block `rank`'s shared memory at the address `p` has in this block's.
#if defined(CL) && CL > 1
__device__ __forceinline__ u32 cluster_rank() { return ctarank(); }

__device__ __forceinline__ void cluster_sync() { cluster_barrier(); }

// A store into block `rank`'s shared memory at the address `p` has in this block's (no round
// trip, unlike a remote load: the cluster's next barrier publishes it).
__device__ __forceinline__ void st_cluster(float* p, u32 rank, float v) {
    asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(cluster_address(p, rank)), "f"(v) : "memory");
}
#else
__device__ __forceinline__ u32 cluster_rank() { return 0; }
#endif

// Two 32-bit words (8-byte aligned at `p`) into the shared memory of block `rank` of the
// cluster, at `p`'s address in this block's, completing 8 bytes of the transaction that the
// mbarrier at `bar`'s address there counts (the pushed exchanges, below and recurrence_bwd.cu's).
__device__ __forceinline__ void push_pair(const void* p, unsigned long long* bar, u32 rank, u32 w0, u32 w1) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];"
                 ::"r"(cluster_address(p, rank)), "r"(w0), "r"(w1), "r"(cluster_address(bar, rank)) : "memory");
}

// Four 32-bit words into another block's shared memory at cluster address `remote`,
// completing 16 bytes of the transaction that the mbarrier at cluster address `bar` counts.
__device__ __forceinline__ void push_v4(u32 remote, u32 bar, u32 w0, u32 w1, u32 w2, u32 w3) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
                 ::"r"(remote), "r"(w0), "r"(w1), "r"(w2), "r"(w3), "r"(bar) : "memory");
}

// The forward's pushed exchange (recurrence_fwd.cu's PUSH): each lane holds one unit's value
// (`bits`: a 16-bit element in the low half, or with WORDS 2 an f32 element's 32 bits),
// consecutive lanes consecutive units of a sample. Lanes `lead` (VEC-aligned units: 8 or 4 of
// 16 bits, 4 of 32) have their VEC lanes' values, gathered by shuffles (every lane of the warp
// calls this), stored at `p`'s address in the shared memory of every block of the cluster (`blocks`),
// each store completing its bytes of the transaction that the block's mbarrier at `bar`'s
// address counts. st.async: nothing waits for it here, and the receiver's acquire on the
// mbarrier sees it. (The stores' bytes take time: the backward's gate gradients, four times h's
// bytes, pushed so took longer than the barrier they replace,
// results/2026-11-27-h100-small-phases/; so do the instructions that issue them, below.)
template <int VEC, int WORDS = 1>
__device__ __forceinline__ void push_units(void* p, unsigned long long* bar, u32 blocks, u32 bits, bool lead) {
    static_assert((WORDS == 1 && (VEC == 4 || VEC == 8)) || (WORDS == 2 && VEC == 4),
                  "4 or 8 units of 16 bits a store, or 4 of 32");
    // The store's 32-bit words: pairs of 16-bit units, or one unit each.
    u32 w0, w1, w2 = 0u, w3 = 0u;
    if (WORDS == 1) {
        w0 = bits | __shfl_down_sync(0xffffffffu, bits, 1) << 16;
        w1 = __shfl_down_sync(0xffffffffu, w0, 2);
        if (VEC > 4) {
            w2 = __shfl_down_sync(0xffffffffu, w0, 4);
            w3 = __shfl_down_sync(0xffffffffu, w0, 6);
        }
    } else {
        w0 = bits;
        w1 = __shfl_down_sync(0xffffffffu, bits, 1);
        w2 = __shfl_down_sync(0xffffffffu, bits, 2);
        w3 = __shfl_down_sync(0xffffffffu, bits, 3);
    }
    // 16 bytes a store (one v4), or 8 (a pair: 4 units of 16 bits).
    constexpr u32 BYTES = VEC * WORDS * 2;
    // A 16-byte store of half elements is made by every lane, not by its lead lane alone: lane l
    // takes lead lane VEC * (l % LEADS)'s store into blocks l / LEADS, l / LEADS + 32 / LEADS, ...
    // (as many stores as the leads would make, a sixteenth as many instructions a warp in a
    // cluster of 16: graphed forwards 0.93-1.00x the time, results/2026-11-30-h200-call-trace/
    // §7). f32 elements (WORDS 2) keep the leads' stores: spread, they were not measured.
    if (BYTES == 16 && WORDS == 1) {
        constexpr u32 LEADS = 32 / VEC;
        const u32 lane = threadIdx.x & 31u, from = (lane % LEADS) * VEC;
        const u32 at = __shfl_sync(0xffffffffu, smem_addr(p), from);
        const bool ok = __shfl_sync(0xffffffffu, (u32)lead, from) != 0u;
        const u32 v0 = __shfl_sync(0xffffffffu, w0, from), v1 = __shfl_sync(0xffffffffu, w1, from);
        const u32 v2 = __shfl_sync(0xffffffffu, w2, from), v3 = __shfl_sync(0xffffffffu, w3, from);
        if (!ok) return;
        for (u32 q = lane / LEADS; q < blocks; q += 32 / LEADS)
            push_v4(cluster_address(at, q), cluster_address(bar, q), v0, v1, v2, v3);
        return;
    }
    // By the lead lanes: 16 bytes a store of f32 elements, 8 (a pair) of half ones.
    if (!lead) return;
    for (u32 q = 0; q < blocks; ++q) {
        if (BYTES == 16)
            push_v4(cluster_address(p, q), cluster_address(bar, q), w0, w1, w2, w3);
        else
            push_pair(p, bar, q, w0, w1);
    }
}

// Multicast exchange (MCAST > 1, sm_90; recurrence_fwd.cu): the launch groups the blocks in
// thread-block clusters of MCAST, and after each step's barrier every block of a cluster copies
// an MCAST-th of the exchanged rows from L2 with bulk copies (cp.async.bulk) multicast into the
// shared memory of every block of the cluster, where each block's mbarrier counts the bytes in.
// L2 is read once per cluster instead of once per block (a step's exchange alone was faster so
// at hidden 512 and 1024, not at 128-256: scripts/persistent-lab/exchange_probe.cu's modes 11
// and 2, results/2026-11-27-h100-multicast/).
#ifndef MCAST
#define MCAST 1
#endif

// An mbarrier that one arrival (the block's thread 0, with the bytes it expects) and those bytes
// complete; its initialisation made visible to the cluster's copies.
__device__ __forceinline__ void mbar_init(unsigned long long* bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;"
                 ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void mbar_expect(unsigned long long* bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}

// Waits for the phase of parity `parity` to complete (every thread that reads the bytes waits),
// with acquire at the block's scope (the multicast's bulk copies) or, CLUSTER, at the cluster's
// (bytes that other blocks' st.async stored).
template <bool CLUSTER = false>
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, u32 parity) {
#define MBAR_WAIT(sem)                                                                      \
    asm volatile("{\n\t.reg .pred p;\n"                                                     \
                 "MBAR_WAIT_%=:\n\t"                                                        \
                 "mbarrier.try_wait.parity" sem ".shared::cta.b64 p, [%0], %1;\n\t"          \
                 "@!p bra MBAR_WAIT_%=;\n\t}" ::"r"(smem_addr(bar)),                         \
                 "r"(parity)                                                                 \
                 : "memory")
    if constexpr (CLUSTER)
        MBAR_WAIT(".acquire.cluster");
    else
        MBAR_WAIT("");
#undef MBAR_WAIT
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global `src` into this block's
// shared memory at `dst`, counted by the mbarrier `bar` (the wgmma forward's ring). The fence
// orders the generic-proxy view of `src` (other blocks' stores, before the barrier this thread
// has passed) before the copy's async-proxy read.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, u32 bytes, unsigned long long* bar) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(dst)),
        "l"(src), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global `src` to `dst` in the
// shared memory of every block of the cluster in `mask`, each block's mbarrier at `bar`'s offset
// counting them. The fence orders the generic-proxy view of `src` (stored by other blocks before
// the barrier this thread has passed) before the copy's async-proxy read.
__device__ __forceinline__ void bulk_multicast(void* dst, const void* src, u32 bytes, unsigned long long* bar,
                                               unsigned short mask) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)), "h"(mask)
        : "memory");
}

// Between two chunks of the batch, whose partial sums reuse the same shared memory: every
// thread of the block (with clusters, of the cluster) is past the reads of the one before.
__device__ __forceinline__ void chunk_sync() {
#if defined(CL) && CL > 1
    cluster_sync();
#else
    __syncthreads();
#endif
}
