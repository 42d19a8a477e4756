/*
 * linear_test.c: every linear variant in the table, forced by name, against
 * the double reference of ref_linear.c.
 *
 * Cases (m × n × k): m 1, 7, 64, 130, 1000; n and k off every tile (k 72 is
 * one step and a 8-wide tail, k 333 a ragged tail whose padding columns hold
 * NaN, which must never be read); k small (24) and large (4096); decode
 * shapes with the workspace the call asks for (poisoned), which must be more
 * than 0 bytes so the split-k path and its reduction run; padded strides,
 * bias present and absent, a residual, y in place on the residual, and each
 * output dtype (the input's, f32, the other 16-bit one); whole tiles into
 * y in the input's dtype with no residual (the epilogue's fast path), with
 * and without bias, and with rows of y only 4-byte aligned (sm_90a stages
 * whole tiles through shared memory only for 16-byte rows); more block
 * tiles than SMs (sm_90a's persistent blocks walk several). The gated op reads
 * its up projection from the second half of one fused [2n][k] weight in some
 * cases and from a tensor of its own in others. Outputs are poisoned before
 * each run; their guard zones must stay intact.
 *
 * Tolerance: inputs are rounded to the dtype before the reference sees them,
 * so what is left is the f32 sum over k and the output's rounding: rel ≤
 * tol_rel(out) + k·2⁻²³·4 and max_abs under the same multiple of the output's
 * largest value (the f32 sum's error grows with k as k·ε bounds it).
 * Then the argument checks: misaligned strides and pointers, y overlapping
 * x, a workspace one byte short, f32 input, and no workspace for a shape
 * that fills the GPU.
 *
 *   bazel test //tests:linear_test    or, on a GPU machine, ./linear_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "tests/gpu_util.h"
#include "tests/par.h"
#include "tests/ref_elementwise.h"
#include "tests/ref_linear.h"

static rng R;

typedef struct linear_case {
    int64_t m, n, k;
    int64_t pad;        /* extra columns of every stride (x, w: rounded up to 8 first) */
    int bias, residual; /* residual 2: y in place on it */
    int out;            /* 0: the input's dtype, 1: f32, 2: the other 16-bit dtype */
    int fused_up;       /* gated: w_up is the second half of one [2n][k] weight */
    int split;          /* give the workspace the call asks for, and require one */
} linear_case;

static const linear_case cases[] = {
    {7, 130, 72, 0, 1, 1, 0, 1, 0},
    {1, 257, 1000, 0, 1, 0, 1, 0, 0},
    {1, 257, 1000, 0, 1, 1, 0, 0, 1},    /* decode, split k */
    {64, 256, 4096, 8, 1, 0, 2, 1, 1},   /* k large, split k */
    {130, 129, 24, 3, 0, 2, 1, 0, 0},    /* k small, y in place on residual, odd strides of y */
    {1000, 200, 333, 0, 1, 1, 0, 1, 0},  /* ragged k: padding columns hold NaN */
    {300, 384, 128, 16, 1, 0, 2, 0, 0},
    {1000, 384, 200, 0, 1, 0, 0, 1, 0},  /* whole tiles into y in the input's dtype: the epilogue's fast path */
    {256, 256, 64, 8, 0, 0, 0, 0, 0},    /* the same with no bias, padded strides */
    {256, 512, 64, 2, 1, 0, 0, 0, 0},    /* whole tiles, rows of y 4-byte aligned only: by pairs, not staged */
    {1536, 3072, 8, 0, 1, 0, 0, 0, 0},   /* more tiles than SMs: persistent blocks walk several */
};

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

static double *random_matrix(int64_t rows, int64_t cols, int64_t ld, double lo, double hi)
{
    double *p = hbuf(rows * ld);
    for (int64_t i = 0; i < rows * ld; i++) p[i] = i % ld < cols ? rng_uniform(&R, lo, hi) : NAN;
    return p;
}

static kiln_dtype out_dtype(kiln_dtype in, int which)
{
    if (which == 1) return KILN_DTYPE_F32;
    if (which == 2) return in == KILN_DTYPE_F16 ? KILN_DTYPE_BF16 : KILN_DTYPE_F16;
    return in;
}

