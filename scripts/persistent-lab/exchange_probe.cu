// What a step of the forward recurrence costs with no products and no gate math: every block
// (one per multiprocessor, UNITS hidden units each, the library's layout at hidden HID and
// batch BATCH) repeats only a step's exchange, in one of these modes:
//   0  the grid barrier alone (common.cuh's grid_arrive / grid_wait);
//   1  stores of the block's h_t into the exchange buffer, then the barrier;
//   2  1, then 16-byte asynchronous copies of all of h_t into shared memory (the forward's);
//   3  the copies of 2 alone, no stores, no barrier (L2's latency and bandwidth);
//   4  no barrier: h_t stored with its step number in the same 8-byte word (two elements and a
//      32-bit flag), each block polling the words it reads until their flags say the step;
//   5  4's loads alone, the flags already right (no waiting on other blocks);
//   6  1, then each block of a cluster of CLUSTER copies a CLUSTER-th of h_t's rows from L2
//      and stores them into the others' shared memory, then the cluster's barrier;
//   7  the grid barrier alone, hierarchical: the cluster's barrier, block 0 of each cluster
//      arrives at and waits on the counter, the cluster's barrier again;
//   8  6 with 7's barrier;
//   9  the grid barrier with POLLS acquire loads of the counter in flight at once, issued
//      POLL_GAP ns apart (thread 0 reissues each as it returns short of the target);
//  10  9 with relaxed loads, then one acquire fence.
//  11  1, then each block of a cluster of CLUSTER issues bulk copies (cp.async.bulk) of a
//      CLUSTER-th of h_t's rows, multicast into every block of the cluster, and waits on its
//      mbarrier for all of h_t (L2 read once per cluster instead of once per block);
//  12  1, then every block issues bulk copies of all of h_t's rows into its own shared memory
//      (11's copies without multicast: the bulk copy against mode 2's 16-byte copies).
// Batches of several chunks (BATCH past NB = 32, whose whole h does not fit in shared memory at
// hidden 1024 and batch 128), the stage a ring of two chunk slots:
//  13  1, then h_t chunk by chunk, each chunk's rows split over the cluster's CLUSTER blocks and
//      multicast into every block's slot (11's copies a chunk at a time); each block reads the
//      slot's bytes, then the cluster's barrier frees the slot for the chunk after next;
//  14  1, then each block of a cluster of CLUSTER copies (16-byte asynchronous copies, the next
//      chunk's while one is read) only its CLUSTER-th of the columns of each chunk, reads them,
//      and stores a partial sum per row of every other block's units (4 * UNITS f32 rows of NB
//      samples) into that block's shared memory, then the cluster's barrier (K split over the
//      cluster, as recurrence_fwd.cu's CL), and each block reads the parts it got.
// Modes 4 and 5 load every word of a thread at once, then poll again only the words whose
// flag is behind.
// Built by build.sh-like nvcc lines: nvcc -O3 -arch=sm_90a -DHID=512 -DBATCH=32 -DUNITS=4 ...
//
//   exchange_probe [steps] [cluster] [first mode] [last mode]
// (at hidden 1024 and batch 128: -DHID=1024 -DBATCH=128 -DUNITS=8, modes 13 and 14 with a
// cluster of 2 or 4; modes whose stage does not fit in shared memory are skipped, said so.)

#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#ifndef HID
#define HID 512
#endif
#ifndef BATCH
#define BATCH 32
#endif
#ifndef UNITS
#define UNITS 4
#endif
#define ELEM_BF16 1
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
// (common.cuh's tile fills count a block's threads by NWARPS; this probe sets its own THREADS.)
#ifndef NWARPS
#define NWARPS 8
#endif
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"

#undef THREADS
#define THREADS 256
#define KPAD ((HID + 15) / 16 * 16)
#define PAIRS (KPAD / 2)
// Modes 13 and 14 (common.cuh's NB samples a chunk, NCH chunks): a ring row's pitch (16-bit
// words), and the f32 rows of one block's partial sums for another's units (an LSTM's gates).
#define RP (KPAD + 8)
#define PR (4 * UNITS)
#define MAX_CLUSTER 8

#include "check.cuh"

