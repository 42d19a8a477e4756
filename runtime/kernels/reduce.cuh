/*
 * reduce.cuh: sums and maxima across a warp, a group of warps and a block,
 * in a fixed order (the same inputs give the same bits), for the row
 * statistics of the norm and softmax families.
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

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* The max of v over the block's THREADS threads, as block_sum. fmaxf drops a
 * NaN; callers that must see one carry it through their sums. */
template <int THREADS>
__device__ __forceinline__ float block_max(float v, float *scratch)
{
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    constexpr int W = THREADS / 32;
    v = warp_max(v);
    if (W == 1) return v;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = lane < W ? scratch[lane] : -INFINITY;
    t = warp_max(t);
    __syncthreads();
    return t;
}

/* Two sums at once over each GROUP consecutive threads of a THREADS-thread
 * block (GROUP a multiple of 32 dividing THREADS), returned to every thread
 * of the group. Every thread of the block must call it (it syncs the block
 * when a group spans warps); `scratch` holds THREADS / 32 float2. */
template <int GROUP, int THREADS>
__device__ __forceinline__ float2 group_sum2(float2 v, float2 *scratch)
{
    static_assert(GROUP % 32 == 0 && THREADS % GROUP == 0 && THREADS <= 1024, "whole warps, whole groups");
    v.x = warp_sum(v.x);
    v.y = warp_sum(v.y);
    if (GROUP == 32) return v;
    constexpr int W = GROUP / 32;
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    const int first = warp / W * W;
    float2 r = make_float2(0.0f, 0.0f);
#pragma unroll
    for (int w = 0; w < W; ++w) {
        r.x += scratch[first + w].x;
        r.y += scratch[first + w].y;
    }
    __syncthreads();
    return r;
}

} /* namespace kiln */

#endif /* KILN_KERNELS_REDUCE_CUH */
