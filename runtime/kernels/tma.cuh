/*
 * tma.cuh: Hopper's copy engine and the barriers that pace it (sm_90a
 * kernels), and the host side that describes a matrix to it.
 *
 * A tensor map (CUtensorMap, 128 bytes) tells the TMA unit a matrix's
 * address, sizes, row stride and the box one copy moves. It is built on the
 * host by the driver's cuTensorMapEncodeTiled, looked up once through the
 * runtime (cudaGetDriverEntryPointByVersion), so kiln does not link against
 * libcuda. It reaches the kernel as a __grid_constant__ parameter.
 *
 * Device side: cp.async.bulk.tensor copies a box into shared memory and
 * signals an mbarrier with the bytes it wrote (complete_tx). A pipeline of
 * STAGES slots has a `full` barrier per slot (the producer arrives once,
 * announcing the bytes; the copy completes the phase) and an `empty` one
 * (each consumer warp arrives when its reads of the slot are done). Waits
 * name the phase's parity: a slot's barriers flip once per pass of the
 * ring, and a fresh barrier counts its previous phase (parity 1) as done,
 * so the producer's first pass waits on nothing. Stores go the other way:
 * threads write a box into shared memory, fence it for the async proxy, and
 * one thread hands it to the copy engine (a bulk group, waited on before
 * the buffer is written again).
 */
#ifndef KILN_KERNELS_TMA_CUH
#define KILN_KERNELS_TMA_CUH

#include <cuda.h> /* CUtensorMap and its enums (types only) */
#include <cuda_runtime.h>
#include <stdint.h>

#include "runtime/error.h"

namespace kiln {

/* ---- Host --------------------------------------------------------------- */

typedef CUresult (*TensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                         const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                                         CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                         CUtensorMapFloatOOBfill);

/* The driver's encoder, looked up on first use (NULL if the driver has none). */
inline TensorMapEncodeTiled tensor_map_encoder()
{
    static const TensorMapEncodeTiled fn = [] {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            p = NULL;
        return (TensorMapEncodeTiled)p;
    }();
    return fn;
}

/* A map of a row-major tensor of RANK dimensions of `type`, dims[0] the
 * contiguous one (elements), strides[i] the bytes between steps of dims[i +
 * 1], moved in boxes of box[i] elements (box[0] of 128 bytes at most,
 * 128-byte swizzled as wgmma reads them). Loads of boxes reaching past the
 * tensor read zeros there; stores skip it. */
template <int RANK>
inline kiln_status tensor_map(CUtensorMap *map, const char *variant, const char *what, CUtensorMapDataType type,
                              const void *base, const int64_t (&dims)[RANK], const int64_t (&strides)[RANK - 1],
                              const int (&box)[RANK])
{
    const TensorMapEncodeTiled encode = tensor_map_encoder();
    if (!encode)
        return kiln_fail(KILN_STATUS_CUDA_ERROR, "%s: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later)",
                         variant);
    cuuint64_t d[RANK], st[RANK - 1];
    cuuint32_t b[RANK], unit[RANK];
    for (int i = 0; i < RANK; ++i) d[i] = (cuuint64_t)dims[i], b[i] = (cuuint32_t)box[i], unit[i] = 1;
    for (int i = 0; i < RANK - 1; ++i) st[i] = (cuuint64_t)strides[i];
    const CUresult r = encode(map, type, RANK, const_cast<void *>(base), d, st, b, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return kiln_fail(KILN_STATUS_CUDA_ERROR,
                         "%s: cuTensorMapEncodeTiled for %s (%d dimensions, %lld × %lld …, stride %lld bytes) failed "
                         "with %d",
                         variant, what, RANK, (long long)dims[1], (long long)dims[0], (long long)strides[0], (int)r);
    return KILN_STATUS_SUCCESS;
}

/* A row-major matrix of `rows` rows × `cols` elements, rows `ld_bytes`
 * apart, in boxes of box_rows × box_cols. */
inline kiln_status tensor_map_2d(CUtensorMap *map, const char *variant, const char *what, CUtensorMapDataType type,
                                 const void *base, int64_t rows, int64_t cols, int64_t ld_bytes, int box_rows,
                                 int box_cols)
{
    const int64_t dims[2] = {cols, rows}, strides[1] = {ld_bytes};
    const int box[2] = {box_cols, box_rows};
    return tensor_map<2>(map, variant, what, type, base, dims, strides, box);
}

/* ---- Device ------------------------------------------------------------- */

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Barrier inits are seen by the copy engine (the async proxy). */
__device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* The producer's arrival: `bytes` more are to come from copies. */
__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* One poll of a barrier's phase of parity %2 (at shared address %1) by
 * mbarrier.OP: %0 = 1 if it is complete. */
#define KILN_MBAR_POLL(OP)                                                                                             \
    "{\n .reg .pred p;\n mbarrier." OP ".parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"

/* Whether the phase of parity `parity` is complete (one poll: try_wait
 * may suspend the thread a while before it answers no). */
__device__ __forceinline__ unsigned mbar_try(unsigned bar, unsigned parity)
{
    unsigned done;
    asm volatile(KILN_MBAR_POLL("try_wait") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done;
}

/* The same, answered at once (test_wait): for a poll issued early, its
 * answer read later. */
__device__ __forceinline__ unsigned mbar_test(unsigned bar, unsigned parity)
{
    unsigned done;
    asm volatile(KILN_MBAR_POLL("test_wait") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done;
}
#undef KILN_MBAR_POLL

/* Waits until the phase of parity `parity` is complete. */
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    while (!mbar_try(bar, parity)) {
    }
}

/* Waits for two phases at once: both barriers polled in each round (`&`,
 * not `&&`), so a consumer whose tiles have both landed pays one poll's
 * latency, not two (the e4m3 attention kernel's K and Vᵀ: 1 % of its
 * cycles at h128 and h256; the bf16 kernel's K and V at h160 - h256 gained
 * nothing, H100, 2026-11-27). */
__device__ __forceinline__ void mbar_wait2(unsigned bar0, unsigned parity0, unsigned bar1, unsigned parity1)
{
    while (!(mbar_try(bar0, parity0) & mbar_try(bar1, parity1))) {
    }
}

/* A warp's place in a ring of STAGES slots, moved on a step at a time
 * (no divisions in the loop): this step's slot and the parity its
 * barriers are at, and the step before's, from `step` steps walked. */
template <int STAGES> struct RingPos {
    unsigned slot, phase, prev = 0, prev_phase = 0;
    __device__ __forceinline__ explicit RingPos(unsigned step) : slot(step % STAGES), phase(step / STAGES & 1) {}
    __device__ __forceinline__ void next()
    {
        prev = slot, prev_phase = phase;
        if (++slot == STAGES) slot = 0, phase ^= 1;
    }
};

/* Maps in global memory, written on the device (a map a packed sequence):
 * tensormap_set_rows sets a map's dimension 1 (its rows) to `rows`, after
 * the map's 128 bytes were copied there; tensormap_release, by the writing
 * thread after its last change, makes the changes visible to the copy
 * engine's reads of maps, and tensormap_acquire, in each block before a
 * thread of it first names the map in a copy, takes them in (a launch
 * boundary alone does not; CUDA Programming Guide, "Usage of a Modified
 * Tensor Map"). */
__device__ __forceinline__ void tensormap_set_rows(CUtensorMap *map, int rows)
{
    asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;\n" ::"l"(map), "r"(rows) : "memory");
}
__device__ __forceinline__ void tensormap_release() { asm volatile("fence.proxy.tensormap::generic.release.gpu;\n" ::: "memory"); }
__device__ __forceinline__ void tensormap_acquire(const CUtensorMap *map)
{
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(map) : "memory");
}

/* The box at (col, row) of `map` into shared memory at dst (on 1024 bytes
 * for the 128-byte swizzle), completing bytes on barrier `bar`. */
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap *map, int col, int row, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(bar)
                 : "memory");
}