__device__ __forceinline__ void st_relaxed64(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void ld_relaxed_v2(const unsigned long long* p, unsigned long long& a,
                                              unsigned long long& b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ u32 cl_size() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
// 16 bytes into block `rank`'s shared memory at the address `p` has in this block's.
__device__ __forceinline__ void st_peer16(const u16* p, u32 rank, uint4 v) {
    u32 remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(p)), "r"(rank));
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(remote), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w) : "memory");
}

#ifndef POLLS
#define POLLS 3
#endif
#ifndef POLL_GAP
#define POLL_GAP 150
#endif
template <bool ACQUIRE>
__device__ __forceinline__ u32 ld_counter(const u32* p) {
    u32 v;
    if (ACQUIRE) asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// POLLS loads of the counter in flight, POLL_GAP ns apart: a fresh value arrives every
// round trip / POLLS instead of every round trip.
template <bool ACQUIRE>
__device__ __forceinline__ void poll_pipelined(const u32* counter, u32 target) {
    u32 v[POLLS];
#pragma unroll
    for (int i = 0; i < POLLS; ++i) {
        v[i] = ld_counter<ACQUIRE>(counter);
        if (i + 1 < POLLS) __nanosleep(POLL_GAP);
    }
    for (;;) {
        bool done = false;
#pragma unroll
        for (int i = 0; i < POLLS; ++i) {
            if (v[i] >= target) { done = true; break; }
            v[i] = ld_counter<ACQUIRE>(counter);
        }
        if (done) break;
    }
    if (!ACQUIRE) asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

// A bulk copy into this block's shared memory alone, without common.cuh's bulk_copy's proxy
// fence (mode 12; common.cuh's bulk_multicast and mbarrier helpers serve mode 11).
__device__ __forceinline__ void bulk_copy_unfenced(void* dst, const void* src, u32 bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
probe(int mode, int steps, u16* hx, unsigned long long* ll, u32* counter, unsigned long long* spins) {
    // [2][BATCH][KPAD + 8] (modes 13 and 14: [2][NB][RP]), then 2 mbarriers (mode 14: then the
    // partial sums' slots, [2][MAX_CLUSTER][NB][PR] f32).
    extern __shared__ __align__(16) u16 stage[];
    const int tid = threadIdx.x, u0 = blockIdx.x * UNITS;
    unsigned long long spun = 0;
    const bool chunked = mode == 13 || mode == 14;
    unsigned long long* bars = (unsigned long long*)(stage + 2 * (chunked ? NB : BATCH) * (KPAD + 8));
    float* const part = (float*)(bars + 2);
    const bool bulk = mode == 11 || mode == 12;
    if (bulk || chunked) {
        if (tid == 0) {
            mbar_init(bars);
            mbar_init(bars + 1);
        }
        cluster_barrier();
    }
    // Modes 13 and 14: the ring slots' mbarrier phases, and what the reads of the stage saw (kept
    // in `spins`, so that the reads stay).
    u32 phase[2] = {0u, 0u};
    u32 seen = 0;
    // Every thread reads rows 0..nb of `slot`, columns c0..c1 (16-bit words), 16 bytes a load.
    auto read_slot = [&](const u16* slot, int nb, int c0, int c1) {
        const int w = (c1 - c0) / 8;
        for (int q = tid; q < nb * w; q += THREADS) {
            uint4 v = *(const uint4*)(slot + (q / w) * RP + c0 + (q % w) * 8);
            seen ^= v.x ^ v.y ^ v.z ^ v.w;
        }
    };
    for (int s = 0; s < steps; ++s) {
        const int slot = s & 1, prev = (s + 1) & 1;
        if (mode == 1 || mode == 2 || mode == 6 || mode == 8 || bulk || chunked) {
            for (int i = tid; i < UNITS * BATCH; i += THREADS) {
                int u = u0 + i % UNITS, n = i / UNITS;
                if (u < HID) hx[(size_t)slot * BATCH * KPAD + n * KPAD + u] = (u16)(s + n);
            }
        }
        if (mode <= 2 || mode == 6 || bulk || chunked) {
            grid_arrive(counter);
            grid_wait(counter, (u32)(s + 1) * gridDim.x);
        }
        if (mode == 9 || mode == 10) {
            grid_arrive(counter);
            if (tid == 0) {
                const u32 target = (u32)(s + 1) * gridDim.x;
                if (mode == 9) poll_pipelined<true>(counter, target);
                else poll_pipelined<false>(counter, target);
            }
            __syncthreads();
        }
        if (mode == 7 || mode == 8) {
            // The cluster's blocks have all stored; block 0 of it arrives for them.
            cluster_barrier();
            if (ctarank() == 0 && tid == 0) {
                arrive_release(counter);
                wait_acquire(counter, (u32)(s + 1) * (gridDim.x / cl_size()));
            }
            cluster_barrier();
        }
        if (mode == 6 || mode == 8) {
            const int cl = cl_size(), rank = ctarank(), rows = BATCH / cl, r0 = rank * rows;
            const u16* src = hx + (size_t)slot * BATCH * KPAD;
            for (int q = tid; q < rows * (KPAD / 8); q += THREADS) {
                int n = r0 + q / (KPAD / 8), j = (q % (KPAD / 8)) * 8;
                cp_async16(stage + n * (KPAD + 8) + j, src + n * KPAD + j);
            }
            cp_async_commit();
            cp_async_wait_all();
            __syncthreads();
            for (int q = tid; q < rows * (KPAD / 8); q += THREADS) {
                int n = r0 + q / (KPAD / 8), j = (q % (KPAD / 8)) * 8;
                uint4 v = *(const uint4*)(stage + n * (KPAD + 8) + j);
                for (int peer = 1; peer < cl; ++peer) st_peer16(stage + n * (KPAD + 8) + j, (rank + peer) % cl, v);
            }
            cluster_barrier();
        }
        if (bulk) {
            // Slot s & 1's stage and mbarrier, in its (s >> 1)-th phase.
            u16* dst = stage + slot * BATCH * (KPAD + 8);
            unsigned long long* bar = bars + slot;
            const u16* src = hx + (size_t)slot * BATCH * KPAD;
            const int cl = mode == 11 ? cl_size() : 1, rank = mode == 11 ? ctarank() : 0;
            const int rows = BATCH / cl, r0 = rank * rows;
            if (tid == 0) mbar_expect(bar, BATCH * KPAD * 2);
            if (tid < rows) {
                int n = r0 + tid;
                if (mode == 11) {
                    bulk_multicast(dst + n * (KPAD + 8), src + n * KPAD, KPAD * 2, bar, (unsigned short)((1u << cl) - 1));
                } else {
                    asm volatile("fence.proxy.async.global;" ::: "memory");
                    bulk_copy_unfenced(dst + n * (KPAD + 8), src + n * KPAD, KPAD * 2, bar);
                }
            }
            mbar_wait(bar, (u32)(s >> 1) & 1);
        }
        if (mode == 13) {
            const u32 cl = cl_size(), rank = ctarank();
            const u16* src = hx + (size_t)slot * BATCH * KPAD;
            // Chunk ch's rows into ring slot ch & 1 of every block of the cluster, row r by block
            // r % cl; each block's mbarrier counts all of the chunk's bytes.
            auto issue = [&](int ch) {
                const int n0 = ch * NB, nb = min(NB, BATCH - n0);
                u16* dst = stage + (ch & 1) * NB * RP;
                unsigned long long* bar = bars + (ch & 1);
                if (tid == 0) mbar_expect(bar, nb * KPAD * 2);
                if (tid < nb && (u32)tid % cl == rank)
                    bulk_multicast(dst + tid * RP, src + (size_t)(n0 + tid) * KPAD, KPAD * 2, bar,
                                   (unsigned short)((1u << cl) - 1));
            };
            issue(0);
            if (NCH > 1) issue(1);
            for (int ch = 0; ch < NCH; ++ch) {
                mbar_wait(bars + (ch & 1), phase[ch & 1]);
                phase[ch & 1] ^= 1;
                read_slot(stage + (ch & 1) * NB * RP, min(NB, BATCH - ch * NB), 0, KPAD);
                // Every block of the cluster is past its reads of the slot: the chunk after next.
                if (ch + 2 < NCH) {
                    cluster_barrier();
                    issue(ch + 2);
                }
            }
        }
        if (mode == 14) {
            const u32 cl = cl_size(), rank = ctarank();
            const int cw = KPAD / cl, c0 = rank * cw;
            const u16* src = hx + (size_t)slot * BATCH * KPAD;
            // This block's columns of chunk ch's rows into ring slot ch & 1.
            auto copy = [&](int ch) {
                const int n0 = ch * NB, nb = min(NB, BATCH - n0);
                u16* dst = stage + (ch & 1) * NB * RP;
                for (int q = tid; q < nb * (cw / 8); q += THREADS) {
                    int n = q / (cw / 8), j = c0 + (q % (cw / 8)) * 8;
                    cp_async16(dst + n * RP + j, src + (size_t)(n0 + n) * KPAD + j);
                }
                cp_async_commit();
            };
            copy(0);
            for (int ch = 0; ch < NCH; ++ch) {
                if (ch + 1 < NCH) {
                    copy(ch + 1);
                    cp_async_wait_pending(1);
                } else {
                    cp_async_wait_pending(0);
                }
                __syncthreads();
                const int nb = min(NB, BATCH - ch * NB);
                read_slot(stage + (ch & 1) * NB * RP, nb, c0, c0 + cw);
                // A partial sum per row of each other block's units, into its slot [ch & 1][rank].
                for (u32 peer = 1; peer < cl; ++peer) {
                    const u32 to = (rank + peer) % cl;
                    float* dst = part + ((ch & 1) * MAX_CLUSTER + rank) * NB * PR;
                    for (int q = tid; q < NB * PR / 4; q += THREADS)
                        st_peer16((const u16*)(dst + q * 4), to, make_uint4(seen, q, ch, peer));
                }
                cluster_barrier();
                // The parts this block got from the others.
                for (u32 peer = 1; peer < cl; ++peer) {
                    const float* got = part + ((ch & 1) * MAX_CLUSTER + (rank + peer) % cl) * NB * PR;
                    for (int q = tid; q < NB * PR / 4; q += THREADS) seen ^= ((const u32*)got)[q * 4];
                }
            }
        }
        if (mode == 2 || mode == 3) {
            const u16* src = hx + (size_t)slot * BATCH * KPAD;  // what the step just stored
            for (int q = tid; q < BATCH * (KPAD / 8); q += THREADS) {
                int n = q / (KPAD / 8), j = (q % (KPAD / 8)) * 8;
                cp_async16(stage + n * (KPAD + 8) + j, src + n * KPAD + j);
            }
            cp_async_commit();
            cp_async_wait_all();
            __syncthreads();
        }
        if (mode == 4 || mode == 5) {
            // Words of two elements and the step's flag: [2][BATCH][PAIRS]. First step s - 1's
            // words (flag s) are read, two words a load; then h_s is stored (flag s + 1), as
            // the forward reads h_{t-1} before it makes h_t (a block storing into a slot has read
            // every block's h of the step after the slot's last reader finished with it).
            const unsigned long long* src = ll + (size_t)prev * BATCH * PAIRS;
            const u32 want = mode == 4 ? (u32)s : 0u;
            constexpr int PER = (BATCH * (PAIRS / 2) + THREADS - 1) / THREADS;
            if (s > 0 || mode == 5) {
                unsigned long long a[PER], b[PER];
#pragma unroll
                for (int k = 0; k < PER; ++k) {
                    int q = tid + k * THREADS, n = q / (PAIRS / 2), p = (q % (PAIRS / 2)) * 2;
                    if (q < BATCH * (PAIRS / 2)) ld_relaxed_v2(src + n * PAIRS + p, a[k], b[k]);
                }
                ++spun;
#pragma unroll
                for (int k = 0; k < PER; ++k) {
                    int q = tid + k * THREADS, n = q / (PAIRS / 2), p = (q % (PAIRS / 2)) * 2;
                    if (q < BATCH * (PAIRS / 2)) {
                        while (mode == 4 && ((u32)(a[k] >> 32) < want || (u32)(b[k] >> 32) < want)) {
                            ld_relaxed_v2(src + n * PAIRS + p, a[k], b[k]);
                            ++spun;
                        }
                        *(u32*)(stage + n * (KPAD + 8) + 2 * p) = (u32)a[k];
                        *(u32*)(stage + n * (KPAD + 8) + 2 * p + 2) = (u32)b[k];
                    }
                }
            }
            __syncthreads();
            unsigned long long* mine = ll + (size_t)slot * BATCH * PAIRS;
            if (mode == 4) {
                for (int i = tid; i < UNITS / 2 * BATCH; i += THREADS) {
                    int p = u0 / 2 + i % (UNITS / 2), n = i / (UNITS / 2);
                    if (2 * p < HID)
                        st_relaxed64(mine + n * PAIRS + p, ((unsigned long long)(s + 1) << 32) | (u32)(s + n));
                }
            }
        }
    }
    if (tid == 0) spins[blockIdx.x] = spun + (seen == 0xdeadbeefu);
    if (mode <= 2 || mode >= 6) {
        if (mode == 7 || mode == 8 || bulk || chunked) cluster_barrier();
        grid_leave(counter);
    }
}

int main(int argc, char** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 2000;
    const int cluster = argc > 2 ? atoi(argv[2]) : 4;
    const int blocks = (HID + UNITS - 1) / UNITS;
    u16* hx;
    unsigned long long *ll, *spins;
    u32* counter;
    CHECK(cudaMalloc(&hx, (size_t)2 * BATCH * KPAD * 2));
    CHECK(cudaMalloc(&ll, (size_t)2 * BATCH * PAIRS * 8));
    CHECK(cudaMalloc(&counter, 256));
    CHECK(cudaMalloc(&spins, blocks * 8));
    // Modes 2-6, 8, 11 and 12 hold all of h twice; 13 and 14 two chunks and the partial sums;
    // the others read no shared memory.
    const size_t whole_smem = (size_t)2 * BATCH * (KPAD + 8) * 2 + 16;
    const size_t ring_smem = (size_t)2 * NB * RP * 2 + 16 + (size_t)2 * MAX_CLUSTER * NB * PR * 4;
    int most_smem = 0;
    CHECK(cudaDeviceGetAttribute(&most_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("HID=%d BATCH=%d UNITS=%d blocks=%d steps=%d cluster=%d (modes 6-8, 11, 13, 14)\n", HID, BATCH, UNITS,
           blocks, steps, cluster);
    const int first = argc > 3 ? atoi(argv[3]) : 0, last = argc > 4 ? atoi(argv[4]) : 14;
    for (int mode = first; mode <= last; ++mode) {
        const bool stageless = mode == 0 || mode == 1 || mode == 7 || mode == 9 || mode == 10;
        const size_t smem = (mode == 13 || mode == 14) ? ring_smem : stageless ? 16 : whole_smem;
        if (smem > (size_t)most_smem || (mode == 14 && cluster > MAX_CLUSTER)) {
            printf("mode %d: does not fit (%zu bytes of shared memory, at most %d)\n", mode, smem, most_smem);
            continue;
        }
        CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        std::vector<float> ns;
        double spun_per = 0;
        for (int r = 0; r < 7; ++r) {
            CHECK(cudaMemset(counter, 0, 256));
            CHECK(cudaMemset(hx, 0, (size_t)2 * BATCH * KPAD * 2));
            CHECK(cudaMemset(ll, 0, (size_t)2 * BATCH * PAIRS * 8));
            void* args[] = {&mode, (void*)&steps, &hx, &ll, &counter, &spins};
            CHECK(cudaEventRecord(e0));
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(blocks);
            cfg.blockDim = dim3(THREADS);
            cfg.dynamicSmemBytes = smem;
            cudaLaunchAttribute attrs[2];
            attrs[0].id = cudaLaunchAttributeCooperative;
            attrs[0].val.cooperative = 1;
            attrs[1].id = cudaLaunchAttributeClusterDimension;
            attrs[1].val.clusterDim.x = ((mode >= 6 && mode <= 8) || mode == 11 || mode >= 13) ? cluster : 1;
            attrs[1].val.clusterDim.y = 1;
            attrs[1].val.clusterDim.z = 1;
            cfg.attrs = attrs;
            cfg.numAttrs = 2;
            CHECK(cudaLaunchKernelExC(&cfg, (const void*)probe, args));
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2) ns.push_back(ms * 1e6f / steps);
            std::vector<unsigned long long> h(blocks);
            CHECK(cudaMemcpy(h.data(), spins, blocks * 8, cudaMemcpyDeviceToHost));
            double sum = 0;
            for (auto v : h) sum += v;
            spun_per = sum / blocks / steps;
        }
        std::sort(ns.begin(), ns.end());
        printf("mode %d: %.0f ns a step (min %.0f, max %.0f)", mode, ns[ns.size() / 2], ns[0], ns.back());
        if (mode == 4 || mode == 5) printf(", thread 0 loads its words %.2f times a step", spun_per);
        printf("\n");
    }
    return 0;
}
