// A standalone timing harness for one persistent LSTM recurrence (recurrence_fwd.cu, with
// -DREG_GATES=1 recurrence_reg_fwd.cu's, or
// recurrence_bwd.cu with -DLAB_BWD; a GRU's forward with -DLAB_GRU), built by build.sh with nvcc for the same -D parameters the
// library passes NVRTC. It launches the kernel on fixed pseudo-random operands, times each launch with CUDA
// events, and with -DLAB_PHASES records, for thread 0 of every block (of the first batch group; another
// thread with -DLAB_PHASE_THREAD=N), the SM clock at each PHASE(i) of every step and the global
// timer around the grid barrier (-DLAB_INFER: a forward without training's saves); with
// -DLAB_MARKS, the global timer at each MARK(i) of a launch for every block, each batch group's
// end of steps and which blocks shared a multiprocessor (-DLAB_SMEM=N: blocks of at least N bytes
// of shared memory). The output is written to a file so that two builds (a change and the kernel
// it replaces) can be compared. With -DLAB_WT_PROLOGUE or -DLAB_WT_STEPS=N the forward also
// writes W_hh transposed (see below), which the harness checks.
//
//   lab [reps] [output file] [file to compare with]

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef LAB_T
#define LAB_T 35
#endif

#ifdef LAB_PHASES
// LAB_SLOTS phases a step (slot 7 of step 0: the block's start); recorded by thread
// LAB_PHASE_THREAD of each block (thread 0 by default: another warp's view with another).
#define LAB_SLOTS 16
#ifndef LAB_PHASE_THREAD
#define LAB_PHASE_THREAD 0
#endif
__device__ unsigned long long lab_clock[LAB_T * LAB_SLOTS * 256];
__device__ unsigned long long lab_timer[LAB_T * LAB_SLOTS * 256];
#define PHASE(i)                                                                       \
    do {                                                                               \
        if (threadIdx.x == LAB_PHASE_THREAD && blockIdx.y == 0 && t >= 0 && t < LAB_T) { \
            unsigned long long g;                                                      \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));                      \
            size_t at = ((size_t)blockIdx.x * LAB_T + t) * LAB_SLOTS + (i);            \
            lab_clock[at] = clock64();                                                 \
            lab_timer[at] = g;                                                         \
        }                                                                              \
    } while (0)
#endif

#ifdef LAB_MARKS
// With -DLAB_MARKS, the global timer at each MARK(i) of a launch (its start, the end of its
// prologue, of its steps, of its epilogue), for thread 0 of every block of every batch group,
// and the multiprocessor each block ran on.
#define LAB_MARK_BLOCKS 4096
__device__ unsigned long long lab_mark[LAB_MARK_BLOCKS * 8];
__device__ unsigned lab_smid[LAB_MARK_BLOCKS];
#define MARK(i)                                                                        \
    do {                                                                               \
        size_t b_ = (size_t)blockIdx.y * gridDim.x + blockIdx.x;                       \
        if (threadIdx.x == 0 && b_ < LAB_MARK_BLOCKS) {                                \
            unsigned long long g;                                                      \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));                      \
            lab_mark[b_ * 8 + (i)] = g;                                                \
            if ((i) == 0) {                                                            \
                unsigned sm;                                                           \
                asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));                        \
                lab_smid[b_] = sm;                                                     \
            }                                                                          \
        }                                                                              \
    } while (0)
#endif

// The preludes the library puts before the kernels' source (persistent/kernel.rs).
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
#include "../../candle-cudnn-rnn/src/kernels/philox.cuh"
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"
#ifdef LAB_GRU
#ifdef LAB_BWD
#error "the harness times a GRU's forward only"
#endif
#include "../../candle-cudnn-rnn/src/persistent/cell_gru.cuh"
#else
#include "../../candle-cudnn-rnn/src/persistent/cell_lstm.cuh"
#endif
#include "../../candle-cudnn-rnn/src/persistent/dropout.cu"

