/*
 * half.h: f16 and bf16 on the host, in C, for tests and benchmarks: rounding
 * to nearest even from float, and exact widening to float; FP8 e4m3 and e5m2:
 * exact decoding, rounding to nearest even from double (saturating at ±max,
 * as test data are quantized), and e4m3's spacing.
 */
#ifndef KILN_TESTS_HALF_H
#define KILN_TESTS_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

static inline uint16_t f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);           /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);          /* rounds to inf */
    if (a < 0x38800000u) {                                            /* subnormal or zero */
        float m = bits_f32(a) * 16777216.0f;                          /* × 2^24: units of 2^-24 */
        uint32_t q = (uint32_t)m;
        float rem = m - (float)q;
        if (rem > 0.5f || (rem == 0.5f && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t e = ((a >> 23) - 112u) << 10;
    uint32_t mant = a & 0x7fffffu;
    uint32_t h = e | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m / 16777216.0f;
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* e4m3 (OCP FP8, no infinities): 4 exponent bits of bias 7, 3 mantissa bits;
 * S.1111.111 is NaN; the largest finite value is 448. */
static inline double e4m3_to_f64(uint8_t b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return NAN;
    const double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
    return (b & 0x80) ? -v : v;
}

/* The spacing of e4m3 values at magnitude |v| (below 448). */
static inline double e4m3_ulp(double v)
{
    int e;
    if (fabs(v) < ldexp(1, -6)) return ldexp(1, -9);
    frexp(fabs(v), &e); /* |v| = f·2^e, f in [0.5, 1) */
    return ldexp(1, e - 4);
}

/* e5m2 (IEEE-like): 5 exponent bits of bias 15, 2 mantissa bits; S.11111.00
 * is ±inf, S.11111.xx (xx ≠ 0) NaN; the largest finite value is 57344. */
static inline double e5m2_to_f64(uint8_t b)
{
    const int e = (b >> 2) & 31, m = b & 3;
    if (e == 31) return m ? NAN : (b & 0x80) ? -INFINITY : INFINITY;
    const double v = e == 0 ? ldexp(m, -16) : ldexp(4 + m, e - 17);
    return (b & 0x80) ? -v : v;
}

/* The FP8 code nearest v (ties to the even code), for a format of `man` mantissa
 * bits, exponent bias `bias` and largest finite magnitude max_code's value.
 * Magnitudes past the largest (±inf included) saturate to it; NaN gives
 * nan_code. Signed zero keeps its sign. */
static inline uint8_t fp8_encode(double v, int man, int bias, uint8_t max_code, double max, uint8_t nan_code)
{
    if (isnan(v)) return nan_code;
    const uint8_t sign = signbit(v) ? 0x80 : 0;
    double a = fabs(v);
    if (a >= max) return (uint8_t)(sign | max_code);
    const int emin = 1 - bias; /* exponent of the smallest normal value */
    int e;
    frexp(a, &e);              /* a = f·2^e, f in [0.5, 1): a's binade is 2^(e-1) */
    e -= 1;
    if (e < emin) e = emin;    /* subnormal: the quantum of the lowest binade */
    const double quantum = ldexp(1, e - man);
    double q = a / quantum;    /* exact: a power-of-two division */
    const double fl = floor(q), rest = q - fl;
    q = rest > 0.5 || (rest == 0.5 && fmod(fl, 2) != 0) ? fl + 1 : fl;
    /* q·quantum ≤ max: max is a value of the format and a < max. */
    if (q < ldexp(1, man)) return (uint8_t)(sign | (uint8_t)q); /* subnormal (or zero): exponent field 0 */
    if (q >= ldexp(1, man + 1)) q /= 2, e += 1;                 /* rounded up into the next binade */
    return (uint8_t)(sign | (uint8_t)((e + bias) << man) | (uint8_t)(q - ldexp(1, man)));
}

/* e4m3: ±448 saturate, NaN is 0x7F. */
static inline uint8_t f64_to_e4m3(double v) { return fp8_encode(v, 3, 7, 0x7E, 448.0, 0x7F); }

/* e5m2: ±57344 saturate (no infinities produced), NaN is 0x7F. */
static inline uint8_t f64_to_e5m2(double v) { return fp8_encode(v, 2, 15, 0x7B, 57344.0, 0x7F); }

#endif /* KILN_TESTS_HALF_H */