static void run_case(const kiln_variant_info *v, const linear_case *c)
{
    const int gated = v->op == KILN_OP_GATED_LINEAR_FWD;
    const kiln_dtype in = v->dtype, out = out_dtype(in, c->out);
    const int64_t m = c->m, n = c->n, k = c->k;
    const int64_t ldk = (k + 7) / 8 * 8 + (c->pad + 7) / 8 * 8, ldn = n + c->pad;
    /* Weights as one [2n][k] buffer when gated, so w_up can be its second half. */
    const int64_t w_rows = gated ? 2 * n : n;
    double *x = random_matrix(m, k, ldk, -1, 1), *w = random_matrix(w_rows, k, ldk, -1, 1);
    double *wu_own = gated && !c->fused_up ? random_matrix(n, k, ldk, -1, 1) : NULL;
    double *b = random_matrix(1, n, n, -1, 1), *bu = random_matrix(1, n, n, -1, 1);
    double *r = random_matrix(m, n, ldn, -2, 2);
    double *ref = hbuf(m * ldn), *got = hbuf(m * ldn);

    dbuf dx = dbuf_alloc(in, m * ldk, 0), dw = dbuf_alloc(in, w_rows * ldk, 0);
    dbuf dwu = dbuf_alloc(in, wu_own ? n * ldk : 1, 0);
    dbuf db = dbuf_alloc(in, n, 0), dbu = dbuf_alloc(in, n, 0);
    dbuf dr = dbuf_alloc(out, m * ldn, 0), dy = dbuf_alloc(out, m * ldn, 0);
    dbuf_upload(&dx, x);
    dbuf_upload(&dw, w);
    if (wu_own) dbuf_upload(&dwu, wu_own);
    dbuf_upload(&db, b);
    dbuf_upload(&dbu, bu);
    dbuf_upload(&dr, r);
    const double *wu = !gated ? NULL : wu_own ? wu_own : w + n * ldk;
    for (int64_t i = 0; i < m * ldn; i++) ref[i] = NAN; /* stride padding keeps the output's poison */
    ref_linear_fwd(v->act, m, n, k, x, ldk, w, ldk, c->bias ? b : NULL, wu, ldk, gated && c->bias ? bu : NULL,
                   c->residual ? r : NULL, ldn, ref, ldn);

    kiln_linear_params p = {m, n, k, dx.ptr, ldk, dw.ptr, ldk, c->bias ? db.ptr : NULL, NULL, 0, NULL,
                            NULL, ldn, dy.ptr, ldn, v->act, NULL, 0};
    if (gated) {
        p.w_up = wu_own ? dwu.ptr : (const char *)dw.ptr + n * ldk * 2;
        p.ldw_up = ldk;
        p.bias_up = c->bias ? dbu.ptr : NULL;
    }
    if (c->residual == 1) p.residual = dr.ptr;
    if (c->residual == 2) p.residual = p.y = dr.ptr; /* in place: dr holds r, then y */
    dbuf *ybuf = c->residual == 2 ? &dr : &dy;

    dbuf ws = {0};
    int ok = 1;
    if (c->split) {
        size_t bytes = 0;
        ok = finished(kiln_linear_fwd_workspace(in, out, &p, &bytes), "workspace");
        if (ok && bytes == 0) {
            tap_diag("%s: decode case asks for no workspace: the split path would not run", v->name);
            ok = 0;
        }
        ws = dbuf_alloc(KILN_DTYPE_F32, (int64_t)(bytes / sizeof(float)) + 1, 0); /* poisoned: NaN */
        p.workspace = ws.ptr;
        p.workspace_bytes = bytes;
    }
    ok = ok && finished(kiln_linear_fwd(in, out, &p, NULL), v->name);
    err e = {INFINITY, INFINITY, 0};
    if (ok) {
        dbuf_download(ybuf, got);
        ok = dbuf_guards_intact(ybuf);
        for (int64_t i = 0; i < m * ldn; i++)
            if (isnan(ref[i])) {
                if (c->residual != 2 && !isnan(got[i])) ok = 0; /* a padding column was written */
                got[i] = ref[i] = 0;
            }
        e = compare(got, ref, m * ldn);
        const double grow = 4.0 * (double)k / 8388608.0; /* k·2⁻²³·4 */
        const double rt = tol_rel(out) + grow;
        ok = ok && (e.rel <= rt && e.max_abs <= 4 * rt * (e.ref_max > 1 ? e.ref_max : 1));
        if (c->split) ok = ok && dbuf_guards_intact(&ws);
    }
    if (c->split) dbuf_free(&ws);
    tap_ok(ok, "%s %lldx%lldx%lld out %s%s%s%s%s: rel %.2e max_abs %.2e", v->name, (long long)m, (long long)n,
           (long long)k, kiln_dtype_name(out), c->bias ? " bias" : "",
           c->residual == 2 ? " residual in place" : c->residual ? " residual" : "",
           gated ? (c->fused_up ? " fused gate_up" : " separate up") : "", c->split ? " split" : "", e.rel, e.max_abs);
    dbuf_free(&dx);
    dbuf_free(&dw);
    dbuf_free(&dwu);
    dbuf_free(&db);
    dbuf_free(&dbu);
    dbuf_free(&dr);
    dbuf_free(&dy);
    free(x);
    free(w);
    free(wu_own);
    free(b);
    free(bu);
    free(r);
    free(ref);
    free(got);
}

