/*
 * norm.c: entry points of the normalization family. Each checks every
 * argument before any CUDA call, then hands a kiln_norm_args (forward) or
 * kiln_norm_bwd_args (backward) to the variant selection picks: the one
 * compiled for this hidden size when every tensor is 16-byte aligned, else the
 * generic one (the rule kiln.h states).
 */
#include <stdint.h>
#include <string.h>

#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/norm.h"

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

static kiln_status check_shape(const char *fn, kiln_dtype dtype, int64_t rows, int64_t hidden)
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
    return KILN_STATUS_SUCCESS;
}

static kiln_status norm_fwd(const char *fn, kiln_op op, kiln_dtype dtype, int64_t rows, int64_t hidden,
                            const kiln_norm_args *a, kiln_stream stream)
{
    kiln_status st;
    const int fp8 = op == KILN_OP_LAYERNORM_FWD_FP8 || op == KILN_OP_RMSNORM_FWD_FP8;
    if ((st = check_shape(fn, dtype, rows, hidden))) return st;
    if (!(a->eps >= 0.0f) || (st = kiln_check_finite(fn, "eps", a->eps)))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: eps is %g; it must be finite and not negative", fn, a->eps);
    if (fp8 && ((st = kiln_check_finite(fn, "y_scale", a->y_scale)) || !(a->y_scale > 0.0f)))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: y_scale is %g; it must be finite and positive", fn, a->y_scale);
    const size_t es = kiln_dtype_size(dtype), bytes = (size_t)(rows * hidden) * es, hb = (size_t)hidden * es;
    const size_t sb = (size_t)rows * sizeof(float), yes = fp8 ? 1 : es, ybytes = (size_t)(rows * hidden) * yes;
    const char *yname = fp8 ? "y_e4m3" : "y";
    if ((st = kiln_check_ptr(fn, "x", a->x, es, 0)) || (st = kiln_check_ptr(fn, "residual", a->residual, es, 1)) ||
        (st = kiln_check_ptr(fn, "gamma", a->gamma, es, 1)) || (st = kiln_check_ptr(fn, "beta", a->beta, es, 1)) ||
        (st = kiln_check_ptr(fn, yname, a->y, yes, 0)) ||
        (st = kiln_check_ptr(fn, "y_amax", a->y_amax, sizeof(float), 1)) ||
        (st = kiln_check_ptr(fn, "residual_out", a->residual_out, es, 1)) ||
        (st = kiln_check_ptr(fn, "mean", a->mean, sizeof(float), 1)) ||
        (st = kiln_check_ptr(fn, "rstd", a->rstd, sizeof(float), 1)) ||
        (st = kiln_check_alias(fn, yname, a->y, ybytes, "x", a->x, bytes, !fp8)) || /* e4m3 rows are narrower */
        (st = kiln_check_alias(fn, yname, a->y, ybytes, "residual", a->residual, bytes, 0)) ||
        (st = kiln_check_alias(fn, yname, a->y, ybytes, "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, yname, a->y, ybytes, "gamma", a->gamma, hb, 0)) ||
        (st = kiln_check_alias(fn, yname, a->y, ybytes, "beta", a->beta, hb, 0)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "x", a->x, bytes, 1)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "residual", a->residual, bytes, 1)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "gamma", a->gamma, hb, 0)) ||
        (st = kiln_check_alias(fn, "residual_out", a->residual_out, bytes, "beta", a->beta, hb, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, "rstd", a->rstd, sb, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, yname, a->y, ybytes, 0)) ||
        (st = kiln_check_alias(fn, "rstd", a->rstd, sb, yname, a->y, ybytes, 0)) ||
        (st = kiln_check_alias(fn, "mean", a->mean, sb, "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, "rstd", a->rstd, sb, "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, "y_amax", a->y_amax, sizeof(float), yname, a->y, ybytes, 0)) ||
        (st = kiln_check_alias(fn, "y_amax", a->y_amax, sizeof(float), "residual_out", a->residual_out, bytes, 0)) ||
        (st = kiln_check_alias(fn, "y_amax", a->y_amax, sizeof(float), "mean", a->mean, sb, 0)) ||
        (st = kiln_check_alias(fn, "y_amax", a->y_amax, sizeof(float), "rstd", a->rstd, sb, 0)))
        return st;
    const struct {
        const char *name;
        const void *p;
        size_t bytes;
    } inputs[] = {{"x", a->x, bytes}, {"residual", a->residual, bytes}, {"gamma", a->gamma, hb}, {"beta", a->beta, hb}};
    for (int i = 0; i < 4; i++)
        if ((st = kiln_check_alias(fn, "mean", a->mean, sb, inputs[i].name, inputs[i].p, inputs[i].bytes, 0)) ||
            (st = kiln_check_alias(fn, "rstd", a->rstd, sb, inputs[i].name, inputs[i].p, inputs[i].bytes, 0)) ||
            (st = kiln_check_alias(fn, "y_amax", a->y_amax, sizeof(float), inputs[i].name, inputs[i].p, inputs[i].bytes, 0)))
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
    kiln_norm_args a = {rows, hidden, x, residual, gamma, beta, eps, y, residual_out, mean, rstd, 1.0f, NULL};
    return norm_fwd("kiln_layernorm_fwd", KILN_OP_LAYERNORM_FWD, dtype, rows, hidden, &a, stream);
}

