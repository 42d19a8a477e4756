/*
 * attention.c: the attention entry points. Checks every argument (the
 * compiled head dims asked of the current device, cudaGetDevice), folds
 * causal into the window, plans the decode split from the device's SMs,
 * then hands a kiln_attention_args to the variant of the smallest compiled
 * head dim that holds the call's.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>

#include "runtime/attention.h"
#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/variant.h"

/* The smallest head dim compiled for op and dtype that is at least head_dim
 * among the variants that run on the current device (some head dims have
 * code for one arch alone: the backward's 160 and 192, sm_90a), else among
 * all (the dispatch then says which arch is missing); a forced variant's
 * own when it holds head_dim; 0: none. */
static int compiled_head_dim(kiln_op op, kiln_dtype dtype, int head_dim)
{
    const kiln_variant *forced = kiln_forced_for(op);
    if (forced && forced->dtype == dtype && forced->shape_key >= head_dim) return forced->shape_key;
    kiln_device_caps caps;
    int cc = 0;
    if (kiln_current_device_caps(&caps) == KILN_STATUS_SUCCESS)
        cc = caps.cc;
    else {
        /* No usable device: the dispatch says why; a workspace query does not need one. Neither kiln's error nor
         * the CUDA runtime's is left set. */
        kiln_clear_error();
        (void)cudaGetLastError();
    }
    return kiln_smallest_shape(op, dtype, head_dim, cc);
}

/* A tensor's strides: none negative, nor so long that an offset along its
 * dimension (stride × (rows − 1), rows: batch, seq, heads; 1 for a varlen
 * batch) passes 2^40 elements (INVALID_VALUE), each a multiple of the `per`
 * elements (of 16 bits: 8; of e4m3: 16) of a 16-byte read (MISALIGNED, as
 * kiln.h's status rule says). */
static kiln_status check_strides(const char *fn, const char *name, const int64_t s[3], int per, int batch, int seq,
                                 int heads)
{
    const int extent[3] = {batch, seq, heads};
    for (int i = 0; i < 3; i++) {
        if (s[i] < 0 || s[i] > KILN_MAX_ELEMENTS || (extent[i] > 1 && s[i] > KILN_MAX_ELEMENTS / (extent[i] - 1)))
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s_stride[%d] is %lld; it must be from 0 to 2^40 elements, "
                             "and times its dimension's %d rows less one at most 2^40", fn, name, i, (long long)s[i],
                             extent[i]);
        if (s[i] % per != 0)
            return kiln_fail(KILN_STATUS_MISALIGNED,
                             "%s: %s_stride[%d] is %lld; it must be a multiple of %d elements (rows are read 16 bytes "
                             "at a time)", fn, name, i, (long long)s[i], per);
    }
    return KILN_STATUS_SUCCESS;
}

/* The dtype and what goes with it: f16 and bf16 write O in their dtype and
 * take no descales; e4m3 writes O in o_dtype (f16 or bf16), needs the three
 * descales, fixed lengths. */
