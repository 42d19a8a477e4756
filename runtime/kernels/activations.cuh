/*
 * activations.cuh: the activation functions of kiln and their derivatives, in
 * f32, for every family that fuses one (elementwise, linear epilogues).
 * Each is a struct with
 *   f(u)            the activation
 *   both(u, f, df)  the activation and its derivative, sharing their work
 * Fast intrinsics (__expf, __fdividef) keep them off the critical path of
 * memory-bound kernels; their error (a few ulp of f32) is far under the
 * tolerances of every dtype kiln stores.
 */
#ifndef KILN_KERNELS_ACTIVATIONS_CUH
#define KILN_KERNELS_ACTIVATIONS_CUH

namespace kiln {

struct ActNone {
    static __device__ __forceinline__ float f(float u) { return u; }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        f = u;
        df = 1.0f;
    }
};

struct ActRelu {
    static __device__ __forceinline__ float f(float u) { return u > 0.0f ? u : 0.0f; }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        f = u > 0.0f ? u : 0.0f;
        df = u > 0.0f ? 1.0f : 0.0f;
    }
};

/* tanh(z) = 1 - 2 / (exp(2z) + 1): one MUFU.EX2 and one fast divide, exact
 * limits ±1 for large |z| (exp overflows to inf, 2/inf = 0). */
__device__ __forceinline__ float fast_tanh(float z)
{
    return 1.0f - __fdividef(2.0f, __expf(2.0f * z) + 1.0f);
}

struct ActGeluTanh {
    static constexpr float k0 = 0.7978845608028654f; /* √(2/π) */
    static constexpr float k1 = 0.044715f;
    static __device__ __forceinline__ float f(float u)
    {
        float t = fast_tanh(k0 * (u + k1 * u * u * u));
        return 0.5f * u * (1.0f + t);
    }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        float t = fast_tanh(k0 * (u + k1 * u * u * u));
        f = 0.5f * u * (1.0f + t);
        df = 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * k0 * (1.0f + 3.0f * k1 * u * u);
    }
};

struct ActGeluErf {
    static constexpr float rsqrt2 = 0.7071067811865476f;
    static constexpr float rsqrt2pi = 0.3989422804014327f;
    static __device__ __forceinline__ float f(float u) { return 0.5f * u * (1.0f + erff(u * rsqrt2)); }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        float cdf = 0.5f * (1.0f + erff(u * rsqrt2));
        f = u * cdf;
        df = cdf + u * rsqrt2pi * __expf(-0.5f * u * u);
    }
};

/* sigmoid(u) = 1 / (1 + exp(-u)); for u → -inf exp overflows to inf and the
 * quotient to 0, which is the limit. */
struct ActSilu {
    static __device__ __forceinline__ float f(float u) { return __fdividef(u, 1.0f + __expf(-u)); }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        float s = __fdividef(1.0f, 1.0f + __expf(-u));
        f = u * s;
        df = s * (1.0f + u * (1.0f - s));
    }
};

} /* namespace kiln */

#endif /* KILN_KERNELS_ACTIVATIONS_CUH */