kiln_status kiln_rmsnorm_fwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x, const void *residual,
                             const void *gamma, float eps, void *y, void *residual_out, float *rstd,
                             kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_args a = {rows, hidden, x, residual, gamma, NULL, eps, y, residual_out, NULL, rstd, 1.0f, NULL};
    return norm_fwd("kiln_rmsnorm_fwd", KILN_OP_RMSNORM_FWD, dtype, rows, hidden, &a, stream);
}

kiln_status kiln_layernorm_fwd_fp8(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x,
                                   const void *residual, const void *gamma, const void *beta, float eps,
                                   float y_scale, void *y_e4m3, void *residual_out, float *mean, float *rstd,
                                   float *y_amax, kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_args a = {rows, hidden, x, residual, gamma, beta, eps, y_e4m3, residual_out, mean, rstd, y_scale, y_amax};
    return norm_fwd("kiln_layernorm_fwd_fp8", KILN_OP_LAYERNORM_FWD_FP8, dtype, rows, hidden, &a, stream);
}

kiln_status kiln_rmsnorm_fwd_fp8(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x,
                                 const void *residual, const void *gamma, float eps, float y_scale, void *y_e4m3,
                                 void *residual_out, float *rstd, float *y_amax, kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_args a = {rows, hidden, x, residual, gamma, NULL, eps, y_e4m3, residual_out, NULL, rstd, y_scale, y_amax};
    return norm_fwd("kiln_rmsnorm_fwd_fp8", KILN_OP_RMSNORM_FWD_FP8, dtype, rows, hidden, &a, stream);
}

/* ---- Backward ------------------------------------------------------------ */

int kiln_norm_bwd_max_partials(int64_t rows, int sm_count)
{
    int64_t p = 2 * (int64_t)(sm_count > 0 ? sm_count : 1), by_rows = (rows + 15) / 16;
    if (p > by_rows) p = by_rows;
    return (int)(p < 1 ? 1 : p);
}

kiln_status kiln_norm_bwd_workspace_size(kiln_dtype dtype, int64_t rows, int64_t hidden, int want_dgamma_dbeta,
                                         size_t *bytes)
{
    static const char fn[] = "kiln_norm_bwd_workspace_size";
    kiln_clear_error();
    kiln_status st;
    if ((st = kiln_check_forced()) || (st = check_shape(fn, dtype, rows, hidden))) return st;
    if (!bytes) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bytes is NULL", fn);
    *bytes = 0;
    if (!want_dgamma_dbeta) return KILN_STATUS_SUCCESS;
    kiln_device_caps caps;
    if ((st = kiln_current_device_caps(&caps))) return st;
    *bytes = (size_t)2 * (size_t)kiln_norm_bwd_max_partials(rows, caps.sm_count) * (size_t)hidden * sizeof(float);
    return KILN_STATUS_SUCCESS;
}