#if defined(LAB_WT_PROLOGUE) || defined(LAB_WT_STEPS)
// With -DLAB_WT_PROLOGUE or -DLAB_WT_STEPS=N, the forward also writes W_hh transposed
// (`lab_w_t`, [HID][GATES * HID]) for the backward's tile, each block a share of its 8x8 tiles
// (of every batch group's blocks), through the recurrence's hooks: all of it after the block's
// weight tile's copies are issued (SIDE_PROLOGUE), or spread over its first N steps before each
// step's barrier (SIDE_STEP). A warp loads LAB_WT_FILL tiles at once, a lane 4 bytes of each,
// transposes them in registers (movmatrix) and stores them. The harness checks the result.
#ifndef LAB_WT_FILL
#define LAB_WT_FILL 8
#endif
__device__ u16* lab_w_t;
// This block's share of the tiles, part `part` of `parts` (the library's function).
#define lab_wt_share(w, part, parts) write_transposed_share<LAB_WT_FILL>((w), lab_w_t, (part), (parts))
// (common.cuh defined them empty.)
#undef SIDE_PROLOGUE
#undef SIDE_STEP
#ifdef LAB_WT_PROLOGUE
#define SIDE_PROLOGUE() lab_wt_share((const u16*)a.w_hh, 0, 1)
#define SIDE_STEP(t) do {} while (0)
#else
#define SIDE_PROLOGUE() do {} while (0)
#define SIDE_STEP(t)                                                   \
    do {                                                               \
        if ((t) >= 0 && (t) < LAB_WT_STEPS && (t) < seq)               \
            lab_wt_share((const u16*)a.w_hh, (t), min(LAB_WT_STEPS, seq)); \
    } while (0)
#endif
#endif

#ifdef LAB_BWD
#include "../../candle-cudnn-rnn/src/persistent/recurrence_bwd.cu"
#else
#include "../../candle-cudnn-rnn/src/persistent/recurrence_fwd.cu"
#include "../../candle-cudnn-rnn/src/persistent/recurrence_reg_fwd.cu"
#endif

#include "check.cuh"

#if !ELEM_BF16
#error "the harness builds bf16 kernels only (ELEM_BF16=1)"
#endif
#include "host.cuh"

