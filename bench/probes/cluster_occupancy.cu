/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 54"), built by hand on a GPU machine:
 *   nvcc -O3 -arch=sm_90 -o co bench/probes/cluster_occupancy.cu && ./co
 *
 * The question: how many of the GPU's multiprocessors can clusters of 1 to 8 blocks of the
 * winograd-fused cluster kernel's size (512 threads, 128 registers, ~212 KB of shared memory: one
 * block an SM) keep busy at once? Sharing a chunk's weights between two tile blocks needs clusters
 * of 6 (3 blocks of rows x 2 tile blocks), and a cluster's blocks must share a GPC: where a GPC's
 * SMs are no multiple of the cluster size, some stay idle. cudaOccupancyMaxActiveClusters says how
 * many clusters fit; a launch of many clusters, each block recording its SM, says which SMs ran.
 * Output: per cluster size, the clusters resident at once, the SMs they cover, and the SMs used. */
#include "probe.h"

enum { THREADS = 512, SHARED = 212 * 1024, BLOCKS = 132 * 64 };

__global__ void __launch_bounds__(THREADS, 1) where(unsigned *sm_of_block)
{
    extern __shared__ float pad[];
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        pad[0] = (float)sm; /* the shared memory is asked for, so one block an SM */
        sm_of_block[blockIdx.x] = sm + (unsigned)(pad[0] < 0.0f);
    }
}

int main()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED));
    CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    unsigned *d_sm, *h_sm = (unsigned *)malloc(sizeof(unsigned) * BLOCKS);
    CK(cudaMalloc(&d_sm, sizeof(unsigned) * BLOCKS));
    for (int size = 1; size <= 8; ++size) {
        int blocks = BLOCKS / size * size;
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = (unsigned)size, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)blocks), cfg.blockDim = dim3(THREADS), cfg.dynamicSmemBytes = SHARED;
        cfg.attrs = &attr, cfg.numAttrs = 1;
        int clusters = 0;
        CK(cudaOccupancyMaxActiveClusters(&clusters, where, &cfg));
        CK(cudaMemset(d_sm, 0xff, sizeof(unsigned) * BLOCKS));
        CK(cudaLaunchKernelEx(&cfg, where, d_sm));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h_sm, d_sm, sizeof(unsigned) * (size_t)blocks, cudaMemcpyDeviceToHost));
        int used[1024] = {0}, count = 0;
        for (int b = 0; b < blocks; ++b)
            if (h_sm[b] < 1024 && !used[h_sm[b]]++)
                ++count;
        printf("clusters of %d: %d resident at once (%d SMs of %d), %d SMs ran blocks\n", size, clusters,
               clusters * size, prop.multiProcessorCount, count);
    }
    CK(cudaFree(d_sm));
    free(h_sm);
    return 0;
}
