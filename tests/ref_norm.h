/*
 * ref_norm.h: double-precision references of the norm and softmax families
 * (kiln.h's formulas), two-pass statistics.
 */
#ifndef KILN_TESTS_REF_NORM_H
#define KILN_TESTS_REF_NORM_H

#include <stdint.h>

/* s = x + residual (residual may be NULL) is written to s_out; gamma/beta may
 * be NULL; mean and rstd get the row statistics. rms: RMSNorm, else LayerNorm. */
void ref_norm_fwd(int rms, int64_t rows, int64_t hidden, const double *x, const double *residual,
                  const double *gamma, const double *beta, double eps, double *y, double *s_out, double *mean,
                  double *rstd);

/* Backward from the forward's s, mean (NULL for rms) and rstd: dx (plus
 * ds_extra when not NULL), dgamma and dbeta (gamma NULL: a scale of 1). */
void ref_norm_bwd(int rms, int64_t rows, int64_t hidden, const double *dy, const double *s, const double *gamma,
                  const double *mean, const double *rstd, const double *ds_extra, double *dx, double *dgamma,
                  double *dbeta);

/* Row softmax of scale·x (log-softmax when `want_log`), as IEEE double
 * arithmetic on the formula gives for NaN and infinite inputs. */
void ref_softmax(int64_t rows, int64_t cols, const double *x, double scale, int want_log, double *y);

#endif /* KILN_TESTS_REF_NORM_H */
