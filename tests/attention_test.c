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
 * split's keys). Outputs and lse are poisoned before each run. Tolerances: the dtype's
 * (tests/gpu_util.c) times 2, for P rounded to the dtype before P·V; lse
 * within 1e-3. Then the workspace's checks: too small, misaligned, and none
 * asked for by a shape that fills the GPU.
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
    int lens_q[3], lens_k[3]; /* VARLEN: the batch's lengths */
    int split;                /* give the workspace the call asks for, and require one */
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
};

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

static void run_case(const kiln_variant_info *v, const attn_case *c)
{
    const int D = v->shape_key, d = D - c->d_less > 0 ? D - c->d_less : 1, dp = (d + 7) / 8 * 8;
    const int vl = c->layout == VARLEN;
    int cu_q[4] = {0}, cu_k[4] = {0}, sq = c->sq, sk = c->sk;
    if (vl) {
        sq = sk = 0;
        for (int b = 0; b < c->batch; b++) {
            cu_q[b + 1] = cu_q[b] + c->lens_q[b];
            cu_k[b + 1] = cu_k[b] + c->lens_k[b];
            if (c->lens_q[b] > sq) sq = c->lens_q[b];
            if (c->lens_k[b] > sk) sk = c->lens_k[b];
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
    dbuf dq = dbuf_alloc(v->dtype, nq, 0), dk = dbuf_alloc(v->dtype, nk, 0), dv = dbuf_alloc(v->dtype, nk, 0);
    dbuf dout = dbuf_alloc(v->dtype, nq, 0);
    dbuf_upload(&dq, q);
    dbuf_upload(&dk, k);
    dbuf_upload(&dv, vv);
    for (int64_t i = 0; i < nq; i++) ref[i] = NAN; /* padding columns keep the output's poison */
    const double scale = 1.0 / sqrt((double)d);
    const int right = c->causal ? 0 : c->right;
    for (int b = 0; b < c->batch; b++) {
        const int lq = vl ? c->lens_q[b] : sq, lk = vl ? c->lens_k[b] : sk;
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
        CUDA_CHECK(cudaMalloc((void **)&dcu, 8 * sizeof(int32_t)));
        CUDA_CHECK(cudaMemcpy(dcu, cu_q, 4 * sizeof(int32_t), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dcu + 4, cu_k, 4 * sizeof(int32_t), cudaMemcpyHostToDevice));
    }
    kiln_attention_params p = {c->batch, sq, sk, c->hq, c->hkv, d, dq.ptr, dk.ptr, dv.ptr, dout.ptr,
                               {qs[0], qs[1], qs[2]}, {ks[0], ks[1], ks[2]}, {ks[0], ks[1], ks[2]}, {qs[0], qs[1], qs[2]},
                               (float)scale, c->causal, c->left, c->causal ? -1 : c->right,
                               dcu, dcu ? dcu + 4 : NULL, dlse};
    dbuf ws = {0};
    int ok = 1;
    if (c->split) {
        size_t bytes = 0;
        ok = finished(kiln_attention_fwd_workspace(v->dtype, &p, &bytes), "workspace");
        if (ok && bytes == 0) {
            tap_diag("%s: split case asks for no workspace: the split path would not run", v->name);
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
        dbuf_download(&dout, got);
        ok = dbuf_guards_intact(&dout);
        for (int64_t i = 0; i < nq; i++)
            if (isnan(ref[i])) {
                if (!isnan(got[i])) ok = 0; /* a padding column was written */
                got[i] = ref[i] = 0;
            }
        e = compare(got, ref, nq);
        ok = ok && within_tolerance_k(e, v->dtype, 2);
        float *hl = malloc((size_t)(rq * c->hq) * sizeof(float));
        CUDA_CHECK(cudaMemcpy(hl, dlse, (size_t)(rq * c->hq) * sizeof(float), cudaMemcpyDeviceToHost));
        lse_err = 0;
        for (int64_t i = 0; i < rq * c->hq; i++) {
            const double r = lse_ref[i], gl = hl[i];
            const double de = isinf(r) ? (gl == r ? 0 : INFINITY) : fabs(gl - r) / (1 + fabs(r));
            if (!(de <= lse_err)) lse_err = de;
        }
        ok = ok && lse_err <= 1e-3 && (!c->split || dbuf_guards_intact(&ws));
        free(hl);
    }
    if (c->split) dbuf_free(&ws);
    static const char *layouts[] = {"BSHD", "BHSD", "varlen", "BSHD, K and V shared by the batch"};
    tap_ok(ok, "%s b%d sq%d sk%d h%d/%d d%d %s%s window(%d,%d)%s: rel %.2e max_abs %.2e lse %.1e", v->name, c->batch,
           sq, sk, c->hq, c->hkv, d, layouts[c->layout], c->causal ? " causal" : "", c->left, c->causal ? 0 : c->right,
           c->split ? " split" : "", e.rel, e.max_abs, lse_err);
    CUDA_CHECK(cudaFree(dlse));
    if (dcu) CUDA_CHECK(cudaFree(dcu));
    dbuf_free(&dq);
    dbuf_free(&dk);
    dbuf_free(&dv);
    dbuf_free(&dout);
    free(q);
    free(k);
    free(vv);
    free(ref);
    free(got);
    free(lse_ref);
}

static int is_attention(const kiln_variant_info *v) { return v->op == KILN_OP_ATTENTION_FWD; }

static void run_variant(const kiln_variant_info *v)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(v, &cases[i]);
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
        /* The workspace: too small and misaligned are refused before any
         * launch; a shape whose query blocks fill the GPU asks for none. */
        size_t bytes = 0;
        p.seq_k = 50000; /* x is far shorter: every call below must fail before a launch */
        tap_ok(kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes) == KILN_STATUS_SUCCESS && bytes > 0,
               "decode shape asks for a workspace (%zu bytes)", bytes);
        p.workspace = y.ptr, p.workspace_bytes = bytes - 1;
        kiln_status st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_WORKSPACE_TOO_SMALL && strstr(kiln_last_error(), "workspace_bytes"),
               "a workspace one byte short is refused: %s", kiln_last_error());
        p.workspace = (char *)y.ptr + 4, p.workspace_bytes = bytes;
        st2 = kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL);
        tap_ok(st2 == KILN_STATUS_MISALIGNED && strstr(kiln_last_error(), "workspace"),
               "a misaligned workspace is refused: %s", kiln_last_error());
        p.batch = 16, p.heads_q = p.heads_kv = 16, p.seq_q = p.seq_k = 4096;
        tap_ok(kiln_attention_fwd_workspace(KILN_DTYPE_BF16, &p, &bytes) == KILN_STATUS_SUCCESS && bytes == 0,
               "a prefill shape that fills the GPU asks for no workspace (%zu bytes)", bytes);
        dbuf_free(&x);
        dbuf_free(&y);
    }
    return tap_done();
}
