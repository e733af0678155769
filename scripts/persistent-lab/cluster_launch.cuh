// The harnesses' cluster launches: the configuration of `blocks` blocks of `threads` threads with
// `smem` bytes of dynamic shared memory (the kernel allowed that much) in clusters of `cluster`
// blocks, and how many such clusters the GPU holds at once for `kernel`. The configuration points
// at the attribute beside it: fill one in place and launch it from there (`timed_launch`, below).
#pragma once
#include <cuda_runtime.h>
#include "check.cuh"

struct ClusterLaunch {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    int resident;  // clusters at once
};

template <typename Kernel>
static void cluster_launch(ClusterLaunch& l, Kernel kernel, int blocks, int threads, size_t smem, int cluster) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    l.cfg = {};
    l.cfg.gridDim = dim3(blocks);
    l.cfg.blockDim = dim3(threads);
    l.cfg.dynamicSmemBytes = smem;
    l.attr[0].id = cudaLaunchAttributeClusterDimension;
    l.attr[0].val.clusterDim.x = cluster;
    l.attr[0].val.clusterDim.y = 1;
    l.attr[0].val.clusterDim.z = 1;
    l.cfg.attrs = l.attr;
    l.cfg.numAttrs = 1;
    l.resident = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&l.resident, kernel, &l.cfg));
}

// One launch of `kernel` with `args` as `l` configures it, timed by events around it: its
// milliseconds (it checks the launch's errors).
template <typename Kernel, typename Args>
static float timed_launch(const ClusterLaunch& l, Kernel kernel, const Args& args) {
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaEventRecord(e0));
    CHECK(cudaLaunchKernelEx(&l.cfg, kernel, args));
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return ms;
}
