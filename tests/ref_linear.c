/*
 * ref_linear.c: the linear family's double-precision reference (ref_linear.h).
 */
#include "tests/ref_linear.h"

#include "tests/ref_elementwise.h"

static double dot(const double *a, const double *b, int64_t k)
{
    double s = 0;
    for (int64_t i = 0; i < k; i++) s += a[i] * b[i];
    return s;
}

void ref_linear_fwd(kiln_activation act, int64_t m, int64_t n, int64_t k, const double *x, int64_t ldx,
                    const double *w, int64_t ldw, const double *bias, const double *w_up, int64_t ldw_up,
                    const double *bias_up, const double *residual, int64_t ldr, double *y, int64_t ldy)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = ref_act(act, dot(x + i * ldx, w + j * ldw, k) + (bias ? bias[j] : 0));
            if (w_up) v *= dot(x + i * ldx, w_up + j * ldw_up, k) + (bias_up ? bias_up[j] : 0);
            if (residual) v += residual[i * ldr + j];
            y[i * ldy + j] = v;
        }
}
