/*
 * elementwise.c: entry points of the elementwise family. Each checks every
 * argument before any CUDA call, then hands a kiln_elementwise_args or
 * kiln_gated_args to the variant that selection picks.
 */
#include <stdint.h>

#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"

static int64_t dbias_chunks(int64_t rows)
{
    int64_t chunk_rows = KILN_EW_DBIAS_CHUNK_ROWS;
    while ((rows + chunk_rows - 1) / chunk_rows > 65535) chunk_rows *= 2;
    return (rows + chunk_rows - 1) / chunk_rows;
}

/* The checks shared by the elementwise entries: dtype and activation known,
 * sizes positive, the element count representable. */
static kiln_status check_call(const char *fn, kiln_dtype dtype, kiln_activation act, int64_t rows, int64_t cols)
{
    kiln_status st;
    if ((st = kiln_check_dtype(fn, dtype)) || (st = kiln_check_act(fn, act))) return st;
    if (rows <= 0) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows is %lld; it must be at least 1", fn, (long long)rows);
    if (cols <= 0) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: cols is %lld; it must be at least 1", fn, (long long)cols);
    if (cols > (int64_t)1 << 36)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: cols is %lld; at most 2^36 are supported", fn, (long long)cols);
    if (rows > KILN_MAX_ELEMENTS / cols)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows × cols = %lld × %lld overflows the %lld elements supported",
                         fn, (long long)rows, (long long)cols, (long long)KILN_MAX_ELEMENTS);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_elementwise_fwd(kiln_dtype dtype, kiln_activation act, int64_t rows, int64_t cols, const void *x,
                                 float scale, const void *bias, void *y, kiln_stream stream)
{
    static const char fn[] = "kiln_elementwise_fwd";
    kiln_clear_error();
    kiln_status st;
    if ((st = check_call(fn, dtype, act, rows, cols))) return st;
    const size_t es = kiln_dtype_size(dtype);
    const size_t bytes = (size_t)(rows * cols) * es;
    if ((st = kiln_check_ptr(fn, "x", x, es, 0)) || (st = kiln_check_ptr(fn, "bias", bias, es, 1)) ||
        (st = kiln_check_ptr(fn, "y", y, es, 0)) || (st = kiln_check_finite(fn, "scale", scale)) ||
        (st = kiln_check_alias(fn, "y", y, bytes, "x", x, bytes, 1)) ||
        (st = kiln_check_alias(fn, "y", y, bytes, "bias", bias, (size_t)cols * es, 0)))
        return st;
    kiln_elementwise_args a = {rows, cols, x, NULL, bias, scale, y, NULL, NULL};
    kiln_variant_key key = {KILN_OP_ELEMENTWISE_FWD, dtype, 0, act};
    return kiln_dispatch(&key, &a, stream);
}

kiln_status kiln_elementwise_bwd_workspace_size(kiln_dtype dtype, int64_t rows, int64_t cols, int want_dbias,
                                                size_t *bytes)
{
    static const char fn[] = "kiln_elementwise_bwd_workspace_size";
    kiln_clear_error();
    kiln_status st;
    if (bytes == NULL) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bytes is NULL", fn);
    if ((st = kiln_check_forced()) || (st = check_call(fn, dtype, KILN_ACT_NONE, rows, cols))) return st;
    *bytes = want_dbias ? (size_t)dbias_chunks(rows) * (size_t)cols * sizeof(float) : 0;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_elementwise_bwd(kiln_dtype dtype, kiln_activation act, int64_t rows, int64_t cols, const void *dy,
                                 const void *x, float scale, const void *bias, void *dx, void *dbias,
                                 void *workspace, size_t workspace_bytes, kiln_stream stream)
{
    static const char fn[] = "kiln_elementwise_bwd";
    kiln_clear_error();
    kiln_status st;
    if ((st = check_call(fn, dtype, act, rows, cols))) return st;
    const size_t es = kiln_dtype_size(dtype);
    const size_t bytes = (size_t)(rows * cols) * es;
    const size_t bias_bytes = (size_t)cols * es;
    if ((st = kiln_check_ptr(fn, "dy", dy, es, 0)) || (st = kiln_check_ptr(fn, "x", x, es, 0)) ||
        (st = kiln_check_ptr(fn, "bias", bias, es, 1)) || (st = kiln_check_ptr(fn, "dx", dx, es, 0)) ||
        (st = kiln_check_ptr(fn, "dbias", dbias, es, 1)) || (st = kiln_check_finite(fn, "scale", scale)) ||
        (st = kiln_check_alias(fn, "dx", dx, bytes, "dy", dy, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dx", dx, bytes, "x", x, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dx", dx, bytes, "bias", bias, bias_bytes, 0)) ||
        (st = kiln_check_alias(fn, "dbias", dbias, bias_bytes, "dx", dx, bytes, 0)) ||
        (st = kiln_check_alias(fn, "dbias", dbias, bias_bytes, "dy", dy, bytes, 0)) ||
        (st = kiln_check_alias(fn, "dbias", dbias, bias_bytes, "x", x, bytes, 0)))
        return st;
    if (dbias != NULL) {
        const size_t need = (size_t)dbias_chunks(rows) * (size_t)cols * sizeof(float);
        if ((st = kiln_check_ptr(fn, "workspace", workspace, 16, 0))) return st;
        if (workspace_bytes < need)
            return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                             "%s: workspace_bytes is %zu; this shape needs %zu (kiln_elementwise_bwd_workspace_size)",
                             fn, workspace_bytes, need);
        if ((st = kiln_check_alias(fn, "workspace", workspace, need, "dx", dx, bytes, 0)) ||
            (st = kiln_check_alias(fn, "workspace", workspace, need, "dy", dy, bytes, 0)) ||
            (st = kiln_check_alias(fn, "workspace", workspace, need, "x", x, bytes, 0)) ||
            (st = kiln_check_alias(fn, "workspace", workspace, need, "dbias", dbias, bias_bytes, 0)) ||
            (st = kiln_check_alias(fn, "workspace", workspace, need, "bias", bias, bias_bytes, 0)))
            return st;
    }
    kiln_elementwise_args a = {rows, cols, x, dy, bias, scale, dx, dbias, (float *)workspace};
    kiln_variant_key key = {KILN_OP_ELEMENTWISE_BWD, dtype, 0, act};
    return kiln_dispatch(&key, &a, stream);
}

