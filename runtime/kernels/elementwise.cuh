/*
 * elementwise.cuh: the body the elementwise family's generated kernels share:
 * a map of NIN input tensors to NOUT output tensors over n elements.
 *
 * Layout of the work: the first `head` elements (before the common 16-byte
 * boundary of all pointers) and the last n - head mod V are done one by one;
 * the rest in 16-byte packs, U packs per thread in flight before the first is
 * used. When the pointers disagree on their offset within 16 bytes, no common
 * boundary exists and the launcher passes head = n: all scalar, still right.
 *
 * Fn supplies
 *   vec(in[NIN][V], out[NOUT][V], e0)  for V elements starting at element e0
 *   one(in[NIN], out[NOUT], e)         for element e
 */
#ifndef KILN_KERNELS_ELEMENTWISE_CUH
#define KILN_KERNELS_ELEMENTWISE_CUH

#include "runtime/kernels/common.cuh"

namespace kiln {

template <typename T, int N> struct ConstPtrs {
    const T *p[N];
};
template <typename T, int N> struct Ptrs {
    T *p[N];
};

template <int THREADS, int U, int V, int NIN, int NOUT, typename T, typename Index, typename Fn>
__device__ __forceinline__ void flat_map(const ConstPtrs<T, NIN> &in, const Ptrs<T, NOUT> &out, Index n,
                                         Index head, const Fn &fn)
{
    const Index nvec = (n - head) / V;
    const Index stride = (Index)gridDim.x * THREADS * U;
    for (Index base = (Index)blockIdx.x * THREADS * U + threadIdx.x; base < nvec; base += stride) {
        Pack<T, V> a[U][NIN];
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const Index vi = base + (Index)j * THREADS;
            if (vi < nvec) {
#pragma unroll
                for (int k = 0; k < NIN; ++k) a[j][k] = load_pack_stream<T, V>(in.p[k] + head + vi * V);
            }
        }
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const Index vi = base + (Index)j * THREADS;
            if (vi < nvec) {
                float fi[NIN][V], fo[NOUT][V];
#pragma unroll
                for (int k = 0; k < NIN; ++k)
#pragma unroll
                    for (int e = 0; e < V; ++e) fi[k][e] = to_f32(a[j][k].v[e]);
                fn.vec(fi, fo, head + vi * V);
#pragma unroll
                for (int k = 0; k < NOUT; ++k) {
                    Pack<T, V> o;
#pragma unroll
                    for (int e = 0; e < V; ++e) o.v[e] = from_f32<T>(fo[k][e]);
                    store_pack_stream<T, V>(out.p[k] + head + vi * V, o);
                }
            }
        }
    }

    const Index tail = head + nvec * V;
    const Index nscalar = head + (n - tail);
    for (Index s = (Index)blockIdx.x * THREADS + threadIdx.x; s < nscalar; s += (Index)gridDim.x * THREADS) {
        const Index e = s < head ? s : tail + (s - head);
        float fi[NIN], fo[NOUT];
#pragma unroll
        for (int k = 0; k < NIN; ++k) fi[k] = to_f32(in.p[k][e]);
        fn.one(fi, fo, e);
#pragma unroll
        for (int k = 0; k < NOUT; ++k) out.p[k][e] = from_f32<T>(fo[k]);
    }
}

/* The bias of V consecutive elements starting at element e0 of a [rows, cols]
 * tensor: one pack when `packed` (cols % V == 0, bias 16-byte aligned and
 * head == 0, so e0 is a multiple of V), else element by element with the
 * column wrapping. Without a bias, zeros. */
template <int V, typename T, typename Index>
__device__ __forceinline__ void bias_of(const T *bias, bool packed, Index cols, Index e0, float (&b)[V])
{
    if (bias == nullptr) {
#pragma unroll
        for (int e = 0; e < V; ++e) b[e] = 0.0f;
        return;
    }
    Index c = e0 % cols;
    if (packed) {
        Pack<T, V> p = load_pack<T, V>(bias + c);
#pragma unroll
        for (int e = 0; e < V; ++e) b[e] = to_f32(p.v[e]);
        return;
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
        b[e] = to_f32(bias[c]);
        if (++c == cols) c = 0;
    }
}

/* The launcher's choice for n elements at pointers ps: the common head, or n
 * when the pointers disagree within 16 bytes. */
template <typename T, int NP> inline int64_t common_head(const void *const (&ps)[NP], int64_t n)
{
    const int64_t h = head_to_16<T>(ps[0]);
    for (int i = 1; i < NP; ++i)
        if (ps[i] != nullptr && head_to_16<T>(ps[i]) != h) return n;
    return h < n ? h : n;
}

} /* namespace kiln */

#endif /* KILN_KERNELS_ELEMENTWISE_CUH */
