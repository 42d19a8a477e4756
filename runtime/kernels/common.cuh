/*
 * common.cuh: what every generated kernel file shares: f32 conversion of the
 * storage types, 16-byte packs, alignment arithmetic, and the launch check
 * that turns a CUDA error into a kiln status with a message.
 */
#ifndef KILN_KERNELS_COMMON_CUH
#define KILN_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "runtime/error.h"
#include "runtime/variant.h"

namespace kiln {

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_f32(float x);
template <> __device__ __forceinline__ float from_f32<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

/* 2^x by the special-function unit (ex2.approx, subnormals flushed): 2^-Inf = 0. */
__device__ __forceinline__ float exp2_approx(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* 2^x on the FMA pipe, for x below 127, where the special-function unit
 * (ex2, a quarter of the FMA pipe's rate) is the busier one: x = j + f with
 * j an integer (rounded to nearest by adding 1.5·2^23, 127 more so that the
 * low bits hold j + 127, 2^j's exponent field) and f in [-0.5, 0.5]; 2^f by a
 * cubic (relative error under 7.5e-5), times 2^j by its bits. x at -126.5
 * and under (-Inf included) gives 0, as ex2.approx.ftz does below -126; NaN
 * stays NaN (max.NaN keeps it). */
__device__ __forceinline__ float exp2_fma(float x)
{
    constexpr float kShift = 12583039.0f; /* 1.5·2^23 + 127 */
    float xc;
    asm("max.NaN.f32 %0, %1, 0fC2FE0000;" : "=f"(xc) : "f"(x)); /* max(x, -127) */
    const float t = xc + kShift;
    const float f = xc - (t - kShift);
    const float p = fmaf(fmaf(fmaf(0.05517146f, f, 0.24261086f), f, 0.69326097f), f, 0.99992812f);
    return p * __uint_as_float(__float_as_uint(t) << 23); /* 2^j: 0 for j = -127, the shift drops t's own exponent */
}

/* V elements of T in one 16-byte (or smaller, for V = 1) aligned access. */
template <typename T, int V> struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T *p)
{
    return *reinterpret_cast<const Pack<T, V> *>(p);
}

/* Streaming (evict-first) 16-byte load and store for data touched once. */
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack_stream(const T *p)
{
    static_assert(sizeof(Pack<T, V>) == 16, "streaming packs are 16 bytes");
    uint4 u = __ldcs(reinterpret_cast<const uint4 *>(p));
    Pack<T, V> r;
    memcpy(&r, &u, 16);
    return r;
}

template <typename T, int V>
__device__ __forceinline__ void store_pack_stream(T *p, const Pack<T, V> &r)
{
    static_assert(sizeof(Pack<T, V>) == 16, "streaming packs are 16 bytes");
    uint4 u;
    memcpy(&u, &r, 16);
    __stcs(reinterpret_cast<uint4 *>(p), u);
}

/* Elements of T before the first 16-byte boundary at or after p. */
template <typename T> inline int64_t head_to_16(const void *p)
{
    return (int64_t)(((16u - ((uintptr_t)p & 15u)) & 15u) / sizeof(T));
}

inline bool aligned_16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Blocks for `work` items of `per_block` each, capped so the grid-stride
 * loops of the kernels take over past a million blocks. */
inline unsigned int grid_for(int64_t work, int64_t per_block)
{
    int64_t b = (work + per_block - 1) / per_block;
    if (b < 1) b = 1;
    if (b > (1 << 20)) b = 1 << 20;
    return (unsigned int)b;
}

/* Blocks of a persistent kernel for `tiles` equal tiles on `sms` SMs: as
 * few as still take the rounds that one block an SM would, so that every
 * block walks the same number of tiles (4096 on 132 SMs: 128 blocks of 32,
 * not 4 of 32 beside 128 of 31, which end with 128 SMs idle for a tile). */
inline unsigned int persistent_grid(int64_t tiles, int64_t sms)
{
    if (tiles < 1) return 1;
    if (sms < 1) sms = 1;
    const int64_t rounds = (tiles + sms - 1) / sms;
    return (unsigned int)((tiles + rounds - 1) / rounds);
}

/* After a launch: the launch's own error, as a status and a message. */
inline kiln_status check_launch(const char *variant)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return KILN_STATUS_SUCCESS;
    return kiln_fail(KILN_STATUS_CUDA_ERROR, "%s: launch failed: %s (%s)", variant, cudaGetErrorString(e),
                     cudaGetErrorName(e));
}

template <typename Kernel>
inline kiln_status kernel_attributes(Kernel k, const char *variant, kiln_kernel_attributes *out)
{
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, k);
    if (e != cudaSuccess)
        return kiln_fail(KILN_STATUS_CUDA_ERROR, "%s: cudaFuncGetAttributes: %s", variant, cudaGetErrorString(e));
    out->registers = fa.numRegs;
    out->static_smem_bytes = (int)fa.sharedSizeBytes;
    out->max_threads = fa.maxThreadsPerBlock;
    return KILN_STATUS_SUCCESS;
}

} /* namespace kiln */

#endif /* KILN_KERNELS_COMMON_CUH */