template <class T>
static T* upload(const std::vector<T>& v) {
    T* d;
    CHECK(cudaMalloc(&d, v.size() * sizeof(T) + 256));
    CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static std::vector<u16> halves(size_t n, float scale) {
    std::vector<u16> v(n);
    for (auto& x : v) x = to_bits(uniform(-scale, scale));
    return v;
}

static std::vector<float> floats(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 20;
    const char* out_file = argc > 2 ? argv[2] : nullptr;
    const char* cmp_file = argc > 3 ? argv[3] : nullptr;
    // B: every batch group's samples (-DGROUPS, each group BATCH of them on blocks of its own).
    const int T = LAB_T, B = BROWS, H = HID;
#if defined(ONE_CLUSTER) && ONE_CLUSTER
    // Every block in one cluster, whose hardware barrier serves each step (the library's
    // one-cluster plans: at most 8 blocks; up to 16 with the non-portable size set below).
    const int cluster = (H + UNITS - 1) / UNITS;
#else
    // Clusters of the kernel's own (CL) or of the forward's multicast exchange (MCAST).
    const int cluster = CL > 1 ? CL : MCAST;
#endif
    const int blocks = (H + UNITS * cluster - 1) / (UNITS * cluster) * cluster;
    const float scale = 1.f / sqrtf((float)H);
    u16* w = upload(halves((size_t)4 * H * H, scale));
    u32* counter;
    // Each batch group's barrier words, GROUP_WORDS apart, then the words that join the groups
    // (common.cuh), with room to spare.
    const size_t counter_bytes = (size_t)(GROUPS + 2) * GROUP_WORDS * 4 + 256;
    CHECK(cudaMalloc(&counter, counter_bytes));
    void* args[24];
    // No dropout after the layer.
    const unsigned long long* no_drop = nullptr;
    unsigned long long drop_seed = 0, drop_p_layer = 0;
    int seq = T;
    size_t smem, out_elems;
    u16* out;
#ifdef LAB_BWD
    smem = BwdTile<UNITS, false>::SMEM;
    // Gate activations in their ranges, cell states, output gradients.
    std::vector<float> g((size_t)T * B * 4 * H);
    for (size_t i = 0; i < g.size(); ++i) g[i] = ((i / H) % 4 == 2) ? uniform(-1, 1) : uniform(0, 1);
    float* gates = upload(g);
    float* cells = upload(floats((size_t)T * B * H, -2, 2));
    u16* c0 = upload(halves((size_t)B * H, 1));
    u16* dy = upload(halves((size_t)T * B * H, 0.1f));
    u16* dh_n = upload(halves((size_t)B * H, 0.1f));
    u16* dc_n = upload(halves((size_t)B * H, 0.1f));
    u16 *dg, *dgx, *dh0, *dc0, *db;
    unsigned long long db_add = 0;
    // Two exchange slots, zeroed before each launch.
    const size_t xch_bytes = (size_t)2 * B * GPAD * 2;
    CHECK(cudaMalloc(&dg, (size_t)T * B * 4 * H * 2));
    CHECK(cudaMalloc(&dgx, xch_bytes));
    CHECK(cudaMalloc(&dh0, B * H * 2));
    CHECK(cudaMalloc(&dc0, B * H * 2));
    // The bias gradient, summed by the kernel (one bias, written over).
    CHECK(cudaMalloc(&db, 4 * H * 2));
    u16* no_db = nullptr;
    u16* no_dgh = nullptr;  // the LSTM has no split gate
    // Each batch group's bias-gradient sums (f32 [GROUPS][NSLOT][H]; NSLOT at most 8), which
    // the first group adds up after the groups join at the words behind their barrier words.
    float* db_parts = nullptr;
    if (GROUPS > 1) CHECK(cudaMalloc(&db_parts, (size_t)GROUPS * 8 * H * 4));
    u32* joins = counter + GROUP_WORDS * GROUPS;
    void* ptrs[] = {&w, &gates, &cells, &c0, &dy, &dh_n, &dc_n, &dg, &dgx, &dh0, &dc0, &db, &no_db,
                    &db_add, &no_drop, &drop_seed, &drop_p_layer, &no_dgh, &db_parts, &joins, &counter, &seq};
    memcpy(args, ptrs, sizeof(ptrs));
    auto kernel = persistent_bwd;
    u16* xchg = dgx;
    out = dg;
    out_elems = (size_t)T * B * 4 * H;
    float* pristine = nullptr;
    float* xg = nullptr;
#else
#if REG_GATES
    smem = RG_SMEM;
#else
    smem = FwdTile<UNITS, KSTEPS>::SMEM;
#endif
    std::vector<float> x = floats((size_t)T * B * 4 * H, -1, 1);
    float* pristine = upload(x);
    float* xg = upload(x);
    u16* b_ih = upload(halves(4 * H, scale));
    u16* b_hh = upload(halves(4 * H, scale));
    u16* h0 = upload(halves((size_t)B * H, 1));
#ifdef LAB_GRU
    // A cell without c carries h from `c0`, where the library passes h_0.
    u16* c0 = h0;
#else
    u16* c0 = upload(halves((size_t)B * H, 1));
#endif
    u16 *y, *h_n, *c_n, *hx;
    float* save;
    // Two exchange slots, zeroed before each launch.
    const size_t xch_bytes = (size_t)2 * B * KPAD * 2;
    CHECK(cudaMalloc(&y, (size_t)T * B * H * 2));
    CHECK(cudaMalloc(&h_n, B * H * 2));
    CHECK(cudaMalloc(&c_n, B * H * 2));
    CHECK(cudaMalloc(&hx, xch_bytes));
    CHECK(cudaMalloc(&save, (size_t)T * B * CELL_SAVED * H * 4));
    u16* no_yp = nullptr;
    u16* no_dropped = nullptr;
    u16* no_w_t = nullptr;  // (the forward's own transpose, WT_WRITE: not timed here)
    // With -DXIN=N the recurrence makes the input projection itself from W_ih and x (of N
    // columns) instead of reading `xg`'s (which training then only writes).
#if defined(XIN) && XIN
    u16* w_ih = upload(halves((size_t)4 * H * XIN, scale));
    u16* x_in = upload(halves((size_t)T * B * XIN, 1));
#else
    u16* w_ih = nullptr;
    u16* x_in = nullptr;
#endif
    // -DLAB_INFER: an inference forward (nothing saved for a backward).
#ifdef LAB_INFER
    float* save_arg = nullptr;
#else
    float* save_arg = save;
#endif
    void* ptrs[] = {&w, &xg, &b_ih, &b_hh, &h0, &c0, &y, &h_n, &c_n, &hx, &save_arg, &no_yp, &no_dropped,
                    &no_drop, &drop_seed, &drop_p_layer, &w_ih, &x_in, &no_w_t, &counter, &seq};
    memcpy(args, ptrs, sizeof(ptrs));
    auto kernel = persistent_fwd;
    u16* xchg = hx;
    out = y;
    out_elems = (size_t)T * B * H;
#endif
#ifdef LAB_SMEM
    // At least LAB_SMEM bytes of shared memory a block (more than half a multiprocessor's: a
    // block to itself).
    smem = std::max(smem, (size_t)LAB_SMEM);
#endif
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    if (cluster > 8) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks, GROUPS);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attrs[2];
    attrs[0].id = cudaLaunchAttributeCooperative;
    attrs[0].val.cooperative = 1;
    attrs[1].id = cudaLaunchAttributeClusterDimension;
    attrs[1].val.clusterDim.x = cluster;
    attrs[1].val.clusterDim.y = 1;
    attrs[1].val.clusterDim.z = 1;
    cfg.attrs = attrs;
#if defined(ONE_CLUSTER) && ONE_CLUSTER
    // (A one-cluster kernel's cluster instructions need a cluster launch, even of one block.)
    cfg.numAttrs = 2;
#else
    cfg.numAttrs = cluster > 1 ? 2 : 1;
#endif
    // How many clusters the GPU holds at once (the grid barrier needs every block resident).
    int resident = -1;
    if (cluster > 1) {
        cudaLaunchConfig_t q = cfg;
        q.attrs = &attrs[1];
        q.numAttrs = 1;
        if (cudaOccupancyMaxActiveClusters(&resident, (const void*)kernel, &q) != cudaSuccess) resident = -1;
    }
    printf("config HID=%d BATCH=%d GROUPS=%d UNITS=%d NWARPS=%d CL=%d MCAST=%d blocks=%d resident clusters=%d smem=%zu",
           H, BATCH, GROUPS, UNITS, NWARPS, CL, MCAST, blocks, resident, smem);
#ifdef LAB_BWD
    printf(" NBUF=%d CH=%d (backward)\n", NBUF, CH);
#else
    printf(" PARTS=%d (forward)\n", FwdTile<UNITS, KSTEPS>::NPARTS);
#endif
#if defined(LAB_WT_PROLOGUE) || defined(LAB_WT_STEPS)
    u16* w_t;
    CHECK(cudaMalloc(&w_t, (size_t)GATES * H * H * 2));
    CHECK(cudaMemset(w_t, 0, (size_t)GATES * H * H * 2));
    CHECK(cudaMemcpyToSymbol(lab_w_t, &w_t, sizeof(w_t)));
#endif
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> times;
    float last_us = 0;
    for (int r = 0; r < reps + 3; ++r) {
        if (xg) CHECK(cudaMemcpyAsync(xg, pristine, (size_t)T * B * 4 * H * 4, cudaMemcpyDeviceToDevice));
        CHECK(cudaMemsetAsync(counter, 0, counter_bytes));
        CHECK(cudaMemsetAsync(xchg, 0, xch_bytes));
        CHECK(cudaEventRecord(e0));
        CHECK(cudaLaunchKernelExC(&cfg, (const void*)kernel, args));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) times.push_back(ms * 1000.f);
        last_us = ms * 1000.f;
    }
    std::sort(times.begin(), times.end());
    printf("us per launch: median %.1f min %.1f max %.1f (%d reps)\n", times[times.size() / 2],
           times[0], times.back(), reps);