static kiln_status check_dtypes(const char *fn, kiln_dtype dtype, const kiln_attention_params *p)
{
    kiln_status st;
    if (dtype == KILN_DTYPE_E4M3) {
        if (p->o_dtype != KILN_DTYPE_F16 && p->o_dtype != KILN_DTYPE_BF16)
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: o_dtype is %d; e4m3 attention writes f16 (%d) or bf16 (%d)",
                             fn, (int)p->o_dtype, KILN_DTYPE_F16, KILN_DTYPE_BF16);
        const struct {
            const char *name;
            const float *ptr;
        } ds[] = {{"q_descale", p->q_descale}, {"k_descale", p->k_descale}, {"v_descale", p->v_descale}};
        for (int i = 0; i < 3; i++) {
            if (!ds[i].ptr)
                return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is NULL; e4m3 attention needs the descale factors "
                                 "of Q, K and V (device f32)", fn, ds[i].name);
            if ((st = kiln_check_ptr(fn, ds[i].name, ds[i].ptr, sizeof(float), 0))) return st;
        }
        if (p->cu_seqlens_q)
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: cu_seqlens_q is given; e4m3 attention takes fixed "
                             "lengths (varlen is f16 and bf16)", fn);
        /* Its TMA maps stand a stride of 0 in for a dimension's broadcast:
         * heads and batches, K's and V's alike. */
        if ((p->q_stride[1] == 0 && p->seq_q > 1) || (p->k_stride[1] == 0 && p->seq_k > 1) ||
            (p->v_stride[1] == 0 && p->seq_k > 1))
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: a stride [1] of 0 (every row the same); e4m3 attention "
                             "broadcasts heads and batches only", fn);
        if ((p->k_stride[0] == 0 && p->batch > 1) != (p->v_stride[0] == 0 && p->batch > 1) ||
            (p->k_stride[2] == 0 && p->heads_kv > 1) != (p->v_stride[2] == 0 && p->heads_kv > 1))
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: k_stride and v_stride broadcast different dimensions (0 "
                             "in one, not in the other); e4m3 attention takes K and V alike", fn);
        return KILN_STATUS_SUCCESS;
    }
    if (dtype == KILN_DTYPE_E5M2 || dtype == KILN_DTYPE_F32 || kiln_dtype_size(dtype) == 0)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: dtype %d (%s); attention takes f16 (%d), bf16 (%d) and e4m3 "
                         "(%d)", fn, (int)dtype, kiln_dtype_name(dtype), KILN_DTYPE_F16, KILN_DTYPE_BF16,
                         KILN_DTYPE_E4M3);
    if (kiln_dtype_size(p->o_dtype) == 0) /* no dtype at all, as kiln.h's status rule says */
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: o_dtype is %d, no kiln_dtype; a %s call writes O in %s (o_dtype "
                         "0 or %d)", fn, (int)p->o_dtype, kiln_dtype_name(dtype), kiln_dtype_name(dtype), (int)dtype);
    if (p->o_dtype != KILN_DTYPE_F32 && p->o_dtype != dtype)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: o_dtype is %d; a %s call writes O in %s (o_dtype 0 or %d)", fn,
                         (int)p->o_dtype, kiln_dtype_name(dtype), kiln_dtype_name(dtype), (int)dtype);
    if (p->q_descale || p->k_descale || p->v_descale || p->descale_per_head)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: q_descale, k_descale, v_descale or descale_per_head is set; "
                         "only e4m3 calls take descales", fn);
    return KILN_STATUS_SUCCESS;
}

/* An output's strides (checked by check_strides first): along each of its
 * dimensions of more than one row, at least head_dim elements, so that no
 * two blocks write one element (a stride of 0 broadcasts an input, never an
 * output). Every BSHD or BHSD layout passes. */
static kiln_status check_out_strides(const char *fn, const char *name, const int64_t s[3], int batch, int seq,
                                     int heads, int head_dim)
{
    const int extent[3] = {batch, seq, heads};
    static const char *const dim[3] = {"batch", "seq", "heads"};
    for (int i = 0; i < 3; i++)
        if (extent[i] > 1 && s[i] < head_dim)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s_stride[%d] is %lld with %s %d; an output's stride must "
                             "be at least head_dim (%d) where its dimension has more than one row", fn, name, i,
                             (long long)s[i], dim[i], extent[i], head_dim);
    return KILN_STATUS_SUCCESS;
}

/* An output's rows along its seq dimension for check_out_strides: seq, or
 * for varlen, whose packed tensor has a row a sequence at least, the larger
 * of seq and batch. */
static int out_seq_rows(int varlen, int batch, int seq) { return varlen && batch > seq ? batch : seq; }

/* The bytes from a tensor's first element to past its last (strides checked). */
static size_t tensor_bytes(const int64_t s[3], int batch, int seq, int heads, int head_dim, size_t es)
{
    return es * (size_t)((int64_t)(batch - 1) * s[0] + (int64_t)(seq - 1) * s[1] + (int64_t)(heads - 1) * s[2] +
                         head_dim);
}

