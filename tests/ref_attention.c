/*
 * ref_attention.c: see ref_attention.h. Forward: two passes per row, the
 * max of the visible scores, then the weights and their sum. Backward (at
 * the end): P recomputed a row at a time, threads over kv heads.
 *
 * Each query row (head, position) is computed on its own (rows are shared
 * among threads, par.h), its sums taken in key order from key 0 as the
 * plain loops take them; keys the mask hides have weight exactly 0 and are
 * skipped (adding them added ±0), so the values do not depend on the thread
 * count. Scores four keys at a time (four independent dot products in
 * flight); P·V four keys a pass over the output row, each element's sum
 * still in key order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/par.h"
#include "tests/ref_attention.h"

typedef struct attn_job {
    int sq, sk, hq, hkv, d, left, right;
    const double *q, *k, *v;
    int64_t q_row, q_head, kv_row, kv_head, o_row, o_head;
    double scale;
    double *o, *lse;
} attn_job;

static void attn_rows(void *ctx, int64_t lo, int64_t hi)
{
    const attn_job *J = ctx;
    const int d = J->d;
    const int64_t shift = (int64_t)J->sk - J->sq;
    double *s = malloc((size_t)(J->sk > 0 ? J->sk : 1) * sizeof(double));
    double *acc = malloc((size_t)(d > 0 ? d : 1) * sizeof(double));
    if (!s || !acc) {
        fprintf(stderr, "ref_attention: out of host memory\n");
        exit(1);
    }
    for (int64_t row = lo; row < hi; row++) {
        const int h = (int)(row / J->sq), i = (int)(row % J->sq), hk = h / (J->hq / J->hkv);
        const double *qr = J->q + i * J->q_row + h * J->q_head;
        const double *kh = J->k + hk * J->kv_head, *vh = J->v + hk * J->kv_head;
        double *orow = J->o + i * J->o_row + h * J->o_head;
        /* The keys this row sees: [j0, j1). */
        int64_t j0 = J->left < 0 ? 0 : i + shift - J->left, j1 = J->right < 0 ? J->sk : i + shift + J->right + 1;
        if (j0 < 0) j0 = 0;
        if (j1 > J->sk) j1 = J->sk;
        double mx = -INFINITY;
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4) {
            const double *k0 = kh + j * J->kv_row, *k1 = k0 + J->kv_row, *k2 = k1 + J->kv_row, *k3 = k2 + J->kv_row;
            double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
            for (int e = 0; e < d; e++) {
                const double a = qr[e];
                t0 += a * k0[e];
                t1 += a * k1[e];
                t2 += a * k2[e];
                t3 += a * k3[e];
            }
            s[j] = t0 * J->scale, s[j + 1] = t1 * J->scale, s[j + 2] = t2 * J->scale, s[j + 3] = t3 * J->scale;
        }
        for (; j < j1; j++) {
            const double *kr = kh + j * J->kv_row;
            double t = 0;
            for (int e = 0; e < d; e++) t += qr[e] * kr[e];
            s[j] = t * J->scale;
        }
        for (j = j0; j < j1; j++)
            if (s[j] > mx) mx = s[j];
        double sum = 0;
        for (j = j0; j < j1; j++) {
            s[j] = exp(s[j] - mx);
            sum += s[j];
        }
        for (int e = 0; e < d; e++) acc[e] = 0;
        for (j = j0; j + 4 <= j1; j += 4) {
            const double *v0 = vh + j * J->kv_row, *v1 = v0 + J->kv_row, *v2 = v1 + J->kv_row, *v3 = v2 + J->kv_row;
            const double p0 = s[j], p1 = s[j + 1], p2 = s[j + 2], p3 = s[j + 3];
            for (int e = 0; e < d; e++) acc[e] = (((acc[e] + p0 * v0[e]) + p1 * v1[e]) + p2 * v2[e]) + p3 * v3[e];
        }
        for (; j < j1; j++) {
            const double *vr = vh + j * J->kv_row, p = s[j];
            for (int e = 0; e < d; e++) acc[e] += p * vr[e];
        }
        for (int e = 0; e < d; e++) orow[e] = sum > 0 ? acc[e] / sum : 0;
        if (J->lse) J->lse[(int64_t)h * J->sq + i] = sum > 0 ? mx + log(sum) : -INFINITY;
    }
    free(s);
    free(acc);
}

