/*
 * rows.cuh: a row held in registers for the row-wise families (norm,
 * softmax): a thread's packs of a row are t, t + STRIDE, t + 2·STRIDE, ...
 * of the row's PACKS 16-byte packs, loaded as f32 and stored back from f32.
 */
#ifndef KILN_KERNELS_ROWS_CUH
#define KILN_KERNELS_ROWS_CUH

#include "runtime/kernels/common.cuh"

namespace kiln {

/* r[k] gets pack t + k·STRIDE of the row at p, zeros past the row's end. */
template <typename T, int PPT, int VEC, int STRIDE, int PACKS>
__device__ __forceinline__ void load_row(float (&r)[PPT][VEC], const T *p, int t)
{
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
        const int idx = t + k * STRIDE;
        if (idx < PACKS) {
            const Pack<T, VEC> q = load_pack<T, VEC>(p + idx * VEC);
#pragma unroll
            for (int e = 0; e < VEC; ++e) r[k][e] = to_f32(q.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) r[k][e] = 0.0f;
        }
    }
}

/* One 16-byte aligned pack of VEC values rounded to T. */
template <typename T, int VEC>
__device__ __forceinline__ void store_pack(T *p, const float (&r)[VEC])
{
    Pack<T, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) o.v[e] = from_f32<T>(r[e]);
    *reinterpret_cast<Pack<T, VEC> *>(p) = o;
}

} /* namespace kiln */

#endif /* KILN_KERNELS_ROWS_CUH */
