/*
 * ref_attention.c: see ref_attention.h. Two passes per row: the max of the
 * visible scores, then the weights and their sum.
 */
#include <math.h>
#include <stdlib.h>

#include "tests/ref_attention.h"

void ref_attention(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                   int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head, double scale, int left, int right,
                   double *o, int64_t o_row, int64_t o_head, double *lse)
{
    double *s = malloc((size_t)(sk > 0 ? sk : 1) * sizeof(double));
    const int64_t shift = (int64_t)sk - sq;
    for (int h = 0; h < hq; h++) {
        const int hk = h / (hq / hkv);
        for (int i = 0; i < sq; i++) {
            double mx = -INFINITY;
            for (int j = 0; j < sk; j++) {
                const int seen = (right < 0 || j <= i + shift + right) && (left < 0 || j >= i + shift - left);
                double dot = 0;
                for (int e = 0; e < d; e++) dot += q[i * q_row + h * q_head + e] * k[j * kv_row + hk * kv_head + e];
                s[j] = seen ? dot * scale : -INFINITY;
                if (s[j] > mx) mx = s[j];
            }
            double sum = 0;
            for (int j = 0; j < sk; j++) {
                s[j] = mx == -INFINITY ? 0 : exp(s[j] - mx);
                sum += s[j];
            }
            for (int e = 0; e < d; e++) {
                double acc = 0;
                for (int j = 0; j < sk; j++) acc += s[j] * v[j * kv_row + hk * kv_head + e];
                o[i * o_row + h * o_head + e] = sum > 0 ? acc / sum : 0;
            }
            if (lse) lse[(int64_t)h * sq + i] = sum > 0 ? mx + log(sum) : -INFINITY;
        }
    }
    free(s);
}
