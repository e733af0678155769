// A probe of one LSTM layer's (-DCELL_GRU: a GRU's) backward step through time on wgmma at
// [128, 1024] (sm_90a): how
// long a step takes where the library's layer-by-layer backward takes about 18 µs and cuDNN's
// `Standard` trains the whole call (results/2026-11-30-h200-wgmma-forward/, the sketch).
//
// The step: dh_{t-1} = dg_t W_hh (K = 4 H gate rows, the step's gate gradients), then each
// (unit, sample)'s pointwise step (the cell's cell_backward) from the saved gate activations and
// what the cell saved (an LSTM's c_t, a GRU's h_t and n's recurrent product), which gives dg_{t-1}
// (a GRU's n on the recurrent product's side in the exchange: r d_n). The whole batch is one
// group (wgmma's N = 128) on 64 blocks of 16 units, in clusters of 8 that split K: cluster c's
// blocks hold W_hh's columns of the cluster's 128 units (W_hh transposed: wgmma's A, M = 128
// units) for an eighth of the gate rows each: block r of a cluster the gate rows of units
// 128 r .. 128 r + 127 (the four gates' rows: K = 512), which is what cluster r's blocks made at
// the step before. So each block reads 128 KB of dg a step (8 MB of L2, as the forward's h at
// batch 128) and its A is 128 KB: all in registers, each warpgroup an M-half (64 units) of it,
// 128 registers a thread (mma.sync's A fragments). (An H200 holds 30 clusters of 4 at a block a
// multiprocessor, an H100 15 of 8: not the 32 or 16 that two groups of 64 would take. So the
// batch stays in one group, on half of the multiprocessors.) The block's partial products (128 units x
// 128 samples, over its eighth of K) meet in the block that finishes those units: warp w of
// warpgroup g holds units 16 (4 g + w) .., which block 4 g + w of the cluster finishes. Once every
// block of the cluster has multiplied its ring (a cluster barrier), each warp stores its partial
// products into that block's ring (distributed shared memory, a slot per source block), and a
// second cluster barrier publishes them. Each block then sums its 8 slots, adds dy_t and runs the
// pointwise step of its 16 units x 128 samples (8 a thread: one sample, eight units), its saved
// operands copied into shared memory during the products. It writes dg_{t-1} into the exchange
// (bf16, wgmma's B layout: region c, chunk = gate), arrives at the grid's barrier in memory, and
// only then stores dg in f32 ([T, B, GH], what the weight GEMMs would read; 16 bytes a store), so
// that the arrival's release does not wait for those; thread 0 then bulk-copies the block's 4
// chunks (128 KB) of the next step into its ring. (The first version stored dg one float a store
// before the arrival; 16-byte remote stores of the partial products, lanes swapping pairs, were
// slower than 8-byte ones: results/2026-11-30-h200-wgmma-backward-probe/.) Options (-D):
// DG_ROWS (1 unless set) stores dg by gate row instead, [GH, T * B] (each of the block's 64 gate
// rows' 128 samples of a step contiguous: 512 bytes a warp's store, through shared memory), a
// layout the weight GEMMs take as well (transposed operands); DG_ROWS 2 keeps [T, B, GH] but
// through shared memory too (a (sample, gate)'s 16 units, 64 bytes, by 4 lanes); PARTIAL_BF16 (0 unless set) sends
// the partial products in bf16, half the bytes through distributed shared memory, 8 bytes (four
// samples) a store.
//
// Everything is random but consistent: W_hh, the saved activations (sigmoid gates in (0.05, 0.95),
// tanh ones in (-0.95, 0.95)), what the cells saved, dy. The exchange starts at zeros (no gradient
// from past the last step). After CHECK_STEPS steps the kernel's dg is compared with a CPU
// reference in f64 that rounds the exchanged dg to bf16 as the kernel does. Prints ns a step and
// the last launch's phases by the global timer.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a wgmma_bwd_probe.cu -o wgmma_bwd_probe
//   wgmma_bwd_probe [steps] [check steps]

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define HID 1024
#define BATCH 128
#define GB 128                         // samples a group (the whole batch): wgmma's N
#define GROUPS (BATCH / GB)            // (common.cuh's: the launch's groups)
#define ELEM_BF16 1
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
#define NWARPS 8
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"
#include "../../candle-cudnn-rnn/src/persistent/wgmma.cuh"
#ifdef CELL_GRU
#include "../../candle-cudnn-rnn/src/persistent/cell_gru.cuh"
#else
#include "../../candle-cudnn-rnn/src/persistent/cell_lstm.cuh"
#endif
#include "check.cuh"
#include "cluster_launch.cuh"
#include "host.cuh"

