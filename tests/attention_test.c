/*
 * attention_test.c: every attention variant in the table, forced by name,
 * against the double reference of ref_attention.c.
 *
 * Cases: seq 1, 17, 100, 257, 1000; seq_q ≠ seq_k both ways (causal then
 * leaves rows that see no key: O = 0, lse = -Inf); GQA 4:2 and 8:1 (MQA);
 * causal; a sliding window; BSHD and BHSD strides; K and V shared by the
 * batch (batch stride 0); variable-length batches;
 * head dims of the variant's own size, 8 less and 3 less (padding handled
 * inside: the inputs' padding columns hold NaN, which must never be read,
 * and the output's must keep their poison). Decode: seq_q 1 to 16 against
 * thousands of keys with the workspace the call asks for (poisoned), which
 * must be more than 0 bytes so the split-KV path and its combine run: MQA,
 * causal, a window that leaves most splits without keys, varlen; and the
 * same for blocks of more rows (seq_q 40 and 200: the full kernels walk a
 * split's keys); varlen batches given the workspace they ask for (the
 * sm_90a kernel's tensor maps a sequence). Outputs and lse are poisoned
 * before each run. Tolerances: the dtype's (tests/gpu_util.c) times 2, for
 * P rounded to the dtype before P·V; lse within 1e-3. Then the workspace's
 * checks: too small, misaligned, and none asked for by a shape that fills
 * the GPU, nor by the decode shape in e4m3 (e4m3 calls never split); a
 * varlen prefill's maps asked for, and refused 16 bytes short.
 *
 * e4m3 variants (FP8 Q, K, V; sm_90a) run their own list, fixed lengths
 * only (no varlen, no split): seq 1, 17, 257, 1000, seq_q ≠ seq_k both ways,
 * GQA 8:1, causal, a window, BSHD, BHSD and K, V shared by the batch, head
 * dims 8, 3 and 32 less than the variant's (96 on h128: a head dim with no
 * variant of its own). Inputs: values uniform in [-1, 1], on some cases with
 * a few elements 20 to 50 times larger (outliers, which then set the
 * descale), stored as e4m3 codes of value / descale with descale = amax / 448
 * over the tensor or, on some cases, over each head (descale_per_head; one
 * case has a head of Q all zeros, so its descale is 0; two have rows whose
 * scores are all negative, beside rows with positive ones); the
 * reference is the double attention of the dequantized inputs (code ·
 * descale). O alternates between f16 and bf16. Tolerance: FP8_TOL_REL (P is
 * rounded to e4m3 inside), lse within FP8_TOL_LSE. On three cases the bf16
 * call of the same head dim (as selection picks it) also runs on the same
 * data, its inputs the dequantized values rounded to bf16, and the TAP line
 * gives both errors against the same reference (for comparison only: the
 * bf16 variants have cases of their own).
 *
 *   bazel test //tests:attention_test    or, on a GPU machine, ./attention_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "tests/gpu_util.h"
#include "tests/par.h"
#include "tests/ref_attention.h"

static rng R;

/* SHARED_KV: BSHD, K and V one batch's, stride 0 across the batch (and
 * across heads where there is one kv head) */
enum layout { BSHD, BHSD, VARLEN, SHARED_KV };

typedef struct attn_case {
    int batch, sq, sk, hq, hkv, d_less;
    int causal, left, right;
    enum layout layout;
    int lens_q[3], lens_k[3]; /* VARLEN: the batch's lengths (past three sequences: varlen_len's) */
    int split;                /* 1: give the workspace the call asks for, and require one; 2: give it
                                 whatever the call asks for (a causal call's tile counter, where its
                                 tiles take 4 rounds of the GPU's SMs) */
    int hopper;               /* sm_90a variants alone (the counted kernel, the 600 sequences; their references are long) */
} attn_case;

