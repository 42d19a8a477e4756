/*
 * ref_attention.h: double-precision reference of kiln's attention forward
 * (kiln.h's formula and masks) and of its gradients, one sequence pair at a
 * time.
 */
#ifndef KILN_TESTS_REF_ATTENTION_H
#define KILN_TESTS_REF_ATTENTION_H

#include <stdint.h>

/* q, o: [sq][hq][..], k, v: [sk][hkv][..], element (s, h, i) at
 * s·row_stride + h·head_stride + i. lse: [hq][sq] (may be NULL). left, right:
 * the window, -1 for unbounded (causal is right = 0). A row that sees no key
 * gets o = 0 and lse = -Inf. */
void ref_attention(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                   int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head, double scale, int left, int right,
                   double *o, int64_t o_row, int64_t o_head, double *lse);

/* The gradients of that forward for an upstream gradient dout of o (laid out
 * as q, which dq is too): dq; dk, dv laid out as k (each kv head's the sum
 * over its query heads). With P the visible keys' softmax weights of a row,
 * D = rowsum(dout ∘ o), dS = P ∘ (dout·Vᵀ − D): dq = scale·dS·K, dk =
 * scale·dSᵀ·Q, dv = Pᵀ·dout. Rows that see no key add nothing. */
void ref_attention_bwd(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                       const double *dout, int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head,
                       double scale, int left, int right, double *dq, double *dk, double *dv);

#endif /* KILN_TESTS_REF_ATTENTION_H */