#ifndef DG_ROWS
#define DG_ROWS 1
#endif
#ifndef PARTIAL_BF16
#define PARTIAL_BF16 0
#endif
#define UNITS 16                       // units a block finishes
#define BLOCKS (HID / UNITS)           // a group's blocks
#define CLUSTER 8                      // blocks a cluster: K split in eighths
#define CU (CLUSTER * UNITS)           // a cluster's units: A's M
#define KQ (GATES * CU)                // a block's share of K: 512 gate rows
#define KC 128                         // gate rows a chunk (one gate's of CU units)
#define CHUNKS (KQ / KC)               // = GATES
#define KSTEPS (KQ / 16)
#define KSTEPS_CHUNK (KC / 16)
#define CHUNK_BYTES (GB * KC * 2)      // 32 KB
#define REGION_BYTES (CHUNKS * CHUNK_BYTES)  // a cluster's dg of a step: 128 KB
#define RP (GB + 8)                    // a row of a slot: one unit's 128 samples, padded
// A slot's elements (f32 or, PARTIAL_BF16, bf16), rows 8-15 16 words further: with bf16 a
// half-warp's 8-byte stores of rows r and r + 8 (8 RP elements apart, a multiple of 32 banks)
// fall in distinct banks.
#if PARTIAL_BF16
using slot_t = u16;
#define SLOT_SHIFT 32
#else
using slot_t = float;
#define SLOT_SHIFT 16
#endif
#define SLOT_ELEMS (UNITS * RP + 2 * SLOT_SHIFT)
__host__ __device__ constexpr int slot_row(int row) { return row * RP + SLOT_SHIFT * (row / 8); }
#define ITEMS 8                        // (unit, sample) pairs a thread: 8 units of one sample
static_assert(HID % CU == 0 && BLOCKS % CLUSTER == 0, "whole clusters");
static_assert(THREADS * ITEMS == UNITS * GB, "the pointwise step's items");
static_assert(CLUSTER * SLOT_ELEMS * sizeof(slot_t) <= REGION_BYTES, "the slots fit in the ring");

// Shared memory: the ring (a chunk a gate; once multiplied, the 8 slots of partial products),
// its mbarriers, and each thread's staged operands, 8 units each: the gate activations, what the
// cell saved and the first of it at the step before (c_{t-1} or h_{t-1}), f32, and dy (bf16).
#define RING 0
#define SLOTS RING
#define BARS (RING + REGION_BYTES)
#define STAGE (BARS + 64)
#define ST_SAVED (32 * GATES)
#define ST_PREV (ST_SAVED + 32 * CELL_SAVED)
#define ST_DY (ST_PREV + 32)
#define STAGE_BYTES (ST_DY + 16)
// DG_ROWS 1: the step's dg by gate row, [GATES * UNITS][GB] f32, read back by rows for the
// stores; 2: by sample, [GB][DSP] f32 (a sample's gates' units, padded: a quarter-warp's 16-byte
// stores of 8 samples in distinct banks).
#define DGS (STAGE + THREADS * STAGE_BYTES)
#define DSP (GATES * UNITS + 4)
#define SMEM (DGS + (DG_ROWS == 1 ? GATES * UNITS * GB * 4 : DG_ROWS == 2 ? GB * DSP * 4 : 0))

