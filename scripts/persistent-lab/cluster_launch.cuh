// The harnesses' cluster launches: the configuration of `blocks` blocks of `threads` threads with
// `smem` bytes of dynamic shared memory (the kernel allowed that much) in clusters of `cluster`
// blocks, and how many such clusters the GPU holds at once for `kernel`. The configuration points
// at the attribute beside it: fill one in place and launch it from there.
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
