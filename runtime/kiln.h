/*
 * kiln.h: the public C interface of kiln, specialized CUDA kernels generated
 * at build time. Plain C99; usable from C and C++; needs no CUDA header.
 *
 * Conventions
 *  - Every call is stream-ordered on the stream it is given (NULL: the legacy
 *    default stream), allocates nothing and never synchronizes the host.
 *  - Tensors are device pointers to contiguous row-major data. A pointer must
 *    be aligned to its element size; kernels use 16-byte accesses wherever the
 *    pointers allow and finish the ragged ends element by element.
 *  - Every argument is checked before any CUDA call. A bad one returns a status
 *    other than KILN_STATUS_SUCCESS, and kiln_last_error() names the argument
 *    and what is supported. Nothing is launched then.
 *  - Safe to call from several threads; the message and a forced variant are
 *    per thread.
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same type as cudaStream_t, without the CUDA headers. */
typedef struct CUstream_st *kiln_stream;

/* What a call returns. Every family gives the same status for the same fault;
 * docs/status.md lists each fault with an example call per family. */
typedef enum kiln_status {
    KILN_STATUS_SUCCESS = 0,
    /* An argument outside what this header allows it: a NULL where a pointer
     * is required (params, an output, a needed workspace); a size, stride or
     * scalar out of its range (zero, negative, past its maximum, a product
     * past 2^40 elements, not finite, a row stride shorter than its row);
     * arguments that contradict each other (one of a pair, a pointer the call
     * takes none of, heads_q not a multiple of heads_kv); an output that
     * overlaps another tensor beyond the aliasing the call allows. */
    KILN_STATUS_INVALID_VALUE = 1,
    /* A pointer not aligned as its family reads it (its element size, or 16
     * bytes where the family says so), or a row stride (attention's strides,
     * linear's ldx, ldw, ldw_up) that is not a whole number of the kernel's
     * 16-byte reads, which would misalign every row after the first. */
    KILN_STATUS_MISALIGNED = 2,
    /* A well-formed request kiln does not have: a dtype, activation or
     * scaling that is no known value, or a combination of them (or of
     * features) the op lacks (FP8 outside linear and attention, f32 attention, e4m3 output
     * with a residual); a key the build has no variant of; a forced variant
     * that does not match the call. */
    KILN_STATUS_NOT_SUPPORTED = 3,
    /* Variants of the call exist, but none runs on this GPU (bf16 on sm_75,
     * FP8 norm output before sm_89, a forced variant of another arch). */
    KILN_STATUS_ARCH_MISMATCH = 4,
    /* kiln_force_variant or KILN_VARIANT names no variant of the table. */
    KILN_STATUS_VARIANT_NOT_FOUND = 5,
    /* A workspace smaller than its size query says the call needs (its
     * workspace_bytes). A NULL workspace where one is needed is
     * INVALID_VALUE, a misaligned one MISALIGNED. */
    KILN_STATUS_WORKSPACE_TOO_SMALL = 6,
    KILN_STATUS_CUDA_ERROR = 7,        /* the CUDA runtime reported an error */
    /* No CUDA device is usable. The workspace checks of attention, linear
     * and the norms' backward, sized by the GPU's SM count, need one. */
    KILN_STATUS_NO_DEVICE = 8
} kiln_status;

typedef enum kiln_dtype {
    KILN_DTYPE_F32 = 0,
    KILN_DTYPE_F16 = 1,
    KILN_DTYPE_BF16 = 2,
    KILN_DTYPE_E4M3 = 3, /* FP8 e4m3 (OCP; finite, ±448): kiln_linear_fwd's inputs and output,
                          * kiln_attention_fwd's Q, K and V */
    KILN_DTYPE_E5M2 = 4  /* FP8 e5m2 (±57344, the gradient format): kiln_linear_fwd's inputs */
} kiln_dtype;

/* How FP8 inputs are scaled. Scales are f32 descale factors in device memory
 * (real value = stored value · scale), read by the kernel, so they can change
 * between calls without a host sync. */