static const attn_case cases[] = {
    {2, 17, 17, 4, 2, 0, 0, -1, -1, BSHD, {0}, {0}},
    {1, 1, 1, 2, 2, 0, 0, -1, -1, BSHD, {0}, {0}},
    {2, 1, 300, 8, 1, 0, 1, -1, -1, BSHD, {0}, {0}},     /* decode-like, MQA */
    {2, 100, 37, 2, 2, 8, 1, -1, -1, BSHD, {0}, {0}},    /* causal, seq_q > seq_k: rows see no key */
    {1, 37, 100, 2, 1, 3, 1, -1, -1, BHSD, {0}, {0}},    /* ragged head dim, BHSD */
    {1, 150, 150, 2, 2, 0, 0, 16, 4, BSHD, {0}, {0}},    /* sliding window */
    {1, 257, 257, 2, 2, 0, 0, -1, -1, BHSD, {0}, {0}},
    {3, 64, 100, 4, 2, 0, 1, -1, -1, VARLEN, {5, 64, 33}, {7, 64, 100}},
    {1, 1000, 1000, 1, 1, 0, 0, -1, -1, BSHD, {0}, {0}},
    {1, 16, 700, 4, 4, 8, 0, 40, 0, BSHD, {0}, {0}},        /* decode unsplit: a window, ragged head dim */
    {1, 1, 4000, 8, 1, 0, 0, -1, -1, BSHD, {0}, {0}, 1},    /* decode, MQA, split */
    {2, 16, 3000, 4, 2, 3, 1, -1, -1, BHSD, {0}, {0}, 1},   /* decode, causal, ragged head dim, split */
    {1, 5, 2500, 2, 2, 0, 0, 300, 0, BSHD, {0}, {0}, 1},    /* window: most splits see no key */
    {2, 3, 3500, 4, 4, 0, 1, -1, -1, VARLEN, {3, 1}, {2000, 3500}, 1},
    {1, 200, 3000, 2, 1, 0, 1, -1, -1, BSHD, {0}, {0}, 1},  /* prefill blocks split: causal, GQA, a ragged last block */
    {2, 40, 2000, 2, 2, 8, 0, 100, 0, BHSD, {0}, {0}, 1},   /* few rows split: a window, ragged head dim */
    {2, 130, 150, 4, 2, 0, 1, -1, -1, SHARED_KV, {0}, {0}}, /* K and V broadcast over the batch: causal, GQA */
    {1, 130, 150, 4, 1, 0, 0, -1, -1, SHARED_KV, {0}, {0}}, /* strides of 0 over one batch and one kv head */
    /* More tiles than an H100's 132 SMs, so the persistent TMA kernel's
     * blocks take several in turn: causal, GQA 6:1, tiles that see no key;
     * no mask, BHSD; a ragged head dim (O stored from the fragments); split
     * into more tiles than SMs. */
    {2, 300, 40, 48, 8, 0, 1, -1, -1, BSHD, {0}, {0}},
    {3, 200, 333, 40, 40, 0, 0, -1, -1, BHSD, {0}, {0}},
    {2, 300, 300, 24, 8, 3, 1, -1, -1, BSHD, {0}, {0}},
    {4, 200, 3000, 8, 8, 0, 0, -1, -1, BSHD, {0}, {0}, 1},
    /* 576 causal tiles, 4 rounds of an H100's SMs: the sm_90a kernel takes
     * them longest first from the workspace's counter; rows that see no
     * key, GQA 6:1; then tiles of one to three key steps (four past head
     * dim 128, 80-key steps). */
    {4, 300, 40, 48, 8, 0, 1, -1, -1, BSHD, {0}, {0}, 2},
    {4, 300, 300, 48, 8, 0, 1, -1, -1, BSHD, {0}, {0}, 2, 1},
    /* Varlen with the workspace the call asks for: on sm_90a the TMA kernel
     * through each sequence's tensor maps (boxes past a sequence's end read
     * zeros, stores there are skipped). More tiles than SMs, a sequence of
     * one row, GQA 5:1; causal with sequences whose rows see no key; a
     * window and a ragged head dim (O stored from the fragments); a
     * sequence of no rows and one of no keys (O = 0, lse = -Inf). */
    {3, 300, 300, 40, 8, 0, 0, -1, -1, VARLEN, {300, 1, 129}, {300, 77, 200}, 2},
    {3, 300, 300, 16, 4, 0, 1, -1, -1, VARLEN, {17, 300, 256}, {200, 300, 17}, 2},
    {2, 200, 300, 8, 8, 3, 0, 50, 10, VARLEN, {200, 150}, {200, 300}, 2},
    {3, 200, 150, 4, 2, 0, 0, -1, -1, VARLEN, {0, 200, 40}, {150, 0, 150}, 2},
    /* 600 sequences (varlen_len), causal, GQA 2:1, sm_90a alone: the maps
     * over several blocks, each thread of the tile scan a run of three. */
    {600, 90, 90, 2, 1, 0, 1, -1, -1, VARLEN, {0}, {0}, 2, 1},
};

/* VARLEN: sequence b's rows of Q (kv 0) or of K and V (kv 1), the case's
 * own for batches of up to three, else 1 … 90 spread by b (every 37th
 * empty). */
static int varlen_len(const attn_case *c, int b, int kv)
{
    if (c->batch <= 3) return kv ? c->lens_k[b] : c->lens_q[b];
    return b % 37 == 36 ? 0 : 1 + (b * (kv ? 53 : 29) + 7) % 90;
}

/* An e4m3 case: the shape and masks, how Q, K and V are quantized and O's
 * dtype. */
typedef struct fp8_case {
    attn_case c;     /* fixed lengths, no split */
    int per_head;    /* descale_per_head: a descale per head, else one a tensor */
    int outliers;    /* a few elements 20 to 50 times the rest, which set the descale */
    kiln_dtype o;    /* O's dtype: f16 or bf16 */
    int vs_bf16;     /* also the bf16 call on the same data, for the report */
    int zero_head;   /* Q's head 0 all zeros: with per-head descales its descale is 0 */
    int negative;    /* K's elements all negative and Q's even rows of head 0 all positive: those
                        rows' scores all negative (the kernel's integer max does not hold there) */
} fp8_case;

static const fp8_case fp8_cases[] = {
    {{2, 17, 17, 4, 2, 0, 0, -1, -1, BSHD, {0}, {0}}, 0, 0, KILN_DTYPE_BF16, 1},
    {{1, 1, 1, 2, 2, 0, 0, -1, -1, BSHD, {0}, {0}}, 0, 0, KILN_DTYPE_F16, 0},
    {{2, 1, 300, 8, 1, 0, 1, -1, -1, BSHD, {0}, {0}}, 1, 0, KILN_DTYPE_BF16, 0},   /* decode-like, MQA */
    {{2, 100, 37, 2, 2, 8, 1, -1, -1, BSHD, {0}, {0}}, 0, 1, KILN_DTYPE_F16, 0},   /* causal, rows that see no key */
    {{1, 37, 100, 2, 1, 3, 1, -1, -1, BHSD, {0}, {0}}, 1, 1, KILN_DTYPE_BF16, 0},  /* ragged head dim, BHSD */
    {{1, 150, 150, 2, 2, 0, 0, 16, 4, BSHD, {0}, {0}}, 0, 0, KILN_DTYPE_F16, 0},   /* sliding window */
    {{1, 257, 257, 2, 2, 0, 0, -1, -1, BHSD, {0}, {0}}, 0, 1, KILN_DTYPE_BF16, 1},
    {{1, 1000, 1000, 1, 1, 0, 0, -1, -1, BSHD, {0}, {0}}, 0, 0, KILN_DTYPE_F16, 1},
    {{2, 200, 700, 8, 1, 32, 1, -1, -1, BSHD, {0}, {0}}, 1, 1, KILN_DTYPE_BF16, 0}, /* GQA 8:1, causal, 96 on h128 */
    {{2, 130, 150, 4, 2, 0, 1, -1, -1, SHARED_KV, {0}, {0}}, 1, 0, KILN_DTYPE_BF16, 0},
    {{1, 130, 150, 4, 1, 0, 0, -1, -1, SHARED_KV, {0}, {0}}, 0, 1, KILN_DTYPE_F16, 0},
    {{1, 70, 200, 2, 2, 0, 1, -1, -1, BSHD, {0}, {0}}, 1, 0, KILN_DTYPE_BF16, 0, 1}, /* a q_descale of 0, causal */
    /* More tiles than an H100's 132 SMs, so the persistent kernel's blocks
     * take several in turn: causal, GQA 6:1, tiles that see no key; no mask,
     * BHSD, a ragged head dim (O stored from the fragments); causal tiles of
     * every length; no mask with the whole head dim (O by TMA store, the
     * next tile's Q after it; the blocks of calls without a mask), GQA 6:1. */
    {{2, 300, 40, 48, 8, 0, 1, -1, -1, BSHD, {0}, {0}}, 1, 0, KILN_DTYPE_BF16, 0},
    {{3, 200, 333, 40, 40, 3, 0, -1, -1, BHSD, {0}, {0}}, 0, 1, KILN_DTYPE_F16, 0},
    {{1, 1000, 1000, 40, 40, 0, 1, -1, -1, BSHD, {0}, {0}}, 1, 1, KILN_DTYPE_BF16, 0},
    {{2, 400, 300, 48, 8, 0, 0, -1, -1, BSHD, {0}, {0}}, 1, 1, KILN_DTYPE_BF16, 0},
    /* Rows whose scores are all negative, beside others, without and with a mask. */
    {{2, 300, 500, 4, 2, 0, 0, -1, -1, BSHD, {0}, {0}}, 0, 0, KILN_DTYPE_BF16, 0, 0, 1},
    {{1, 200, 260, 2, 2, 0, 1, -1, -1, BHSD, {0}, {0}}, 1, 0, KILN_DTYPE_F16, 0, 0, 1},
};