static kiln_status norm_bwd(const char *fn, kiln_op op, kiln_dtype dtype, kiln_norm_bwd_args *a,
                            size_t workspace_bytes, kiln_stream stream)
{
    kiln_status st;
    const int64_t rows = a->rows, hidden = a->hidden;
    if ((st = check_shape(fn, dtype, rows, hidden))) return st;
    const size_t es = kiln_dtype_size(dtype), bytes = (size_t)(rows * hidden) * es, hb = (size_t)hidden * es;
    const size_t sb = (size_t)rows * sizeof(float);
    if ((st = kiln_check_ptr(fn, "dy", a->dy, es, 0)) || (st = kiln_check_ptr(fn, "s", a->s, es, 0)) ||
        (st = kiln_check_ptr(fn, "gamma", a->gamma, es, 1)) ||
        (op == KILN_OP_LAYERNORM_BWD && (st = kiln_check_ptr(fn, "mean", a->mean, sizeof(float), 0))) ||
        (st = kiln_check_ptr(fn, "rstd", a->rstd, sizeof(float), 0)) ||
        (st = kiln_check_ptr(fn, "ds_extra", a->ds_extra, es, 1)) || (st = kiln_check_ptr(fn, "dx", a->dx, es, 0)) ||
        (st = kiln_check_ptr(fn, "dgamma", a->dgamma, es, 1)) || (st = kiln_check_ptr(fn, "dbeta", a->dbeta, es, 1)))
        return st;
    if (a->dgamma && !a->gamma)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: dgamma is given but gamma is NULL (no scale to differentiate)", fn);
    const struct {
        const char *name;
        const void *p;
        size_t bytes;
    } in[] = {{"dy", a->dy, bytes},   {"s", a->s, bytes},       {"gamma", a->gamma, hb},
              {"mean", a->mean, sb}, {"rstd", a->rstd, sb}, {"ds_extra", a->ds_extra, bytes}};
    for (int i = 0; i < 6; i++) {
        const int dx_may_share = !strcmp(in[i].name, "dy") || !strcmp(in[i].name, "ds_extra");
        if ((st = kiln_check_alias(fn, "dx", a->dx, bytes, in[i].name, in[i].p, in[i].bytes, dx_may_share)) ||
            (st = kiln_check_alias(fn, "dgamma", a->dgamma, hb, in[i].name, in[i].p, in[i].bytes, 0)) ||
            (st = kiln_check_alias(fn, "dbeta", a->dbeta, hb, in[i].name, in[i].p, in[i].bytes, 0)))
            return st;
    }
    if ((st = kiln_check_alias(fn, "dgamma", a->dgamma, hb, "dx", a->dx, bytes, 0)) ||
        (st = kiln_check_alias(fn, "dbeta", a->dbeta, hb, "dx", a->dx, bytes, 0)) ||
        (st = kiln_check_alias(fn, "dbeta", a->dbeta, hb, "dgamma", a->dgamma, hb, 0)))
        return st;
    if (a->dgamma || a->dbeta) {
        if ((st = kiln_check_ptr(fn, "workspace", a->workspace, 16, 0))) return st;
        kiln_device_caps caps;
        if ((st = kiln_current_device_caps(&caps))) return st;
        a->max_partials = kiln_norm_bwd_max_partials(rows, caps.sm_count);
        const size_t need = (size_t)2 * (size_t)a->max_partials * (size_t)hidden * sizeof(float);
        if (workspace_bytes < need)
            return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                             "%s: workspace_bytes is %zu; this call needs %zu (kiln_norm_bwd_workspace_size)", fn,
                             workspace_bytes, need);
        for (int i = 0; i < 6; i++)
            if ((st = kiln_check_alias(fn, "workspace", a->workspace, need, in[i].name, in[i].p, in[i].bytes, 0)))
                return st;
        if ((st = kiln_check_alias(fn, "workspace", a->workspace, need, "dx", a->dx, bytes, 0)) ||
            (st = kiln_check_alias(fn, "workspace", a->workspace, need, "dgamma", a->dgamma, hb, 0)) ||
            (st = kiln_check_alias(fn, "workspace", a->workspace, need, "dbeta", a->dbeta, hb, 0)))
            return st;
    } else {
        a->workspace = NULL;
        a->max_partials = INT32_MAX; /* no partials: a block for every row group */
    }
    const int all16 = aligned16(a->dy) && aligned16(a->s) && aligned16(a->gamma) && aligned16(a->ds_extra) &&
                      aligned16(a->dx);
    kiln_variant_key key = {op, dtype, all16 && hidden <= INT32_MAX ? (int)hidden : 0, KILN_ACT_NONE};
    return kiln_dispatch(&key, a, stream);
}

kiln_status kiln_layernorm_bwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *dy, const void *s,
                               const void *gamma, const float *mean, const float *rstd, const void *ds_extra,
                               void *dx, void *dgamma, void *dbeta, void *workspace, size_t workspace_bytes,
                               kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_bwd_args a = {rows, hidden, dy, s, gamma, mean, rstd, ds_extra, dx, dgamma, dbeta, (float *)workspace, 0};
    return norm_bwd("kiln_layernorm_bwd", KILN_OP_LAYERNORM_BWD, dtype, &a, workspace_bytes, stream);
}

kiln_status kiln_rmsnorm_bwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *dy, const void *s,
                             const void *gamma, const float *rstd, const void *ds_extra, void *dx, void *dgamma,
                             void *workspace, size_t workspace_bytes, kiln_stream stream)
{
    kiln_clear_error();
    kiln_norm_bwd_args a = {rows, hidden, dy, s, gamma, NULL, rstd, ds_extra, dx, dgamma, NULL, (float *)workspace, 0};
    return norm_bwd("kiln_rmsnorm_bwd", KILN_OP_RMSNORM_BWD, dtype, &a, workspace_bytes, stream);
}