/* What the forward writes against what it reads (checked once the shape
 * and strides are): lse against Q, K, V and O (fixed lengths, by their
 * bytes; varlen, whose rows are on the device, by their first elements);
 * e4m3: O and lse against the descales, which are read while they are
 * written. */
static kiln_status check_fwd_alias(const char *fn, kiln_dtype dtype, const kiln_attention_params *p)
{
    kiln_status st;
    if (p->lse && p->cu_seqlens_q) {
        if ((const void *)p->lse == p->q || (const void *)p->lse == p->k || (const void *)p->lse == p->v ||
            (void *)p->lse == p->o)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: lse must not be q, k, v or o", fn);
        return KILN_STATUS_SUCCESS; /* e4m3 takes no varlen */
    }
    if (!p->lse && dtype != KILN_DTYPE_E4M3) return KILN_STATUS_SUCCESS; /* nothing to compare */
    const size_t o_bytes = tensor_bytes(p->o_stride, p->batch, p->seq_q, p->heads_q, p->head_dim, 2);
    const size_t lse_bytes = (size_t)p->batch * p->heads_q * p->seq_q * sizeof(float); /* dense [batch][heads_q][seq_q] */
    if (p->lse) {
        const size_t es = dtype == KILN_DTYPE_E4M3 ? 1 : 2;
        const struct {
            const char *name;
            const void *ptr;
            size_t bytes;
        } t[] = {{"q", p->q, tensor_bytes(p->q_stride, p->batch, p->seq_q, p->heads_q, p->head_dim, es)},
                 {"k", p->k, tensor_bytes(p->k_stride, p->batch, p->seq_k, p->heads_kv, p->head_dim, es)},
                 {"v", p->v, tensor_bytes(p->v_stride, p->batch, p->seq_k, p->heads_kv, p->head_dim, es)},
                 {"o", p->o, o_bytes}};
        for (int i = 0; i < 4; i++)
            if ((st = kiln_check_alias(fn, "lse", p->lse, lse_bytes, t[i].name, t[i].ptr, t[i].bytes, 0))) return st;
    }
    if (dtype != KILN_DTYPE_E4M3) return KILN_STATUS_SUCCESS;
    const size_t q_n = p->descale_per_head ? (size_t)p->heads_q : 1, kv_n = p->descale_per_head ? (size_t)p->heads_kv : 1;
    const struct {
        const char *name;
        const float *ptr;
        size_t bytes;
    } ds[] = {{"q_descale", p->q_descale, q_n * 4}, {"k_descale", p->k_descale, kv_n * 4},
              {"v_descale", p->v_descale, kv_n * 4}};
    for (int i = 0; i < 3; i++)
        if ((st = kiln_check_alias(fn, "o", p->o, o_bytes, ds[i].name, ds[i].ptr, ds[i].bytes, 0)) ||
            (st = kiln_check_alias(fn, "lse", p->lse, lse_bytes, ds[i].name, ds[i].ptr, ds[i].bytes, 0)))
            return st;
    return KILN_STATUS_SUCCESS;
}

