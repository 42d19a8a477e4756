/*
 * attention_bwd_test.c: every attention backward variant in the table
 * (KILN_OP_ATTENTION_BWD), forced by name, against the double reference of
 * ref_attention.c (ref_attention_bwd).
 *
 * Per case: Q, K, V and dout drawn from N(0, 1) (never zeros) and rounded to
 * the dtype; O and lse from ref_attention in double, as the forward gives
 * them (O rounded to the dtype, lse to f32; -Inf for rows that see no key);
 * dq, dk, dv and the workspace (its size from kiln_attention_bwd_workspace)
 * poisoned, with guard zones; then kiln_attention_bwd, and dq, dk, dv against
 * ref_attention_bwd: ‖out − ref‖ / ‖ref‖ and max |out − ref| of each on the
 * TAP line, guards intact, the outputs' padding columns still poisoned.
 *
 * Cases, on every variant: seq (1, 1), (17, 17), (130, 130), (17, 130),
 * (130, 17) and one (1000, 1000); GQA 4:1 and MQA; causal (bottom-right:
 * with seq_q > seq_k rows that see no key, which add nothing); windows
 * (64, 0) and (32, 32) (with (17, 130) and (64, 0), keys that no query sees:
 * their dk and dv must be written as 0); BSHD, BHSD, and a mixed layout in
 * which each of q, k, v, o, dout, dq, dk, dv has strides of its own (BSHD or
 * BHSD, rows padded by 0, 8 or 16 elements); head dims of the variant's own
 * size, 8 less (80 on h96) and 3 less, run on it with the padding handled
 * inside: the inputs' padding columns hold NaN, which must never be read,
 * and the outputs' must keep their poison. Varlen (cu_seqlens, the tensors
 * packed): three sequences of lengths (1, 17), (130, 130), (64, 1), causal
 * with (130, 100), (1, 17), (64, 130), and a window (64, 0) with (100, 130),
 * (0, 5), (3, 1) (a sequence with no queries: its dk and dv are 0), on
 * mixed strides. Deterministic mode on about half
 * the cases: the call runs twice (outputs and workspace poisoned again in
 * between) and dq, dk, dv must be the same bits (memcmp). Then, once (shard
 * 0), bad input: workspace 16 bytes short (KILN_STATUS_WORKSPACE_TOO_SMALL),
 * a workspace off 16 bytes and a stride not a multiple of 8 (MISALIGNED),
 * workspace NULL, lse NULL, dq = q and cu_seqlens_q without cu_seqlens_k
 * (INVALID_VALUE, kiln.h's rule for a required pointer), dtype e4m3
 * (NOT_SUPPORTED), each with the message naming the argument and, on a GPU,
 * nothing launched (outputs and workspace keep every poisoned byte); and head
 * dim 100 unforced runs on the head dim 128 variant. Without a GPU the
 * status checks still run (fake device addresses: each call is refused
 * before anything touches them) and the sweep reports each variant as SKIP.
 *
 * Tolerance, per tensor: rel ≤ BWD_TOL (bf16 2e-2, f16 5e-3) and no element
 * off by more than 4·BWD_TOL·max |ref|. What sets the error: the kernel
 * rounds P and dS to the dtype before the products that make dv, dk and dq
 * (a relative error of up to u = 2^-8 bf16, 2^-11 f16 a term, about u/√3
 * rms), reads O rounded to the dtype in D = rowsum(dout ∘ O) where the
 * reference takes the exact O, and rounds dq, dk, dv to the dtype on the way
 * out; the terms' errors are independent and average out over the sums, so
 * the last rounding dominates: rel about u/√3, 2.3e-3 bf16, 2.8e-4 f16. The
 * standalone prototype of these kernels (same algorithm and roundings)
 * measured about 2.5e-3 bf16 and 3e-4 f16 on an H100 over the same kinds of
 * cases, up to seq 1000. The bounds leave 8× (bf16) and 16× (f16) of margin
 * and still catch a wrong mask, tile, fragment or a missing key block
 * (errors of order 1e-1 to 1). The max-abs bound is relative to max |ref|
 * (not max(1, ·) as within_tolerance has it): gradients of long rows are
 * small (dq about 1/√seq_k), and an absolute floor would let a wrong block
 * pass. A tensor whose reference is all 0 ((1, 1): P = 1, so dS = 0) has rel
 * = ‖out‖ (compare()), held to the same bound.
 *
 *   bazel test //tests:attention_bwd_test    or, on a GPU machine, ./attention_bwd_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants
 *   (e.g. _h128_bf16_sm90); KILN_TEST_SHARD=i/n runs every n-th variant
 *   (tests/gpu_suite.sh runs 4 shards; replay one with its seed and shard).
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

/* MIXED: each tensor its own layout and row padding (mixed_bhsd, mixed_pad). */
enum layout { BSHD, BHSD, MIXED };
/* The head dim against the variant's D: D; D − 8 (80 on h96); D − 3. */
enum dsize { D_FULL, D_LESS, D_ODD };

