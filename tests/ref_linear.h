/*
 * ref_linear.h: the double-precision reference of the linear family, written
 * from the formulas in kiln.h, for the tests and the bench's checks.
 */
#ifndef KILN_TESTS_REF_LINEAR_H
#define KILN_TESTS_REF_LINEAR_H

#include <stdint.h>

#include "runtime/kiln.h"

/* y[i·ldy + j] = act(Σ_k x[i·ldx + k]·w[j·ldw + k] + bias[j])
 *                (gated, w_up not NULL: · (Σ_k x·w_up[j·ldw_up + k] + bias_up[j]))
 *                + residual[i·ldr + j]
 * for i < m, j < n; bias, w_up, bias_up and residual may be NULL. residual
 * may be y (read before y is written). */
void ref_linear_fwd(kiln_activation act, int64_t m, int64_t n, int64_t k, const double *x, int64_t ldx,
                    const double *w, int64_t ldw, const double *bias, const double *w_up, int64_t ldw_up,
                    const double *bias_up, const double *residual, int64_t ldr, double *y, int64_t ldy);

#endif /* KILN_TESTS_REF_LINEAR_H */
