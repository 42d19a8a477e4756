/*
 * elementwise_test.c: every elementwise variant in the table, forced by name,
 * against the double references of ref_elementwise.c.
 *
 * Each case draws fresh random inputs, poisons the outputs and their guard
 * zones, runs, and checks ‖out − ref‖/‖ref‖, max |out − ref| and that nothing
 * outside the outputs was written. Shapes cover single elements, tails that
 * are no multiple of any pack or block, rows of odd width, pointers that share
 * a misalignment and pointers that do not (the scalar path), and in-place
 * calls. Without a GPU every variant is reported as # SKIP.
 *
 *   bazel test //tests:elementwise_test    or, on a GPU machine, ./elementwise_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "runtime/variant.h"
#include "tests/gpu_util.h"
#include "tests/ref_elementwise.h"

static rng R;

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

static void fill(double *v, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) v[i] = rng_uniform(&R, lo, hi);
}

/* Runs after a launch: the call's status, then the device's. */
static int judge(const kiln_variant_info *v, const char *label, const dbuf *out, const double *ref, int ran)
{
    double *got = hbuf(out->n);
    err e = {INFINITY, INFINITY, 0};
    int guards = 1;
    if (ran) {
        dbuf_download(out, got);
        e = compare(got, ref, out->n);
        guards = dbuf_guards_intact(out);
    }
    const int ok = ran && guards && within_tolerance(e, v->dtype);
    tap_ok(ok, "%s %s: rel %.2e max_abs %.2e (tol rel %.0e abs %.0e)%s", v->name, label, e.rel, e.max_abs,
           tol_rel(v->dtype), tol_abs(v->dtype), guards ? "" : " WROTE OUTSIDE ITS OUTPUT");
    free(got);
    return ok;
}

typedef struct ew_case {
    int64_t rows, cols;
    int bias, dbias;
    int64_t off_in, off_out, off_bias;
    int in_place;
} ew_case;

static const ew_case ew_cases[] = {
    {1, 1, 1, 1, 0, 0, 0, 0},
    {3, 7, 1, 1, 1, 1, 0, 0},       /* shared misalignment, bias not packable */
    {17, 129, 0, 0, 0, 3, 0, 0},    /* pointers disagree: scalar path */
    {17, 129, 1, 1, 0, 0, 0, 0},    /* dbias over odd columns */
    {64, 1024, 1, 1, 0, 0, 0, 0},   /* packed bias */
    {257, 1000, 1, 1, 2, 2, 1, 0},  /* head ≠ 0: bias by element */
    {1, 100003, 1, 0, 0, 0, 0, 0},
    {1000, 1536, 1, 1, 0, 0, 0, 0},
    {33, 96, 1, 1, 0, 0, 0, 1},     /* in place */
};

static void run_elementwise(const kiln_variant_info *v)
{
    const int bwd = v->op == KILN_OP_ELEMENTWISE_BWD;
    for (size_t k = 0; k < sizeof ew_cases / sizeof ew_cases[0]; k++) {
        const ew_case *c = &ew_cases[k];
        const int64_t n = c->rows * c->cols;
        const double scale = rng_uniform(&R, 0.5, 2.0);
        double *x = hbuf(n), *dy = hbuf(n), *bias = hbuf(c->cols), *ref = hbuf(n), *dbias_ref = hbuf(c->cols);
        fill(x, n, -4, 4);
        fill(dy, n, -2, 2);
        fill(bias, c->cols, -1, 1);
        dbuf dx = dbuf_alloc(v->dtype, n, c->off_in), ddy = dbuf_alloc(v->dtype, n, c->off_in);
        dbuf dbias = dbuf_alloc(v->dtype, c->cols, c->off_bias), dout = dbuf_alloc(v->dtype, n, c->off_out);
        dbuf ddbias = dbuf_alloc(v->dtype, c->cols, 0);
        dbuf *out = c->in_place ? (bwd ? &ddy : &dx) : &dout;
        dbuf_poison(&dout);
        dbuf_poison(&ddbias);
        dbuf_upload(&dx, x);
        dbuf_upload(&ddy, dy);
        dbuf_upload(&dbias, bias);
        const double *bp = c->bias ? bias : NULL;
        const void *dbp = c->bias ? dbias.ptr : NULL;
        char label[128];
        snprintf(label, sizeof label, "%lldx%lld%s%s off %lld/%lld%s", (long long)c->rows, (long long)c->cols,
                 c->bias ? " bias" : "", bwd && c->dbias ? " dbias" : "", (long long)c->off_in,
                 (long long)c->off_out, c->in_place ? " in-place" : "");
        kiln_status st;
        if (!bwd) {
            ref_elementwise_fwd(v->act, c->rows, c->cols, x, scale, bp, ref);
            st = kiln_elementwise_fwd(v->dtype, v->act, c->rows, c->cols, dx.ptr, (float)scale, dbp, out->ptr, NULL);
            judge(v, label, out, ref, finished(st, v->name));
        } else {
            size_t ws_bytes = 0;
            void *ws = NULL;
            if (kiln_elementwise_bwd_workspace_size(v->dtype, c->rows, c->cols, c->dbias, &ws_bytes))
                tap_bail("workspace size: %s", kiln_last_error());
            if (ws_bytes) CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
            ref_elementwise_bwd(v->act, c->rows, c->cols, dy, x, scale, bp, ref, dbias_ref);
            st = kiln_elementwise_bwd(v->dtype, v->act, c->rows, c->cols, ddy.ptr, dx.ptr, (float)scale, dbp,
                                      out->ptr, c->dbias ? ddbias.ptr : NULL, ws, ws_bytes, NULL);
            const int ran = finished(st, v->name);
            judge(v, label, out, ref, ran);
            if (c->dbias) {
                char l2[160];
                snprintf(l2, sizeof l2, "%s: dbias", label);
                judge(v, l2, &ddbias, dbias_ref, ran);
            }
            if (ws) CUDA_CHECK(cudaFree(ws));
        }
        dbuf_free(&dx);
        dbuf_free(&ddy);
        dbuf_free(&dbias);
        dbuf_free(&dout);
        dbuf_free(&ddbias);
        free(x);
        free(dy);
        free(bias);
        free(ref);
        free(dbias_ref);
    }
}

