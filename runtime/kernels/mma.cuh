/*
 * mma.cuh: the tensor-core instructions of the mma.sync paths: m16n8k16 with
 * f32 accumulators (sm_80 on), the same tile as two m16n8k8 (sm_75, f16),
 * m16n8k32 on FP8 (sm_89 on), ldmatrix (plain and transposed, sm_75 on),
 * stmatrix (sm_90), and the 16-byte shared-memory fills: cp.async with
 * zero fill (sm_80 on) or plain loads (sm_75).
 *
 * Fragment layouts (lane = 4·g + t):
 *   A 16×16: a0 (row g, cols 2t, 2t+1), a1 (row g+8, same), a2 (row g, cols 2t+8, 2t+9), a3 (row g+8, same)
 *   B 16×8:  b0 (rows 2t, 2t+1, col g), b1 (rows 2t+8, 2t+9, col g)
 *   C 16×8:  c0, c1 (row g, cols 2t, 2t+1), c2, c3 (row g+8, same)
 * FP8's A 16×32 and B 32×8 take the same registers at the same byte offsets
 * (4 elements where 16 bits have 2), so the same ldmatrix addressing loads
 * them from rows of k.
 */
#ifndef KILN_KERNELS_MMA_CUH
#define KILN_KERNELS_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace kiln {

template <typename T> struct Mma16816;

template <> struct Mma16816<__half> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

template <> struct Mma16816<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

/* m16n8k32 on FP8 (sm_89 on): d += a·b, the fragments in 16-bit mma's
 * registers with four elements each. */
template <typename T> struct Mma16832;

#define KILN_MMA16832(T, NAME)                                                                                      \
    template <> struct Mma16832<T> {                                                                               \
        static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) \
        {                                                                                                          \
            asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." NAME "." NAME ".f32 {%0,%1,%2,%3}, "             \
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                                \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                          \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                          \
        }                                                                                                          \
    };
KILN_MMA16832(__nv_fp8_e4m3, "e4m3")
KILN_MMA16832(__nv_fp8_e5m2, "e5m2")
#undef KILN_MMA16832

/* sm_75 has no k16 mma: the m16n8k16 tile as k 0..7 (a0, a1, b0) then
 * k 8..15 (a2, a3, b1), the fragment layouts above unchanged. f16 only. */
struct Mma1688Pair {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(b0));
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[2]), "r"(a[3]), "r"(b1));
    }
};

/* Two floats rounded to T and packed low, high into one register. */
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* Four 8×8 b16 matrices; lane i gives the address of row i % 8 of matrix i / 8. */
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *smem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}

/* The same, each matrix transposed. */
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void *smem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}

/* The same at a shared-memory address (the TMA kernels' tiles). */
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], unsigned smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

/* ldmatrix_x4's inverse (sm_90): lane i gives the address of row i % 8 of
 * matrix i / 8, and r[j] is its part of matrix j as ldmatrix_x4 hands it out. */
__device__ __forceinline__ void stmatrix_x4(unsigned smem, const uint32_t (&r)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(smem), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3])
                 : "memory");
}

/* 16 bytes global → shared, asynchronously; zeros when !valid (src unread). */
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, bool valid)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    const int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* Shared-memory fills as a tile loop issues them: asynchronous (sm_80 on),
 * committed as a group and waited for before the barrier that publishes the
 * tile, or ... */
struct CopyAsync {
    static __device__ __forceinline__ void copy16(void *smem, const void *gmem, bool valid)
    {
        cp_async_16(smem, gmem, valid);
    }
    static __device__ __forceinline__ void commit() { cp_async_commit(); }
    static __device__ __forceinline__ void wait_all() { cp_async_wait<0>(); }
};

/* ... or a plain 16-byte load and store (sm_75), done when issued. */
struct CopySync {
    static __device__ __forceinline__ void copy16(void *smem, const void *gmem, bool valid)
    {
        *reinterpret_cast<uint4 *>(smem) = valid ? *reinterpret_cast<const uint4 *>(gmem) : make_uint4(0, 0, 0, 0);
    }
    static __device__ __forceinline__ void commit() {}
    static __device__ __forceinline__ void wait_all() {}
};

} /* namespace kiln */

#endif /* KILN_KERNELS_MMA_CUH */
