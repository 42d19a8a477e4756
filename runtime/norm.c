/*
 * norm.c: entry points of the normalization family. Each checks every
 * argument before any CUDA call, then hands a kiln_norm_args to the variant
 * selection picks: the one compiled for this hidden size when every tensor is
 * 16-byte aligned, else the generic one (the rule kiln.h states).
 */
#include <stdint.h>

#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/norm.h"

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

static kiln_status norm_fwd(const char *fn, kiln_op op, kiln_dtype dtype, int64_t rows, int64_t hidden,
                            const kiln_norm_args *a, kiln_stream stream)
{
    kiln_status st;
    if ((st = kiln_check_dtype(fn, dtype))) return st;
    if (rows <= 0) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows is %lld; it must be at least 1", fn, (long long)rows);
    if (rows > INT32_MAX)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows is %lld; at most %d are supported", fn, (long long)rows,
                         INT32_MAX);
    if (hidden <= 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: hidden is %lld; it must be at least 1", fn, (long long)hidden);
    if (rows > KILN_MAX_ELEMENTS / hidden)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows × hidden = %lld × %lld overflows the %lld elements supported",
                         fn, (long long)rows, (long long)hidden, (long long)KILN_MAX_ELEMENTS);
    if (!(a->eps >= 0.0f) || (st = kiln_check_finite(fn, "eps", a->eps)))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: eps is %g; it must be finite and not negative", fn, a->eps);
    const size_t es = kiln_dtype_size(dtype), bytes = (size_t)(rows * hidden) * es, hb = (size_t)hidden * es;
    const size_t sb = (size_t)rows * sizeof(float);
    if ((st = kiln_check_ptr(fn, "x", a->x, es, 0)) || (st = kiln_check_ptr(fn, "residual", a->residual, es, 1)) ||
        (st = kiln_check_ptr(fn, "gamma", a->gamma, es, 1)) || (st = kiln_check_ptr(fn, "beta", a->beta, es, 1)) ||
        (st = kiln_check_ptr(fn, "y", a->y, es, 0)) ||
        (st = kiln_check_ptr(fn, "residual_out", a->residual_out, es, 1)) ||
        (st = kiln_check_ptr(fn, "mean", a->mean, sizeof(float), 1)) ||
        (st = kiln_check_ptr(fn, "rstd", a->rstd, sizeof(float), 1)) ||
        (st = kiln_check_alias(fn, "y", a->y, bytes, "x", a->x, bytes, 1)) ||
        (st = kiln_check_alias(fn, "y", a->y, bytes, "residual", a->residual, bytes, 0)) ||
        (st = kiln_check_alias(fn, "y", a->y, bytes, "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, "y", a->y, bytes, "gamma", a->gamma, hb, 0)) ||
        (st = kiln_check_alias(fn, "y", a->y, bytes, "beta", a->beta, hb, 0)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "x", a->x, bytes, 1)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "residual", a->residual, bytes, 1)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "gamma", a->gamma, hb, 0)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "beta", a->beta, hb, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, "rstd", a->rstd, sb, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, "y", a->y, bytes, 0)) ||
        (st = kiln_check_alias(fn, "rstd", a->rstd, sb, "y", a->y, bytes, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, "rstd", a->rstd, sb, "residual_out", a->residual_out, bytes, 0)))
        return st;
    const struct {
        const char *name;
        const void *p;
        size_t bytes;
    } inputs[] = {{"x", a->x, bytes}, {"residual", a->residual, bytes}, {"gamma", a->gamma, hb}, {"beta", a->beta, hb}};
    for (int i = 0; i < 4; i++)
        if ((st = kiln_check_alias(fn, "mean", a->mean, sb, inputs[i].name, inputs[i].p, inputs[i].bytes, 0)) ||
            (st = kiln_check_alias(fn, "rstd", a->rstd, sb, inputs[i].name, inputs[i].p, inputs[i].bytes, 0)))
            return st;
    const int all16 = aligned16(a->x) && aligned16(a->residual) && aligned16(a->gamma) && aligned16(a->beta) &&
                      aligned16(a->y) && aligned16(a->residual_out);
    kiln_variant_key key = {op, dtype, all16 && hidden <= INT32_MAX ? (int)hidden : 0, KILN_ACT_NONE};
    return kiln_dispatch(&key, a, stream);
}

kiln_status kiln_layernorm_fwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x, const void *residual,
                               const void *gamma, const void *beta, float eps, void *y, void *residual_out,
                               float *mean, float *rstd, kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_args a = {rows, hidden, x, residual, gamma, beta, eps, y, residual_out, mean, rstd};
    return norm_fwd("kiln_layernorm_fwd", KILN_OP_LAYERNORM_FWD, dtype, rows, hidden, &a, stream);
}

kiln_status kiln_rmsnorm_fwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x, const void *residual,
                             const void *gamma, float eps, void *y, void *residual_out, float *rstd,
                             kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_args a = {rows, hidden, x, residual, gamma, NULL, eps, y, residual_out, NULL, rstd};
    return norm_fwd("kiln_rmsnorm_fwd", KILN_OP_RMSNORM_FWD, dtype, rows, hidden, &a, stream);
}