/* dbias is reduced in a fixed order: two runs give the same bits. */
static void run_dbias_repeatable(const kiln_variant_info *v)
{
    const int64_t rows = 3001, cols = 264, n = rows * cols;
    double *x = hbuf(n), *dy = hbuf(n);
    fill(x, n, -4, 4);
    fill(dy, n, -2, 2);
    dbuf dx = dbuf_alloc(v->dtype, n, 0), ddy = dbuf_alloc(v->dtype, n, 0), dout = dbuf_alloc(v->dtype, n, 0);
    dbuf db1 = dbuf_alloc(v->dtype, cols, 0), db2 = dbuf_alloc(v->dtype, cols, 0);
    dbuf_upload(&dx, x);
    dbuf_upload(&ddy, dy);
    size_t ws_bytes = 0;
    void *ws = NULL;
    if (kiln_elementwise_bwd_workspace_size(v->dtype, rows, cols, 1, &ws_bytes)) tap_bail("%s", kiln_last_error());
    CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    int ran = finished(kiln_elementwise_bwd(v->dtype, v->act, rows, cols, ddy.ptr, dx.ptr, 1.0f, NULL, dout.ptr,
                                            db1.ptr, ws, ws_bytes, NULL), v->name);
    ran = ran && finished(kiln_elementwise_bwd(v->dtype, v->act, rows, cols, ddy.ptr, dx.ptr, 1.0f, NULL, dout.ptr,
                                               db2.ptr, ws, ws_bytes, NULL), v->name);
    int same = 0;
    if (ran) {
        unsigned char *a = malloc((size_t)cols * db1.es), *b = malloc((size_t)cols * db1.es);
        if (!a || !b) tap_bail("out of host memory");
        CUDA_CHECK(cudaMemcpy(a, db1.ptr, (size_t)cols * db1.es, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(b, db2.ptr, (size_t)cols * db1.es, cudaMemcpyDeviceToHost));
        same = memcmp(a, b, (size_t)cols * db1.es) == 0;
        free(a);
        free(b);
    }
    tap_ok(same, "%s 3001x264: dbias identical bit for bit over two runs", v->name);
    CUDA_CHECK(cudaFree(ws));
    dbuf_free(&dx);
    dbuf_free(&ddy);
    dbuf_free(&dout);
    dbuf_free(&db1);
    dbuf_free(&db2);
    free(x);
    free(dy);
}

typedef struct gated_case {
    int64_t n;
    int64_t off_in, off_out;
    int in_place;
} gated_case;

static const gated_case gated_cases[] = {
    {1, 0, 0, 0}, {7, 1, 1, 0}, {8, 0, 0, 0}, {4097, 0, 5, 0}, {100003, 3, 3, 0}, {(1 << 20) + 5, 0, 0, 0},
    {999, 0, 0, 1},
};

static void run_gated(const kiln_variant_info *v)
{
    const int bwd = v->op == KILN_OP_GATED_BWD;
    for (size_t k = 0; k < sizeof gated_cases / sizeof gated_cases[0]; k++) {
        const gated_case *c = &gated_cases[k];
        const int64_t n = c->n;
        double *g = hbuf(n), *u = hbuf(n), *dy = hbuf(n), *r0 = hbuf(n), *r1 = hbuf(n);
        fill(g, n, -4, 4);
        fill(u, n, -2, 2);
        fill(dy, n, -2, 2);
        dbuf dg = dbuf_alloc(v->dtype, n, c->off_in), du = dbuf_alloc(v->dtype, n, c->off_in);
        dbuf ddy = dbuf_alloc(v->dtype, n, c->off_in);
        dbuf o0 = dbuf_alloc(v->dtype, n, c->off_out), o1 = dbuf_alloc(v->dtype, n, c->off_out);
        dbuf_poison(&o0);
        dbuf_poison(&o1);
        dbuf_upload(&dg, g);
        dbuf_upload(&du, u);
        dbuf_upload(&ddy, dy);
        /* In place: y over gate; dgate over gate and dup over up. */
        dbuf *out0 = c->in_place ? &dg : &o0, *out1 = c->in_place ? &du : &o1;
        char label[96];
        snprintf(label, sizeof label, "n %lld off %lld/%lld%s", (long long)n, (long long)c->off_in,
                 (long long)c->off_out, c->in_place ? " in-place" : "");
        if (!bwd) {
            ref_gated_fwd(v->act, n, g, u, r0);
            kiln_status st = kiln_gated_fwd(v->dtype, v->act, n, dg.ptr, du.ptr, out0->ptr, NULL);
            judge(v, label, out0, r0, finished(st, v->name));
        } else {
            ref_gated_bwd(v->act, n, dy, g, u, r0, r1);
            kiln_status st = kiln_gated_bwd(v->dtype, v->act, n, ddy.ptr, dg.ptr, du.ptr, out0->ptr, out1->ptr, NULL);
            const int ran = finished(st, v->name);
            char l0[128], l1[128];
            snprintf(l0, sizeof l0, "%s: dgate", label);
            snprintf(l1, sizeof l1, "%s: dup", label);
            judge(v, l0, out0, r0, ran);
            judge(v, l1, out1, r1, ran);
        }
        dbuf_free(&dg);
        dbuf_free(&du);
        dbuf_free(&ddy);
        dbuf_free(&o0);
        dbuf_free(&o1);
        free(g);
        free(u);
        free(dy);
        free(r0);
        free(r1);
    }
}

static int is_elementwise(const kiln_variant_info *v)
{
    return v->op == KILN_OP_ELEMENTWISE_FWD || v->op == KILN_OP_ELEMENTWISE_BWD || v->op == KILN_OP_GATED_FWD ||
           v->op == KILN_OP_GATED_BWD;
}

static void run_variant(const kiln_variant_info *v)
{
    if (v->op == KILN_OP_GATED_FWD || v->op == KILN_OP_GATED_BWD) run_gated(v);
    else run_elementwise(v);
    if (v->op == KILN_OP_ELEMENTWISE_BWD) run_dbias_repeatable(v);
}

int main(void)
{
    tap_plan_late();
    const sweep sw = {"elementwise", is_elementwise, run_variant};
    int tested;
    const int cc = gpu_sweep(&sw, &R, &tested);
    const int gpu = cc > 0;
    if (gpu && gpu_shard_first()) {
        /* Unforced, selection takes the highest arch this GPU runs. */
        double x[64];
        fill(x, 64, -1, 1);
        dbuf dx = dbuf_alloc(KILN_DTYPE_F16, 64, 0);
        dbuf_upload(&dx, x);
        kiln_status st = kiln_elementwise_fwd(KILN_DTYPE_F16, KILN_ACT_SILU, 8, 8, dx.ptr, 1.0f, NULL, dx.ptr, NULL);
        int best = 0;
        for (int i = 0; i < kiln_variant_table_size; i++) {
            const kiln_variant *t = &kiln_variant_table[i];
            if (t->op == KILN_OP_ELEMENTWISE_FWD && t->dtype == KILN_DTYPE_F16 && t->act == KILN_ACT_SILU &&
                kiln_variant_runs_on(t, cc) && t->arch > best)
                best = t->arch;
        }
        char want[64];
        snprintf(want, sizeof want, "elementwise_fwd_silu_f16_sm%d", best);
        tap_ok(finished(st, "selection") && strcmp(kiln_last_variant(), want) == 0,
               "selection on sm_%d picks %s (got %s)", cc, want, kiln_last_variant());
        dbuf_free(&dx);
    }
    return tap_done();
}
