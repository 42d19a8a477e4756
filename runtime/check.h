/*
 * check.h: argument checks every entry point shares (internal). Each returns
 * KILN_STATUS_SUCCESS or a failure status with the thread's message naming
 * the function, the argument and what is supported.
 */
#ifndef KILN_CHECK_H
#define KILN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest element count of one tensor: 2^40, far past any GPU's memory,
 * small enough that element × 4-byte products stay exact. */
#define KILN_MAX_ELEMENTS ((int64_t)1 << 40)

size_t kiln_dtype_size(kiln_dtype dtype);
int kiln_dtype_is_fp8(kiln_dtype dtype);
/* f32, f16 or bf16: the dtypes every family computes in (FP8 is refused). */
kiln_status kiln_check_dtype(const char *fn, kiln_dtype dtype);
kiln_status kiln_check_act(const char *fn, kiln_activation act);

/* p must be aligned to `align`; it may be NULL only when `optional`. */
kiln_status kiln_check_ptr(const char *fn, const char *name, const void *p, size_t align, int optional);

kiln_status kiln_check_finite(const char *fn, const char *name, float value);

/* Tensors a (an output) and b must not overlap, except that they may be the
 * very same range when `same_ok` (an in-place call). NULLs never overlap. */
kiln_status kiln_check_alias(const char *fn, const char *a_name, const void *a, size_t a_bytes,
                             const char *b_name, const void *b, size_t b_bytes, int same_ok);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CHECK_H */