/* e4m3 calls: the kernel rounds P (in [0, 1]) to e4m3 before P·V: 3
 * mantissa bits, unit roundoff 2^-4, so each weight is off by up to 2^-5 …
 * 2^-4 of itself by its place in its binade, about 2.6e-2 rms. Averaged
 * over the keys a row sees (O's terms average the same way), ‖O − ref‖ /
 * ‖ref‖ comes out near that rms, not below it: 2.3e-2 to 2.9e-2 in a host
 * emulation of these cases without outliers (three seeds, every head dim;
 * less with outliers: the large weights are exact or nearly); O's own
 * rounding adds under 3e-3. A case passes with its relative error within
 * FP8_TOL_REL and no element off by more than 4·FP8_TOL_REL·max(1,
 * max |ref|), within_tolerance's rule. */
#define FP8_TOL_REL 3.5e-2
/* lse of e4m3 calls, |Δ| / (1 + |lse|): S comes from FP8 wgmma, which
 * accumulates with reduced precision inside the tensor core (DeepSeek-V3
 * reports about 14 bits), and with outliers (inputs 20 to 50 times the rest)
 * the scores, and so the lse, are large; on the H100 the worst case (per-head
 * descales, outliers, MQA, causal) was 1.3e-3, past 16-bit calls' 1e-3.
 * What it drops grows with the head dim (the k steps S adds up): in 12 runs
 * of fresh inputs (96 cases with outliers a head dim, H100, 2026-11-27) the
 * largest were 1.3e-3 / 1.9e-3 / 2.8e-3 at 64 / 128 / 256, and one other run
 * had 3.0e-3 at 256; so the bound is FP8_TOL_LSE · max(1, d / 128). */
#define FP8_TOL_LSE 3e-3
/* lse of the `negative` cases: every product in a score has the same sign,
 * so what the tensor core's accumulation drops no longer cancels; on the
 * H100 up to 8.3e-3 at head dim 256 (7.7e-4 at 128), O within FP8_TOL_REL
 * (2026-11-27). */
#define FP8_TOL_LSE_ONE_SIGN 1.5e-2

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

/* Strides (batch, seq, head) in elements of a [batch][seq][heads][dp] tensor,
 * or [batch][heads][seq][dp]; varlen packs [total][heads][dp]. */
static void strides(enum layout l, int seq, int heads, int dp, int64_t s[3])
{
    if (l == BHSD) {
        s[0] = (int64_t)heads * seq * dp, s[1] = dp, s[2] = (int64_t)seq * dp;
    } else {
        s[0] = (int64_t)seq * heads * dp, s[1] = (int64_t)heads * dp, s[2] = dp;
    }
}

/* The head of element i of a tensor laid out by strides() (SHARED_KV as BSHD). */
static int head_of(enum layout l, int64_t i, int seq, int heads, int dp)
{
    return (int)(l == BHSD ? i / ((int64_t)seq * dp) % heads : i / dp % heads);
}

/* Its position in the sequence (fixed lengths). */
static int pos_of(enum layout l, int64_t i, int seq, int heads, int dp)
{
    return (int)(l == BHSD ? i / dp % seq : i / ((int64_t)heads * dp) % seq);
}

/* An e4m3 input: x (n values, NaN in the padding columns) gets a few
 * outliers when asked, then is stored in b as the e4m3 codes of x / descale,
 * descale = amax / 448 over the tensor (ds[0]) or over each of its heads
 * (ds[heads]). x is replaced by the dequantized values, code · descale, the
 * reference's inputs. */
