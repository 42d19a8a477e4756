/*
 * reduce.cuh: sums across a warp and across a block, in a fixed order (the
 * same inputs give the same bits), for the row statistics of the norm family.
 */
#ifndef KILN_KERNELS_REDUCE_CUH
#define KILN_KERNELS_REDUCE_CUH

namespace kiln {

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The sum of v over the block's THREADS threads, returned to every thread.
 * `scratch` holds THREADS / 32 floats; the call ends with the block in step,
 * so the scratch can be reused by the next call. */
template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float *scratch)
{
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    constexpr int W = THREADS / 32;
    v = warp_sum(v);
    if (W == 1) return v;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = lane < W ? scratch[lane] : 0.0f;
    t = warp_sum(t);
    __syncthreads();
    return t;
}

} /* namespace kiln */

#endif /* KILN_KERNELS_REDUCE_CUH */