/* The shape, scale and mask the forward and the backward share. */
static kiln_status check_shape(const char *fn, int batch, int seq_q, int seq_k, int heads_q, int heads_kv, int head_dim,
                               float scale, int causal, int window_left, int window_right, int products)
{
    const struct {
        const char *name;
        int value;
        int max;
    } dims[] = {{"batch", batch, 65535}, {"seq_q", seq_q, INT32_MAX / 2}, {"seq_k", seq_k, INT32_MAX / 2},
                {"heads_q", heads_q, 65535}, {"heads_kv", heads_kv, 65535}, {"head_dim", head_dim, 256}};
    for (int i = 0; i < 6; i++)
        if (dims[i].value < 1 || dims[i].value > dims[i].max)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %d; it must be from 1 to %d", fn, dims[i].name,
                             dims[i].value, dims[i].max);
    if (heads_q % heads_kv != 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: heads_q (%d) must be a multiple of heads_kv (%d)", fn, heads_q,
                         heads_kv);
    /* The tensors' elements (products: all but the varlen forward, whose seq_q and seq_k are the longest of its
     * sequences, not its rows; the backward sizes its workspace from batch × heads_q × seq_q). batch · heads is
     * below 2^32, so each product is checked before it can overflow. */
    const struct {
        const char *name;
        int heads, seq;
    } sizes[] = {{"batch × heads_q × seq_q × head_dim", heads_q, seq_q}, {"batch × heads_kv × seq_k × head_dim", heads_kv, seq_k}};
    for (int i = 0; products && i < 2; i++) {
        const int64_t rows = (int64_t)batch * sizes[i].heads;
        if (rows > KILN_MAX_ELEMENTS / sizes[i].seq || rows * sizes[i].seq > KILN_MAX_ELEMENTS / head_dim)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is past 2^40 elements (%d × %d × %d × %d)", fn,
                             sizes[i].name, batch, sizes[i].heads, sizes[i].seq, head_dim);
    }
    if (!isfinite(scale) || scale <= 0.0f)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: scale is %g; it must be finite and positive", fn, scale);
    if (window_left < -1 || window_right < -1)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: window (%d, %d): each bound is -1 (none) or at least 0", fn,
                         window_left, window_right);
    if (causal && window_right > 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: causal with window_right %d: causal allows no key to the right",
                         fn, window_right);
    return KILN_STATUS_SUCCESS;
}

/* Varlen offsets: both given or both NULL, each aligned to its int32. */
static kiln_status check_cu_seqlens(const char *fn, const int32_t *cu_q, const int32_t *cu_k)
{
    kiln_status st;
    if ((cu_q == NULL) != (cu_k == NULL))
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: cu_seqlens_q and cu_seqlens_k must both be given or both NULL",
                         fn);
    if ((st = kiln_check_ptr(fn, "cu_seqlens_q", cu_q, sizeof(int32_t), 1)) ||
        (st = kiln_check_ptr(fn, "cu_seqlens_k", cu_k, sizeof(int32_t), 1)))
        return st;
    return KILN_STATUS_SUCCESS;
}

/* Everything the call and the workspace query check; *key: the compiled
 * head dim the call runs on. */
static kiln_status check_params(const char *fn, kiln_dtype dtype, const kiln_attention_params *p, int *key)
{
    kiln_status st;
    if (!p) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: params is NULL", fn);
    if ((st = kiln_check_forced()) || (st = check_dtypes(fn, dtype, p))) return st;
    const int per = dtype == KILN_DTYPE_E4M3 ? 16 : 8; /* elements of Q, K and V a 16-byte read takes */
    /* Varlen: the batch stride is unused, and the packed tensors' and lse's rows (total_q, total_k) are on the
     * device: seq strides are checked against the longest sequence, the outputs' against the batch too (a packed
     * tensor has a row a sequence at least), and only the first elements compared. */
    const int varlen = p->cu_seqlens_q != NULL, nb = varlen ? 1 : p->batch;
    if ((st = check_shape(fn, p->batch, p->seq_q, p->seq_k, p->heads_q, p->heads_kv, p->head_dim, p->scale, p->causal,
                          p->window_left, p->window_right, !varlen)))
        return st;
    if ((st = check_cu_seqlens(fn, p->cu_seqlens_q, p->cu_seqlens_k))) return st;
    if ((st = kiln_check_ptr(fn, "q", p->q, 16, 0)) || (st = kiln_check_ptr(fn, "k", p->k, 16, 0)) ||
        (st = kiln_check_ptr(fn, "v", p->v, 16, 0)) || (st = kiln_check_ptr(fn, "o", p->o, 16, 0)) ||
        (st = kiln_check_ptr(fn, "lse", p->lse, sizeof(float), 1)) ||
        (st = check_strides(fn, "q", p->q_stride, per, nb, p->seq_q, p->heads_q)) ||
        (st = check_strides(fn, "k", p->k_stride, per, nb, p->seq_k, p->heads_kv)) ||
        (st = check_strides(fn, "v", p->v_stride, per, nb, p->seq_k, p->heads_kv)) ||
        (st = check_strides(fn, "o", p->o_stride, 8, nb, p->seq_q, p->heads_q)) ||
        (st = check_out_strides(fn, "o", p->o_stride, nb, out_seq_rows(varlen, p->batch, p->seq_q), p->heads_q,
                                p->head_dim)))
        return st;
    if (p->o == p->q || p->o == p->k || p->o == p->v)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: o must not be q, k or v (the kernel reads them after writing o)",
                         fn);
    if ((st = check_fwd_alias(fn, dtype, p))) return st;
    *key = compiled_head_dim(KILN_OP_ATTENTION_FWD, dtype, p->head_dim);
    if (*key == 0)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: no attention variant for %s head_dim %d was built", fn,
                         kiln_dtype_name(dtype), p->head_dim);
    return KILN_STATUS_SUCCESS;
}

