/*
 * ref_elementwise.h: double-precision references of the elementwise family,
 * written from the formulas in kiln.h, for the tests and the bench's checks.
 */
#ifndef KILN_TESTS_REF_ELEMENTWISE_H
#define KILN_TESTS_REF_ELEMENTWISE_H

#include <stdint.h>

#include "runtime/kiln.h"

double ref_act(kiln_activation act, double u);
double ref_act_grad(kiln_activation act, double u);

/* y[r·cols + c] = act(x·scale + bias[c]); bias may be NULL. */
void ref_elementwise_fwd(kiln_activation act, int64_t rows, int64_t cols, const double *x, double scale,
                         const double *bias, double *y);

/* dx = dy·act'(u)·scale, dbias[c] = Σ_r dy·act'(u); dbias may be NULL. */
void ref_elementwise_bwd(kiln_activation act, int64_t rows, int64_t cols, const double *dy, const double *x,
                         double scale, const double *bias, double *dx, double *dbias);

void ref_gated_fwd(kiln_activation act, int64_t n, const double *gate, const double *up, double *y);
void ref_gated_bwd(kiln_activation act, int64_t n, const double *dy, const double *gate, const double *up,
                   double *dgate, double *dup);

#endif /* KILN_TESTS_REF_ELEMENTWISE_H */