void ref_attention(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                   int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head, double scale, int left, int right,
                   double *o, int64_t o_row, int64_t o_head, double *lse)
{
    if (sq <= 0 || hq <= 0) return;
    attn_job J = {sq, sk, hq, hkv, d, left, right, q, k, v, q_row, q_head, kv_row, kv_head, o_row, o_head, scale,
                  o, lse};
    /* Chunks of about 2^18 multiply-adds (a row: 2·sk·d at most). */
    const int64_t per_row = 2 * (int64_t)(sk > 0 ? sk : 1) * (d > 0 ? d : 1);
    par_for((int64_t)hq * sq, ((int64_t)1 << 18) / per_row + 1, attn_rows, &J);
}

typedef struct attn_bwd_job {
    int sq, sk, hq, hkv, d, left, right;
    const double *q, *k, *v, *dout;
    int64_t q_row, q_head, kv_row, kv_head;
    double scale;
    double *dq, *dk, *dv;
} attn_bwd_job;

/* KV heads [lo, hi): each owns its dk and dv and its query heads' dq, so
 * jobs never write the same element, and every sum runs in a fixed order. */
static void attn_bwd_heads(void *ctx, int64_t lo, int64_t hi)
{
    const attn_bwd_job *J = ctx;
    const int d = J->d, group = J->hq / J->hkv;
    const int64_t shift = (int64_t)J->sk - J->sq;
    double *p = malloc((size_t)(J->sk > 0 ? J->sk : 1) * sizeof(double));
    double *o = malloc((size_t)(d > 0 ? d : 1) * sizeof(double));
    if (!p || !o) {
        fprintf(stderr, "ref_attention_bwd: out of host memory\n");
        exit(1);
    }
    for (int64_t hk = lo; hk < hi; hk++) {
        const double *kh = J->k + hk * J->kv_head, *vh = J->v + hk * J->kv_head;
        double *dkh = J->dk + hk * J->kv_head, *dvh = J->dv + hk * J->kv_head;
        for (int j = 0; j < J->sk; j++)
            for (int e = 0; e < d; e++) dkh[j * J->kv_row + e] = dvh[j * J->kv_row + e] = 0;
        for (int h = (int)hk * group; h < (int)(hk + 1) * group; h++)
            for (int i = 0; i < J->sq; i++) {
                const double *qr = J->q + i * J->q_row + h * J->q_head, *gr = J->dout + i * J->q_row + h * J->q_head;
                double *dqr = J->dq + i * J->q_row + h * J->q_head;
                for (int e = 0; e < d; e++) dqr[e] = 0;
                int64_t j0 = J->left < 0 ? 0 : i + shift - J->left, j1 = J->right < 0 ? J->sk : i + shift + J->right + 1;
                if (j0 < 0) j0 = 0;
                if (j1 > J->sk) j1 = J->sk;
                if (j0 >= j1) continue;
                double mx = -INFINITY, sum = 0, dsum = 0;
                for (int64_t j = j0; j < j1; j++) {
                    double t = 0;
                    for (int e = 0; e < d; e++) t += qr[e] * kh[j * J->kv_row + e];
                    p[j] = t * J->scale;
                    if (p[j] > mx) mx = p[j];
                }
                for (int64_t j = j0; j < j1; j++) sum += (p[j] = exp(p[j] - mx));
                for (int e = 0; e < d; e++) o[e] = 0;
                for (int64_t j = j0; j < j1; j++) {
                    p[j] /= sum;
                    for (int e = 0; e < d; e++) o[e] += p[j] * vh[j * J->kv_row + e];
                }
                for (int e = 0; e < d; e++) dsum += gr[e] * o[e]; /* D */
                for (int64_t j = j0; j < j1; j++) {
                    const double *kr = kh + j * J->kv_row, *vr = vh + j * J->kv_row;
                    double dp = 0;
                    for (int e = 0; e < d; e++) dp += gr[e] * vr[e];
                    const double ds = p[j] * (dp - dsum);
                    for (int e = 0; e < d; e++) {
                        dqr[e] += J->scale * ds * kr[e];
                        dkh[j * J->kv_row + e] += J->scale * ds * qr[e];
                        dvh[j * J->kv_row + e] += p[j] * gr[e];
                    }
                }
            }
    }
    free(p);
    free(o);
}

void ref_attention_bwd(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                       const double *dout, int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head,
                       double scale, int left, int right, double *dq, double *dk, double *dv)
{
    if (hkv <= 0) return;
    attn_bwd_job J = {sq, sk, hq, hkv, d, left, right, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale,
                      dq, dk, dv};
    par_for(hkv, 1, attn_bwd_heads, &J);
}
