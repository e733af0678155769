// Whether a CUDA graph can start work on a second stream partway through a long kernel on the
// first: the long kernel (standing in for a persistent recurrence on some of the
// multiprocessors) sets a flag in device memory partway through; the second stream waits for
// the flag with cuStreamWaitValue32 and then runs a short kernel (standing in for a GEMM over
// the steps already done) on the idle multiprocessors. Everything is captured into one graph
// and replayed. Prints, for each replay, when the short kernel started and ended relative to
// the long kernel's flag and end (globaltimer, ns); it should start after the flag and end
// before the long kernel does.
//
//   nvcc -O3 -arch=sm_90a wait_value_probe.cu -lcuda -o wait_value_probe && ./wait_value_probe

#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include "check.cuh"

#define CHECK_DRV(x)                                                                \
    do {                                                                            \
        CUresult r = (x);                                                           \
        if (r != CUDA_SUCCESS) {                                                    \
            const char* s = nullptr;                                                \
            cuGetErrorString(r, &s);                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s ? s : "?"); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

__device__ __forceinline__ unsigned long long now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// times: [0] long kernel start, [1] its flag, [2] its end, [3] short kernel start, [4] its end.
__global__ void long_kernel(unsigned* flag, unsigned long long* times, unsigned long long ns) {
    unsigned long long t0 = now();
    if (blockIdx.x == 0 && threadIdx.x == 0) times[0] = t0;
    while (now() - t0 < ns / 2) {
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        times[1] = now();
        asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
    }
    while (now() - t0 < ns) {
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) times[2] = now();
}

__global__ void short_kernel(unsigned long long* times, unsigned long long ns) {
    unsigned long long t0 = now();
    if (blockIdx.x == 0 && threadIdx.x == 0) times[3] = t0;
    while (now() - t0 < ns) {
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) times[4] = now();
}

int main() {
    CHECK(cudaFree(0));
    int dev = 0, sms = 0, can_wait = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK_DRV(cuDeviceGetAttribute(&can_wait, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, dev));
    printf("multiprocessors %d, stream wait value NOR supported: %d\n", sms, can_wait);
    unsigned* flag;
    unsigned long long* times;
    CHECK(cudaMalloc(&flag, 4));
    CHECK(cudaMalloc(&times, 5 * 8));
    cudaStream_t a, b;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    const int long_blocks = sms / 2, short_blocks = sms - long_blocks;
    const unsigned long long long_ns = 200000, short_ns = 20000;

    CHECK(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(flag, 0, 4, a));
    CHECK(cudaEventRecord(fork, a));
    CHECK(cudaStreamWaitEvent(b, fork, 0));
    long_kernel<<<long_blocks, 128, 0, a>>>(flag, times, long_ns);
    CHECK_DRV(cuStreamWaitValue32((CUstream)b, (CUdeviceptr)flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
    short_kernel<<<short_blocks, 128, 0, b>>>(times, short_ns);
    CHECK(cudaEventRecord(join, b));
    CHECK(cudaStreamWaitEvent(a, join, 0));
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(a, &graph));
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    printf("captured %zu nodes\n", nodes);
    for (int r = 0; r < 5; ++r) {
        CHECK(cudaGraphLaunch(exec, a));
        CHECK(cudaStreamSynchronize(a));
        unsigned long long t[5];
        CHECK(cudaMemcpy(t, times, sizeof t, cudaMemcpyDeviceToHost));
        long long s0 = (long long)(t[3] - t[1]), s1 = (long long)(t[4] - t[2]);
        printf("replay %d: long kernel flag at %llu ns, end %llu; short kernel start %+lld ns from the "
               "flag, end %+lld ns from the long kernel's end (%s)\n",
               r, t[1] - t[0], t[2] - t[0], s0, s1, (s0 >= 0 && s1 < 0) ? "overlapped" : "NOT overlapped");
    }
    return 0;
}