static void quantize(dbuf *b, double *x, int64_t n, enum layout l, int seq, int heads, int dp, int per_head,
                     int outliers, float *ds)
{
    if (outliers)
        for (int64_t t = 0; t < 1 + n / 1000; t++) {
            const int64_t i = (int64_t)rng_uniform(&R, 0, (double)n);
            if (!isnan(x[i])) x[i] *= rng_uniform(&R, 20, 50);
        }
    const int nds = per_head ? heads : 1;
    for (int h = 0; h < nds; h++) ds[h] = 0;
    for (int64_t i = 0; i < n; i++) {
        float *m = &ds[per_head ? head_of(l, i, seq, heads, dp) : 0];
        if (fabs(x[i]) > *m) *m = (float)fabs(x[i]); /* NaN compares false */
    }
    for (int h = 0; h < nds; h++) ds[h] /= 448.0f; /* 0 for a tensor or head of zeros, as a quantizer gives */
    for (int64_t i = 0; i < n; i++) {
        const float d = ds[per_head ? head_of(l, i, seq, heads, dp) : 0];
        x[i] = d > 0 ? x[i] / d : x[i] * 0; /* keeps the padding's NaN */
    }
    dbuf_upload(b, x); /* rounds to e4m3 (saturating) and gives back the codes' values */
    for (int64_t i = 0; i < n; i++) x[i] *= ds[per_head ? head_of(l, i, seq, heads, dp) : 0];
}

/* The error of `out` against ref, the padding columns (NaN in ref) left out:
 * got receives the output with those set to 0; *pad_ok is 0 when one of them
 * was written (it must keep its poison). */
static err compare_padded(const dbuf *out, const double *ref, double *got, int64_t n, int *pad_ok)
{
    double *r = hbuf(n);
    dbuf_download(out, got);
    *pad_ok = 1;
    for (int64_t i = 0; i < n; i++) {
        r[i] = ref[i];
        if (isnan(ref[i])) {
            if (!isnan(got[i])) *pad_ok = 0;
            got[i] = r[i] = 0;
        }
    }
    const err e = compare(got, r, n);
    free(r);
    return e;
}

/* For an e4m3 case's report: the bf16 call of p8's shape, as selection picks
 * its variant, on the same data (q, k, v: the dequantized inputs, rounded to
 * bf16 on upload), O bf16; its relative error against the same reference, or
 * NaN when it fails. The e4m3 variant v is forced again after. */
static double bf16_rel(const kiln_variant_info *v, const kiln_attention_params *p8, const double *q, const double *k,
                       const double *vv, const double *ref, int64_t nq, int64_t nk)
{
    double *t = hbuf(nq > nk ? nq : nk);
    dbuf b[4];
    const double *src[3] = {q, k, vv};
    for (int i = 0; i < 4; i++) b[i] = dbuf_alloc(KILN_DTYPE_BF16, i == 0 || i == 3 ? nq : nk, 0);
    for (int i = 0; i < 3; i++) {
        memcpy(t, src[i], (size_t)b[i].n * sizeof(double));
        dbuf_upload(&b[i], t);
    }
    kiln_attention_params p = *p8;
    p.q = b[0].ptr, p.k = b[1].ptr, p.v = b[2].ptr, p.o = b[3].ptr, p.lse = NULL;
    p.o_dtype = KILN_DTYPE_BF16, p.q_descale = p.k_descale = p.v_descale = NULL, p.descale_per_head = 0;
    kiln_force_variant(NULL);
    double rel = NAN;
    if (finished(kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL), "bf16 on the same data")) {
        double *got = hbuf(nq);
        int pad_ok;
        rel = compare_padded(&b[3], ref, got, nq, &pad_ok).rel;
        free(got);
    }
    if (kiln_force_variant(v->name) != KILN_STATUS_SUCCESS) tap_bail("%s", kiln_last_error());
    for (int i = 0; i < 4; i++) dbuf_free(&b[i]);
    free(t);
    return rel;
}

/* One case on variant v; f: the e4m3 case c belongs to (v is an e4m3
 * variant), else NULL. */