typedef enum kiln_scaling {
    KILN_SCALING_NONE = 0,    /* 16-bit inputs: no scales */
    KILN_SCALING_TENSOR = 1,  /* one factor per tensor: x_scale[0], w_scale[0], w_up_scale[0] */
    KILN_SCALING_ROWWISE = 2, /* one per row: x_scale[m] (rows of X), w_scale[n], w_up_scale[n] (rows of
                               * the weights), as torch._scaled_mm's rowwise mode */
    KILN_SCALING_BLOCK = 3    /* DeepSeek-V3's blocks, k a multiple of 128: one per 1 × 128 of X, stored
                               * k-block major, x_scale[(k/128)·m] at [kb·m + row] (the layout DeepGEMM
                               * and torch take); one per 128 × 128 of a weight, w_scale[⌈n/128⌉·(k/128)]
                               * (and w_up_scale) at [(col/128)·(k/128) + kb] */
} kiln_scaling;

typedef enum kiln_activation {
    KILN_ACT_NONE = 0,
    KILN_ACT_RELU = 1,
    KILN_ACT_GELU_TANH = 2, /* 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³))); linear's epilogue
                               with a 16-bit or e4m3 y takes the GPU's tanh.approx (error about
                               2.5e-4 of the value, under y's rounding; not on sm_70) */
    KILN_ACT_GELU_ERF = 3,  /* 0.5·u·(1 + erf(u/√2)) */
    KILN_ACT_SILU = 4       /* u·sigmoid(u); in linear's epilogue with a 16-bit or e4m3 y,
                               sigmoid(u) = (1 + tanh.approx(u/2)) / 2, as for GELU_TANH */
} kiln_activation;

typedef enum kiln_op {
    KILN_OP_ELEMENTWISE_FWD = 0,
    KILN_OP_ELEMENTWISE_BWD = 1,
    KILN_OP_GATED_FWD = 2,
    KILN_OP_GATED_BWD = 3,
    KILN_OP_LAYERNORM_FWD = 4,
    KILN_OP_RMSNORM_FWD = 5,
    KILN_OP_LAYERNORM_BWD = 6,
    KILN_OP_RMSNORM_BWD = 7,
    KILN_OP_LAYERNORM_FWD_FP8 = 8,
    KILN_OP_RMSNORM_FWD_FP8 = 9,
    KILN_OP_SOFTMAX_FWD = 10,
    KILN_OP_ATTENTION_FWD = 11,
    KILN_OP_LINEAR_FWD = 12,
    KILN_OP_GATED_LINEAR_FWD = 13,
    KILN_OP_ATTENTION_BWD = 14
} kiln_op;

/* A fixed string for a status ("KILN_STATUS_MISALIGNED: ..."). */
const char *kiln_status_string(kiln_status status);

/* The message of this thread's last failed call: which argument, what is
 * supported. An empty string when the last call succeeded. */
const char *kiln_last_error(void);

const char *kiln_dtype_name(kiln_dtype dtype);
const char *kiln_activation_name(kiln_activation act);
const char *kiln_op_name(kiln_op op);

/* ---- Elementwise ---------------------------------------------------------
 * x, y: [rows, cols]. bias: [cols] or NULL. f32 math for every dtype.
 *   forward:  y = act(x·scale + bias)
 *   backward: u = x·scale + bias; dx = dy·act'(u)·scale; dbias = Σ_rows dy·act'(u)
 * y may alias x (in place); dx may alias dy.
 */
kiln_status kiln_elementwise_fwd(kiln_dtype dtype, kiln_activation act,
                                 int64_t rows, int64_t cols,
                                 const void *x, float scale, const void *bias,
                                 void *y, kiln_stream stream);

/* Bytes of device workspace kiln_elementwise_bwd needs for this shape. It is
 * zero when dbias is not requested. The reduction over rows is deterministic:
 * the same inputs give the same dbias, bit for bit, on the same GPU. */