typedef struct bwd_case {
    int batch, sq, sk, hq, hkv;
    enum dsize dsz;
    int causal, left, right;
    enum layout layout;
    int det; /* deterministic: run twice, the same bits */
    const int *lens_q, *lens_k; /* varlen: each sequence's lengths (sq, sk the longest); NULL: fixed */
} bwd_case;

static const bwd_case cases[] = {
    {2, 1, 1, 2, 2, D_FULL, 0, -1, -1, BSHD, 0},
    {2, 1, 1, 4, 1, D_ODD, 1, -1, -1, BHSD, 1},          /* MQA, causal, padding columns */
    {2, 17, 17, 8, 2, D_FULL, 1, -1, -1, BHSD, 1},       /* GQA 4:1, causal */
    {2, 17, 17, 4, 4, D_LESS, 0, 32, 32, MIXED, 0},      /* window (32, 32), every tensor its own strides */
    {2, 130, 130, 4, 1, D_FULL, 0, -1, -1, BSHD, 0},     /* MQA */
    {2, 130, 130, 8, 2, D_FULL, 0, 64, 0, BHSD, 1},      /* GQA 4:1, window (64, 0) */
    {1, 130, 130, 2, 2, D_LESS, 1, -1, -1, MIXED, 1},    /* causal */
    {2, 17, 130, 8, 2, D_FULL, 1, -1, -1, BSHD, 0},      /* seq_q < seq_k, causal, GQA */
    {2, 17, 130, 4, 4, D_ODD, 0, 64, 0, BHSD, 1},        /* keys 0 … 48 seen by no query: dk = dv = 0 */
    {2, 130, 17, 4, 1, D_FULL, 1, -1, -1, BSHD, 1},      /* seq_q > seq_k, causal: rows that see no key; MQA */
    {2, 130, 17, 8, 2, D_LESS, 0, 32, 32, MIXED, 0},     /* seq_q > seq_k, window (32, 32) */
    {2, 130, 17, 2, 2, D_FULL, 0, -1, -1, BHSD, 0},      /* seq_q > seq_k, no mask */
    {1, 1000, 1000, 2, 2, D_FULL, 1, -1, -1, BSHD, 1},   /* long rows: many key blocks add into each dq */
    /* varlen: packed [total][heads][dp] (BHSD: [heads][total][dp]) */
    {3, 130, 130, 4, 2, D_FULL, 0, -1, -1, BSHD, 0, (const int[]){1, 130, 64}, (const int[]){17, 130, 1}},
    {3, 130, 130, 4, 1, D_ODD, 1, -1, -1, BHSD, 1, (const int[]){130, 1, 64}, (const int[]){100, 17, 130}},
    {3, 100, 130, 8, 2, D_LESS, 0, 64, 0, MIXED, 1, (const int[]){100, 0, 3}, (const int[]){130, 5, 1}},
};

/* Tolerance of rel (see the header). */
static double bwd_tol(kiln_dtype dt) { return dt == KILN_DTYPE_BF16 ? 2e-2 : 5e-3; }

/* The eight tensors of a call; MIXED gives each a layout (1: BHSD) and extra
 * elements of row padding of its own. */
enum { TQ, TK, TV, TO, TDO, TDQ, TDK, TDV, NT };
static const int mixed_bhsd[NT] = {0, 1, 0, 1, 1, 0, 1, 0};
static const int mixed_pad[NT] = {8, 0, 16, 8, 0, 16, 8, 0};

/* A tensor of [batch][seq][heads][d] elements laid out on the device by st
 * (batch, seq, head) with rows of dp ≥ d elements, the rest padding. */