static void run_case(const kiln_variant_info *v, const attn_case *c, const fp8_case *f)
{
    /* Rows are read 16 bytes at a time: padded to 8 elements of 16 bits, 16 of e4m3. */
    const int per = f ? 16 : 8;
    const int D = v->shape_key, d = D - c->d_less > 0 ? D - c->d_less : 1, dp = (d + per - 1) / per * per;
    const int vl = c->layout == VARLEN;
    int32_t *cu_q = calloc((size_t)c->batch + 1, sizeof(int32_t)), *cu_k = calloc((size_t)c->batch + 1, sizeof(int32_t));
    int sq = c->sq, sk = c->sk;
    if (!cu_q || !cu_k) {
        fprintf(stderr, "attention_test: out of host memory\n");
        exit(1);
    }
    if (vl) {
        sq = sk = 0;
        for (int b = 0; b < c->batch; b++) {
            const int lq = varlen_len(c, b, 0), lk = varlen_len(c, b, 1);
            cu_q[b + 1] = cu_q[b] + lq;
            cu_k[b + 1] = cu_k[b] + lk;
            if (lq > sq) sq = lq;
            if (lk > sk) sk = lk;
        }
    }
    /* Rows of each tensor: batch × seq, or the packed total. */
    const int shared = c->layout == SHARED_KV;
    const int64_t rq = vl ? cu_q[c->batch] : (int64_t)c->batch * sq;
    const int64_t rk = vl ? cu_k[c->batch] : shared ? sk : (int64_t)c->batch * sk;
    const int64_t nq = rq * c->hq * dp, nk = rk * c->hkv * dp;
    int64_t qs[3], ks[3];
    strides(c->layout, sq, c->hq, dp, qs);
    strides(c->layout, sk, c->hkv, dp, ks);
    if (shared) ks[0] = 0, ks[2] = c->hkv == 1 ? 0 : ks[2];
    double *q = hbuf(nq), *k = hbuf(nk), *vv = hbuf(nk), *ref = hbuf(nq), *got = hbuf(nq);
    double *lse_ref = hbuf(rq * c->hq);
    for (int64_t i = 0; i < nq; i++) q[i] = i % dp < d ? rng_uniform(&R, -1, 1) : NAN;
    for (int64_t i = 0; i < nk; i++) {
        k[i] = i % dp < d ? rng_uniform(&R, -1, 1) : NAN;
        vv[i] = i % dp < d ? rng_uniform(&R, -1, 1) : NAN;
    }
    const kiln_dtype o_dtype = f ? f->o : v->dtype;
    dbuf dq = dbuf_alloc(v->dtype, nq, 0), dk = dbuf_alloc(v->dtype, nk, 0), dv = dbuf_alloc(v->dtype, nk, 0);
    dbuf dout = dbuf_alloc(o_dtype, nq, 0);
    /* e4m3: the descales, Q's (1 or hq), then K's and V's (1 or hkv each). */
    float *ds = NULL, *dds = NULL;
    if (f) {
        const int nds = f->per_head ? c->hq + 2 * c->hkv : 3;
        if (!(ds = malloc((size_t)nds * sizeof(float)))) tap_bail("out of host memory");
        float *dsk = ds + (f->per_head ? c->hq : 1), *dsv = dsk + (f->per_head ? c->hkv : 1);
        if (f->zero_head)
            for (int64_t i = 0; i < nq; i++)
                if (head_of(c->layout, i, sq, c->hq, dp) == 0 && !isnan(q[i])) q[i] = 0;
        if (f->negative) {
            for (int64_t i = 0; i < nk; i++) k[i] = -fabs(k[i]);
            for (int64_t i = 0; i < nq; i++)
                if (head_of(c->layout, i, sq, c->hq, dp) == 0 && pos_of(c->layout, i, sq, c->hq, dp) % 2 == 0)
                    q[i] = fabs(q[i]);
        }
        quantize(&dq, q, nq, c->layout, sq, c->hq, dp, f->per_head, f->outliers, ds);
        quantize(&dk, k, nk, c->layout, sk, c->hkv, dp, f->per_head, f->outliers, dsk);
        quantize(&dv, vv, nk, c->layout, sk, c->hkv, dp, f->per_head, f->outliers, dsv);
        CUDA_CHECK(cudaMalloc((void **)&dds, (size_t)nds * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dds, ds, (size_t)nds * sizeof(float), cudaMemcpyHostToDevice));
    } else {
        dbuf_upload(&dq, q);
        dbuf_upload(&dk, k);
        dbuf_upload(&dv, vv);
    }
    for (int64_t i = 0; i < nq; i++) ref[i] = NAN; /* padding columns keep the output's poison */
    const double scale = 1.0 / sqrt((double)d);
    const int right = c->causal ? 0 : c->right;
    for (int b = 0; b < c->batch; b++) {
        const int lq = vl ? varlen_len(c, b, 0) : sq, lk = vl ? varlen_len(c, b, 1) : sk;
        const int64_t oq = vl ? cu_q[b] * qs[1] : b * qs[0], ok = vl ? cu_k[b] * ks[1] : b * ks[0];
        /* lse: [batch][hq][sq], varlen [hq][total_q]; the reference writes [hq][lq] then moves it. */
        double *l = hbuf((int64_t)c->hq * lq);
        ref_attention(lq, lk, c->hq, c->hkv, d, q + oq, k + ok, vv + ok, qs[1], qs[2], ks[1], ks[2], scale, c->left,
                      right, ref + oq, qs[1], qs[2], l);
        for (int h = 0; h < c->hq; h++)
            for (int i = 0; i < lq; i++)
                lse_ref[vl ? (int64_t)h * rq + cu_q[b] + i : ((int64_t)b * c->hq + h) * sq + i] = l[(int64_t)h * lq + i];
        free(l);
    }
    float *dlse;
    int32_t *dcu = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dlse, (size_t)(rq * c->hq) * sizeof(float)));
    CUDA_CHECK(cudaMemset(dlse, 0xff, (size_t)(rq * c->hq) * sizeof(float)));
    if (vl) {
        CUDA_CHECK(cudaMalloc((void **)&dcu, 2 * ((size_t)c->batch + 1) * sizeof(int32_t)));
        CUDA_CHECK(cudaMemcpy(dcu, cu_q, ((size_t)c->batch + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dcu + c->batch + 1, cu_k, ((size_t)c->batch + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    }
    kiln_attention_params p = {c->batch, sq, sk, c->hq, c->hkv, d, dq.ptr, dk.ptr, dv.ptr, dout.ptr,
                               {qs[0], qs[1], qs[2]}, {ks[0], ks[1], ks[2]}, {ks[0], ks[1], ks[2]}, {qs[0], qs[1], qs[2]},
                               (float)scale, c->causal, c->left, c->causal ? -1 : c->right,
                               dcu, dcu ? dcu + c->batch + 1 : NULL, dlse};
    if (f) {
        p.o_dtype = f->o;
        p.q_descale = dds;
        p.k_descale = dds + (f->per_head ? c->hq : 1);
        p.v_descale = p.k_descale + (f->per_head ? c->hkv : 1);
        p.descale_per_head = f->per_head;
    }
    /* Before the e4m3 run, so that the forced variant runs last. */
    const double rel16 = f && f->vs_bf16 ? bf16_rel(v, &p, q, k, vv, ref, nq, nk) : NAN;
    dbuf ws = {0};
    size_t bytes = 0;                                                   /* the workspace the call asked for */
    const int64_t tiles = (int64_t)(sq + 127) / 128 * c->hq * c->batch; /* the sm_90a kernel's, of 128 rows */
    int ok = 1;
    if (c->split) {
        ok = finished(kiln_attention_fwd_workspace(v->dtype, &p, &bytes), "workspace");
        if (ok && bytes == 0 && c->split == 1) {
            tap_diag("%s: split case asks for no workspace: the split path would not run", v->name);
            ok = 0;
        }
        int sms = 0, dev = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        if (ok && c->split == 2 && c->causal && c->left < 0 && c->layout != VARLEN && tiles >= 4 * (int64_t)sms &&
            bytes != 16) {
            tap_diag("%s: a causal call of 4 rounds of tiles on %d SMs asks for %zu bytes, not the counter's 16",
                     v->name, sms, bytes);
            ok = 0;
        }
        ws = dbuf_alloc(KILN_DTYPE_F32, (int64_t)(bytes / sizeof(float)), 0); /* poisoned: NaN */
        p.workspace = ws.ptr;
        p.workspace_bytes = bytes;
    }
    ok = ok && finished(kiln_attention_fwd(v->dtype, &p, NULL), v->name);
    err e = {INFINITY, INFINITY, 0};
    double lse_err = INFINITY;
    if (ok) {
        int pad_ok;
        e = compare_padded(&dout, ref, got, nq, &pad_ok);
        ok = dbuf_guards_intact(&dout) && pad_ok &&
             (f ? e.rel <= FP8_TOL_REL && e.max_abs <= 4 * FP8_TOL_REL * (e.ref_max > 1 ? e.ref_max : 1)
                : within_tolerance_k(e, v->dtype, 2));
        float *hl = malloc((size_t)(rq * c->hq) * sizeof(float));
        CUDA_CHECK(cudaMemcpy(hl, dlse, (size_t)(rq * c->hq) * sizeof(float), cudaMemcpyDeviceToHost));
        lse_err = 0;
        for (int64_t i = 0; i < rq * c->hq; i++) {
            const double r = lse_ref[i], gl = hl[i];
            const double de = isinf(r) ? (gl == r ? 0 : INFINITY) : fabs(gl - r) / (1 + fabs(r));
            if (!(de <= lse_err)) lse_err = de;
        }
        const double lse_tol = f ? (f->negative ? FP8_TOL_LSE_ONE_SIGN : FP8_TOL_LSE * (d > 128 ? d / 128.0 : 1)) : 1e-3;
        ok = ok && lse_err <= lse_tol && (!c->split || dbuf_guards_intact(&ws));
        free(hl);
    }
    /* The counted kernel ran (sm_90a, given the counter's 16 bytes): its
     * counter ends at the tile count, a ticket each and one past the end
     * for each block. */
    if (ok && c->split == 2 && bytes == 16 && strstr(v->name, "_sm90a")) {
        int counter = 0;
        CUDA_CHECK(cudaMemcpy(&counter, ws.ptr, sizeof counter, cudaMemcpyDeviceToHost));
        if (counter != tiles) {
            tap_diag("%s: the tile counter ends at %d, not at the %lld tiles: the counted kernel did not run", v->name,
                     counter, (long long)tiles);
            ok = 0;
        }
    }
    if (c->split) dbuf_free(&ws);
    static const char *layouts[] = {"BSHD", "BHSD", "varlen", "BSHD, K and V shared by the batch"};
    char fp8[128] = "", vs[64] = "";
    if (f)
        snprintf(fp8, sizeof fp8, " O %s, descale per %s%s%s%s", kiln_dtype_name(f->o), f->per_head ? "head" : "tensor",
                 f->outliers ? ", outliers" : "", f->zero_head ? ", Q's head 0 zeros (q_descale 0)" : "",
                 f->negative ? ", rows of negative scores" : "");
    if (f && f->vs_bf16) snprintf(vs, sizeof vs, " (bf16 on the same data %.2e)", rel16);
    tap_ok(ok, "%s b%d sq%d sk%d h%d/%d d%d %s%s window(%d,%d)%s%s: rel %.2e%s max_abs %.2e lse %.1e", v->name,
           c->batch, sq, sk, c->hq, c->hkv, d, layouts[c->layout], c->causal ? " causal" : "", c->left,
           c->causal ? 0 : c->right, c->split ? " split" : "", fp8, e.rel, vs, e.max_abs, lse_err);
    CUDA_CHECK(cudaFree(dlse));
    if (dcu) CUDA_CHECK(cudaFree(dcu));
    free(cu_q);
    free(cu_k);
    if (dds) CUDA_CHECK(cudaFree(dds));
    dbuf_free(&dq);
    dbuf_free(&dk);
    dbuf_free(&dv);
    dbuf_free(&dout);
    free(ds);
    free(q);
    free(k);
    free(vv);
    free(ref);
    free(got);
    free(lse_ref);
}

static int is_attention(const kiln_variant_info *v) { return v->op == KILN_OP_ATTENTION_FWD; }

/* Whether the build has e4m3 attention variants (of any arch). */
static int has_e4m3(void)
{
    for (int i = 0; i < kiln_variant_count(); i++) {
        kiln_variant_info v;
        if (kiln_variant_get(i, &v) == KILN_STATUS_SUCCESS && is_attention(&v) && v.dtype == KILN_DTYPE_E4M3) return 1;
    }
    return 0;
}

/* e4m3 variants run fp8_cases, the others cases. */
static void run_variant(const kiln_variant_info *v)
{
    if (v->dtype == KILN_DTYPE_E4M3)
        for (size_t i = 0; i < sizeof fp8_cases / sizeof fp8_cases[0]; i++) run_case(v, &fp8_cases[i].c, &fp8_cases[i]);
    else
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!cases[i].hopper || strstr(v->name, "_sm90a"))
                run_case(v, &cases[i], NULL);
}

/* The reference as plain loops (every key scored, masked ones weighted 0),
 * which ref_attention, blocked and threaded, must match. */
static void plain_attention(int sq, int sk, int hq, int hkv, int d, const double *q, const double *k, const double *v,
                            int64_t q_row, int64_t q_head, int64_t kv_row, int64_t kv_head, double scale, int left,
                            int right, double *o, double *lse)
{
    double *s = hbuf(sk);
    const int64_t shift = (int64_t)sk - sq;
    for (int h = 0; h < hq; h++) {
        const int hk = h / (hq / hkv);
        for (int i = 0; i < sq; i++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < sk; j++) {
                const int seen = (right < 0 || j <= i + shift + right) && (left < 0 || j >= i + shift - left);
                double dot = 0;
                for (int e = 0; e < d; e++) dot += q[i * q_row + h * q_head + e] * k[j * kv_row + hk * kv_head + e];
                s[j] = seen ? dot * scale : -INFINITY;
                if (s[j] > mx) mx = s[j];
            }
            for (int j = 0; j < sk; j++) {
                s[j] = mx == -INFINITY ? 0 : exp(s[j] - mx);
                sum += s[j];
            }
            for (int e = 0; e < d; e++) {
                double acc = 0;
                for (int j = 0; j < sk; j++) acc += s[j] * v[j * kv_row + hk * kv_head + e];
                o[i * q_row + h * q_head + e] = sum > 0 ? acc / sum : 0;
            }
            lse[(int64_t)h * sq + i] = sum > 0 ? mx + log(sum) : -INFINITY;
        }
    }
    free(s);
}

/* 1 when a and b hold the same values (NaN where the other has NaN). */
static int same_values(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return 0;
    return 1;
}

/* CPU: the reference against plain_attention: causal with GQA, a window,
 * seq_q > seq_k (rows that see no key), BSHD and BHSD, padding columns
 * (NaN) never read, rows enough to be split among threads (par.h). Runs with
 * or without a GPU. */
static void check_reference(void)
{
    static const struct {
        int sq, sk, hq, hkv, d, left, right, bhsd;
    } cs[] = {{70, 90, 4, 2, 40, -1, 0, 0}, {150, 150, 2, 1, 37, 16, 4, 1}, {50, 20, 2, 2, 64, -1, 0, 0},
              {3, 400, 8, 1, 128, -1, -1, 1}};
    rng r = {777};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        const int sq = cs[c].sq, sk = cs[c].sk, hq = cs[c].hq, hkv = cs[c].hkv, d = cs[c].d, dp = d + 5;
        int64_t qs[3], ks[3];
        strides(cs[c].bhsd ? BHSD : BSHD, sq, hq, dp, qs);
        strides(cs[c].bhsd ? BHSD : BSHD, sk, hkv, dp, ks);
        const int64_t nq = (int64_t)sq * hq * dp, nk = (int64_t)sk * hkv * dp;
        double *q = hbuf(nq), *k = hbuf(nk), *v = hbuf(nk), *o = hbuf(nq), *want = hbuf(nq);
        double *lse = hbuf((int64_t)hq * sq), *lse_want = hbuf((int64_t)hq * sq);
        for (int64_t i = 0; i < nq; i++) q[i] = i % dp < d ? rng_uniform(&r, -1, 1) : NAN;
        for (int64_t i = 0; i < nk; i++) {
            k[i] = i % dp < d ? rng_uniform(&r, -1, 1) : NAN;
            v[i] = i % dp < d ? rng_uniform(&r, -1, 1) : NAN;
        }
        for (int64_t i = 0; i < nq; i++) o[i] = want[i] = NAN;
        const double scale = 1.0 / sqrt((double)d);
        plain_attention(sq, sk, hq, hkv, d, q, k, v, qs[1], qs[2], ks[1], ks[2], scale, cs[c].left, cs[c].right, want,
                        lse_want);
        ref_attention(sq, sk, hq, hkv, d, q, k, v, qs[1], qs[2], ks[1], ks[2], scale, cs[c].left, cs[c].right, o,
                      qs[1], qs[2], lse);
        const int ok = same_values(o, want, nq) && same_values(lse, lse_want, (int64_t)hq * sq);
        tap_ok(ok, "reference sq%d sk%d h%d/%d d%d window(%d,%d) %s equals the plain loops (%d threads)", sq, sk, hq,
               hkv, d, cs[c].left, cs[c].right, cs[c].bhsd ? "BHSD" : "BSHD", par_threads());
        free(q);
        free(k);
        free(v);
        free(o);
        free(want);
        free(lse);
        free(lse_want);
    }
}