#ifdef LAB_MARKS
    // The last launch's marks: for each, the mean and the latest over the blocks, in ns from the
    // earliest block's start (mark 0), beside the launch's time by events.
    {
        const size_t nb = std::min((size_t)blocks * GROUPS, (size_t)LAB_MARK_BLOCKS);
        std::vector<unsigned long long> mk(nb * 8);
        CHECK(cudaMemcpyFromSymbol(mk.data(), lab_mark, mk.size() * 8));
        unsigned long long t0 = ~0ull;
        for (size_t b = 0; b < nb; ++b) t0 = std::min(t0, mk[b * 8]);
        printf("marks (ns from the first block's start, mean / latest over %zu blocks; last launch %.1f us):",
               nb, last_us);
        for (int i = 0; i < 8; ++i) {
            double sum = 0;
            unsigned long long hi = 0;
            size_t n = 0;
            for (size_t b = 0; b < nb; ++b)
                if (mk[b * 8 + i] >= t0) sum += (double)(mk[b * 8 + i] - t0), hi = std::max(hi, mk[b * 8 + i] - t0), ++n;
            if (n == nb) printf(" m%d %.0f / %llu", i, sum / n, hi);
        }
        printf("\n");
        // Each batch group's end of steps (mark 3, its latest block), and how many of its
        // blocks shared a multiprocessor with another block of the launch.
        std::vector<unsigned> sm(nb);
        CHECK(cudaMemcpyFromSymbol(sm.data(), lab_smid, nb * 4));
        std::vector<int> on(1024, 0);
        for (size_t b = 0; b < nb; ++b) on[sm[b] % 1024]++;
        printf("groups' last steps end (ns) [blocks sharing a multiprocessor]:");
        for (int g = 0; g < GROUPS && (size_t)(g + 1) * blocks <= nb; ++g) {
            unsigned long long hi = 0;
            int shared = 0;
            for (int b = g * blocks; b < (g + 1) * blocks; ++b) {
                hi = std::max(hi, mk[(size_t)b * 8 + 3] - t0);
                shared += on[sm[b] % 1024] > 1;
            }
            printf(" %llu [%d]", hi, shared);
        }
        int used = 0;
        for (int c : on) used += c > 0;
        printf("; %d multiprocessors\n", used);
    }