kiln_status kiln_elementwise_bwd_workspace_size(kiln_dtype dtype, int64_t rows, int64_t cols,
                                                int want_dbias, size_t *bytes);

/* dbias may be NULL (then workspace may be NULL too); bias may be NULL.
 * workspace: at least kiln_elementwise_bwd_workspace_size() bytes, 16-byte aligned. */
kiln_status kiln_elementwise_bwd(kiln_dtype dtype, kiln_activation act,
                                 int64_t rows, int64_t cols,
                                 const void *dy, const void *x, float scale, const void *bias,
                                 void *dx, void *dbias,
                                 void *workspace, size_t workspace_bytes, kiln_stream stream);

/* ---- Gated (GLU family) --------------------------------------------------
 * gate, up, y: n elements each. y = act(gate)·up: SwiGLU is KILN_ACT_SILU,
 * GeGLU KILN_ACT_GELU_TANH or KILN_ACT_GELU_ERF, ReGLU KILN_ACT_RELU, the
 * bilinear GLU KILN_ACT_NONE.
 *   backward: dgate = dy·up·act'(gate); dup = dy·act(gate)
 */
kiln_status kiln_gated_fwd(kiln_dtype dtype, kiln_activation act, int64_t n,
                           const void *gate, const void *up, void *y, kiln_stream stream);

kiln_status kiln_gated_bwd(kiln_dtype dtype, kiln_activation act, int64_t n,
                           const void *dy, const void *gate, const void *up,
                           void *dgate, void *dup, kiln_stream stream);

/* ---- Normalization -------------------------------------------------------
 * x, y: [rows, hidden]; gamma, beta: [hidden] or NULL (no scale, no shift).
 *   s = x + residual          (residual NULL: s = x; residual_out, if not NULL, gets s)
 *   layernorm: y = (s - mean)·rstd·gamma + beta,  rstd = 1/√(Σ(s - mean)²/hidden + eps)
 *   rmsnorm:   y = s·rstd·gamma,                  rstd = 1/√(Σs²/hidden + eps)
 * mean, rstd: [rows] f32 or NULL, saved for a backward pass. f32 statistics,
 * computed in two passes over the row held on chip (stable for rows whose
 * mean is large against their spread). A NaN in a row makes that row's
 * outputs NaN; an Inf makes a LayerNorm row NaN, and an RMSNorm row 0 but for
 * the Inf's own element (NaN), as IEEE arithmetic on the formulas gives.
 * Other rows are unaffected. Rows whose squares overflow f32 (|s| past about
 * 1e19 / √hidden) come out as if they held an Inf.
 * Hidden sizes 512, 768, 1024, 2048, 2560, 4096, 5120, 8192, 12288 and 16384
 * have variants of their own when every tensor is 16-byte aligned; any other
 * size or alignment runs the generic variant. y may alias x; residual_out may
 * alias x or residual.
 */
kiln_status kiln_layernorm_fwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x, const void *residual,
                               const void *gamma, const void *beta, float eps, void *y, void *residual_out,
                               float *mean, float *rstd, kiln_stream stream);

kiln_status kiln_rmsnorm_fwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x, const void *residual,
                             const void *gamma, float eps, void *y, void *residual_out, float *rstd,
                             kiln_stream stream);

/* FP8 output, to feed an FP8 GEMM: as above, but y is stored as e4m3 of
 * y·y_scale, rounded to nearest and saturated to ±448 (an Inf saturates, a
 * NaN stays NaN). y_amax, when not NULL, is raised to max |y| over the call
 * (y before the scale; the caller sets its initial value, usually 0), for
 * delayed-scaling recipes. x, residual, residual_out, gamma and beta are of
 * dtype; y_e4m3 is one byte an element and must not overlap x (its rows are
 * narrower than x's, so in place is not offered). Needs sm_89 or newer (the e4m3
 * conversion instructions); older GPUs get KILN_STATUS_ARCH_MISMATCH. */
