// What the forward's pushed exchange (recurrence_fwd.cu's PUSH) costs with nothing else in a
// step: every block of one cluster of CLUSTER blocks pushes its share of h_t (BYTES_PER_BLOCK, in
// 16-byte st.async stores spread over its 8 warps) into the shared memory of every block of the
// cluster, each store completing its bytes on the receiving block's mbarrier of the step's parity,
// then waits, as the kernel does at its next step, for every block's bytes. Between its pushes and
// the wait each block spins `work` cycles (the stores and the gate math that the kernel does
// there): past the exchange's own latency a step takes the work's time, below it the latency's.
// Mode 2 stores the block's share into its own shared memory instead and copies it to every
// block with one bulk copy each (cp.async.bulk shared::cluster.shared::cta, by threads 0..CLUSTER).
// Mode 3 pulls instead: each block stores its share into its own shared memory, the cluster's
// barrier, then each block loads every block's share (ld.shared::cluster, 16 bytes a load) into its
// stage; the work follows, then a second cluster barrier (no block overwrites its share while
// another may still read it).
// Mode 4 stores with plain remote stores (st.shared::cluster, 16 bytes each), then after the
// block's barrier threads 0..CLUSTER each release one arrival on a block's mbarrier (which counts
// CLUSTER arrivals a step, no bytes): the stores without st.async's byte counts.
// Mode 0 instead bounces 16 bytes between ranks 0 and CLUSTER - 1 (one thread each): a round trip
// of one store's latency to the other's mbarrier wait.
//
//   nvcc -O3 -arch=sm_90a push_probe.cu -o push_probe
//   push_probe [cluster] [bytes a block pushes] [work cycles ...]

#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include "check.cuh"

// common.cuh's helpers (smem_addr, cluster_address, ctarank, cluster_barrier, mbar_init,
// mbar_expect, mbar_wait, push_v4), as exchange_probe.cu includes it; this probe sets its own
// THREADS.
#define HID 512
#define BATCH 8
#define UNITS 32
#define NWARPS 8
#define ELEM_BF16 1
#include "../../candle-cudnn-rnn/src/kernels/half.cuh"
#include "../../candle-cudnn-rnn/src/persistent/common.cuh"
#undef THREADS

constexpr int THREADS = 256, STEPS = 200;

__device__ __forceinline__ unsigned cluster_blocks() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void push16(unsigned to, unsigned bar, unsigned v) { push_v4(to, bar, v, v, v, v); }
__device__ __forceinline__ void bulk_to(unsigned to, unsigned from, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(to),
                 "r"(from), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ uint4 pull16(unsigned from) {
    uint4 v;
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(from)
                 : "memory");
    return v;
}
__device__ __forceinline__ void store16(unsigned to, unsigned v) {
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(to), "r"(v) : "memory");
}
__device__ __forceinline__ void arrive_remote(unsigned bar) {
    asm volatile("fence.acq_rel.cluster;\n\tmbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar)
                 : "memory");
}
__device__ __forceinline__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