/* Query blocks of 64 rows and key blocks of 64: an estimate of every path's
 * tiles (BLOCK_M is 128 on some), enough to size the split. */
enum { PLAN_BLOCK = 64, MAX_SPLITS = 64 };

/* Splits of each query block's keys, for waves of 2·SMs blocks (the resident
 * blocks of the mma paths), each split keeping at least 4 key blocks. Filling
 * waves matters: batch 1 × 32 heads, 32768 keys, split 9 ways (288 blocks, a
 * second wave of 24) ran at 1.1 TB/s on an H200 (2026-11-22). */
static int plan_splits(const kiln_attention_params *p, int sm_count)
{
    const int64_t blocks = (int64_t)(p->seq_q + PLAN_BLOCK - 1) / PLAN_BLOCK * p->heads_q * p->batch;
    const int64_t key_blocks = (p->seq_k + PLAN_BLOCK - 1) / PLAN_BLOCK;
    const int64_t most = key_blocks / 4 < MAX_SPLITS ? key_blocks / 4 : MAX_SPLITS;
    return kiln_wave_splits(blocks, 2 * (int64_t)sm_count, most);
}

/* Bytes of the split workspace: the partial lse, then (16-byte aligned) the partial O. */
static size_t lse_bytes(const kiln_attention_params *p, int splits)
{
    const size_t n = (size_t)splits * p->batch * p->heads_q * p->seq_q * sizeof(float);
    return (n + 15) / 16 * 16;
}

/* Causal prefill of fixed lengths and at least 4 rounds of 128-row tiles
 * on the SMs: the sm_90a TMA kernel hands their tiles out longest first
 * from a counter in the workspace (COUNTER_BYTES), against the turn-about
 * rounds of a grid that leaves SMs idle (docs/attention.md, "Causal tiles
 * longest first from a counter"). Asked for on any GPU: the query does not
 * know the variant the call selects. */
enum { COUNTER_BYTES = 16, COUNT_ROUNDS = 4 };
static int counts_tiles(const kiln_attention_params *p, int splits, int sm_count)
{
    if (!p->causal || p->window_left >= 0 || p->cu_seqlens_q || splits > 1 || p->seq_q <= 16) return 0;
    return (int64_t)(p->seq_q + 127) / 128 * p->heads_q * p->batch >= (int64_t)COUNT_ROUNDS * sm_count;
}

/* The counted tiles' groups: (batch, head) pairs of equal count, at most
 * a quarter of the SMs each, so that every pair's K and V are read by a few
 * blocks at a time (L2). */
static int order_span(const kiln_attention_params *p, int sm_count)
{
    const int64_t pairs = (int64_t)p->heads_q * p->batch, most = sm_count / 4 > 0 ? sm_count / 4 : 1;
    const int64_t groups = (pairs + most - 1) / most;
    return (int)((pairs + groups - 1) / groups);
}

/* Varlen prefill (more than 16 rows a sequence at most) unsplit: the sm_90a
 * TMA kernel reads each sequence through tensor maps of its own (128 bytes
 * each for Q, K, V and O, on 128 bytes, hence the slack) and finds its
 * tiles by the sequences' running tile counts (an int each); the other
 * kernels need none of it. Asked for on any GPU, as the counter. */
