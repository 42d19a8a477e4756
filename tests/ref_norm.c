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

void ref_norm_bwd(int rms, int64_t rows, int64_t hidden, const double *dy, const double *s, const double *gamma,
                  const double *mean, const double *rstd, const double *ds_extra, double *dx, double *dgamma,
                  double *dbeta)
{
    for (int64_t i = 0; i < hidden; i++) dgamma[i] = dbeta[i] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double m = rms ? 0 : mean[r], rs = rstd[r];
        const double *sr = s + r * hidden, *d = dy + r * hidden;
        double c1 = 0, c2 = 0;
        for (int64_t i = 0; i < hidden; i++) {
            const double w = (gamma ? gamma[i] : 1) * d[i];
            c1 += w * (sr[i] - m) * rs;
            c2 += w;
        }
        c1 /= (double)hidden;
        c2 = rms ? 0 : c2 / (double)hidden;
        for (int64_t i = 0; i < hidden; i++) {
            const double xh = (sr[i] - m) * rs, w = (gamma ? gamma[i] : 1) * d[i];
            dx[r * hidden + i] = rs * (w - xh * c1 - c2) + (ds_extra ? ds_extra[r * hidden + i] : 0);
            dgamma[i] += d[i] * xh;
            dbeta[i] += d[i];
        }
    }
}

void ref_softmax(int64_t rows, int64_t cols, const double *x, double scale, int want_log, double *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x + r * cols;
        double m = -INFINITY, sum = 0;
        for (int64_t i = 0; i < cols; i++)
            if (scale * xr[i] > m) m = scale * xr[i];
        for (int64_t i = 0; i < cols; i++) sum += exp(scale * xr[i] - m);
        for (int64_t i = 0; i < cols; i++)
            y[r * cols + i] = want_log ? scale * xr[i] - m - log(sum) : exp(scale * xr[i] - m) / sum;
    }
}