// out[block]: SM cycles a step (thread 0), mean over the steps after the first.
__global__ void exchange(int bytes_per_block, long long work, int mode, long long* out) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned long long* bar = (unsigned long long*)smem;  // [2], by parity
    unsigned char* stage = smem + 16;                     // [2][CLUSTER * bytes_per_block]
    unsigned char* own = stage + 2 * cluster_blocks() * bytes_per_block;  // mode 2: [2][bytes_per_block]
    const unsigned rank = ctarank(), blocks = cluster_blocks(), tid = threadIdx.x;
    const unsigned step_bytes = blocks * bytes_per_block;
    if (tid == 0 && mode == 4) {
        for (int q = 0; q < 2; ++q)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" ::"r"(
                             smem_addr(bar + q)),
                         "r"(blocks)
                         : "memory");
    } else if (tid == 0) {
        mbar_init(bar);
        mbar_init(bar + 1);
        mbar_expect(bar, mode == 0 ? 16 : step_bytes);
        mbar_expect(bar + 1, mode == 0 ? 16 : step_bytes);
    }
    __syncthreads();
    cluster_barrier();
    long long t0 = 0;
    if (mode == 0) {
        // Rank 0 pushes at even steps, the last rank at odd ones; each waits for the other's.
        const unsigned peer = rank == 0 ? blocks - 1 : 0;
        if (tid == 0 && (rank == 0 || rank == blocks - 1)) {
            t0 = clock64();
            for (int t = 0; t < STEPS; ++t) {
                const bool mine = (t % 2 == 0) == (rank == 0);
                unsigned long long* b = bar + (t / 2 & 1);
                if (mine) {
                    push16(cluster_address(smem_addr(stage), peer), cluster_address(smem_addr(b), peer), t);
                } else {
                    mbar_wait<true>(b, (t / 4) & 1);
                    mbar_expect(b, 16);
                }
            }
            out[blockIdx.x] = (clock64() - t0) / STEPS;
        }
        cluster_barrier();
        return;
    }
    const unsigned stores = bytes_per_block / 16 * blocks;  // this block's a step
    if (mode == 3) {
        for (int t = 0; t < STEPS; ++t) {
            if (t == 1) t0 = clock64();
            for (unsigned i = tid; i < bytes_per_block / 16; i += THREADS)
                *(uint4*)(own + i * 16) = make_uint4(t, t, t, t);
            cluster_barrier();
            for (unsigned i = tid; i < stores; i += THREADS) {
                const unsigned from = i % blocks, piece = i / blocks;
                *(uint4*)(stage + from * bytes_per_block + piece * 16) = pull16(cluster_address(smem_addr(own + piece * 16), from));
            }
            spin(work);
            cluster_barrier();
        }
        if (tid == 0) out[blockIdx.x] = (clock64() - t0) / (STEPS - 1);
        return;
    }
    for (int t = 0; t < STEPS; ++t) {
        if (t == 1) t0 = clock64();
        if (t > 0) {
            mbar_wait<true>(bar + ((t + 1) & 1), ((t - 1) >> 1) & 1);
            if (tid == 0 && t + 2 < STEPS && mode != 4) mbar_expect(bar + ((t + 1) & 1), step_bytes);
        }
        if (t + 1 < STEPS && mode == 4) {
            for (unsigned i = tid; i < stores; i += THREADS) {
                const unsigned to = i % blocks, piece = i / blocks;
                unsigned char* at = stage + (t & 1) * step_bytes + rank * bytes_per_block + piece * 16;
                store16(cluster_address(smem_addr(at), to), t);
            }
            __syncthreads();
            if (tid < blocks) arrive_remote(cluster_address(smem_addr(bar + (t & 1)), tid));
        }
        if (t + 1 < STEPS && mode == 2) {
            unsigned char* src = own + (t & 1) * bytes_per_block;
            for (unsigned i = tid; i < bytes_per_block / 16; i += THREADS)
                *(uint4*)(src + i * 16) = make_uint4(t, t, t, t);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncthreads();
            if (tid < blocks) {
                unsigned char* at = stage + (t & 1) * step_bytes + rank * bytes_per_block;
                bulk_to(cluster_address(smem_addr(at), tid), smem_addr(src), bytes_per_block, cluster_address(smem_addr(bar + (t & 1)), tid));
            }
        }
        if (t + 1 < STEPS && mode == 1)
            for (unsigned i = tid; i < stores; i += THREADS) {
                const unsigned to = i % blocks, piece = i / blocks;
                unsigned char* at = stage + (t & 1) * step_bytes + rank * bytes_per_block + piece * 16;
                push16(cluster_address(smem_addr(at), to), cluster_address(smem_addr(bar + (t & 1)), to), t);
            }
        spin(work);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = (clock64() - t0) / (STEPS - 1);
    cluster_barrier();
}

int main(int argc, char** argv) {
    const int cluster = argc > 1 ? atoi(argv[1]) : 16;
    const int bytes = argc > 2 ? atoi(argv[2]) : 512;
    const size_t smem = 16 + 2 * (size_t)cluster * bytes + 2 * bytes;
    CHECK(cudaFuncSetAttribute(exchange, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncSetAttribute(exchange, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    long long* out;
    CHECK(cudaMalloc(&out, cluster * sizeof(long long)));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(cluster);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    auto run = [&](int mode, long long work) {
        long long best = -1, host[64];
        for (int rep = 0; rep < 5; ++rep) {
            CHECK(cudaMemset(out, 0, cluster * sizeof(long long)));
            CHECK(cudaLaunchKernelEx(&cfg, exchange, bytes, work, mode, out));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(host, out, cluster * sizeof(long long), cudaMemcpyDeviceToHost));
            long long m = 0;
            for (int b = 0; b < cluster; ++b) m = host[b] > m ? host[b] : m;
            best = (best < 0 || m < best) ? m : best;
        }
        return best;
    };
    printf("cluster %d: ping-pong %lld cycles a one-way hop (store to the peer's wait)\n", cluster, run(0, 0));
    for (int i = 3; i < argc || i == 3; ++i) {
        const long long work = argc > i ? atoll(argv[i]) : 0;
        printf("cluster %d, %d bytes a block to each block: step %lld cycles (st.async), %lld (bulk copies), %lld (pulls), "
               "%lld (stores and arrivals) with %lld cycles of work\n",
               cluster, bytes, run(1, work), run(2, work), run(3, work), run(4, work), work);
    }
    return 0;
}