static kiln_status check_gated(const char *fn, kiln_dtype dtype, kiln_activation act, int64_t n)
{
    kiln_status st;
    if ((st = kiln_check_dtype(fn, dtype)) || (st = kiln_check_act(fn, act))) return st;
    if (n <= 0) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: n is %lld; it must be at least 1", fn, (long long)n);
    if (n > KILN_MAX_ELEMENTS)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: n is %lld; at most %lld elements are supported", fn,
                         (long long)n, (long long)KILN_MAX_ELEMENTS);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_gated_fwd(kiln_dtype dtype, kiln_activation act, int64_t n, const void *gate, const void *up,
                           void *y, kiln_stream stream)
{
    static const char fn[] = "kiln_gated_fwd";
    kiln_clear_error();
    kiln_status st;
    if ((st = check_gated(fn, dtype, act, n))) return st;
    const size_t es = kiln_dtype_size(dtype);
    const size_t bytes = (size_t)n * es;
    if ((st = kiln_check_ptr(fn, "gate", gate, es, 0)) || (st = kiln_check_ptr(fn, "up", up, es, 0)) ||
        (st = kiln_check_ptr(fn, "y", y, es, 0)) ||
        (st = kiln_check_alias(fn, "y", y, bytes, "gate", gate, bytes, 1)) ||
        (st = kiln_check_alias(fn, "y", y, bytes, "up", up, bytes, 1)))
        return st;
    kiln_gated_args a = {n, gate, up, NULL, y, NULL};
    kiln_variant_key key = {KILN_OP_GATED_FWD, dtype, 0, act};
    return kiln_dispatch(&key, &a, stream);
}

kiln_status kiln_gated_bwd(kiln_dtype dtype, kiln_activation act, int64_t n, const void *dy, const void *gate,
                           const void *up, void *dgate, void *dup, kiln_stream stream)
{
    static const char fn[] = "kiln_gated_bwd";
    kiln_clear_error();
    kiln_status st;
    if ((st = check_gated(fn, dtype, act, n))) return st;
    const size_t es = kiln_dtype_size(dtype);
    const size_t bytes = (size_t)n * es;
    if ((st = kiln_check_ptr(fn, "dy", dy, es, 0)) || (st = kiln_check_ptr(fn, "gate", gate, es, 0)) ||
        (st = kiln_check_ptr(fn, "up", up, es, 0)) || (st = kiln_check_ptr(fn, "dgate", dgate, es, 0)) ||
        (st = kiln_check_ptr(fn, "dup", dup, es, 0)) ||
        (st = kiln_check_alias(fn, "dgate", dgate, bytes, "dup", dup, bytes, 0)) ||
        (st = kiln_check_alias(fn, "dgate", dgate, bytes, "dy", dy, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dgate", dgate, bytes, "gate", gate, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dgate", dgate, bytes, "up", up, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dup", dup, bytes, "dy", dy, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dup", dup, bytes, "gate", gate, bytes, 1)) ||
        (st = kiln_check_alias(fn, "dup", dup, bytes, "up", up, bytes, 1)))
        return st;
    kiln_gated_args a = {n, gate, up, dy, dgate, dup};
    kiln_variant_key key = {KILN_OP_GATED_BWD, dtype, 0, act};
    return kiln_dispatch(&key, &a, stream);
}