typedef struct tensor {
    int seq, heads, dp;
    int64_t st[3], n; /* n: elements of the device image */
    dbuf buf;
    double *img; /* host copy of the image */
} tensor;

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

/* N(0, 1) by Box-Muller (1 − u keeps log's argument above 0). */
static double normal(rng *r)
{
    const double u = 1.0 - rng_uniform(r, 0, 1), w = rng_uniform(r, 0, 1);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * w);
}

static int is_q_like(int t) { return t == TQ || t == TO || t == TDO || t == TDQ; }

/* Tensor t of a case whose images hold `batch` blocks of `seq` rows (varlen:
 * one block of the packed total). */
static tensor tensor_make(const bwd_case *c, int t, kiln_dtype dt, int d, int batch, int seq)
{
    tensor x;
    const int bhsd = c->layout == BHSD || (c->layout == MIXED && mixed_bhsd[t]);
    x.seq = seq;
    x.heads = is_q_like(t) ? c->hq : c->hkv;
    x.dp = (d + 7) / 8 * 8 + (c->layout == MIXED ? mixed_pad[t] : 0);
    x.st[0] = (int64_t)x.seq * x.heads * x.dp;
    x.st[1] = bhsd ? x.dp : (int64_t)x.heads * x.dp;
    x.st[2] = bhsd ? (int64_t)x.seq * x.dp : x.dp;
    x.n = (int64_t)batch * x.st[0];
    x.buf = dbuf_alloc(dt, x.n, 0); /* poisoned */
    x.img = hbuf(x.n);
    return x;
}

static void tensor_free(tensor *x)
{
    dbuf_free(&x->buf);
    free(x->img);
}

/* Element (b, s, h, e) of the dense [batch][seq][heads][d] array, in the image. */
#define IMG_AT(x, b, s, h) ((b) * (x)->st[0] + (s) * (x)->st[1] + (h) * (x)->st[2])
#define DENSE_AT(x, b, s, h, d) ((((int64_t)(b) * (x)->seq + (s)) * (x)->heads + (h)) * (d))

/* dense → the device, padding columns NaN; dense gets the values stored (rounded to the dtype). */
static void tensor_upload(tensor *x, int batch, int d, double *dense)
{
    for (int64_t i = 0; i < x->n; i++) x->img[i] = NAN;
    for (int b = 0; b < batch; b++)
        for (int s = 0; s < x->seq; s++)
            for (int h = 0; h < x->heads; h++)
                memcpy(x->img + IMG_AT(x, b, s, h), dense + DENSE_AT(x, b, s, h, d), (size_t)d * sizeof(double));
    dbuf_upload(&x->buf, x->img);
    for (int b = 0; b < batch; b++)
        for (int s = 0; s < x->seq; s++)
            for (int h = 0; h < x->heads; h++)
                memcpy(dense + DENSE_AT(x, b, s, h, d), x->img + IMG_AT(x, b, s, h), (size_t)d * sizeof(double));
}

/* The device → dense; returns 0 when a padding column lost its poison (NaN). */
static int tensor_download(tensor *x, int batch, int d, double *dense)
{
    int pad_ok = 1;
    dbuf_download(&x->buf, x->img);
    for (int b = 0; b < batch; b++)
        for (int s = 0; s < x->seq; s++)
            for (int h = 0; h < x->heads; h++) {
                const double *row = x->img + IMG_AT(x, b, s, h);
                memcpy(dense + DENSE_AT(x, b, s, h, d), row, (size_t)d * sizeof(double));
                for (int e = d; e < x->dp; e++) pad_ok &= isnan(row[e]) != 0;
            }
    return pad_ok;
}

/* A buffer's bytes, guards included. */
static unsigned char *raw_bytes(const dbuf *b)
{
    const size_t n = (size_t)(b->n + b->offset + 2 * GUARD_ELEMS) * b->es;
    unsigned char *h = malloc(n);
    if (!h) tap_bail("out of host memory");
    CUDA_CHECK(cudaMemcpy(h, b->base, n, cudaMemcpyDeviceToHost));
    return h;
}