static int is_linear(const kiln_variant_info *v)
{
    return v->op == KILN_OP_LINEAR_FWD || v->op == KILN_OP_GATED_LINEAR_FWD;
}

static void run_variant(const kiln_variant_info *v)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(v, &cases[i]);
}

/* The checks before any launch, and the selection's choices. */
static void check_arguments(void)
{
    /* Sized for the largest shape below: the overlap checks see every extent. */
    dbuf x = dbuf_alloc(KILN_DTYPE_F16, 8192 * 64, 0), w = dbuf_alloc(KILN_DTYPE_F16, 4096 * 8192, 0);
    dbuf y = dbuf_alloc(KILN_DTYPE_F16, 8192 * 640, 0);
    kiln_linear_params p = {64, 64, 64, x.ptr, 0, x.ptr, 0, NULL, NULL, 0, NULL, NULL, 0, y.ptr, 0,
                            KILN_ACT_GELU_TANH, NULL, 0};
    kiln_status st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(finished(st, "dense call") && strncmp(kiln_last_variant(), "linear_fwd_m64_gelu_tanh_f16_", 29) == 0,
           "a small call selects 64-row tiles (%s)", kiln_last_variant());
    p.ldx = 60;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_INVALID_VALUE && strstr(kiln_last_error(), "ldx"), "ldx < k is refused: %s",
           kiln_last_error());
    p.ldx = 68;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_MISALIGNED && strstr(kiln_last_error(), "ldx"), "ldx not a multiple of 8 is refused: %s",
           kiln_last_error());
    p.ldx = 0;
    p.x = (const char *)x.ptr + 2;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_MISALIGNED && strstr(kiln_last_error(), "x"), "x off 16 bytes is refused: %s",
           kiln_last_error());
    p.x = x.ptr;
    p.y = (char *)x.ptr + 64;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_INVALID_VALUE && strstr(kiln_last_error(), "overlaps"), "y over x is refused: %s",
           kiln_last_error());
    p.y = y.ptr;
    st = kiln_linear_fwd(KILN_DTYPE_F32, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_NOT_SUPPORTED && strstr(kiln_last_error(), "f32"), "f32 input is refused: %s",
           kiln_last_error());
    p.m = 0;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_INVALID_VALUE && strstr(kiln_last_error(), "m is 0"), "m 0 is refused: %s",
           kiln_last_error());
    /* Decode shape, k long (every call below must fail before a launch). */
    p.m = 1, p.n = 4096, p.k = 8192, p.w = w.ptr;
    size_t bytes = 0;
    tap_ok(kiln_linear_fwd_workspace(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, &bytes) == KILN_STATUS_SUCCESS && bytes > 0,
           "decode shape asks for a workspace (%zu bytes)", bytes);
    p.workspace = y.ptr, p.workspace_bytes = bytes - 1;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_WORKSPACE_TOO_SMALL && strstr(kiln_last_error(), "workspace_bytes"),
           "a workspace one byte short is refused: %s", kiln_last_error());
    p.workspace = (char *)y.ptr + 4, p.workspace_bytes = bytes;
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL);
    tap_ok(st == KILN_STATUS_MISALIGNED && strstr(kiln_last_error(), "workspace"),
           "a misaligned workspace is refused: %s", kiln_last_error());
    p.m = 8192, p.n = 640, p.k = 64, p.workspace = NULL, p.workspace_bytes = 0;
    tap_ok(kiln_linear_fwd_workspace(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, &bytes) == KILN_STATUS_SUCCESS && bytes == 0,
           "a shape that fills the GPU asks for no workspace (%zu bytes)", bytes);
    dbuf_free(&x);
    dbuf_free(&w);
    dbuf_free(&y);
}

