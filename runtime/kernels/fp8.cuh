/*
 * fp8.cuh: FP8 e4m3 stores for kernels that feed FP8 GEMMs (sm_89 and newer
 * have the conversion instructions): round to nearest, saturate to ±448, NaN
 * kept; and the running max |y| such outputs report for delayed scaling.
 */
#ifndef KILN_KERNELS_FP8_CUH
#define KILN_KERNELS_FP8_CUH

#include <cuda_fp8.h>
#include <stdint.h>

namespace kiln {

__device__ __forceinline__ uint8_t e4m3(float v)
{
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}

/* Stores o[0..V)·scale as V e4m3 bytes in one V-byte aligned access. */
template <int V>
__device__ __forceinline__ void store_e4m3(uint8_t *p, const float (&o)[V], float scale)
{
    static_assert(V == 4 || V == 8, "a pack of 4 or 8 bytes");
    uint16_t pairs[V / 2];
#pragma unroll
    for (int e = 0; e < V / 2; ++e)
        pairs[e] = (uint16_t)__nv_cvt_float2_to_fp8x2(make_float2(o[2 * e] * scale, o[2 * e + 1] * scale),
                                                      __NV_SATFINITE, __NV_E4M3);
    if constexpr (V == 8) {
        uint2 u;
        memcpy(&u, pairs, 8);
        *reinterpret_cast<uint2 *>(p) = u;
    } else {
        uint32_t u;
        memcpy(&u, pairs, 4);
        *reinterpret_cast<uint32_t *>(p) = u;
    }
}

/* Raises *amax to the float whose bits are `bits` (a non-negative float, or
 * a NaN, which as an integer lies above every number) once a warp. Every
 * lane of the warp must call it. */
__device__ __forceinline__ void amax_update(float *amax, unsigned bits)
{
    bits = __reduce_max_sync(0xffffffffu, bits);
    if (threadIdx.x % 32 == 0) atomicMax(reinterpret_cast<unsigned *>(amax), bits);
}

} /* namespace kiln */

#endif /* KILN_KERNELS_FP8_CUH */