kiln_status kiln_layernorm_fwd_fp8(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x,
                                   const void *residual, const void *gamma, const void *beta, float eps,
                                   float y_scale, void *y_e4m3, void *residual_out, float *mean, float *rstd,
                                   float *y_amax, kiln_stream stream);

kiln_status kiln_rmsnorm_fwd_fp8(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *x,
                                 const void *residual, const void *gamma, float eps, float y_scale, void *y_e4m3,
                                 void *residual_out, float *rstd, float *y_amax, kiln_stream stream);

/* Backward. s is the forward's normalized input (x + residual: residual_out,
 * or x when there was no residual); mean and rstd are what the forward saved.
 * With ŝ = (s - mean)·rstd (rmsnorm: s·rstd) and g = gamma·dy:
 *   layernorm: dx = rstd·(g - mean_row(g) - ŝ·mean_row(g·ŝ))
 *   rmsnorm:   dx = rstd·(g - ŝ·mean_row(g·ŝ))
 *   dgamma = Σ_rows dy·ŝ,  dbeta = Σ_rows dy
 * ds_extra, when not NULL, is the gradient that reached s along the residual
 * stream; it is added to dx (the fused add's backward: dx is then the
 * gradient of both x and residual). dgamma and dbeta may be NULL (gamma NULL
 * means a scale of 1 and then dgamma must be NULL); they are stored in dtype.
 * Their sums over rows go through per-block partial sums in the workspace and
 * a second kernel that adds them in a fixed order: the same inputs give the
 * same bits on the same GPU. dx may alias dy or ds_extra. The fixed-size
 * variants cover the hidden sizes of the forward when every tensor is 16-byte
 * aligned; the generic one, every other case. */
kiln_status kiln_norm_bwd_workspace_size(kiln_dtype dtype, int64_t rows, int64_t hidden, int want_dgamma_dbeta,
                                         size_t *bytes);

kiln_status kiln_layernorm_bwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *dy, const void *s,
                               const void *gamma, const float *mean, const float *rstd, const void *ds_extra,
                               void *dx, void *dgamma, void *dbeta, void *workspace, size_t workspace_bytes,
                               kiln_stream stream);

kiln_status kiln_rmsnorm_bwd(kiln_dtype dtype, int64_t rows, int64_t hidden, const void *dy, const void *s,
                             const void *gamma, const float *rstd, const void *ds_extra, void *dx, void *dgamma,
                             void *workspace, size_t workspace_bytes, kiln_stream stream);

/* ---- Softmax -------------------------------------------------------------
 * x, y: [rows, cols]. y = softmax(scale·x) over each row, or its logarithm
 * when `log` is not 0 (log-softmax, computed as scale·x - max - log Σ exp,
 * never as the log of a rounded probability). f32 math, the row held on chip
 * for the sizes the norms have variants for, two passes with an online max
 * for any other size. scale must be finite and not 0 (a negative one is a
 * softmin). A row holding a NaN, a +Inf, or only -Inf comes out all NaN, as
 * IEEE arithmetic on the formula gives; a -Inf among finite values gives 0
 * (log: -Inf). y may alias x.
 */
kiln_status kiln_softmax_fwd(kiln_dtype dtype, int64_t rows, int64_t cols, const void *x, float scale, int log,
                             void *y, kiln_stream stream);

