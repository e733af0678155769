// What the products and gate math of a forward step at batch 128 and hidden 1024 cost one
// multiprocessor with no exchange at all: a block of 8 warps in the library's layout for that
// shape (8 units a block, an LSTM's 32 gate rows, the weights in registers) multiplies the four
// chunks of 32 samples of a step by its rows, K = 1024, and does their gate math, in one of two
// ways:
//   0  as recurrence_fwd.cu does: every warp a K group of the chunk's products (8 K steps), the
//      block's barrier, every thread one (unit, sample)'s gate math, the block's barrier, chunk
//      after chunk;
//   1  warps 0-3 only the products (K groups of 16 K steps), warps 4-7 only the gate math (two
//      items a thread), of the chunk before: each chunk's partial sums go over through one of
//      two buffers, a named barrier saying a buffer is full (products' warps arrive, gate
//      math's wait) and another that it is free again, so that a chunk's gate math runs beside
//      the next chunk's products.
// The stage of h holds one chunk of fixed values, read for every chunk (the cost of the products
// and the gate math alone). Prints cycles a step (thread 0 of each block, the median over
// blocks) for each mode, and a checksum of the gate math's outputs (close between the modes,
// which sum 8 and 4 partial sums).
//   nvcc -O3 -std=c++17 -arch=sm_90a -DHID=1024 -DBATCH=32 -DUNITS=8 overlap_probe.cu
//   overlap_probe [steps] [blocks]

#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef HID
#define HID 1024
#endif
#ifndef BATCH
#define BATCH 32
#endif
#ifndef UNITS
#define UNITS 8
#endif
#define ELEM_BF16 1
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
// (common.cuh's tile fills count a block's threads by NWARPS; this probe sets its own THREADS.)
#ifndef NWARPS
#define NWARPS 8
#endif
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"
#include "../../candle-cudnn-rnn/src/persistent/cell_lstm.cuh"
#include "check.cuh"

#undef THREADS
#define THREADS 256
#define CHUNKS 4
#define KSTEPS (HID / 16)
#define PITCH (HID + 8)                 // the stage's row pitch (16-bit words)
#define ROWS (GATES * UNITS)            // 32: two 16-row tiles
#define MT (ROWS / 16)
#define NT (NB / 8)                     // 8-sample tiles of a chunk
#define RP (ROWS + 4)                   // a row of partial sums (floats)
#define PART (NB * RP)                  // one K group's partial sums of a chunk (floats)

// Products of `ks` K steps from `k0` of the stage by the warp's register tiles `wa`.
template <int KS>
__device__ __forceinline__ void products(float (&acc)[MT][NT][4], const u32 (&wa)[KS][MT][4], const u16* stage,
                                         int k0, int lane) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][nt][q] = 0.f;
#pragma unroll
    for (int j = 0; j < KS; ++j) {
        u32 b[NT][2];
        const int col = (k0 + j) * 16;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
            ldsm_x2(b[nt], stage + (nt * 8 + (lane & 7)) * PITCH + col + ((lane >> 3) & 1) * 8);
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) mma(acc[i][nt], wa[j][i], b[nt]);
    }
}

// The warp's register tiles of the weights: fixed values that differ by K step, tile and warp.
template <int KS>
__device__ __forceinline__ void fill_weights(u32 (&wa)[KS][MT][4], u32 w_bits, int warp) {
#pragma unroll
    for (int j = 0; j < KS; ++j)
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int q = 0; q < 4; ++q) wa[j][i][q] = w_bits + j + i + q + warp;
}

// The warp's accumulators into its K group's partial sums `red` ([NB][RP]).
__device__ __forceinline__ void put(float* red, const float (&acc)[MT][NT][4], int lane) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            int r = i * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
            red[n * RP + r] = acc[i][nt][0];
            red[(n + 1) * RP + r] = acc[i][nt][1];
            red[n * RP + r + 8] = acc[i][nt][2];
            red[(n + 1) * RP + r + 8] = acc[i][nt][3];
        }
}

// One (unit, sample) item's gate math from `groups` K groups' partial sums at `red` (PART apart).
__device__ __forceinline__ float gate_math(const float* red, int groups, int item, float& c) {
    const int u = item % UNITS, n = item / UNITS;
    float pre[GATES], gate[GATES], saved[CELL_SAVED];
#pragma unroll
    for (int g = 0; g < GATES; ++g) {
        float s = 0.01f * g;
        for (int q = 0; q < groups; ++q) s += red[q * PART + n * RP + g * UNITS + u];
        pre[g] = s;
    }
    return cell_forward(pre, 0.f, gate, c, saved);
}