static size_t varlen_bytes(const kiln_attention_params *p, int splits)
{
    if (!p->cu_seqlens_q || splits > 1 || p->seq_q <= 16) return 0;
    return (112 + (size_t)p->batch * (4 * 128 + sizeof(int)) + 15) / 16 * 16;
}

static size_t workspace_bytes(const kiln_attention_params *p, int splits, int sm_count)
{
    const size_t maps = varlen_bytes(p, splits);
    if (maps) return maps;
    if (splits <= 1) return counts_tiles(p, splits, sm_count) ? COUNTER_BYTES : 0;
    const size_t pitch = (size_t)(p->head_dim + 1) / 2 * 2;
    return lse_bytes(p, splits) + (size_t)splits * p->batch * p->heads_q * p->seq_q * pitch * sizeof(float);
}

kiln_status kiln_attention_fwd_workspace(kiln_dtype dtype, const kiln_attention_params *p, size_t *bytes)
{
    static const char fn[] = "kiln_attention_fwd_workspace";
    kiln_clear_error();
    if (!bytes) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bytes is NULL", fn);
    *bytes = 0;
    int key = 0;
    kiln_status st = check_params(fn, dtype, p, &key);
    if (st) return st;
    kiln_device_caps caps;
    if ((st = kiln_current_device_caps(&caps))) return st;
    *bytes = dtype == KILN_DTYPE_E4M3 ? 0 : workspace_bytes(p, plan_splits(p, caps.sm_count), caps.sm_count);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attention_fwd(kiln_dtype dtype, const kiln_attention_params *p, kiln_stream stream)
{
    static const char fn[] = "kiln_attention_fwd";
    kiln_clear_error();
    int key = 0;
    kiln_status st = check_params(fn, dtype, p, &key);
    if (st) return st;
    int splits = 1;
    const int may_split = p->workspace && dtype != KILN_DTYPE_E4M3; /* e4m3 runs unsplit */
    if (may_split && (st = kiln_check_ptr(fn, "workspace", p->workspace, 16, 1))) return st;
    kiln_device_caps caps;
    if ((st = kiln_current_device_caps(&caps))) return st;
    if (may_split) {
        splits = plan_splits(p, caps.sm_count);
        const size_t need = workspace_bytes(p, splits, caps.sm_count);
        if (p->workspace_bytes < need)
            return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                             "%s: workspace_bytes is %zu; this call needs %zu (kiln_attention_fwd_workspace)", fn,
                             p->workspace_bytes, need);
    }
    kiln_attention_args a = {p->batch, p->seq_q, p->seq_k, p->heads_q, p->heads_kv, p->head_dim, p->q, p->k, p->v, p->o,
                             {p->q_stride[0], p->q_stride[1], p->q_stride[2]},
                             {p->k_stride[0], p->k_stride[1], p->k_stride[2]},
                             {p->v_stride[0], p->v_stride[1], p->v_stride[2]},
                             {p->o_stride[0], p->o_stride[1], p->o_stride[2]},
                             p->scale * 1.4426950408889634f,
                             p->window_left,
                             p->causal ? 0 : p->window_right,
                             p->cu_seqlens_q,
                             p->cu_seqlens_k,
                             p->lse,
                             splits,
                             splits > 1 ? (float *)((char *)p->workspace + lse_bytes(p, splits)) : NULL,
                             splits > 1 ? (float *)p->workspace : NULL,
                             dtype == KILN_DTYPE_E4M3 ? (int)p->o_dtype : (int)dtype,
                             p->q_descale,
                             p->k_descale,
                             p->v_descale,
                             p->descale_per_head != 0,
                             caps.sm_count,
                             may_split && counts_tiles(p, splits, caps.sm_count) ? (int *)p->workspace : NULL,
                             order_span(p, caps.sm_count),
                             may_split && varlen_bytes(p, splits) ? p->workspace : NULL};
    kiln_variant_key vk = {KILN_OP_ATTENTION_FWD, dtype, key, KILN_ACT_NONE};
    return kiln_dispatch(&vk, &a, stream);
}

