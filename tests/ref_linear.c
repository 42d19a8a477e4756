/*
 * ref_linear.c: the linear family's double-precision reference (ref_linear.h).
 *
 * Each output's dot products are summed over k in order from 0, as the plain
 * triple loop sums them, so the bits do not depend on the blocking or on the
 * thread count. Eight outputs of a row at a time (eight independent sums in
 * flight instead of one chain of dependent adds); rows × column blocks are
 * shared among threads (par.h).
 */
#include "tests/ref_linear.h"

#include "tests/par.h"
#include "tests/ref_elementwise.h"

#define JB 8 /* outputs of a row per block */

typedef struct linear_job {
    kiln_activation act;
    int64_t n, k, ldx, ldw, ldw_up, ldr, ldy, blocks; /* blocks: column blocks a row */
    const double *x, *w, *bias, *w_up, *bias_up, *residual;
    double *y;
} linear_job;

/* d[c] = Σ_kk x[kk]·w[c·ldw + kk], kk in order, for c < cols (≤ JB). */
static void dots(const double *x, const double *w, int64_t ldw, int64_t k, int cols, double *d)
{
    if (cols == JB) {
        const double *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
        const double *w4 = w + 4 * ldw, *w5 = w + 5 * ldw, *w6 = w + 6 * ldw, *w7 = w + 7 * ldw;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        for (int64_t i = 0; i < k; i++) {
            const double a = x[i];
            s0 += a * w0[i];
            s1 += a * w1[i];
            s2 += a * w2[i];
            s3 += a * w3[i];
            s4 += a * w4[i];
            s5 += a * w5[i];
            s6 += a * w6[i];
            s7 += a * w7[i];
        }
        d[0] = s0, d[1] = s1, d[2] = s2, d[3] = s3, d[4] = s4, d[5] = s5, d[6] = s6, d[7] = s7;
        return;
    }
    for (int c = 0; c < cols; c++) {
        double s = 0;
        for (int64_t i = 0; i < k; i++) s += x[i] * w[c * ldw + i];
        d[c] = s;
    }
}

/* Items: row i = item / blocks, columns from JB·(item % blocks). */
static void linear_items(void *ctx, int64_t lo, int64_t hi)
{
    const linear_job *J = ctx;
    for (int64_t it = lo; it < hi; it++) {
        const int64_t i = it / J->blocks, j0 = it % J->blocks * JB;
        const int cols = J->n - j0 < JB ? (int)(J->n - j0) : JB;
        const double *xr = J->x + i * J->ldx;
        double g[JB], u[JB];
        dots(xr, J->w + j0 * J->ldw, J->ldw, J->k, cols, g);
        if (J->w_up) dots(xr, J->w_up + j0 * J->ldw_up, J->ldw_up, J->k, cols, u);
        for (int c = 0; c < cols; c++) {
            const int64_t j = j0 + c;
            double v = ref_act(J->act, g[c] + (J->bias ? J->bias[j] : 0));
            if (J->w_up) v *= u[c] + (J->bias_up ? J->bias_up[j] : 0);
            if (J->residual) v += J->residual[i * J->ldr + j];
            J->y[i * J->ldy + j] = v;
        }
    }
}

void ref_linear_fwd(kiln_activation act, int64_t m, int64_t n, int64_t k, const double *x, int64_t ldx,
                    const double *w, int64_t ldw, const double *bias, const double *w_up, int64_t ldw_up,
                    const double *bias_up, const double *residual, int64_t ldr, double *y, int64_t ldy)
{
    if (m <= 0 || n <= 0) return;
    linear_job J = {act, n, k, ldx, ldw, ldw_up, ldr, ldy, (n + JB - 1) / JB, x, w, bias, w_up, bias_up, residual, y};
    /* Chunks of about 2^18 multiply-adds: threads only where they pay. */
    const int64_t per_item = JB * (k > 0 ? k : 1) * (w_up ? 2 : 1);
    par_for(m * J.blocks, ((int64_t)1 << 18) / per_item + 1, linear_items, &J);
}
