/*
 * activations.cuh: the activation functions of kiln and their derivatives, in
 * f32, for every family that fuses one (elementwise, linear epilogues).
 * Each is a struct with
 *   f(u)            the activation
 *   both(u, f, df)  the activation and its derivative, sharing their work
 * Fast intrinsics (__expf, __fdividef) keep them off the critical path of
 * memory-bound kernels; their error (a few ulp of f32) is far under the
 * tolerances of every dtype kiln stores. narrow<A> (at the end) is the
 * form for 16-bit and narrower results.
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

/* GELU, tanh form: 0.5·u·(1 + tanh(z)) = u·sigmoid(2z), z = √(2/π)(u + 0.044715u³).
 * The sigmoid form has no cancellation for negative u (where 1 + tanh(z)
 * loses every digit) and costs one MUFU.EX2 and one fast divide. */
struct ActGeluTanh {
    static constexpr float k0 = 0.7978845608028654f; /* √(2/π) */
    static constexpr float k1 = 0.044715f;
    static __device__ __forceinline__ float sig2z(float u)
    {
        return __fdividef(1.0f, 1.0f + __expf(-2.0f * k0 * (u + k1 * u * u * u)));
    }
    static __device__ __forceinline__ float f(float u) { return u * sig2z(u); }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        const float s = sig2z(u);
        f = u * s;
        /* u² capped: past |u| = 100, s·(1 - s) is 0 in f32 and an overflowing
         * u² would make 0·inf = NaN of it. */
        df = s + 2.0f * u * s * (1.0f - s) * k0 * (1.0f + 3.0f * k1 * fminf(u * u, 1e4f));
    }
};

/* GELU, exact: 0.5·u·(1 + erf(u/√2)), PyTorch's formula. For u < -3 the sum
 * cancels and loses relative accuracy (the absolute error stays under 1e-6);
 * erfcf(-u/√2) would keep it but cost 1.6x the time of the whole kernel
 * (bf16 bias + gelu_erf, 64M elements on an H100, 2026-11-22: 2.5 TB/s with
 * erff, 1.8 TB/s with erfcf). */
struct ActGeluErf {
    static constexpr float rsqrt2 = 0.7071067811865476f;
    static constexpr float rsqrt2pi = 0.3989422804014327f;
    static __device__ __forceinline__ float f(float u) { return 0.5f * u * (1.0f + erff(u * rsqrt2)); }
    static __device__ __forceinline__ void both(float u, float &f, float &df)
    {
        const float cdf = 0.5f * (1.0f + erff(u * rsqrt2));
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

/* narrow<A>(u): activation A for results stored in 16 bits or fewer, whose
 * rounding (2⁻¹¹ of f16, 2⁻⁸ of bf16) is coarser than f32's. gelu_tanh and
 * silu take tanh.approx there (silu as h + h·tanh(h), h = u/2): one MUFU
 * operation instead of __expf's and __fdividef's two, which bound a linear
 * epilogue (16 a cycle an SM: a 128 × 256 tile's 32768 sums take 4096
 * cycles with two); tanh.approx's error, at most 2^-10.987, is about 2.5e-4
 * of the value. Every other activation is A::f. tanh.approx needs sm_75:
 * code meant for Volta must not call narrow (kiln's sm_70 variants are
 * compute_75 PTX retargeted to sm_70, so an arch test here cannot tell;
 * the linear template decides by the variant's arch, kNarrow). */
__device__ __forceinline__ float tanh_approx(float z)
{
    float t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(z));
    return t;
}
template <typename A> __device__ __forceinline__ float narrow(float u) { return A::f(u); }
template <> __device__ __forceinline__ float narrow<ActGeluTanh>(float u)
{
    const float h = 0.5f * u;
    return fmaf(h, tanh_approx(u * fmaf(ActGeluTanh::k0 * ActGeluTanh::k1, u * u, ActGeluTanh::k0)), h);
}
template <> __device__ __forceinline__ float narrow<ActSilu>(float u)
{
    const float h = 0.5f * u;
    return fmaf(h, tanh_approx(h), h);
}

} /* namespace kiln */

#endif /* KILN_KERNELS_ACTIVATIONS_CUH */