// B's core matrices in a chunk (8 samples x 8 gate rows, 128 bytes each): LBO along K, SBO along
// the samples.
#define B_LBO 128u
#define B_SBO ((KC / 8) * 128u)
__host__ __device__ inline u32 b_offset(int s, int k) {
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
__device__ __forceinline__ float slot_value(float v) { return v; }
__device__ __forceinline__ float slot_value(u16 v) { return bf16_to_f32(v); }

// The global timer at each step's phases (thread 0 of every block, the first STAMP_STEPS steps):
// 0 the step's start, 1 past the grid's barrier (the ring's copies issued), 2 the products done,
// 3 past the cluster's first barrier, 4 past its second (the partial products in), 5 the pointwise
// steps and the exchange's stores done (the block's arrival).
#define STAMP_STEPS 64
#define STAMPS 6
__device__ unsigned long long stamps[GROUPS * BLOCKS * STAMP_STEPS * STAMPS];
__device__ __forceinline__ void stamp(int i, int at) {
    if (threadIdx.x == 0 && i < STAMP_STEPS) {
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        stamps[((size_t)blockIdx.x * STAMP_STEPS + i) * STAMPS + at] = g;
    }
}

struct Args {
    const u16* w_hh;      // [GH, H] bf16
    const float* act;     // [T, B, GH] the gate activations
    const float* cells;   // [T, B, CELL_SAVED, H] what the cell saved
    const float* c0;      // [B, H] c_0 (a GRU's h_0)
    const u16* dy;        // [T, B, H] bf16
    float* dg;            // [T, B, GH], or DG_ROWS [GH, dg_ld] from the first step's column
    size_t dg_ld;         // DG_ROWS: a gate row's stride (the tensors' T * B)
    unsigned char* xch;   // [GROUPS][2][HID / CU regions][REGION_BYTES], slot 0 zeroed
    u32* counter;         // a group's barrier word every 32 bytes, zeroed
    int seq;
};

__global__ void __launch_bounds__(THREADS, 1) probe(Args a) {
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char* const ring = smem + RING;
    unsigned long long* const full = (unsigned long long*)(smem + BARS);
    slot_t* const slots = (slot_t*)(smem + SLOTS);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int group = blockIdx.x / BLOCKS, bx = blockIdx.x % BLOCKS;
    const int c = bx / CLUSTER, r = (int)ctarank();
    const int b0 = group * GB;
    unsigned char* const xch = a.xch + (size_t)group * 2 * (HID / CU) * REGION_BYTES;
    u32* const bar = a.counter + 8 * group;

    // A: warpgroup g's 64 units (cluster units 64 g ..) x the block's 512 gate rows, mma.sync's A
    // fragments: lane 4 r0 + q of warp wq holds rows 16 wq + r0 (+ 8), K columns 16 j + 2 q (+ 1,
    // + 8, + 9). K column kk is gate kk / KC's row of unit 128 r + kk % KC.
    const int g = warp / 4, wq = warp % 4, q = lane % 4, r0 = lane / 4;
    u32 wa[KSTEPS][4];
#pragma unroll
    for (int j = 0; j < KSTEPS; ++j)
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int m = CU * c + 64 * g + 16 * wq + r0 + 8 * (x & 1);
            const int kk = 16 * j + 2 * q + 8 * (x >> 1);
            const size_t row = (size_t)(kk / KC) * HID + CU * r + kk % KC;
            wa[j][x] = (u32)a.w_hh[row * HID + m] | ((u32)a.w_hh[(row + 1) * HID + m] << 16);
        }
    if (tid == 0)
        for (int ch = 0; ch < CHUNKS; ++ch) mbar_init(full + ch);
    // The pointwise items: sample s of the group, units 8 u8 .. 8 u8 + 7 of the block's 16 (unit
    // k0 + i of the layer); the carried dc of each.
    const int s = tid % GB, u8 = tid / GB, ul0 = 8 * u8;
    const int k0 = CU * c + UNITS * r + ul0;
    float dc[ITEMS];
    for (int i = 0; i < ITEMS; ++i) dc[i] = 0.f;
    unsigned char* const stage = smem + STAGE + tid * STAGE_BYTES;
    // The slot this warp's partial products go to in block 4 g + wq of the cluster (its slot
    // `r`): rows (units) r0 and r0 + 8 of the destination's 16, samples 8 j + 2 q (+ 1).
    const u32 dest = cluster_address(slots + (size_t)r * SLOT_ELEMS, (u32)(4 * g + wq));
    __syncthreads();
    if (tid == 0) arrive_release(bar);

    float d[64];
    for (int i = 0; i < a.seq; ++i) {
        const int t = a.seq - 1 - i;
        stamp(i, 0);
        // The chunks of dg_{t+1} that this block multiplies: region r (cluster r's units). (Every
        // block of the grid has read its slots, in the ring, at the step before: the barrier.)
        if (tid == 0) {
            wait_acquire(bar, (u32)(BLOCKS * (i + 1)));
            // (The slots' generic stores and loads in the ring before the copies' async writes.)
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            const unsigned char* from = xch + ((size_t)(i & 1) * (HID / CU) + r) * REGION_BYTES;
            for (int ch = 0; ch < CHUNKS; ++ch) {
                mbar_expect(full + ch, CHUNK_BYTES);
                bulk_copy(ring + (size_t)ch * CHUNK_BYTES, from + (size_t)ch * CHUNK_BYTES, CHUNK_BYTES, full + ch);
            }
        }
        stamp(i, 1);
        __syncwarp();
        // This step's saved operands of the thread's items into its stage.
        {
            const size_t row = (size_t)t * BATCH + b0 + s;
            // 32 bytes (8 floats) in two copies.
            auto copy32 = [&](int at, const float* src) {
                cp_async16((u16*)(stage + at), (const u16*)src);
                cp_async16((u16*)(stage + at + 16), (const u16*)(src + 4));
            };
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt) copy32(32 * gt, a.act + row * GH + gt * HID + k0);
#pragma unroll
            for (int j = 0; j < CELL_SAVED; ++j) copy32(ST_SAVED + 32 * j, a.cells + (row * CELL_SAVED + j) * HID + k0);
            copy32(ST_PREV, t > 0 ? a.cells + (row - BATCH) * CELL_SAVED * HID + k0 : a.c0 + (size_t)(b0 + s) * HID + k0);
            cp_async16((u16*)(stage + ST_DY), a.dy + row * HID + k0);
            cp_async_commit();
        }
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
        stamp(i, 2);
        // Every block of the cluster has multiplied its ring, which now takes the slots; the
        // partial products into the finishing block's slot: unit r0 + 8 h, samples 8 j + 2 q.
        cluster_barrier();
        stamp(i, 3);
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
        stamp(i, 4);
        cp_async_wait_all();
        // The pointwise steps: dh = the 8 slots' sums + dy; dg of the gates. The stage's operands
        // in 16-byte loads (a thread's stage is 16-byte aligned; a quarter-warp's fall in distinct
        // banks).
        const float4* act4 = (const float4*)stage;
        const float4* sv4 = (const float4*)(stage + ST_SAVED);
        const float4* pv4 = (const float4*)(stage + ST_PREV);
        const uint4 dyq = *(const uint4*)(stage + ST_DY);
        const u32 dyw[4] = {dyq.x, dyq.y, dyq.z, dyq.w};
        unsigned char* const out = xch + ((size_t)((i + 1) & 1) * (HID / CU) + c) * REGION_BYTES;
        float4 dgo[GATES][ITEMS / 4];  // dg in f32, stored after the block's arrival
        u32 dv[GATES][ITEMS / 2];      // (bf16 pairs of items)
#pragma unroll
        for (int hq = 0; hq < ITEMS / 4; ++hq) {
            float4 g4[GATES], s4[CELL_SAVED];
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt) g4[gt] = act4[2 * gt + hq];
#pragma unroll
            for (int j = 0; j < CELL_SAVED; ++j) s4[j] = sv4[2 * j + hq];
            const float4 p4 = pv4[hq];
            float dgq[GATES][4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int it = 4 * hq + e;
                auto lane4 = [e](const float4& v) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; };
                float rec = 0.f;
#pragma unroll
                for (int src = 0; src < CLUSTER; ++src)
                    rec += slot_value(slots[src * SLOT_ELEMS + slot_row(ul0 + it) + s]);
                float gate[GATES], saved[CELL_SAVED], dgate[GATES], d_rec = 0.f;
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) gate[gt] = lane4(g4[gt]);
#pragma unroll
                for (int j = 0; j < CELL_SAVED; ++j) saved[j] = lane4(s4[j]);
                const u16 dyb = (u16)(dyw[it / 2] >> (16 * (it % 2)));
                cell_backward(gate, saved, lane4(p4), to_f(dyb), rec, dc[it], dgate, d_rec);