/* ---- Attention -----------------------------------------------------------
 * O = softmax(scale·Q·Kᵀ + mask)·V per (batch, head), tile by tile with an
 * online softmax (the seq_q × seq_k matrix never exists), f32 accumulation.
 * Q, O: [batch][seq_q][heads_q][head_dim] and K, V: [batch][seq_k][heads_kv]
 * [head_dim] as strides say (elements; BSHD and BHSD both fit), the last
 * dimension contiguous. heads_q is a multiple of heads_kv (GQA, MQA): query
 * head h reads kv head h / (heads_q / heads_kv).
 * Masks: keys past seq_k; causal (aligned bottom-right: query i sees keys
 * j ≤ i + seq_k − seq_q); a sliding window (window_left, window_right: keys
 * i + seq_k − seq_q − left ≤ j ≤ … + right; −1 for unbounded); causal is the
 * window (−1, 0). A query row that sees no key gets O = 0 and lse = −Inf.
 * Variable lengths: cu_seqlens_q / cu_seqlens_k (device, batch + 1 int32
 * offsets) give each sequence's rows in a packed [total][heads][head_dim]
 * tensor; seq_q / seq_k are then the longest, and the batch stride unused.
 * lse (optional, f32): the natural log of Σ exp(scale·s) per row, at
 * [batch][heads_q][seq_q] (varlen: [heads_q][total_q]).
 * Head dims 32, 64, 80, 96, 128, 160, 192, 256 are compiled (e4m3: 64, 128,
 * 256); any other up to 256 runs on the next one with the padding handled
 * inside. f16 on sm_75 …
 * sm_90, bf16 on sm_80 … sm_90; tensors 16-byte aligned and strides multiples
 * of 8 (else KILN_STATUS_MISALIGNED), none negative, none whose offset
 * along its dimension (stride × (rows − 1)) passes 2^40, and O's at least
 * head_dim along each dimension of more than one row (varlen: its seq
 * stride whenever batch or seq_q is more than 1), so that no two rows of O
 * overlap (else KILN_STATUS_INVALID_VALUE; the backward's dq, dk and dv
 * alike). lse must not overlap Q, K, V or O.
 * Decode (few query blocks, long keys): the call may split each query block's
 * keys over several blocks so every SM is busy, then combine the partial
 * results by their lse in a second kernel. Causal calls of fixed lengths
 * with many query blocks (at least 4 blocks of 128 rows per SM) hand their
 * blocks out longest first from a counter (16 bytes) on sm_90a. Unsplit
 * f16 / bf16 varlen calls of more than 16 rows (seq_q) run on sm_90a's TMA
 * kernel through tensor maps of each sequence, built on the device (516
 * bytes a sequence, and 112), where no stride of 0 broadcasts a dimension;
 * without the maps, on the cp.async kernel. The split, the counter and the
 * maps need a workspace of the caller's (asked for on any GPU):
 * kiln_attention_fwd_workspace says how many bytes the call takes (0: it
 * needs none; it depends on the shape, mask, dtype and the current GPU's SM
 * count); pass them in workspace / workspace_bytes (16-byte aligned, not
 * touched by anything else until the call's work on the stream ends). With
 * workspace NULL the call runs unsplit and gives out its blocks in a fixed
 * order; one smaller than it needs is KILN_STATUS_WORKSPACE_TOO_SMALL. kiln
 * never allocates. */
typedef struct kiln_attention_params {
    int batch, seq_q, seq_k, heads_q, heads_kv, head_dim;
    const void *q, *k, *v;
    void *o;
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* batch, seq, head */
    float scale;            /* usually 1/√head_dim */
    int causal;
    int window_left, window_right;  /* −1: unbounded; with causal, window_right must be −1 or 0 */
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* both NULL, or both given */
    float *lse;
    void *workspace;        /* NULL, or kiln_attention_fwd_workspace's bytes (decode split, causal counter, varlen maps) */
    size_t workspace_bytes;
    /* FP8 (dtype KILN_DTYPE_E4M3; sm_90a): Q, K and V in e4m3, each with f32
     * descale factors on the device (real value = stored value · factor;
     * finite, and for Q and K not negative: 0 for a tensor of zeros),
     * read by the kernel: one a tensor, or with descale_per_head one a head
     * (q_descale[heads_q], k_descale and v_descale [heads_kv]). O is written
     * in o_dtype, f16 or bf16. Fixed lengths (no cu_seqlens), no split (the
     * workspace query says 0; a workspace given is not used), Q, K and V
     * strides multiples of 16 elements; a stride of 0 (a broadcast) for
     * heads and batches only, and K's and V's alike; O and lse must not
     * overlap the descales.
     * 16-bit calls write O in their dtype and take none of these: o_dtype 0
     * (or their dtype), the descales NULL, descale_per_head 0. */
    kiln_dtype o_dtype;
    const float *q_descale, *k_descale, *v_descale;
    int descale_per_head;
} kiln_attention_params;

