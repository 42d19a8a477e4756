/*
 * ref_elementwise.c: the references of ref_elementwise.h, in double.
 */
#include <math.h>

#include "tests/ref_elementwise.h"

static const double kPi = 3.14159265358979323846;

double ref_act(kiln_activation act, double u)
{
    switch (act) {
    case KILN_ACT_NONE: return u;
    case KILN_ACT_RELU: return u > 0 ? u : 0;
    case KILN_ACT_GELU_TANH: return 0.5 * u * (1 + tanh(sqrt(2 / kPi) * (u + 0.044715 * u * u * u)));
    case KILN_ACT_GELU_ERF: return 0.5 * u * (1 + erf(u / sqrt(2.0)));
    case KILN_ACT_SILU: return u / (1 + exp(-u));
    }
    return NAN;
}

double ref_act_grad(kiln_activation act, double u)
{
    switch (act) {
    case KILN_ACT_NONE: return 1;
    case KILN_ACT_RELU: return u > 0 ? 1 : 0;
    case KILN_ACT_GELU_TANH: {
        const double k0 = sqrt(2 / kPi), k1 = 0.044715;
        const double t = tanh(k0 * (u + k1 * u * u * u));
        return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * k0 * (1 + 3 * k1 * u * u);
    }
    case KILN_ACT_GELU_ERF: return 0.5 * (1 + erf(u / sqrt(2.0))) + u * exp(-0.5 * u * u) / sqrt(2 * kPi);
    case KILN_ACT_SILU: {
        const double s = 1 / (1 + exp(-u));
        return s * (1 + u * (1 - s));
    }
    }
    return NAN;
}

void ref_elementwise_fwd(kiln_activation act, int64_t rows, int64_t cols, const double *x, double scale,
                         const double *bias, double *y)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            const int64_t i = r * cols + c;
            y[i] = ref_act(act, x[i] * scale + (bias ? bias[c] : 0));
        }
}

void ref_elementwise_bwd(kiln_activation act, int64_t rows, int64_t cols, const double *dy, const double *x,
                         double scale, const double *bias, double *dx, double *dbias)
{
    if (dbias)
        for (int64_t c = 0; c < cols; c++) dbias[c] = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            const int64_t i = r * cols + c;
            const double g = dy[i] * ref_act_grad(act, x[i] * scale + (bias ? bias[c] : 0));
            dx[i] = g * scale;
            if (dbias) dbias[c] += g;
        }
}

void ref_gated_fwd(kiln_activation act, int64_t n, const double *gate, const double *up, double *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = ref_act(act, gate[i]) * up[i];
}

void ref_gated_bwd(kiln_activation act, int64_t n, const double *dy, const double *gate, const double *up,
                   double *dgate, double *dup)
{
    for (int64_t i = 0; i < n; i++) {
        dgate[i] = dy[i] * up[i] * ref_act_grad(act, gate[i]);
        dup[i] = dy[i] * ref_act(act, gate[i]);
    }
}