/* 1 when every byte of b, guards included, still holds the poison. */
static int all_poison(const dbuf *b)
{
    const size_t n = (size_t)(b->n + b->offset + 2 * GUARD_ELEMS) * b->es;
    unsigned char *h = raw_bytes(b);
    size_t i = 0;
    while (i < n && h[i] == 0xff) i++;
    free(h);
    return i == n;
}

/* The workspace the call asks for, as f32 elements with guards (poisoned). */
static dbuf workspace_alloc(size_t bytes)
{
    return dbuf_alloc(KILN_DTYPE_F32, (int64_t)((bytes + 3) / 4), 0);
}

static int grad_ok(err e, double tol) { return e.rel <= tol && e.max_abs <= 4 * tol * (e.ref_max > 0 ? e.ref_max : 1); }

static void run_case(const kiln_variant_info *v, const bwd_case *c)
{
    const int D = v->shape_key;
    const int d = c->dsz == D_FULL ? D : c->dsz == D_ODD ? D - 3 : D == 96 ? 80 : D - 8;
    const kiln_dtype dt = v->dtype;
    /* Each sequence's lengths and first rows in the images: fixed, batch
     * blocks of sq and sk rows; varlen, one block of the packed rows. */
    enum { MAX_BATCH = 4 };
    int lq[MAX_BATCH], lk[MAX_BATCH], cq[MAX_BATCH + 1] = {0}, ck[MAX_BATCH + 1] = {0};
    if (c->batch > MAX_BATCH) tap_bail("a case of more than %d sequences", MAX_BATCH);
    for (int b = 0; b < c->batch; b++) {
        lq[b] = c->lens_q ? c->lens_q[b] : c->sq, lk[b] = c->lens_k ? c->lens_k[b] : c->sk;
        cq[b + 1] = cq[b] + lq[b], ck[b + 1] = ck[b] + lk[b];
    }
    const int blocks = c->lens_q ? 1 : c->batch, tq = cq[c->batch], tk = ck[c->batch];
    const int64_t nq = (int64_t)tq * c->hq * d, nk = (int64_t)tk * c->hkv * d, nl = (int64_t)c->hq * tq;
    tensor x[NT];
    for (int t = 0; t < NT; t++) x[t] = tensor_make(c, t, dt, d, blocks, is_q_like(t) ? tq / blocks : tk / blocks);
    /* Dense [batch][seq][heads][d]: inputs, O, the reference's gradients, the kernel's. */
    double *q = hbuf(nq), *k = hbuf(nk), *vv = hbuf(nk), *dout = hbuf(nq), *o = hbuf(nq), *lse = hbuf(nl);
    double *ref[3] = {hbuf(nq), hbuf(nk), hbuf(nk)}, *got[3] = {hbuf(nq), hbuf(nk), hbuf(nk)};
    double *const in[4] = {q, k, vv, dout};
    const int in_t[4] = {TQ, TK, TV, TDO};
    for (int i = 0; i < 4; i++) {
        const int64_t n = is_q_like(in_t[i]) ? nq : nk;
        for (int64_t j = 0; j < n; j++) in[i][j] = normal(&R);
        tensor_upload(&x[in_t[i]], blocks, d, in[i]);
    }
    const double scale = 1.0 / sqrt((double)d);
    const int right = c->causal ? 0 : c->right;
    const int64_t qr = (int64_t)c->hq * d, kr = (int64_t)c->hkv * d; /* dense row strides */
    double *lse_b = hbuf((int64_t)c->hq * c->sq); /* a sequence's [hq][lq] */
    for (int b = 0; b < c->batch; b++) {
        const int64_t oq = cq[b] * qr, ok = ck[b] * kr;
        ref_attention(lq[b], lk[b], c->hq, c->hkv, d, q + oq, k + ok, vv + ok, qr, d, kr, d, scale, c->left, right,
                      o + oq, qr, d, lse_b);
        ref_attention_bwd(lq[b], lk[b], c->hq, c->hkv, d, q + oq, k + ok, vv + ok, dout + oq, qr, d, kr, d, scale,
                          c->left, right, ref[0] + oq, ref[1] + ok, ref[2] + ok);
        /* lse: [batch][hq][sq], varlen [hq][total_q] */
        for (int h = 0; h < c->hq; h++)
            memcpy(lse + (c->lens_q ? (int64_t)h * tq + cq[b] : ((int64_t)b * c->hq + h) * c->sq),
                   lse_b + (int64_t)h * lq[b], (size_t)lq[b] * sizeof(double));
    }
    free(lse_b);
    tensor_upload(&x[TO], blocks, d, o); /* O rounded to the dtype, as the forward stores it */
    dbuf dlse = dbuf_alloc(KILN_DTYPE_F32, nl, 0);
    dbuf_upload(&dlse, lse);
    int32_t *dcu = NULL; /* varlen: cu_seqlens_q, then cu_seqlens_k */
    if (c->lens_q) {
        int32_t cu[2 * (MAX_BATCH + 1)];
        for (int b = 0; b <= c->batch; b++) cu[b] = cq[b], cu[c->batch + 1 + b] = ck[b];
        CUDA_CHECK(cudaMalloc((void **)&dcu, sizeof cu));
        CUDA_CHECK(cudaMemcpy(dcu, cu, sizeof cu, cudaMemcpyHostToDevice));
    }

    kiln_attention_bwd_params p;
    memset(&p, 0, sizeof p);
    p.batch = c->batch, p.seq_q = c->sq, p.seq_k = c->sk, p.heads_q = c->hq, p.heads_kv = c->hkv, p.head_dim = d;
    p.q = x[TQ].buf.ptr, p.k = x[TK].buf.ptr, p.v = x[TV].buf.ptr, p.o = x[TO].buf.ptr, p.dout = x[TDO].buf.ptr;
    p.lse = dlse.ptr, p.dq = x[TDQ].buf.ptr, p.dk = x[TDK].buf.ptr, p.dv = x[TDV].buf.ptr;
    int64_t *const st[NT] = {p.q_stride, p.k_stride, p.v_stride, p.o_stride, p.dout_stride, p.dq_stride, p.dk_stride,
                             p.dv_stride};
    for (int t = 0; t < NT; t++) memcpy(st[t], x[t].st, sizeof x[t].st);
    p.scale = (float)scale, p.causal = c->causal, p.window_left = c->left, p.window_right = c->causal ? -1 : c->right;
    p.deterministic = c->det;
    if (dcu) p.cu_seqlens_q = dcu, p.cu_seqlens_k = dcu + c->batch + 1;

    size_t bytes = 0;
    int ok = finished(kiln_attention_bwd_workspace(dt, &p, &bytes), "workspace query");
    dbuf ws = workspace_alloc(bytes);
    p.workspace = ws.ptr, p.workspace_bytes = bytes;
    err e[3] = {{INFINITY, INFINITY, 0}, {INFINITY, INFINITY, 0}, {INFINITY, INFINITY, 0}};
    unsigned char *first[3] = {NULL, NULL, NULL};
    int same = 1, pad_ok = 1, guards = 1;
    for (int rep = 0; ok && rep < (c->det ? 2 : 1); rep++) {
        if (rep > 0) {
            for (int t = TDQ; t <= TDV; t++) dbuf_poison(&x[t].buf);
            dbuf_poison(&ws);
        }
        ok = finished(kiln_attention_bwd(dt, &p, NULL), v->name);
        for (int g = 0; ok && g < 3; g++) {
            tensor *y = &x[TDQ + g];
            guards &= dbuf_guards_intact(&y->buf);
            if (rep == 0) {
                pad_ok &= tensor_download(y, blocks, d, got[g]);
                e[g] = compare(got[g], ref[g], g == 0 ? nq : nk);
                first[g] = raw_bytes(&y->buf);
            } else {
                unsigned char *again = raw_bytes(&y->buf);
                same &= memcmp(first[g], again, (size_t)(y->buf.n + 2 * GUARD_ELEMS) * y->buf.es) == 0;
                free(again);
            }
        }
        guards &= dbuf_guards_intact(&ws) && dbuf_guards_intact(&dlse);
    }
    const double tol = bwd_tol(dt);
    ok = ok && guards && pad_ok && same && grad_ok(e[0], tol) && grad_ok(e[1], tol) && grad_ok(e[2], tol);
    static const char *layouts[] = {"BSHD", "BHSD", "mixed strides"};
    char lens[96] = "";
    for (int b = 0; c->lens_q && b < c->batch; b++)
        snprintf(lens + strlen(lens), sizeof lens - strlen(lens), "%s%d/%d", b ? ", " : " varlen (", lq[b], lk[b]);
    if (c->lens_q) strcat(lens, ")");
    tap_ok(ok,
           "%s b%d sq%d sk%d%s h%d/%d d%d %s%s window(%d,%d)%s: rel dq %.2e dk %.2e dv %.2e, max_abs dq %.2e dk %.2e "
           "dv %.2e%s%s%s",
           v->name, c->batch, c->sq, c->sk, lens, c->hq, c->hkv, d, layouts[c->layout], c->causal ? " causal" : "", c->left,
           c->causal ? 0 : c->right, c->det ? " deterministic" : "", e[0].rel, e[1].rel, e[2].rel, e[0].max_abs,
           e[1].max_abs, e[2].max_abs, c->det ? (same ? ", twice the same bits" : ", RUNS DIFFER") : "",
           pad_ok ? "" : ", a padding column written", guards ? "" : ", a guard zone written");
    for (int g = 0; g < 3; g++) {
        free(first[g]);
        free(ref[g]);
        free(got[g]);
    }
    for (int t = 0; t < NT; t++) tensor_free(&x[t]);
    dbuf_free(&ws);
    dbuf_free(&dlse);
    if (dcu) CUDA_CHECK(cudaFree(dcu));
    free(q);
    free(k);
    free(vv);
    free(dout);
    free(o);
    free(lse);
}

