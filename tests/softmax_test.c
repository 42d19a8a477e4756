/*
 * softmax_test.c: every softmax variant in the table, forced by name, against
 * the double reference of ref_norm.c, as softmax and as log-softmax.
 *
 * Fixed-size variants run their row size; generic ones run odd sizes, a
 * single element, a size that has a variant of its own, and misaligned
 * tensors. Cases cover one row, tails of rows that fill no block, scales
 * below one and negative (softmin), in-place calls, rows of large values
 * (±3e4: the max must be taken out before exp), and special rows: a NaN, a
 * +Inf, only -Inf (each all NaN, as the double formula gives) and a -Inf among
 * finite values (0, log: -Inf). Non-finite reference values must be matched
 * exactly; the rest within the dtype's tolerance. Outputs and their guard
 * zones are poisoned before each run.
 *
 *   bazel test //tests:softmax_test    or, on a GPU machine, ./softmax_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "tests/gpu_util.h"
#include "tests/ref_norm.h"

static rng R;

enum fill_kind { RANDOM, LARGE, SPECIAL_ROWS };

typedef struct softmax_case {
    int64_t rows, cols; /* cols 0: the variant's own */
    double scale;
    int log, in_place;
    int64_t offset;
    enum fill_kind fill;
} softmax_case;

static const softmax_case fixed_cases[] = {
    {1, 0, 1, 0, 0, 0, RANDOM},       {1, 0, 1, 1, 0, 0, RANDOM},       {7, 0, 0.125, 0, 0, 0, RANDOM},
    {131, 0, 1, 1, 0, 0, RANDOM},     {33, 0, -1, 0, 1, 0, RANDOM},     {9, 0, 1, 0, 0, 0, LARGE},
    {9, 0, 1, 1, 0, 0, LARGE},        {8, 0, 0.5, 0, 0, 0, SPECIAL_ROWS}, {8, 0, 1, 1, 0, 0, SPECIAL_ROWS},
};

static const softmax_case generic_cases[] = {
    {3, 1, 1, 0, 0, 0, RANDOM},     {5, 3, 1, 1, 0, 1, RANDOM},    {64, 17, 0.3, 0, 0, 0, RANDOM},
    {37, 1000, 1, 1, 1, 0, RANDOM}, {9, 4096, 1, 0, 0, 0, RANDOM}, {11, 5001, -0.7, 0, 0, 3, RANDOM},
    {7, 777, 1, 1, 0, 0, LARGE},    {8, 300, 1, 0, 0, 0, SPECIAL_ROWS}, {8, 129, 2, 1, 0, 0, SPECIAL_ROWS},
};

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

static void run_case(const kiln_variant_info *v, const softmax_case *c)
{
    const int64_t rows = c->rows, cols = c->cols ? c->cols : v->shape_key, n = rows * cols;
    double *x = hbuf(n), *y = hbuf(n), *got = hbuf(n);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < cols; i++)
            x[r * cols + i] = c->fill == LARGE ? rng_uniform(&R, -3e4, 3e4) : rng_uniform(&R, -8, 8);
    if (c->fill == SPECIAL_ROWS) {
        /* Rows 1..4 (of 8): a NaN, a +Inf, all -Inf, one -Inf among finite values. */
        x[1 * cols + cols / 2] = NAN;
        x[2 * cols + cols / 3] = INFINITY;
        for (int64_t i = 0; i < cols; i++) x[3 * cols + i] = -INFINITY;
        x[4 * cols + cols / 2] = -INFINITY;
    }
    dbuf dx = dbuf_alloc(v->dtype, n, c->offset), dy = dbuf_alloc(v->dtype, n, c->offset);
    dbuf_upload(&dx, x);
    ref_softmax(rows, cols, x, c->scale, c->log, y);
    dbuf *out = c->in_place ? &dx : &dy;
    const kiln_status st = kiln_softmax_fwd(v->dtype, rows, cols, dx.ptr, (float)c->scale, c->log, out->ptr, NULL);
    int ok = finished(st, v->name);
    err e = {INFINITY, INFINITY, 0};
    if (ok) {
        dbuf_download(out, got);
        ok = dbuf_guards_intact(out);
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(y[i])) {
                if (isnan(y[i]) ? !isnan(got[i]) : got[i] != y[i]) ok = 0;
                got[i] = y[i] = 0;
            }
        e = compare(got, y, n);
        ok = ok && within_tolerance(e, v->dtype);
    }
    static const char *fills[] = {"", " values ±3e4", " NaN/+Inf/-Inf rows"};
    tap_ok(ok, "%s %s %lldx%lld scale %g%s%s off %lld: rel %.2e max_abs %.2e (tol rel %.0e abs %.0e)", v->name,
           c->log ? "log-softmax" : "softmax", (long long)rows, (long long)cols, c->scale,
           c->in_place ? " in-place" : "", fills[c->fill], (long long)c->offset, e.rel, e.max_abs, tol_rel(v->dtype),
           tol_abs(v->dtype));
    dbuf_free(&dx);
    dbuf_free(&dy);
    free(x);
    free(y);
    free(got);
}

static int is_softmax(const kiln_variant_info *v) { return v->op == KILN_OP_SOFTMAX_FWD; }

static void run_variant(const kiln_variant_info *v)
{
    const softmax_case *cs = v->shape_key ? fixed_cases : generic_cases;
    const size_t nc = v->shape_key ? sizeof fixed_cases / sizeof fixed_cases[0]
                                   : sizeof generic_cases / sizeof generic_cases[0];
    for (size_t k = 0; k < nc; k++) run_case(v, &cs[k]);
}

int main(void)
{
    tap_plan_late();
    const sweep sw = {"softmax", is_softmax, run_variant};
    int tested;
    if (gpu_sweep(&sw, &R, &tested) > 0 && gpu_shard_first()) {
        /* Unforced: an aligned row of 1024 takes its own variant; a misaligned one, the generic one. */
        dbuf x = dbuf_alloc(KILN_DTYPE_BF16, 2 * 1024 + 8, 0);
        kiln_status st = kiln_softmax_fwd(KILN_DTYPE_BF16, 2, 1024, x.ptr, 1.0f, 0, x.ptr, NULL);
        const int own = finished(st, "selection") && strncmp(kiln_last_variant(), "softmax_fwd_h1024_bf16_", 23) == 0;
        tap_ok(own, "aligned cols 1024 selects its own variant (%s)", kiln_last_variant());
        st = kiln_softmax_fwd(KILN_DTYPE_BF16, 2, 1024, (char *)x.ptr + 2, 1.0f, 0, (char *)x.ptr + 2, NULL);
        const int gen = finished(st, "selection") && strncmp(kiln_last_variant(), "softmax_fwd_hany_bf16_", 22) == 0;
        tap_ok(gen, "misaligned cols 1024 selects the generic variant (%s)", kiln_last_variant());
        dbuf_free(&x);
    }
    return tap_done();
}