#endif
#if defined(LAB_WT_PROLOGUE) || defined(LAB_WT_STEPS)
    {
        // W_hh transposed as the launches wrote it, against the host's transpose.
        std::vector<u16> wh((size_t)GATES * H * H), wt(wh.size());
        CHECK(cudaMemcpy(wh.data(), w, wh.size() * 2, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(wt.data(), w_t, wt.size() * 2, cudaMemcpyDeviceToHost));
        size_t wrong = 0;
        for (size_t g = 0; g < (size_t)GATES * H; ++g)
            for (size_t u = 0; u < (size_t)H; ++u) wrong += wt[u * GATES * H + g] != wh[g * H + u];
        printf("W_hh transposed: %zu of %zu elements wrong\n", wrong, wt.size());
    }
#endif
    std::vector<u16> host(out_elems);
    CHECK(cudaMemcpy(host.data(), out, out_elems * 2, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (u16 v : host) sum += fabs(from_bits(v));
    printf("output mean |x| %.6e\n", sum / out_elems);
    if (out_file) {
        FILE* f = fopen(out_file, "wb");
        fwrite(host.data(), 2, host.size(), f);
        fclose(f);
    }
    if (cmp_file) {
        std::vector<u16> ref(out_elems);
        FILE* f = fopen(cmp_file, "rb");
        size_t got = f ? fread(ref.data(), 2, ref.size(), f) : 0;
        if (f) fclose(f);
        if (got != ref.size()) {
            printf("compare: cannot read %s\n", cmp_file);
        } else {
            double worst = 0, scale_ref = 0;
            size_t differ = 0;
            for (size_t i = 0; i < ref.size(); ++i) {
                double a = from_bits(host[i]), b = from_bits(ref[i]);
                worst = std::max(worst, fabs(a - b));
                scale_ref = std::max(scale_ref, fabs(b));
                differ += host[i] != ref[i];
            }
            printf("compare with %s: max |diff| %.3e (max |ref| %.3e), %zu of %zu elements differ\n",
                   cmp_file, worst, scale_ref, differ, ref.size());
        }
    }
#ifdef LAB_PHASES
    std::vector<unsigned long long> clk((size_t)LAB_T * LAB_SLOTS * 256), tim(clk.size());
    CHECK(cudaMemcpyFromSymbol(clk.data(), lab_clock, clk.size() * 8));
    CHECK(cudaMemcpyFromSymbol(tim.data(), lab_timer, tim.size() * 8));
    // Mean cycles from the step's phase 0 to each later phase that the kernel marks, over the
    // middle steps of every block; then the step's length (phase 0 to the next phase 0).
    int nph = 0;
    for (int i = 1; i < LAB_SLOTS; ++i)
        if (clk[(size_t)(0 * LAB_T + 1) * LAB_SLOTS + i]) nph = i;
    printf("phase cycles after phase 0 (thread 0, mean over blocks, steps 1..%d):", T - 2);
    for (int i = 1; i <= nph; ++i) {
        if (i == 7) continue;  // (step 0's start only)
        double s = 0;
        int n = 0;
        for (int b = 0; b < blocks; ++b)
            for (int t = 1; t < T - 1; ++t) {
                size_t at = ((size_t)b * LAB_T + t) * LAB_SLOTS;
                if (clk[at + i] && clk[at]) s += (double)(clk[at + i] - clk[at]), ++n;
            }
        printf(" p%d %.0f", i, n ? s / n : 0.0);
    }
#ifdef LAB_BWD
    const int next = -LAB_SLOTS;  // the backward runs from the last step
#else
    const int next = LAB_SLOTS;
#endif
    double step = 0;
    int n = 0;
    for (int b = 0; b < blocks; ++b)
        for (int t = 2; t < T - 2; ++t) {
            size_t at = ((size_t)b * LAB_T + t) * LAB_SLOTS;
            step += (double)(long long)(clk[(size_t)((long long)at + next)] - clk[at]), ++n;
        }
    printf(" | step %.0f cycles\n", step / n);
    // The global timer: per step, the spread of the blocks' starts (phase 0) and the time from
    // the earliest start to the latest.
    double spread = 0, len = 0;
    n = 0;
    for (int t = 2; t < T - 2; ++t) {
        unsigned long long lo = ~0ull, hi = 0, lo_next = ~0ull;
        for (int b = 0; b < blocks; ++b) {
            size_t at = ((size_t)b * LAB_T + t) * LAB_SLOTS;
            lo = std::min(lo, tim[at]);
            hi = std::max(hi, tim[at]);
            lo_next = std::min(lo_next, tim[(size_t)((long long)at + next)]);
        }
        spread += (double)(hi - lo), len += (double)(lo_next - lo), ++n;
    }
    printf("global timer: step %.0f ns, blocks start within %.0f ns of each other\n", len / n, spread / n);
#ifndef LAB_BWD
    // The forward's prologue: from each block's start (its phase 7 of step 0, which the
    // recurrence marks first) to its step 0's phase 0, and the spread of the blocks' starts.
    double prologue = 0;
    unsigned long long first = ~0ull, last = 0;
    for (int b = 0; b < blocks; ++b) {
        size_t at = (size_t)b * LAB_T * LAB_SLOTS;
        prologue += (double)(tim[at] - tim[at + 7]);
        first = std::min(first, tim[at + 7]);
        last = std::max(last, tim[at + 7]);
    }
    printf("prologue %.0f ns (mean over blocks), blocks entered within %llu ns\n", prologue / blocks,
           last - first);
#endif
#endif
    return 0;
}
