/*
 * check.c: the argument checks of check.h.
 */
#include <math.h>

#include "runtime/check.h"
#include "runtime/error.h"

size_t kiln_dtype_size(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: return 4;
    case KILN_DTYPE_F16: return 2;
    case KILN_DTYPE_BF16: return 2;
    case KILN_DTYPE_E4M3: return 1;
    case KILN_DTYPE_E5M2: return 1;
    }
    return 0;
}

int kiln_dtype_is_fp8(kiln_dtype dtype) { return dtype == KILN_DTYPE_E4M3 || dtype == KILN_DTYPE_E5M2; }

kiln_status kiln_check_dtype(const char *fn, kiln_dtype dtype)
{
    if (kiln_dtype_is_fp8(dtype))
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: dtype %s; FP8 is an input of kiln_linear_fwd and "
                         "kiln_attention_fwd only (this takes f32, f16, bf16)", fn, kiln_dtype_name(dtype));
    if (kiln_dtype_size(dtype) == 0)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: dtype %d is not one of f32 (%d), f16 (%d), bf16 (%d)", fn,
                         (int)dtype, KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_check_act(const char *fn, kiln_activation act)
{
    if (act < KILN_ACT_NONE || act > KILN_ACT_SILU)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "%s: act %d is not one of none (0), relu (1), gelu_tanh (2), gelu_erf (3), silu (4)", fn,
                         (int)act);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_check_ptr(const char *fn, const char *name, const void *p, size_t align, int optional)
{
    if (p == NULL) {
        if (optional) return KILN_STATUS_SUCCESS;
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is NULL", fn, name);
    }
    if ((uintptr_t)p % align != 0)
        return kiln_fail(KILN_STATUS_MISALIGNED, "%s: %s = %p is not aligned to %zu bytes", fn, name, p, align);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_check_finite(const char *fn, const char *name, float value)
{
    if (!isfinite(value)) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %g; it must be finite", fn, name, value);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_check_alias(const char *fn, const char *a_name, const void *a, size_t a_bytes,
                             const char *b_name, const void *b, size_t b_bytes, int same_ok)
{
    if (a == NULL || b == NULL) return KILN_STATUS_SUCCESS;
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (a0 + a_bytes <= b0 || b0 + b_bytes <= a0) return KILN_STATUS_SUCCESS;
    if (same_ok && a0 == b0 && a_bytes == b_bytes) return KILN_STATUS_SUCCESS;
    return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s overlaps %s%s", fn, a_name, b_name,
                     same_ok ? " (only the very same tensor, in place, is allowed)" : "");
}