/* The reference as plain loops (one sum per output over k in order), which
 * ref_linear_fwd, blocked and threaded, must match bit for bit. */
static void plain_linear(kiln_activation act, int64_t m, int64_t n, int64_t k, const double *x, int64_t ldx,
                         const double *w, int64_t ldw, const double *bias, const double *w_up, const double *bias_up,
                         const double *residual, int64_t ldr, double *y, int64_t ldy)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double g = 0, u = 0;
            for (int64_t t = 0; t < k; t++) g += x[i * ldx + t] * w[j * ldw + t];
            double v = ref_act(act, g + (bias ? bias[j] : 0));
            if (w_up) {
                for (int64_t t = 0; t < k; t++) u += x[i * ldx + t] * w_up[j * ldw + t];
                v *= u + (bias_up ? bias_up[j] : 0);
            }
            if (residual) v += residual[i * ldr + j];
            y[i * ldy + j] = v;
        }
}

/* CPU: the reference against plain_linear, on shapes with column tails and
 * enough work to be split among threads (par.h), y in place on the residual
 * too. Runs with or without a GPU. */
static void check_reference(void)
{
    static const int64_t shapes[][3] = {{1, 3, 5}, {3, 19, 37}, {64, 261, 300}, {200, 64, 1000}};
    rng q = {12345};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int gated = 0; gated < 2; gated++) {
            const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2], ld = k + 3, ldy = n + 1;
            const kiln_activation act = gated ? KILN_ACT_SILU : KILN_ACT_GELU_TANH;
            double *x = hbuf(m * ld), *w = hbuf(2 * n * ld), *b = hbuf(2 * n), *r = hbuf(m * ldy);
            double *y = hbuf(m * ldy), *want = hbuf(m * ldy);
            for (int64_t i = 0; i < m * ld; i++) x[i] = rng_uniform(&q, -1, 1);
            for (int64_t i = 0; i < 2 * n * ld; i++) w[i] = rng_uniform(&q, -1, 1);
            for (int64_t i = 0; i < 2 * n; i++) b[i] = rng_uniform(&q, -1, 1);
            for (int64_t i = 0; i < m * ldy; i++) r[i] = y[i] = rng_uniform(&q, -2, 2);
            for (int64_t i = 0; i < m * ldy; i++) want[i] = i % ldy < n ? NAN : y[i];
            const double *wu = gated ? w + n * ld : NULL, *bu = gated ? b + n : NULL;
            plain_linear(act, m, n, k, x, ld, w, ld, b, wu, bu, r, ldy, want, ldy);
            /* Gated: y in place on the residual (y holds r). */
            ref_linear_fwd(act, m, n, k, x, ld, w, ld, b, wu, ld, bu, gated ? y : r, ldy, y, ldy);
            int64_t bad = -1;
            for (int64_t i = 0; i < m * ldy && bad < 0; i++)
                if (!(y[i] == want[i])) bad = i;
            tap_ok(bad < 0, "reference %lldx%lldx%lld%s equals the plain loops bit for bit (%d threads)%s", (long long)m,
                   (long long)n, (long long)k, gated ? " gated, y in place on the residual" : "", par_threads(),
                   bad < 0 ? "" : ": differs");
            free(x);
            free(w);
            free(b);
            free(r);
            free(y);
            free(want);
        }
}

int main(void)
{
    tap_plan_late();
    check_reference();
    const sweep sw = {"linear", is_linear, run_variant};
    int tested;
    if (gpu_sweep(&sw, &R, &tested) > 0 && gpu_shard_first()) check_arguments();
    return tap_done();
}
