/*
 * ref_norm.c: see ref_norm.h.
 */
#include <math.h>

#include "tests/ref_norm.h"

void ref_norm_fwd(int rms, int64_t rows, int64_t hidden, const double *x, const double *residual,
                  const double *gamma, const double *beta, double eps, double *y, double *s_out, double *mean,
                  double *rstd)
{
    for (int64_t r = 0; r < rows; r++) {
        double *s = s_out + r * hidden;
        double m = 0;
        for (int64_t i = 0; i < hidden; i++) {
            s[i] = x[r * hidden + i] + (residual ? residual[r * hidden + i] : 0);
            m += s[i];
        }
        m = rms ? 0 : m / (double)hidden;
        double v = 0;
        for (int64_t i = 0; i < hidden; i++) v += (s[i] - m) * (s[i] - m);
        const double rs = 1 / sqrt(v / (double)hidden + eps);
        mean[r] = m;
        rstd[r] = rs;
        for (int64_t i = 0; i < hidden; i++)
            y[r * hidden + i] = (s[i] - m) * rs * (gamma ? gamma[i] : 1) + (!rms && beta ? beta[i] : 0);
    }
}
