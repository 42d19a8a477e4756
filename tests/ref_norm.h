/*
 * ref_norm.h: double-precision references of the norm family (kiln.h's
 * formulas), two-pass statistics.
 */
#ifndef KILN_TESTS_REF_NORM_H
#define KILN_TESTS_REF_NORM_H

#include <stdint.h>

/* s = x + residual (residual may be NULL) is written to s_out; gamma/beta may
 * be NULL; mean and rstd get the row statistics. rms: RMSNorm, else LayerNorm. */
void ref_norm_fwd(int rms, int64_t rows, int64_t hidden, const double *x, const double *residual,
                  const double *gamma, const double *beta, double eps, double *y, double *s_out, double *mean,
                  double *rstd);

#endif /* KILN_TESTS_REF_NORM_H */
