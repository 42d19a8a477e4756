/*
 * softmax.c: the softmax entry point. Checks every argument before any CUDA
 * call, then hands a kiln_softmax_args to the variant selection picks: the
 * one compiled for this row size when x and y are 16-byte aligned, else the
 * generic one.
 */
#include <stdint.h>

#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/softmax.h"

kiln_status kiln_softmax_fwd(kiln_dtype dtype, int64_t rows, int64_t cols, const void *x, float scale, int log,
                             void *y, kiln_stream stream)
{
    static const char fn[] = "kiln_softmax_fwd";
    kiln_clear_error();
    kiln_status st;
    if ((st = kiln_check_dtype(fn, dtype))) return st;
    if (rows <= 0 || rows > INT32_MAX)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows is %lld; it must be from 1 to %d", fn, (long long)rows,
                         INT32_MAX);
    if (cols <= 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: cols is %lld; it must be at least 1", fn, (long long)cols);
    if (rows > KILN_MAX_ELEMENTS / cols)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: rows × cols = %lld × %lld overflows the %lld elements supported",
                         fn, (long long)rows, (long long)cols, (long long)KILN_MAX_ELEMENTS);
    if ((st = kiln_check_finite(fn, "scale", scale))) return st;
    if (scale == 0.0f)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: scale is 0; it must be finite and not 0", fn);
    const size_t es = kiln_dtype_size(dtype), bytes = (size_t)(rows * cols) * es;
    if ((st = kiln_check_ptr(fn, "x", x, es, 0)) || (st = kiln_check_ptr(fn, "y", y, es, 0)) ||
        (st = kiln_check_alias(fn, "y", y, bytes, "x", x, bytes, 1)))
        return st;
    const int aligned = (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    kiln_softmax_args a = {rows, cols, x, scale, log != 0, y};
    kiln_variant_key key = {KILN_OP_SOFTMAX_FWD, dtype, aligned && cols <= INT32_MAX ? (int)cols : 0, KILN_ACT_NONE};
    return kiln_dispatch(&key, &a, stream);
}
