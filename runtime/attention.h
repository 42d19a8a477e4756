/*
 * attention.h: the arguments kiln_attention_fwd (runtime/attention.c) hands
 * to a variant's launcher (generated from templates/attention.cu.tmpl), and
 * those kiln_attention_bwd hands to a backward variant's
 * (templates/attention_bwd.cu.tmpl). Internal; C and CUDA C++ both read it.
 */
#ifndef KILN_ATTENTION_H
#define KILN_ATTENTION_H

#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Strides in elements; window bounds already folded from causal; -1: none. */
typedef struct kiln_attention_args {
    int batch, seq_q, seq_k, heads_q, heads_kv, head_dim;
    const void *q, *k, *v;
    void *o;
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* batch, seq, head */
    float scale_log2;        /* softmax scale × log2(e) */
    int64_t window_left, window_right;
    const int32_t *cu_seqlens_q, *cu_seqlens_k;
    float *lse;              /* [batch, heads_q, seq_q] (varlen: [heads_q, total_q]) or NULL */
    /* Split-KV (decode): n_splits blocks share each query block's keys; with
     * more than one, the first kernel writes per split an f32 partial O,
     * normalized, [split][batch][heads_q][seq_q][head_dim rounded up to even], and its
     * lse in log2, [split][batch][heads_q][seq_q]; the second combines them. */
    int n_splits;
    float *part_o, *part_lse;
    /* e4m3 variants: O's dtype (f16 or bf16) and the descale factors, one a
     * tensor or (per_head) one a head. */
    int o_dtype;
    const float *q_descale, *k_descale, *v_descale;
    int descale_per_head;
    int sm_count; /* the device's SMs: the persistent TMA kernel's grid */
    /* Causal calls of the sm_90a TMA kernel, where set: tiles longest first
     * from this counter (zeroed by the launcher), in groups of order_span
     * (batch, head) pairs. */
    int *tile_counter;
    int order_span;
    /* Varlen calls of the sm_90a TMA kernel, where set: the workspace that
     * holds each sequence's tensor maps and tile counts (attention.c's
     * varlen_bytes); NULL: the cp.async kernel runs them. */
    void *varlen_maps;
} kiln_attention_args;

/* The backward's workspace rows of each (batch, query head): seq_q rounded
 * up to this, so the kernels' loads and adds of whole query blocks need no
 * bounds; a deterministic counter covers BWD_SEM_ROWS rows. */
#define KILN_ATTENTION_BWD_PAD_ROWS 128
#define KILN_ATTENTION_BWD_SEM_ROWS 64

/* Strides in elements; the window with causal folded in (-1: none);
 * cu_seqlens as the forward's (varlen: seq_q, seq_k the longest, each
 * tensor packed along its seq stride, lse [heads_q][total_q]). The
 * workspace, split by kiln_attention_bwd (sq_pad = seq_q rounded up to
 * KILN_ATTENTION_BWD_PAD_ROWS; head_pitch = the variant's compiled head dim;
 * varlen keeps a batch × sq_pad block of rows a query head):
 *   dq_acc f32 [batch][heads_q][sq_pad][head_pitch]  dQ's sums (within each 64-row block in the
 *                                                    template's dq_at order)
 *   lse2   f32 [batch][heads_q][sq_pad]              lse·log2(e), +Inf for rows that see no key
 *   dsum   f32 [batch][heads_q][sq_pad]              D = rowsum(dout ∘ O)
 *   sem    i32 [batch][heads_q][sq_pad / 64]         deterministic: key blocks added so far */
typedef struct kiln_attention_bwd_args {
    int batch, seq_q, seq_k, heads_q, heads_kv, head_dim;
    const void *q, *k, *v, *o, *dout;
    const float *lse;
    void *dq, *dk, *dv;
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3], dout_stride[3]; /* batch, seq, head */
    int64_t dq_stride[3], dk_stride[3], dv_stride[3];
    float scale, scale_log2;
    int64_t window_left, window_right;
    const int32_t *cu_seqlens_q, *cu_seqlens_k;
    int deterministic;
    int sq_pad;
    float *dq_acc, *lse2, *dsum;
    int *sem;
} kiln_attention_bwd_args;

#ifdef __cplusplus
}
#endif

#endif /* KILN_ATTENTION_H */
