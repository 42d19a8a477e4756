/*
 * wgmma.cuh: Hopper's warpgroup MMA (sm_90a only) around the instructions
 * themselves, which the templates write per shape: shared-memory matrix
 * descriptors, the fences and the group waits.
 *
 * A wgmma.mma_async runs on after it is issued, reading its operands and
 * writing its accumulators until a wgmma.wait_group covers it. The compiler
 * sees the asm statement as done when issued, so code that reads the
 * accumulators (or rewrites an A operand held in registers) after a wait
 * first passes them through wgmma_keep, which it may not move above the
 * wait.
 */
#ifndef KILN_KERNELS_WGMMA_CUH
#define KILN_KERNELS_WGMMA_CUH

#include <stdint.h>

namespace kiln {

/* The descriptor of a tile at shared address s in the 128-byte swizzle
 * (16-byte chunk c of 128-byte row r at c ^ r % 8, the tile on 1024 bytes).
 * K-major (rows along M or N, 64 k a row): 8-row groups `stride` bytes
 * apart, `lead` unused (16). MN-major (rows along k, 64 M or N elements a
 * row): blocks of 64 M or N columns `lead` bytes apart, 8-row k groups
 * `stride` bytes apart. */
__device__ __forceinline__ uint64_t wgmma_desc(unsigned s, unsigned lead, unsigned stride)
{
    return (uint64_t)((s & 0x3FFFF) >> 4) | (uint64_t)(lead >> 4) << 16 | (uint64_t)(stride >> 4) << 32 |
           (uint64_t)1 << 62;
}

/* The descriptor of the tile `bytes` past the one d describes, lead and
 * stride the same: only the address field (bits 0 - 13, the address / 16)
 * moves, and a shared address stays under 2^18, so the field never carries
 * into the lead's bits; one 32-bit add on the low word, not wgmma_desc's
 * mask, shift and or of a new address. */
__device__ __forceinline__ uint64_t desc_at(uint64_t d, unsigned bytes)
{
    return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
}

/* d, its high word (stride, swizzle) made a value ptxas cannot fold: as a
 * known constant, ptxas writes it into the operand registers again before
 * each wgmma (two UMOVs a wgmma); as a value it keeps it there. The value:
 * %dynamic_smem_size >> 31, which is 0 (shared memory is under 2 GB). */
__device__ __forceinline__ uint64_t desc_held(uint64_t d)
{
    unsigned z;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(z));
    return d | (uint64_t)(z >> 31) << 32;
}

/* Registers written by ordinary instructions are ready for the next wgmma. */
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/* The wgmmas issued since the last commit become one group. */
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/* Waits until at most N groups are in flight (groups finish in order). */
template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Shared memory written through the generic proxy (stores, cp.async) is
 * visible to wgmma's reads (the async proxy). */
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* Pins f32 accumulators (or packed A fragments) after a wait: see above. */
template <int N> __device__ __forceinline__ void wgmma_keep(float (&d)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[i][e])::"memory");
}
template <int N> __device__ __forceinline__ void wgmma_keep(uint32_t (&d)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(d[i][e])::"memory");
}

} /* namespace kiln */

#endif /* KILN_KERNELS_WGMMA_CUH */