#pragma unroll
                for (int gt = 0; gt < GATES; ++gt) {
                    dgq[gt][e] = dgate[gt];
                    // (The exchange carries the recurrent product's side: a split gate's d_rec.)
                    const float x = gt == SPLIT_GATE ? d_rec : dgate[gt];
                    const u32 v = (u32)from_f(x) << (16 * (it % 2));
                    dv[gt][it / 2] = it % 2 ? dv[gt][it / 2] | v : v;
                }
            }
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt) dgo[gt][hq] = make_float4(dgq[gt][0], dgq[gt][1], dgq[gt][2], dgq[gt][3]);
        }
        // dg_t into the exchange: region c, chunk gt, gate rows 16 r + 8 u8 .. (+ 7): 16 bytes.
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt)
            *(uint4*)(out + (size_t)gt * CHUNK_BYTES + b_offset(s, UNITS * r + ul0)) =
                make_uint4(dv[gt][0], dv[gt][1], dv[gt][2], dv[gt][3]);
        // Every thread has read its slots and stored its exchange before the block's arrival
        // publishes it (and before the ring takes the next step's chunks: those come after the
        // barrier).
        __syncthreads();
        stamp(i, 5);
        if (tid == 0 && i + 1 < a.seq) arrive_release(bar);
        // dg in f32 (what the weight GEMMs read after the kernel): after the arrival, whose
        // release then need not wait for these stores to land.