// Named barrier `id` of all THREADS: wait at it, or arrive without waiting.
__device__ __forceinline__ void named_sync(int id) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(THREADS) : "memory"); }
__device__ __forceinline__ void named_arrive(int id) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(THREADS) : "memory");
}

__global__ void __launch_bounds__(THREADS, 1) probe(int mode, int steps, u32 seed, float* sink, long long* cycles) {
    extern __shared__ __align__(16) unsigned char smem[];
    u16* stage = (u16*)smem;
    float* red = (float*)(smem + NB * PITCH * 2);  // mode 0: 8 groups; mode 1: 2 buffers of 4
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int q = tid; q < NB * PITCH; q += THREADS) stage[q] = (u16)(0x3c00 + ((q * 7 + seed) & 0x3f));
    __syncthreads();
    const u32 w_bits = 0x3c003c00u + (seed & 0x000f000fu);
    float out = 0.f, c0 = 0.f, c1 = 0.f;
    long long t0 = clock64();
    if (mode == 0) {
        u32 wa[KSTEPS / 8][MT][4];
        fill_weights(wa, w_bits, warp);
        for (int s = 0; s < steps; ++s)
            for (int ch = 0; ch < CHUNKS; ++ch) {
                float acc[MT][NT][4];
                products<KSTEPS / 8>(acc, wa, stage, warp * (KSTEPS / 8), lane);
                put(red + warp * PART, acc, lane);
                __syncthreads();
                out += gate_math(red, 8, tid, c0);
                __syncthreads();
            }
    } else if (warp < 4) {
        u32 wa[KSTEPS / 4][MT][4];
        fill_weights(wa, w_bits, warp);
        const int total = steps * CHUNKS;
        for (int k = 0; k < total; ++k) {
            float acc[MT][NT][4];
            products<KSTEPS / 4>(acc, wa, stage, warp * (KSTEPS / 4), lane);
            // Buffer k & 1 is free once the gate math of chunk k - 2 has read it.
            if (k >= 2) named_sync(3 + (k & 1));
            put(red + ((k & 1) * 4 + warp) * PART, acc, lane);
            named_arrive(1 + (k & 1));
        }
    } else {
        const int g = tid - 128, total = steps * CHUNKS;
        for (int k = 0; k < total; ++k) {
            named_sync(1 + (k & 1));
            const float* r = red + (k & 1) * 4 * PART;
            out += gate_math(r, 4, g, c0) + gate_math(r, 4, g + 128, c1);
            if (k + 2 < total) named_arrive(3 + (k & 1));
        }
    }
    long long t1 = clock64();
    if (tid == 0) cycles[blockIdx.x] = (t1 - t0) / steps;
    sink[blockIdx.x * THREADS + tid] = out + c0 + c1;
}

int main(int argc, char** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 1000;
    int blocks = argc > 2 ? atoi(argv[2]) : 0;
    if (blocks <= 0) CHECK(cudaDeviceGetAttribute(&blocks, cudaDevAttrMultiProcessorCount, 0));
    const size_t smem = (size_t)NB * PITCH * 2 + (size_t)8 * PART * 4;
    CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    float* sink;
    long long* cycles;
    CHECK(cudaMalloc(&sink, (size_t)blocks * THREADS * 4));
    CHECK(cudaMalloc(&cycles, (size_t)blocks * 8));
    printf("HID=%d UNITS=%d chunks of %d, %d a step; %d blocks, %d steps, %zu bytes of shared memory\n", HID,
           UNITS, NB, CHUNKS, blocks, steps, smem);
    for (int mode = 0; mode < 2; ++mode) {
        for (int rep = 0; rep < 3; ++rep) {
            probe<<<blocks, THREADS, smem>>>(mode, steps, 5u, sink, cycles);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        }
        std::vector<long long> c(blocks);
        CHECK(cudaMemcpy(c.data(), cycles, blocks * 8, cudaMemcpyDeviceToHost));
        std::vector<float> s((size_t)blocks * THREADS);
        CHECK(cudaMemcpy(s.data(), sink, s.size() * 4, cudaMemcpyDeviceToHost));
        double sum = 0;
        for (float v : s) sum += v;
        std::sort(c.begin(), c.end());
        printf("mode %d: %lld cycles a step (median over blocks; min %lld, max %lld), checksum %.6e\n", mode,
               c[c.size() / 2], c[0], c.back(), sum);
    }
    return 0;
}
