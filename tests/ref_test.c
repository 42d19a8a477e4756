/*
 * ref_test.c: checks of the double references themselves, on the CPU (with
 * or without a GPU): the attention gradients (ref_attention_bwd) against
 * central finite differences of the forward (ref_attention) on tiny cases:
 * GQA, causal with seq_q below and above seq_k (rows that see no key),
 * a sliding window, one query row, and a head-major (BHSD-like) layout.
 *
 *   bazel test //tests:ref_test
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/ref_attention.h"
#include "tests/tap.h"

typedef struct grad_case {
    int sq, sk, hq, hkv, d, left, right;
    int head_major; /* rows of one head contiguous ([h][s][d]) instead of [s][h][d] */
    const char *what;
} grad_case;

/* Uniform in [-1, 1), from a fixed xorshift stream. */
static double draw(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (double)(*state >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

/* L = Σ dout ∘ o of the forward on q, k, v. */
static double loss(const grad_case *c, const double *q, const double *k, const double *v, const double *dout,
                   int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head, double scale, double *o)
{
    ref_attention(c->sq, c->sk, c->hq, c->hkv, c->d, q, k, v, q_row, q_head, kv_row, kv_head, scale, c->left, c->right,
                  o, q_row, q_head, NULL);
    double l = 0;
    for (int64_t i = 0; i < (int64_t)c->sq * c->hq * c->d; i++) l += dout[i] * o[i];
    return l;
}

/* The largest |analytic − numeric| over every element of x (q, k or v). */
static double fd_error(const grad_case *c, double *x, int64_t n, const double *grad, const double *q, const double *k,
                       const double *v, const double *dout, int64_t q_row, int64_t q_head, int64_t kv_row,
                       int64_t kv_head, double scale, double *o)
{
    const double h = 1e-5;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double keep = x[i];
        x[i] = keep + h;
        const double up = loss(c, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale, o);
        x[i] = keep - h;
        const double down = loss(c, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale, o);
        x[i] = keep;
        const double err = fabs((up - down) / (2 * h) - grad[i]);
        if (err > worst) worst = err;
    }
    return worst;
}

int main(void)
{
    static const grad_case cases[] = {
        {3, 5, 2, 1, 4, -1, -1, 0, "GQA 2:1, no mask"},
        {4, 4, 2, 2, 3, -1, 0, 0, "causal, seq_q = seq_k"},
        {5, 3, 1, 1, 2, -1, 0, 0, "causal, seq_q > seq_k (two rows see no key)"},
        {2, 6, 4, 2, 5, -1, 0, 0, "causal, seq_q < seq_k, GQA 2:1"},
        {4, 6, 4, 1, 3, 1, 1, 0, "window (1, 1), MQA"},
        {1, 7, 2, 2, 4, -1, -1, 0, "one query row"},
        {3, 4, 2, 1, 3, -1, 0, 1, "causal, head-major layout"},
    };
    const int n_cases = (int)(sizeof cases / sizeof cases[0]);
    tap_plan(3 * n_cases);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int ci = 0; ci < n_cases; ci++) {
        const grad_case *c = &cases[ci];
        const int64_t nq = (int64_t)c->sq * c->hq * c->d, nk = (int64_t)c->sk * c->hkv * c->d;
        const int64_t q_row = c->head_major ? c->d : (int64_t)c->hq * c->d, q_head = c->head_major ? (int64_t)c->sq * c->d : c->d;
        const int64_t kv_row = c->head_major ? c->d : (int64_t)c->hkv * c->d, kv_head = c->head_major ? (int64_t)c->sk * c->d : c->d;
        const double scale = 0.7;
        double *q = malloc(sizeof(double) * (size_t)nq), *dout = malloc(sizeof(double) * (size_t)nq);
        double *o = malloc(sizeof(double) * (size_t)nq), *dq = malloc(sizeof(double) * (size_t)nq);
        double *k = malloc(sizeof(double) * (size_t)nk), *v = malloc(sizeof(double) * (size_t)nk);
        double *dk = malloc(sizeof(double) * (size_t)nk), *dv = malloc(sizeof(double) * (size_t)nk);
        if (!q || !dout || !o || !dq || !k || !v || !dk || !dv) tap_bail("out of host memory");
        for (int64_t i = 0; i < nq; i++) q[i] = draw(&state), dout[i] = draw(&state);
        for (int64_t i = 0; i < nk; i++) k[i] = draw(&state), v[i] = draw(&state);
        ref_attention_bwd(c->sq, c->sk, c->hq, c->hkv, c->d, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale,
                          c->left, c->right, dq, dk, dv);
        const double tol = 1e-8;
        const double eq = fd_error(c, q, nq, dq, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale, o);
        const double ek = fd_error(c, k, nk, dk, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale, o);
        const double ev = fd_error(c, v, nk, dv, q, k, v, dout, q_row, q_head, kv_row, kv_head, scale, o);
        tap_ok(eq < tol, "dq against finite differences, %s (sq %d sk %d h %d/%d d %d): max error %.2e (tol %.0e)",
               c->what, c->sq, c->sk, c->hq, c->hkv, c->d, eq, tol);
        tap_ok(ek < tol, "dk against finite differences, %s: max error %.2e", c->what, ek);
        tap_ok(ev < tol, "dv against finite differences, %s: max error %.2e", c->what, ev);
        free(q), free(dout), free(o), free(dq), free(k), free(v), free(dk), free(dv);
    }
    return tap_done();
}