kiln_status kiln_attention_fwd(kiln_dtype dtype, const kiln_attention_params *params, kiln_stream stream);

/* The workspace bytes kiln_attention_fwd needs for params on the current
 * device (0 when it needs none: no split, no causal counter, no varlen
 * maps); params are checked as the call checks them, workspace and
 * workspace_bytes aside. */
kiln_status kiln_attention_fwd_workspace(kiln_dtype dtype, const kiln_attention_params *params, size_t *bytes);

/* The gradients of kiln_attention_fwd for an upstream gradient dout of O
 * (f16 and bf16 on sm_80 … sm_90 code; on Hopper GPUs sm_90a (wgmma) code
 * at every head dim; on sm_75 f16 at head dims up to 64; no sm_70 code):
 *   P = softmax(scale·Q·Kᵀ + mask) recomputed from Q, K and the forward's lse,
 *   D = rowsum(dout ∘ O), dS = P ∘ (dout·Vᵀ − D),
 *   dq = scale·dS·K, dk = scale·dSᵀ·Q, dv = Pᵀ·dout,
 * tile by tile (P never exists in memory), f32 accumulation; dk and dv of a
 * kv head are the sums over its query heads (GQA, MQA). Shapes, strides,
 * masks, varlen and head dims as the forward's (compiled: 32, 64, 96, 128,
 * 256, and on sm_90a 160 and 192; any other up to 256 runs on the next
 * compiled for the GPU); o and lse are the forward's
 * outputs of the same call (lse is required); dout, dq laid out as Q, dk and
 * dv as K (each with its own strides). Varlen: cu_seqlens_q / _k as the
 * forward's, every tensor packed along its seq stride, lse [heads_q]
 * [total_q], seq_q / seq_k the longest (a longer sequence is cut there).
 * dq is summed across key blocks in f32 in the workspace, which the call
 * requires (NULL: KILN_STATUS_INVALID_VALUE; smaller than
 * kiln_attention_bwd_workspace says: KILN_STATUS_WORKSPACE_TOO_SMALL; it
 * needs no device to answer): 16-byte aligned, not touched by anything else
 * until the call's work on the stream ends.
 * By default key blocks add into it with atomics, in whatever order they
 * run; with deterministic set they add in a fixed order, so the same inputs
 * give the same bits (slower where many key blocks share a query block,
 * causal most). Outputs must not overlap the inputs or each other (a call
 * giving one the very pointer of another is refused; interleaved layouts,
 * a packed [batch][seq][3][heads][head_dim] dqkv say, are fine).
 * Head dim 256 needs 148 KB of shared memory a block: sm_80 and sm_90 GPUs,
 * not sm_86 / sm_89 (KILN_STATUS_NOT_SUPPORTED there). */
typedef struct kiln_attention_bwd_params {
    int batch, seq_q, seq_k, heads_q, heads_kv, head_dim;
    const void *q, *k, *v, *o, *dout;
    const float *lse;       /* the forward's, [batch][heads_q][seq_q] (varlen: [heads_q][total_q]) */
    void *dq, *dk, *dv;
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3], dout_stride[3]; /* batch, seq, head */
    int64_t dq_stride[3], dk_stride[3], dv_stride[3];
    float scale;
    int causal;
    int window_left, window_right;
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* both NULL, or both given */
    int deterministic;
    void *workspace;
    size_t workspace_bytes;
} kiln_attention_bwd_params;

kiln_status kiln_attention_bwd(kiln_dtype dtype, const kiln_attention_bwd_params *params, kiln_stream stream);

/* The workspace bytes kiln_attention_bwd needs for params (more than 0)
 * on the current device, for the calling thread's forced variant if any
 * (the head dim it runs on sets the size; with no usable device, the
 * smallest compiled head dim of any arch that holds params' sets it);
 * params are checked as the call checks them, workspace and
 * workspace_bytes aside. */