#if DG_ROWS == 2
        // Through shared memory by sample: lanes 4 p .. 4 p + 3 store pair p's (sample, gate) 16
        // units (64 bytes), 8 pairs a warp's store.
        {
            float* const dgs = (float*)(smem + DGS);
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt)
#pragma unroll
                for (int hq = 0; hq < ITEMS / 4; ++hq)
                    *(float4*)(dgs + (size_t)s * DSP + gt * UNITS + ul0 + 4 * hq) = dgo[gt][hq];
            __syncthreads();
            const int part = lane % 4;
#pragma unroll
            for (int pair = 8 * warp + lane / 4; pair < GB * GATES; pair += 8 * NWARPS) {
                const int sm = pair / GATES, gt = pair % GATES;
                *(float4*)(a.dg + ((size_t)t * BATCH + b0 + sm) * GH + gt * HID + CU * c + UNITS * r + 4 * part) =
                    *(const float4*)(dgs + (size_t)sm * DSP + gt * UNITS + 4 * part);
            }
        }
#elif DG_ROWS
        // Through shared memory by gate row: each warp's store is one row's 128 samples. (The
        // rows were read by every warp before the next step writes them: the cluster's barriers
        // come between.)
        {
            float* const dgs = (float*)(smem + DGS);
#pragma unroll
            for (int gt = 0; gt < GATES; ++gt)
#pragma unroll
                for (int hq = 0; hq < ITEMS / 4; ++hq) {
                    const float4 v = dgo[gt][hq];
                    float* const at = dgs + (size_t)(gt * UNITS + ul0 + 4 * hq) * GB + s;
                    at[0] = v.x;
                    at[GB] = v.y;
                    at[2 * GB] = v.z;
                    at[3 * GB] = v.w;
                }
            __syncthreads();
            const size_t col = (size_t)t * BATCH + b0 + 4 * lane;
#pragma unroll
            for (int row = warp; row < GATES * UNITS; row += NWARPS) {
                const int gt = row / UNITS, u = row % UNITS;
                *(float4*)(a.dg + (size_t)(gt * HID + CU * c + UNITS * r + u) * a.dg_ld + col) =
                    *(const float4*)(dgs + (size_t)row * GB + 4 * lane);
            }
        }
#else
        // 32 bytes a gate and thread.
        float* const dgt = a.dg + ((size_t)t * BATCH + b0 + s) * GH + k0;
#pragma unroll
        for (int gt = 0; gt < GATES; ++gt)
#pragma unroll
            for (int hq = 0; hq < ITEMS / 4; ++hq) *(float4*)(dgt + gt * HID + 4 * hq) = dgo[gt][hq];