/* The box at (c0, c1, c2, c3) of a 4-d `map` into shared memory at dst. */
__device__ __forceinline__ void tma_load_4d(unsigned dst, const CUtensorMap *map, int c0, int c1, int c2, int c3,
                                            unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
                 ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

/* The box at (c0, c1, c2, c3) of a 4-d `map` into L2 only, so that a later
 * tma_load_4d of it waits for L2 rather than for DRAM. */
__device__ __forceinline__ void tma_prefetch_4d(const CUtensorMap *map, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global [%0, {%1, %2, %3, %4}];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

/* The box at `src` in shared memory (written, then made visible with
 * fence.proxy.async) to (col, row) of `map`; the parts past the matrix are
 * not written. Copies issued since the last bulk_commit form a group. */
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, int col, int row, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(src)
                 : "memory");
}
/* The same to (c0, c1, c2, c3) of a 4-d `map`. */
__device__ __forceinline__ void tma_store_4d(const CUtensorMap *map, int c0, int c1, int c2, int c3, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
                 : "memory");
}
/* dst[i] += src[i] over `bytes` bytes of f32 (both 16-byte aligned, a
 * multiple of 16) from shared memory, each add atomic in L2; a bulk group
 * as the stores. */
__device__ __forceinline__ void bulk_reduce_add_f32(float *dst, unsigned src, unsigned bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* Waits until at most N groups still read their shared memory (may be rewritten). */
template <int N> __device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
/* Orders the copy engine's accesses to global memory (the async proxy) with
 * the thread's own (the generic proxy): after a bulk copy's completion
 * before a release, and after an acquire before a bulk copy is issued. */
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }
/* Waits until at most N groups are in flight at all. */
template <int N> __device__ __forceinline__ void bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Register budgets of a warpgroup, moved between warpgroups at run time:
 * the producer gives its registers back, the consumers take them. */
template <int N> __device__ __forceinline__ void regs_shrink()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void regs_grow()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
/* The producer warpgroup's budget in a block of one producer and CONSUMERS
 * consumer warpgroups that grow to CONSUMER_REGS each: what they leave of
 * the block's registers at launch (65536 / threads a thread, in steps of
 * 8). An increase past what the others gave back would wait for ever. */
template <int CONSUMERS, int CONSUMER_REGS> struct RegSplit {
    static constexpr int launch_regs = 65536 / (128 * (1 + CONSUMERS)) / 8 * 8;
    static constexpr int producer_regs = (1 + CONSUMERS) * launch_regs - CONSUMERS * CONSUMER_REGS;
    static_assert(producer_regs >= 24 && producer_regs % 8 == 0, "setmaxnreg's registers fit the block's");
};

/* Barrier `id` (1 … 15; 0 is __syncthreads) among `threads` threads. */
__device__ __forceinline__ void named_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* An arrival on barrier `id` of `threads` without waiting (the other side
 * syncs on it). */
__device__ __forceinline__ void named_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

} /* namespace kiln */

#endif /* KILN_KERNELS_TMA_CUH */