static int is_attention_bwd(const kiln_variant_info *v) { return v->op == KILN_OP_ATTENTION_BWD; }

static void run_variant(const kiln_variant_info *v)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(v, &cases[i]);
}

/* Whether the build has a backward variant (of any arch). */
static int has_bwd(void)
{
    for (int i = 0; i < kiln_variant_count(); i++) {
        kiln_variant_info v;
        if (kiln_variant_get(i, &v) == KILN_STATUS_SUCCESS && is_attention_bwd(&v)) return 1;
    }
    return 0;
}

/* Bad input: each call the sound one (bf16, batch 1, seq 64, 2 heads, head
 * dim 100, BSHD rows of 104) but for one change, refused with its status and
 * a message naming the argument. On a GPU the tensors are real, the sound
 * call runs first (on the head dim 128 variant, unforced), and after each
 * refused call dq, dk, dv and the workspace must still hold every poisoned
 * byte: nothing was launched. Without one, fake device addresses (16-byte
 * aligned; never touched, since every call is refused before a launch). */
static void check_bad_input(int gpu)
{
    const int d = 100, dp = 104, s = 64, h = 2;
    const int64_t n = (int64_t)s * h * dp;
    dbuf b[NT], lse = {0}, ws = {0};
    const void *ptr[NT];
    const float *lse_ptr;
    size_t bytes = 0;
    kiln_attention_bwd_params p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.seq_q = p.seq_k = s, p.heads_q = p.heads_kv = h, p.head_dim = d;
    if (gpu) {
        double *hv = hbuf(n);
        for (int t = 0; t < NT; t++) {
            b[t] = dbuf_alloc(KILN_DTYPE_BF16, n, 0);
            if (t < TDQ) {
                for (int64_t i = 0; i < n; i++) hv[i] = i % dp < d ? normal(&R) : NAN;
                dbuf_upload(&b[t], hv);
            }
            ptr[t] = b[t].ptr;
        }
        lse = dbuf_alloc(KILN_DTYPE_F32, (int64_t)h * s, 0);
        for (int i = 0; i < h * s; i++) hv[i] = 6.0; /* about log Σ exp of 64 keys' scores */
        dbuf_upload(&lse, hv);
        lse_ptr = lse.ptr;
        free(hv);
    } else {
        for (int t = 0; t < NT; t++) ptr[t] = (const void *)(uintptr_t)(0x7f0000000000ull + (uint64_t)t * 0x1000000);
        lse_ptr = (const float *)(uintptr_t)0x7f0010000000ull;
    }
    p.q = ptr[TQ], p.k = ptr[TK], p.v = ptr[TV], p.o = ptr[TO], p.dout = ptr[TDO], p.lse = lse_ptr;
    p.dq = (void *)ptr[TDQ], p.dk = (void *)ptr[TDK], p.dv = (void *)ptr[TDV];
    int64_t *const st[NT] = {p.q_stride, p.k_stride, p.v_stride, p.o_stride, p.dout_stride, p.dq_stride, p.dk_stride,
                             p.dv_stride};
    for (int t = 0; t < NT; t++) st[t][0] = n, st[t][1] = (int64_t)h * dp, st[t][2] = dp;
    p.scale = 0.1f, p.causal = 1, p.window_left = p.window_right = -1;
    const kiln_status qs = kiln_attention_bwd_workspace(KILN_DTYPE_BF16, &p, &bytes);
    if (!tap_ok(qs == KILN_STATUS_SUCCESS && bytes > 0, "the workspace query of the sound call: %s, %zu bytes",
                kiln_status_string(qs), bytes))
        tap_diag("%s", kiln_last_error());
    if (gpu) {
        ws = workspace_alloc(bytes + 16);
        p.workspace = ws.ptr;
    } else {
        p.workspace = (void *)(uintptr_t)0x7f0020000000ull;
    }
    p.workspace_bytes = bytes;
    if (gpu) {
        const kiln_status sst = kiln_attention_bwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(finished(sst, "the sound call") && strncmp(kiln_last_variant(), "attention_bwd_h128_bf16_", 24) == 0,
               "head dim 100 selects the head dim 128 variant (%s)", kiln_last_variant());
    }
    static const char *const want_name[] = {"workspace", "workspace_bytes", "workspace", "lse", "cu_seqlens", "dtype",
                                            "dq_stride", "dq"};
    static const char *const what[] = {"workspace NULL", "workspace 16 bytes short", "workspace 8 bytes off 16",
                                       "lse NULL", "cu_seqlens_q without cu_seqlens_k", "dtype e4m3", "dq_stride[1] 212 (not a multiple of 8)",
                                       "dq = q"};
    static const kiln_status want[] = {KILN_STATUS_INVALID_VALUE,       KILN_STATUS_WORKSPACE_TOO_SMALL,
                                       KILN_STATUS_MISALIGNED,          KILN_STATUS_INVALID_VALUE,
                                       KILN_STATUS_INVALID_VALUE,       KILN_STATUS_NOT_SUPPORTED,
                                       KILN_STATUS_MISALIGNED,          KILN_STATUS_INVALID_VALUE};
    for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
        kiln_attention_bwd_params bad = p;
        kiln_dtype dt = KILN_DTYPE_BF16;
        switch (i) {
        case 0: bad.workspace = NULL; break;
        case 1: bad.workspace_bytes = bytes - 16; break;
        case 2: bad.workspace = (char *)p.workspace + 8; break;
        case 3: bad.lse = NULL; break;
        case 4: bad.cu_seqlens_q = (const int32_t *)p.lse; break;
        case 5: dt = KILN_DTYPE_E4M3; break;
        case 6: bad.dq_stride[1] = (int64_t)h * dp + 4; break;
        case 7: bad.dq = (void *)p.q; break;
        }
        if (gpu) {
            for (int t = TDQ; t <= TDV; t++) dbuf_poison(&b[t]);
            dbuf_poison(&ws);
        }
        const kiln_status got = kiln_attention_bwd(dt, &bad, NULL);
        int untouched = 1;
        if (gpu) {
            CUDA_CHECK(cudaDeviceSynchronize());
            for (int t = TDQ; t <= TDV; t++) untouched &= all_poison(&b[t]);
            untouched &= all_poison(&ws);
        }
        tap_ok(got == want[i] && strstr(kiln_last_error(), want_name[i]) && untouched, "%s: %s%s (%s)", what[i],
               kiln_status_string(got), gpu ? (untouched ? ", nothing launched" : ", OUTPUTS WRITTEN") : "",
               kiln_last_error());
    }
    if (gpu) {
        for (int t = 0; t < NT; t++) dbuf_free(&b[t]);
        dbuf_free(&lse);
        dbuf_free(&ws);
    }
}

int main(void)
{
    tap_plan_late();
    const sweep sw = {"attention backward", is_attention_bwd, run_variant};
    int tested;
    const int cc = gpu_sweep(&sw, &R, &tested);
    if (gpu_shard_first()) {
        if (!has_bwd())
            tap_skip("the build has no attention backward variant", "bad input");
        else if (cc > 0 && tested == 0)
            tap_skip("no attention backward variant ran on this GPU", "bad input");
        else
            check_bad_input(cc > 0);
    }
    return tap_done();
}