kiln_status kiln_attention_bwd_workspace(kiln_dtype dtype, const kiln_attention_bwd_params *params, size_t *bytes);

/* ---- Linear ----------------------------------------------------------------
 * A GEMM with its epilogue fused, f32 accumulation:
 *   plain: Y = act(X·Wᵀ + b) + R
 *   gated: Y = act(X·Wgᵀ + bg) ⊙ (X·Wuᵀ + bu) + R   (w_up given: SwiGLU is
 *          KILN_ACT_SILU, GeGLU KILN_ACT_GELU_TANH / _ERF, ReGLU KILN_ACT_RELU)
 * X [m][k]; W (Wg), Wu [n][k], the layout of nn.Linear weights (a fused
 * gate_up weight [2n][k] is w and w + n·ldw); b (bg), bu [n] or NULL; R
 * (residual) [m][n] or NULL; Y [m][n]. Each matrix is row-major with its own
 * row stride in elements (ld*; 0 means dense: k for X and the weights, n for
 * R and Y).
 * in_dtype (X, the weights, the biases): f16 or bf16 (bf16 on sm_80 on);
 * out_dtype (Y, R): f16, bf16 or f32. The epilogue is f32: bias, activation,
 * gate product and residual, then one rounding to out_dtype. Speed: on
 * sm_90a, a call without a split of k whose y rows are 16-byte aligned (y
 * and ldy·size) stores its whole tiles through the copy engine, in f16,
 * bf16 or f32 without a residual, and with one (its rows 16-byte aligned
 * too) into f32, or into bf16 for bf16 and FP8 inputs, f16 for f16; the
 * last row of tiles is included when m is not a multiple of theirs. Other
 * calls and the tiles at y's right edge (n not a multiple of the tile's
 * width) store by pairs of elements, up to 3× slower at short k
 * (docs/linear.md).
 * FP8 inputs (in_dtype e4m3 or e5m2: X and the weights; sm_89 or sm_90a
 * code): scaling says how (KILN_SCALING_TENSOR, _ROWWISE or _BLOCK), x_scale
 * and w_scale (and w_up_scale when gated; for a fused gate_up weight with
 * rowwise scales, w_scale + n; with block scales and n a multiple of 128,
 * w_scale + (n/128)·(k/128)) point to its f32 factors; the sums are taken in
 * f32 (the tensor core's partial sums added into f32 registers every 128 of
 * k, every 256 on sm_90a with tensor or rowwise scales; block scales
 * applied there) and scaled before the epilogue; the biases
 * are f32. 16-bit inputs take KILN_SCALING_NONE and no scale pointers.
 * FP8 output (FP8 inputs, out_dtype e4m3, no residual): Y is stored as e4m3
 * of y·y_scale[0] (y_scale read on the device; a multiplier, as the norms'
 * host y_scale is), rounded to
 * nearest and saturated to ±448 (NaN stays NaN); y_amax, when not NULL, is
 * raised to max |y| over the call (y before the scale; the caller sets its
 * initial value, usually 0). Other outputs take y_scale and y_amax NULL.
 * Any m, n, k from 1 (block scales: k a multiple of 128). Alignment: x, w,
 * w_up 16-byte aligned and ldx, ldw, ldw_up multiples of 16 bytes (8
 * elements of 16 bits, 16 of FP8: rows are read 16 bytes at a time; k itself
 * needs no rounding, so a dense X of k 13 needs ldx 16); y, residual and the
 * biases aligned to their element.
 * y may be residual (same stride); it must not overlap x, the weights, the biases, the
 * scales or y_amax, nor y_amax the scales.
 * Small m (decode): the call may split k across blocks and reduce the f32
 * partial sums in a second kernel, in a fixed order (the same bits on every
 * run). The split needs a workspace of the caller's: kiln_linear_fwd_workspace
 * says how many bytes the call takes (0: it does not split); pass them in
 * workspace / workspace_bytes (16-byte aligned). With workspace NULL the call
 * runs unsplit; one smaller than needed is KILN_STATUS_WORKSPACE_TOO_SMALL.
 * kiln never allocates. */