#endif
    }
    // (Every remote store of the last step landed before its second cluster barrier.)
}

int main(int argc, char** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 300;
    const int check_steps = argc > 2 ? atoi(argv[2]) : 3;
    const int T = std::max(steps, check_steps);
    std::vector<u16> w((size_t)GH * HID), dy((size_t)T * BATCH * HID);
    std::vector<float> act((size_t)T * BATCH * GH), cells((size_t)T * BATCH * CELL_SAVED * HID), c0((size_t)BATCH * HID);
    for (auto& v : w) v = to_bits(uniform(-0.05f, 0.05f));
    for (size_t n = 0; n < act.size(); ++n)
        act[n] = (n / HID) % GATES == 2 ? uniform(-0.95f, 0.95f) : uniform(0.05f, 0.95f);
    for (auto& v : cells) v = uniform(-1.f, 1.f);
    for (auto& v : c0) v = uniform(-1.f, 1.f);
    for (auto& v : dy) v = to_bits(uniform(-0.5f, 0.5f));

    const size_t xch_bytes = (size_t)GROUPS * 2 * (HID / CU) * REGION_BYTES;
    u16 *d_w, *d_dy;
    float *d_act, *d_cells, *d_c0, *d_dg;
    unsigned char* d_xch;
    u32* d_counter;
    CHECK(cudaMalloc(&d_w, w.size() * 2));
    CHECK(cudaMalloc(&d_dy, dy.size() * 2));
    CHECK(cudaMalloc(&d_act, act.size() * 4));
    CHECK(cudaMalloc(&d_cells, cells.size() * 4));
    CHECK(cudaMalloc(&d_c0, c0.size() * 4));
    CHECK(cudaMalloc(&d_dg, act.size() * 4));
    CHECK(cudaMalloc(&d_xch, xch_bytes));
    CHECK(cudaMalloc(&d_counter, 32 * GROUPS));
    CHECK(cudaMemcpy(d_w, w.data(), w.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_dy, dy.data(), dy.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_act, act.data(), act.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_cells, cells.data(), cells.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_c0, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));

    ClusterLaunch launch;
    cluster_launch(launch, probe, GROUPS * BLOCKS, THREADS, SMEM, CLUSTER);
    const int clusters = launch.resident;
    printf("HID=%d BATCH=%d GROUPS=%d UNITS=%d blocks=%d cluster=%d (resident clusters %d) smem=%d\n", HID, BATCH,
           GROUPS, UNITS, GROUPS * BLOCKS, CLUSTER, clusters, SMEM);
    if (clusters * CLUSTER < GROUPS * BLOCKS) {
        fprintf(stderr, "the blocks are not all resident at once: no grid barrier\n");
        return 1;
    }
    // A launch's arguments for steps T - n .. T - 1 (the kernel counts t from n - 1): the tensors'
    // last n steps, into `dg` through `xch` and `counter`.
    auto args_of = [&](int n, float* dg, unsigned char* xch, u32* counter) {
        const size_t o = (size_t)(T - n);
        return Args{d_w, d_act + o * BATCH * GH, d_cells + o * BATCH * CELL_SAVED * HID, d_c0, d_dy + o * BATCH * HID,
                    dg + o * BATCH * (DG_ROWS == 1 ? 1 : GH), (size_t)T * BATCH, xch, counter, n};
    };
    auto run = [&](int n) -> float {
        CHECK(cudaMemset(d_xch, 0, xch_bytes));
        CHECK(cudaMemset(d_counter, 0, 32 * GROUPS));
        CHECK(cudaMemset(d_dg, 0, act.size() * 4));
        // (With n < T, step T - n's c_{t-1} is read from c0: the reference below does the same.)
        return timed_launch(launch, probe, args_of(n, d_dg, d_xch, d_counter));
    };

    if (check_steps > 0) {
        run(check_steps);
        std::vector<float> got(act.size());
        CHECK(cudaMemcpy(got.data(), d_dg, got.size() * 4, cudaMemcpyDeviceToHost));
        // The reference over the last check_steps steps, from t = T - 1 down; c_{t-1} of the first
        // of them from c0 (as the kernel, given only those steps, reads it).
        const int first = T - check_steps;
        std::vector<double> dgx((size_t)BATCH * GH, 0.0), dcs((size_t)BATCH * HID, 0.0), rec((size_t)BATCH * HID);
        double worst = 0, sum = 0;
        size_t bad = 0, n = 0;
        for (int t = T - 1; t >= first; --t) {
            // rec = bf16(dg_{t+1}) W_hh.
            std::fill(rec.begin(), rec.end(), 0.0);
            for (int b = 0; b < BATCH; ++b)
                for (int row = 0; row < GH; ++row) {
                    const double v = dgx[(size_t)b * GH + row];
                    if (v == 0.0) continue;
                    const u16* wr = &w[(size_t)row * HID];
                    double* out = &rec[(size_t)b * HID];
                    for (int k = 0; k < HID; ++k) out[k] += v * from_bits(wr[k]);
                }
            for (int b = 0; b < BATCH; ++b)
                for (int k = 0; k < HID; ++k) {
                    const size_t at = ((size_t)t * BATCH + b) * GH + k;
                    const size_t saved = ((size_t)t * BATCH + b) * CELL_SAVED * HID + k;
                    const double prev = t > first ? cells[saved - (size_t)BATCH * CELL_SAVED * HID] : c0[(size_t)b * HID + k];
                    const double dy_rec = from_bits(dy[((size_t)t * BATCH + b) * HID + k]) + rec[(size_t)b * HID + k];
                    double& carry = dcs[(size_t)b * HID + k];
                    // want: the input side's gradients (dg); exch: the recurrent product's side.
                    double want[GATES], exch[GATES];
#ifdef CELL_GRU
                    const double gr = act[at], gz = act[at + HID], gn = act[at + 2 * HID], nrec = cells[saved + HID];
                    const double dh = dy_rec + carry, dn = dh * (1 - gz) * (1 - gn * gn);
                    want[0] = exch[0] = dn * nrec * gr * (1 - gr);
                    want[1] = exch[1] = dh * (prev - gn) * gz * (1 - gz);
                    want[2] = dn;
                    exch[2] = dn * gr;
                    carry = dh * gz;
#else
                    const double gi = act[at], gf = act[at + HID], gg = act[at + 2 * HID], go = act[at + 3 * HID];
                    const double tc = std::tanh(cells[saved]), dh = dy_rec;
                    const double dct = carry + go * dh * (1 - tc * tc);
                    want[0] = dct * gg * gi * (1 - gi);
                    want[1] = dct * prev * gf * (1 - gf);
                    want[2] = dct * gi * (1 - gg * gg);
                    want[3] = dh * tc * go * (1 - go);
                    for (int gt = 0; gt < GATES; ++gt) exch[gt] = want[gt];
                    carry = dct * gf;
#endif
                    for (int gt = 0; gt < GATES; ++gt) {
#if DG_ROWS == 1
                        const double kernel = got[((size_t)gt * HID + k) * ((size_t)T * BATCH) + (size_t)t * BATCH + b];
#else
                        const double kernel = got[at + (size_t)gt * HID];
#endif
                        const double diff = std::fabs(kernel - want[gt]);
                        worst = std::max(worst, diff);
                        sum += diff;
                        bad += diff > 1.5e-2;
                        ++n;
                        // The next step multiplies dg rounded to bf16, as the kernel exchanges it.
                        dgx[(size_t)b * GH + (size_t)gt * HID + k] = from_bits(to_bits((float)exch[gt]));
                    }
                }
        }
        printf("check after %d steps: max |diff| %.3e, mean %.3e, %zu of %zu past 1.5e-2 -> %s\n", check_steps, worst,
               sum / (double)n, bad, n, bad == 0 ? "ok" : "FAILED");
    }
    std::vector<float> times;
    for (int k = 0; k < 6; ++k) times.push_back(run(steps) * 1e6f / (float)steps);
    times.erase(times.begin());  // (the first launch warms up)
    // The last launch's phases: medians over blocks and steps 2 .. of the intervals, ns.
    {
        std::vector<unsigned long long> st((size_t)GROUPS * BLOCKS * STAMP_STEPS * STAMPS);
        CHECK(cudaMemcpyFromSymbol(st.data(), stamps, st.size() * 8));
        const char* names[] = {"start -> past the grid's barrier", "-> products done (ring in)",
                               "-> past the cluster's first barrier", "-> past its second (partials in)",
                               "-> pointwise steps, exchange stored", "-> the next step's start (dg stored)"};
        std::vector<std::vector<double>> iv(STAMPS);
        const int last = std::min(steps, STAMP_STEPS);
        for (int b = 0; b < GROUPS * BLOCKS; ++b)
            for (int i = 2; i + 1 < last; ++i) {
                const unsigned long long* x = &st[((size_t)b * STAMP_STEPS + i) * STAMPS];
                for (int k = 0; k + 1 < STAMPS; ++k) iv[k].push_back((double)(x[k + 1] - x[k]));
                iv[STAMPS - 1].push_back((double)(x[STAMPS] - x[STAMPS - 1]));
            }
        for (int k = 0; k < STAMPS; ++k) {
            std::sort(iv[k].begin(), iv[k].end());
            printf("  %-45s median %6.0f ns (p10 %6.0f, p90 %6.0f)\n", names[k], iv[k][iv[k].size() / 2],
                   iv[k][iv[k].size() / 10], iv[k][iv[k].size() * 9 / 10]);
        }
    }
    std::sort(times.begin(), times.end());
    printf("backward step: %.0f ns a step (median of 5 launches of %d steps; min %.0f, max %.0f)\n", times[2], steps,
           times[0], times[4]);
    // With a third argument 2: two such launches at once on two streams, each with its own
    // exchange, counter and dg (the inputs shared), as two layers' backward recurrences would run
    // side by side; their time together against one alone.
    if (argc > 3 && atoi(argv[3]) == 2) {
        if (clusters * CLUSTER < 2 * GROUPS * BLOCKS)
            printf("pair: only %d clusters of %d fit at once, not two launches' %d\n", clusters, CLUSTER,
                   2 * GROUPS * BLOCKS / CLUSTER);
        unsigned char* d_xch2;
        u32* d_counter2;
        float* d_dg2;
        CHECK(cudaMalloc(&d_xch2, xch_bytes));
        CHECK(cudaMalloc(&d_counter2, 32 * GROUPS));
        CHECK(cudaMalloc(&d_dg2, act.size() * 4));
        cudaStream_t st[2];
        for (auto& x : st) CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
        cudaEvent_t e0, e1, joined;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        CHECK(cudaEventCreate(&joined));
        auto pair = [&](int n) -> float {
            CHECK(cudaMemset(d_xch, 0, xch_bytes));
            CHECK(cudaMemset(d_xch2, 0, xch_bytes));
            CHECK(cudaMemset(d_counter, 0, 32 * GROUPS));
            CHECK(cudaMemset(d_counter2, 0, 32 * GROUPS));
            CHECK(cudaDeviceSynchronize());
            const Args a1 = args_of(n, d_dg, d_xch, d_counter), a2 = args_of(n, d_dg2, d_xch2, d_counter2);
            CHECK(cudaEventRecord(e0, st[0]));
            CHECK(cudaStreamWaitEvent(st[1], e0));
            cudaLaunchConfig_t c1 = launch.cfg, c2 = launch.cfg;
            c1.stream = st[0];
            c2.stream = st[1];
            CHECK(cudaLaunchKernelEx(&c1, probe, a1));
            CHECK(cudaLaunchKernelEx(&c2, probe, a2));
            CHECK(cudaEventRecord(joined, st[1]));
            CHECK(cudaStreamWaitEvent(st[0], joined));
            CHECK(cudaEventRecord(e1, st[0]));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaGetLastError());
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            return ms;
        };
        std::vector<float> both;
        for (int k = 0; k < 6; ++k) both.push_back(pair(steps) * 1e6f / (float)steps);
        both.erase(both.begin());
        std::sort(both.begin(), both.end());
        printf("pair: two launches at once: %.0f ns a step for both (min %.0f, max %.0f), %.2fx one alone\n", both[2],
               both[0], both[4], both[2] / times[2]);
    }
    return 0;
}