int main(void)
{
    tap_plan_late();
    check_reference();
    const sweep sw = {"attention", is_attention, run_variant};
    int tested;
    if (gpu_sweep(&sw, &R, &tested) > 0 && gpu_shard_first()) {
        /* Unforced: head dim 100 runs on the 128 variant. */
        dbuf x = dbuf_alloc(KILN_DTYPE_BF16, 4 * 104, 0), y = dbuf_alloc(KILN_DTYPE_BF16, 4 * 104, 0);
        double h[4 * 104];
        for (int i = 0; i < 4 * 104; i++) h[i] = rng_uniform(&R, -1, 1);
        dbuf_upload(&x, h);
        kiln_attention_params p = {1, 4, 4, 1, 1, 100, x.ptr, x.ptr, x.ptr, y.ptr, {416, 104, 104}, {416, 104, 104},
                                   {416, 104, 104}, {416, 104, 104}, 0.1f, 1, -1, -1, NULL, NULL, NULL};
        const kiln_status st = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(finished(st, "selection") && strncmp(kiln_last_variant(), "attention_fwd_h128_bf16_", 24) == 0,
               "head dim 100 selects the head dim 128 variant (%s)", kiln_last_variant());
        /* O with strides of its own: BHSD with rows 136 apart under BSHD Q,
         * K and V, and, with one head, a head stride of 0. The same values
         * as O laid out as Q, and the padding and guards keep their poison
         * (on sm_90a the TMA kernel stores O through a tensor map of O's
         * strides). */
        {
            enum { B = 2, S = 300, H = 2, D = 128, P = 136 };
            const int64_t n = (int64_t)B * S * H * D, no = (int64_t)B * H * S * P;
            dbuf qkv = dbuf_alloc(KILN_DTYPE_BF16, 3 * n, 0), o1 = dbuf_alloc(KILN_DTYPE_BF16, n, 0);
            dbuf o2 = dbuf_alloc(KILN_DTYPE_BF16, no, 0);
            double *hq = malloc(sizeof(double) * (size_t)(3 * n)), *g1 = malloc(sizeof(double) * (size_t)n);
            double *g2 = malloc(sizeof(double) * (size_t)no);
            for (int64_t i = 0; i < 3 * n; i++) hq[i] = rng_uniform(&R, -1, 1);
            dbuf_upload(&qkv, hq);
            const char *base = qkv.ptr;
            for (int heads = H; heads >= 1; heads--) {
                kiln_attention_params pa = {B, S, S, heads, heads, D, base, base + 2 * n, base + 4 * n, o1.ptr,
                                            {S * H * D, H * D, D}, {S * H * D, H * D, D}, {S * H * D, H * D, D},
                                            {S * heads * D, heads * D, D}, 0.09f, 1, -1, -1, NULL, NULL, NULL};
                kiln_attention_params pb = pa;
                pb.o = o2.ptr;
                if (heads == H) { /* BHSD, padded rows */
                    pb.o_stride[0] = (int64_t)H * S * P, pb.o_stride[1] = P, pb.o_stride[2] = (int64_t)S * P;
                } else { /* one head: a head stride of 0 */
                    pb.o_stride[0] = (int64_t)S * P, pb.o_stride[1] = P, pb.o_stride[2] = 0;
                }
                dbuf_poison(&o1);
                dbuf_poison(&o2);
                int ok = finished(kiln_attention_fwd(KILN_DTYPE_BF16, &pa, NULL), "O as Q") &&
                         finished(kiln_attention_fwd(KILN_DTYPE_BF16, &pb, NULL), "O of its own strides");
                if (ok) {
                    dbuf_download(&o1, g1);
                    dbuf_download(&o2, g2);
                    for (int b = 0; b < B; b++)
                        for (int h = 0; h < heads; h++)
                            for (int r = 0; r < S; r++)
                                for (int e = 0; e < P; e++) {
                                    const double x = g2[b * pb.o_stride[0] + h * pb.o_stride[2] + r * P + e];
                                    if (e < D ? x != g1[b * pa.o_stride[0] + r * pa.o_stride[1] + h * D + e] : !isnan(x))
                                        ok = 0;
                                }
                    ok = ok && dbuf_guards_intact(&o1) && dbuf_guards_intact(&o2);
                }
                tap_ok(ok, "O in %s rows %d apart (%s): the values of O laid out as Q, padding untouched",
                       heads == H ? "BHSD" : "one head, head stride 0,", P, kiln_last_variant());
            }
            free(hq), free(g1), free(g2);
            dbuf_free(&qkv), dbuf_free(&o1), dbuf_free(&o2);
        }
        /* The workspace: too small and misaligned are refused before any
         * launch; a shape whose query blocks fill the GPU asks for none. */
        size_t bytes = 0;
        p.seq_k = 50000; /* x is far shorter: every call below must fail before a launch */
        kiln_status st2 = kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes);
        tap_ok(st2 == KILN_STATUS_SUCCESS && bytes > 0, "decode shape asks for a workspace (%zu bytes)", bytes);
        p.workspace = y.ptr, p.workspace_bytes = bytes - 1;
        st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_WORKSPACE_TOO_SMALL && strstr(kiln_last_error(), "workspace_bytes"),
               "a workspace one byte short is refused: %s", kiln_last_error());
        p.workspace = (char *)y.ptr + 4, p.workspace_bytes = bytes;
        st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_MISALIGNED && strstr(kiln_last_error(), "workspace"),
               "a misaligned workspace is refused: %s", kiln_last_error());
        /* e4m3 never splits: the same decode shape (strides of 16 e4m3,
         * any aligned descale pointers) asks for no workspace. */
        if (has_e4m3()) {
            kiln_attention_params p8 = p;
            for (int i = 0; i < 3; i++)
                p8.q_stride[i] = p8.k_stride[i] = p8.v_stride[i] = p8.o_stride[i] = i == 0 ? 448 : 112;
            p8.workspace = NULL, p8.workspace_bytes = 0, p8.o_dtype = KILN_DTYPE_BF16;
            p8.q_descale = p8.k_descale = p8.v_descale = (const float *)x.ptr;
            bytes = 1;
            st2 = kiln_attention_fwd_workspace(KILN_DTYPE_E4M3, &p8, &bytes);
            tap_ok(st2 == KILN_STATUS_SUCCESS && bytes == 0,
                   "the e4m3 decode shape asks for no workspace (%s, %zu bytes)", kiln_status_string(st2), bytes);
        }
        p.batch = 16, p.heads_q = p.heads_kv = 16, p.seq_q = p.seq_k = 4096, p.causal = 0;
        st2 = kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes);
        tap_ok(st2 == KILN_STATUS_SUCCESS && bytes == 0, "a prefill shape that fills the GPU asks for no workspace (%zu bytes)",
               bytes);
        p.causal = 1; /* 8192 tiles of 128 rows: 4 rounds of up to 2048 SMs */
        st2 = kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes);
        tap_ok(st2 == KILN_STATUS_SUCCESS && bytes == 16, "the same shape causal asks for the tile counter (%zu bytes)",
               bytes);
        p.workspace = y.ptr, p.workspace_bytes = 8; /* x is far shorter: the call must fail before a launch */
        st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_WORKSPACE_TOO_SMALL && strstr(kiln_last_error(), "needs 16"),
               "a workspace short of the tile counter is refused: %s", kiln_last_error());
        /* Varlen prefill: four tensor maps of 128 bytes a sequence and its tile count (the sm_90a kernel's). */
        p.causal = 0, p.workspace = NULL, p.workspace_bytes = 0;
        p.cu_seqlens_q = p.cu_seqlens_k = (const int32_t *)x.ptr; /* checked for alignment only */
        st2 = kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes);
        tap_ok(st2 == KILN_STATUS_SUCCESS && bytes >= (size_t)p.batch * (4 * 128 + 4) && bytes % 16 == 0,
               "a varlen prefill of %d sequences asks for their maps (%zu bytes)", p.batch, bytes);
        p.workspace = y.ptr, p.workspace_bytes = bytes - 16;
        st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_WORKSPACE_TOO_SMALL && strstr(kiln_last_error(), "workspace_bytes"),
               "a varlen workspace 16 bytes short is refused: %s", kiln_last_error());
        dbuf_free(&x);
        dbuf_free(&y);
    }
    return tap_done();
}