/* ---- Backward -------------------------------------------------------------- */

/* Workspace rows of each (batch, query head): seq_q rounded up to the pad. */
static int bwd_sq_pad(const kiln_attention_bwd_params *p)
{
    return (p->seq_q + KILN_ATTENTION_BWD_PAD_ROWS - 1) / KILN_ATTENTION_BWD_PAD_ROWS * KILN_ATTENTION_BWD_PAD_ROWS;
}

/* The workspace's parts (attention.h): dq_acc, lse2, dsum, sem; byte offsets in off[], the total returned. */
static size_t bwd_workspace(const kiln_attention_bwd_params *p, int key, size_t off[4])
{
    const size_t rows = (size_t)p->batch * p->heads_q * bwd_sq_pad(p);
    off[0] = 0;
    off[1] = off[0] + rows * key * sizeof(float);
    off[2] = off[1] + rows * sizeof(float);
    off[3] = off[2] + rows * sizeof(float);
    return off[3] + rows / KILN_ATTENTION_BWD_SEM_ROWS * sizeof(int32_t);
}

static kiln_status check_bwd_params(const char *fn, kiln_dtype dtype, const kiln_attention_bwd_params *p, int *key)
{
    kiln_status st;
    if (!p) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: params is NULL", fn);
    if ((st = kiln_check_forced())) return st;
    if (dtype != KILN_DTYPE_F16 && dtype != KILN_DTYPE_BF16)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: dtype %d (%s); the attention backward takes f16 (%d) and "
                         "bf16 (%d)", fn, (int)dtype, kiln_dtype_name(dtype), KILN_DTYPE_F16, KILN_DTYPE_BF16);
    if ((st = check_shape(fn, p->batch, p->seq_q, p->seq_k, p->heads_q, p->heads_kv, p->head_dim, p->scale, p->causal,
                          p->window_left, p->window_right, 1)))
        return st;
    if ((st = check_cu_seqlens(fn, p->cu_seqlens_q, p->cu_seqlens_k))) return st;
    if (!p->lse)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: lse is NULL; the backward needs the forward's lse", fn);
    /* Varlen: the batch stride is unused; the outputs' seq strides are checked against the batch too (as the
     * forward's O). */
    const int varlen = p->cu_seqlens_q != NULL, nb = varlen ? 1 : p->batch;
    const int out_q = out_seq_rows(varlen, p->batch, p->seq_q), out_k = out_seq_rows(varlen, p->batch, p->seq_k);
    const struct {
        const char *name;
        const void *ptr;
        const int64_t *stride;
        int seq, heads;
    } t[] = {{"q", p->q, p->q_stride, p->seq_q, p->heads_q},     {"k", p->k, p->k_stride, p->seq_k, p->heads_kv},
             {"v", p->v, p->v_stride, p->seq_k, p->heads_kv},     {"o", p->o, p->o_stride, p->seq_q, p->heads_q},
             {"dout", p->dout, p->dout_stride, p->seq_q, p->heads_q}, {"dq", p->dq, p->dq_stride, p->seq_q, p->heads_q},
             {"dk", p->dk, p->dk_stride, p->seq_k, p->heads_kv},  {"dv", p->dv, p->dv_stride, p->seq_k, p->heads_kv}};
    for (int i = 0; i < 8; i++)
        if ((st = kiln_check_ptr(fn, t[i].name, t[i].ptr, 16, 0)) ||
            (st = check_strides(fn, t[i].name, t[i].stride, 8, nb, t[i].seq, t[i].heads)))
            return st;
    if ((st = kiln_check_ptr(fn, "lse", p->lse, sizeof(float), 0)) ||
        (st = check_out_strides(fn, "dq", p->dq_stride, nb, out_q, p->heads_q, p->head_dim)) ||
        (st = check_out_strides(fn, "dk", p->dk_stride, nb, out_k, p->heads_kv, p->head_dim)) ||
        (st = check_out_strides(fn, "dv", p->dv_stride, nb, out_k, p->heads_kv, p->head_dim)))
        return st;
    /* The outputs (dq, dk, dv) against every input and each other: the
     * same first element is refused; interleaved layouts (a packed dqkv)
     * are the caller's to keep apart, as kiln.h says. */
    for (int i = 5; i < 8; i++) {
        for (int j = 0; j < 8; j++)
            if (j != i && t[i].ptr == t[j].ptr)
                return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %s; the outputs must not overlap the inputs or "
                                 "each other", fn, t[i].name, t[j].name);
        if (t[i].ptr == (const void *)p->lse)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is lse; the outputs must not overlap the inputs", fn,
                             t[i].name);
    }
    *key = compiled_head_dim(KILN_OP_ATTENTION_BWD, dtype, p->head_dim);
    if (*key == 0)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: no attention backward variant for %s head_dim %d was built", fn,
                         kiln_dtype_name(dtype), p->head_dim);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attention_bwd_workspace(kiln_dtype dtype, const kiln_attention_bwd_params *p, size_t *bytes)
{
    static const char fn[] = "kiln_attention_bwd_workspace";
    kiln_clear_error();
    if (!bytes) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bytes is NULL", fn);
    *bytes = 0;
    int key = 0;
    kiln_status st = check_bwd_params(fn, dtype, p, &key);
    if (st) return st;
    size_t off[4];
    *bytes = bwd_workspace(p, key, off);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_attention_bwd(kiln_dtype dtype, const kiln_attention_bwd_params *p, kiln_stream stream)
{
    static const char fn[] = "kiln_attention_bwd";
    kiln_clear_error();
    int key = 0;
    kiln_status st = check_bwd_params(fn, dtype, p, &key);
    if (st) return st;
    size_t off[4];
    const size_t need = bwd_workspace(p, key, off);
    if (!p->workspace)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: workspace is NULL; the backward needs %zu bytes "
                         "(kiln_attention_bwd_workspace)", fn, need);
    if ((st = kiln_check_ptr(fn, "workspace", p->workspace, 16, 0))) return st;
    if (p->workspace_bytes < need)
        return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                         "%s: workspace_bytes is %zu; this call needs %zu (kiln_attention_bwd_workspace)", fn,
                         p->workspace_bytes, need);
    char *ws = (char *)p->workspace;
    kiln_attention_bwd_args a = {p->batch, p->seq_q, p->seq_k, p->heads_q, p->heads_kv, p->head_dim,
                                 p->q, p->k, p->v, p->o, p->dout, p->lse, p->dq, p->dk, p->dv,
                                 {p->q_stride[0], p->q_stride[1], p->q_stride[2]},
                                 {p->k_stride[0], p->k_stride[1], p->k_stride[2]},
                                 {p->v_stride[0], p->v_stride[1], p->v_stride[2]},
                                 {p->o_stride[0], p->o_stride[1], p->o_stride[2]},
                                 {p->dout_stride[0], p->dout_stride[1], p->dout_stride[2]},
                                 {p->dq_stride[0], p->dq_stride[1], p->dq_stride[2]},
                                 {p->dk_stride[0], p->dk_stride[1], p->dk_stride[2]},
                                 {p->dv_stride[0], p->dv_stride[1], p->dv_stride[2]},
                                 p->scale,
                                 p->scale * 1.4426950408889634f,
                                 p->window_left,
                                 p->causal ? 0 : p->window_right,
                                 p->cu_seqlens_q,
                                 p->cu_seqlens_k,
                                 p->deterministic != 0,
                                 bwd_sq_pad(p),
                                 (float *)(ws + off[0]),
                                 (float *)(ws + off[1]),
                                 (float *)(ws + off[2]),
                                 (int *)(ws + off[3])};
    kiln_variant_key vk = {KILN_OP_ATTENTION_BWD, dtype, key, KILN_ACT_NONE};
    return kiln_dispatch(&vk, &a, stream);
}