typedef struct kiln_linear_params {
    int64_t m, n, k;
    const void *x;
    int64_t ldx;
    const void *w;           /* W, or Wg when gated */
    int64_t ldw;
    const void *bias;        /* b, or bg when gated; NULL: none */
    const void *w_up;        /* Wu; NULL: not gated */
    int64_t ldw_up;
    const void *bias_up;     /* bu; NULL: none */
    const void *residual;    /* NULL: none */
    int64_t ldr;
    void *y;
    int64_t ldy;
    kiln_activation act;
    void *workspace;         /* NULL, or kiln_linear_fwd_workspace's bytes (split k) */
    size_t workspace_bytes;
    kiln_scaling scaling;    /* FP8 inputs: TENSOR, ROWWISE or BLOCK; 16-bit inputs: NONE */
    const float *x_scale;    /* FP8: descale factors of X (1, m or (k/128)·m), on the device */
    const float *w_scale;    /* FP8: of W (Wg) (1, n or ⌈n/128⌉·(k/128)) */
    const float *w_up_scale; /* FP8, gated: of Wu (as w_scale) */
    const float *y_scale;    /* e4m3 out: the factor y is multiplied by before rounding, on the device */
    float *y_amax;           /* e4m3 out: NULL, or raised to max |y| (atomically, on the device) */
} kiln_linear_params;

kiln_status kiln_linear_fwd(kiln_dtype in_dtype, kiln_dtype out_dtype, const kiln_linear_params *params,
                            kiln_stream stream);

/* The workspace bytes kiln_linear_fwd needs for params on the current device
 * (0 when it would not split; it depends on the shape, the dtypes, the SM
 * count and the variant the call would run); params are checked as the call
 * checks them, workspace and workspace_bytes aside, and a call no variant
 * runs gets the call's status. */
kiln_status kiln_linear_fwd_workspace(kiln_dtype in_dtype, kiln_dtype out_dtype, const kiln_linear_params *params,
                                      size_t *bytes);

/* ---- Variants --------------------------------------------------------------
 * The selection table holds every variant the build compiled. A call picks,
 * among those matching it, the one of the highest arch that the current GPU
 * runs (SASS of the same major arch, else PTX through the driver's JIT).
 */
typedef struct kiln_variant_info {
    const char *name;   /* e.g. "elementwise_fwd_gelu_tanh_bf16_sm80" */
    kiln_op op;
    kiln_dtype dtype;
    int shape_key;      /* head dim, hidden size or (linear) rows of the block tile; 0 where the op has none */
    kiln_activation act;
    int arch;           /* the arch it is written for, e.g. 80 */
    int sass_arch;      /* machine code it carries, 0 when none */
    int ptx_arch;       /* the PTX it carries, 0 when none */
    int threads;        /* threads per block */
    int smem_bytes;     /* dynamic shared memory per block */
} kiln_variant_info;

int kiln_variant_count(void);
kiln_status kiln_variant_get(int index, kiln_variant_info *info);

/* Registers per thread and static shared memory of a variant's main kernel on
 * the current device (loads its module; PTX variants are compiled by the JIT). */
kiln_status kiln_variant_resources(int index, int *registers, int *static_smem_bytes);

/* Forces the calling thread's next calls to use a variant by name; NULL
 * returns to selection. A call of another op selects as usual; a call of the
 * forced op that the variant does not match (dtype, activation) fails with
 * KILN_STATUS_NOT_SUPPORTED instead of falling back. The environment variable
 * KILN_VARIANT, read at the first call, forces a variant for every thread
 * that has not forced one of its own; one that names no variant fails every
 * such call with KILN_STATUS_VARIANT_NOT_FOUND, before any CUDA call. */
kiln_status kiln_force_variant(const char *name);

/* The name of the variant the calling thread's last successful call ran. */
const char *kiln_last_variant(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
