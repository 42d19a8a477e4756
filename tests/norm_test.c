/*
 * norm_test.c: every norm variant in the table, forced by name, against the
 * double reference of ref_norm.c.
 *
 * Fixed-size variants run their hidden size; generic ones run odd sizes, a
 * single element, sizes that have a variant of their own, and misaligned
 * tensors. Cases cover one row, tails of rows that fill no block, the fused
 * residual add with s written out, in-place calls, gamma/beta left out, rows
 * whose mean is large against their spread (1e4 ± 1: the statistics must be
 * stable), rows of one value (zero variance: y = beta), and a row holding a
 * NaN or an Inf (that row comes out as IEEE arithmetic on the formulas says,
 * NaN where the double reference is NaN; the other rows stay right). Outputs and
 * their guard zones are poisoned before each run.
 *
 *   bazel test //tests:norm_test    or, on a GPU machine, ./norm_test
 *   KILN_SEED=N replays a run; KILN_TEST_FILTER=substring limits the variants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "runtime/variant.h"
#include "tests/gpu_util.h"
#include "tests/ref_norm.h"

static rng R;

static double *hbuf(int64_t n)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!p) tap_bail("out of host memory");
    return p;
}

enum fill_kind { RANDOM, LARGE_MEAN, CONSTANT_ROWS, NONFINITE_ROW };

typedef struct norm_case {
    int64_t rows, hidden; /* hidden 0: the variant's own */
    int residual, residual_out, gamma, beta, stats, in_place;
    int64_t offset;       /* elements added to every tensor's address */
    enum fill_kind fill;
} norm_case;

static const norm_case fixed_cases[] = {
    {1, 0, 0, 0, 1, 1, 1, 0, 0, RANDOM},
    {7, 0, 1, 1, 1, 1, 1, 0, 0, RANDOM},
    {131, 0, 1, 1, 1, 1, 0, 0, 0, RANDOM},
    {33, 0, 0, 0, 0, 0, 1, 0, 0, RANDOM},          /* no gamma, no beta */
    {17, 0, 1, 1, 1, 1, 1, 1, 0, RANDOM},          /* in place: y over x, residual_out over residual */
    {9, 0, 0, 0, 1, 1, 1, 0, 0, LARGE_MEAN},
    {5, 0, 0, 0, 1, 1, 1, 0, 0, CONSTANT_ROWS},
    {6, 0, 0, 0, 1, 1, 1, 0, 0, NONFINITE_ROW},
};

static const norm_case generic_cases[] = {
    {3, 1, 0, 0, 1, 1, 1, 0, 0, RANDOM},
    {5, 3, 1, 1, 1, 1, 1, 0, 1, RANDOM},
    {64, 17, 1, 1, 1, 1, 1, 0, 0, RANDOM},
    {37, 1000, 1, 1, 1, 1, 0, 1, 0, RANDOM},
    {9, 4096, 1, 1, 1, 1, 1, 0, 0, RANDOM},        /* a size with its own variant, forced generic */
    {11, 5001, 1, 1, 1, 0, 1, 0, 3, RANDOM},       /* odd size, misaligned */
    {7, 777, 0, 0, 1, 1, 1, 0, 0, LARGE_MEAN},
    {4, 300, 0, 0, 1, 1, 1, 0, 0, CONSTANT_ROWS},
    {6, 129, 0, 0, 1, 1, 1, 0, 0, NONFINITE_ROW},
};

static int finished(kiln_status st, const char *what)
{
    if (st != KILN_STATUS_SUCCESS) {
        tap_diag("%s: %s: %s", what, kiln_status_string(st), kiln_last_error());
        return 0;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) tap_bail("%s: %s", what, cudaGetErrorString(e));
    return 1;
}

static void download_f32(const float *dev, double *h, int64_t n)
{
    float *t = malloc((size_t)n * sizeof(float));
    if (!t) tap_bail("out of host memory");
    CUDA_CHECK(cudaMemcpy(t, dev, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) h[i] = t[i];
    free(t);
}

static void run_case(const kiln_variant_info *v, const norm_case *c)
{
    const int rms = v->op == KILN_OP_RMSNORM_FWD;
    const int64_t rows = c->rows, h = c->hidden ? c->hidden : v->shape_key, n = rows * h;
    /* NONFINITE_ROW: a NaN in row rows/2, an Inf in the row after it. */
    const int64_t nan_row = c->fill == NONFINITE_ROW ? rows / 2 : -1, inf_row = nan_row < 0 ? -1 : nan_row + 1;
    double *x = hbuf(n), *res = hbuf(n), *g = hbuf(h), *b = hbuf(h), *y = hbuf(n), *s = hbuf(n);
    double *mean = hbuf(rows), *rstd = hbuf(rows), *got = hbuf(n);
    for (int64_t r = 0; r < rows; r++) {
        const double center = c->fill == LARGE_MEAN ? 1e4 * (r % 2 ? -1 : 1) : rng_uniform(&R, -1, 1);
        const double cval = rng_uniform(&R, -3, 3);
        for (int64_t i = 0; i < h; i++) {
            double xv = c->fill == CONSTANT_ROWS ? cval : center + rng_uniform(&R, -1, 1) * (c->fill == LARGE_MEAN ? 1 : 2);
            if (i == h / 2 && (r == nan_row || r == inf_row)) xv = r == nan_row ? NAN : INFINITY;
            x[r * h + i] = xv;
            res[r * h + i] = c->fill == CONSTANT_ROWS ? 0 : rng_uniform(&R, -0.5, 0.5);
        }
    }
    for (int64_t i = 0; i < h; i++) {
        g[i] = rng_uniform(&R, 0.5, 1.5);
        b[i] = rng_uniform(&R, -0.5, 0.5);
    }
    dbuf dx = dbuf_alloc(v->dtype, n, c->offset), dres = dbuf_alloc(v->dtype, n, c->offset);
    dbuf dg = dbuf_alloc(v->dtype, h, c->offset), db = dbuf_alloc(v->dtype, h, c->offset);
    dbuf dy = dbuf_alloc(v->dtype, n, c->offset), dro = dbuf_alloc(v->dtype, n, c->offset);
    dbuf_upload(&dx, x);
    if (c->residual) dbuf_upload(&dres, res);
    dbuf_upload(&dg, g);
    dbuf_upload(&db, b);
    float *dmean = NULL, *drstd = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dmean, (size_t)rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&drstd, (size_t)rows * sizeof(float)));
    CUDA_CHECK(cudaMemset(dmean, 0xff, (size_t)rows * sizeof(float)));
    CUDA_CHECK(cudaMemset(drstd, 0xff, (size_t)rows * sizeof(float)));
    const double eps = 1e-5;
    ref_norm_fwd(rms, rows, h, x, c->residual ? res : NULL, c->gamma ? g : NULL, c->beta ? b : NULL, eps, y, s,
                 mean, rstd);

    dbuf *out = c->in_place ? &dx : &dy;
    dbuf *sout = c->in_place ? &dres : &dro;
    const void *rp = c->residual ? dres.ptr : NULL;
    void *sp = c->residual_out ? sout->ptr : NULL;
    kiln_status st = rms ? kiln_rmsnorm_fwd(v->dtype, rows, h, dx.ptr, rp, c->gamma ? dg.ptr : NULL, (float)eps,
                                            out->ptr, sp, c->stats ? drstd : NULL, NULL)
                         : kiln_layernorm_fwd(v->dtype, rows, h, dx.ptr, rp, c->gamma ? dg.ptr : NULL,
                                              c->beta ? db.ptr : NULL, (float)eps, out->ptr, sp,
                                              c->stats ? dmean : NULL, c->stats ? drstd : NULL, NULL);
    const int ran = finished(st, v->name);
    static const char *fills[] = {"", " mean 1e4±1", " constant rows", " NaN/Inf row"};
    char label[160];
    snprintf(label, sizeof label, "%lldx%lld%s%s%s%s%s%s off %lld", (long long)rows, (long long)h,
             c->residual ? " +residual" : "", c->residual_out ? " s-out" : "", c->gamma ? "" : " no-gamma",
             c->beta || rms ? "" : " no-beta", c->in_place ? " in-place" : "", fills[c->fill], (long long)c->offset);
    int ok = ran;
    err e = {INFINITY, INFINITY, 0};
    if (ran) {
        dbuf_download(out, got);
        ok = dbuf_guards_intact(out);
        /* The bad rows: NaN exactly where the reference is NaN, else its value. */
        for (int64_t i = nan_row < 0 ? n : nan_row * h; i < (nan_row + 2) * h && i < n; i++) {
            if (isnan(y[i]) ? !isnan(got[i]) : !(fabs(got[i] - y[i]) <= tol_abs(v->dtype))) ok = 0;
            got[i] = y[i] = 0;
        }
        e = compare(got, y, n);
        ok = ok && within_tolerance(e, v->dtype);
        if (c->residual_out) {
            dbuf_download(sout, got);
            for (int64_t i = nan_row < 0 ? n : nan_row * h; i < (nan_row + 2) * h && i < n; i++) got[i] = s[i] = 0;
            err es = compare(got, s, n);
            /* s is the f32 sum rounded once to the dtype. */
            ok = ok && dbuf_guards_intact(sout) && within_tolerance(es, v->dtype);
        }
        if (c->stats) {
            double *gs = hbuf(rows);
            download_f32(drstd, gs, rows);
            for (int64_t r = 0; r < rows; r++)
                if (r != nan_row && r != inf_row && !(fabs(gs[r] - rstd[r]) <= 1e-4 * rstd[r] + 1e-6)) ok = 0;
            if (!rms) {
                download_f32(dmean, gs, rows);
                for (int64_t r = 0; r < rows; r++)
                    if (r != nan_row && r != inf_row && !(fabs(gs[r] - mean[r]) <= 1e-5 * (1 + fabs(mean[r])))) ok = 0;
            }
            free(gs);
        }
    }
    tap_ok(ok, "%s %s: rel %.2e max_abs %.2e (tol rel %.0e abs %.0e)", v->name, label, e.rel, e.max_abs,
           tol_rel(v->dtype), tol_abs(v->dtype));
    CUDA_CHECK(cudaFree(dmean));
    CUDA_CHECK(cudaFree(drstd));
    dbuf_free(&dx);
    dbuf_free(&dres);
    dbuf_free(&dg);
    dbuf_free(&db);
    dbuf_free(&dy);
    dbuf_free(&dro);
    free(x);
    free(res);
    free(g);
    free(b);
    free(y);
    free(s);
    free(mean);
    free(rstd);
    free(got);
}

int main(void)
{
    tap_plan_late();
    const char *filter = getenv("KILN_TEST_FILTER");
    char why[256];
    const int gpu = gpu_available(why, sizeof why);
    int cc = 0;
    if (gpu) {
        struct cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        cc = prop.major * 10 + prop.minor;
        tap_diag("device: %s, sm_%d, %d SMs", prop.name, cc, prop.multiProcessorCount);
        R.s = test_seed();
    }
    int tested = 0, listed = 0;
    for (int i = 0; i < kiln_variant_count(); i++) {
        kiln_variant_info v;
        if (kiln_variant_get(i, &v) != KILN_STATUS_SUCCESS) tap_bail("kiln_variant_get(%d): %s", i, kiln_last_error());
        if ((v.op != KILN_OP_LAYERNORM_FWD && v.op != KILN_OP_RMSNORM_FWD) || (filter && !strstr(v.name, filter)))
            continue;
        listed++;
        if (!gpu) {
            tap_skip(why, "%s", v.name);
            continue;
        }
        if (!kiln_variant_runs_on(&kiln_variant_table[i], cc)) {
            char reason[64];
            snprintf(reason, sizeof reason, "carries no code for sm_%d", cc);
            tap_skip(reason, "%s", v.name);
            continue;
        }
        if (kiln_force_variant(v.name) != KILN_STATUS_SUCCESS) tap_bail("%s", kiln_last_error());
        const norm_case *cases = v.shape_key ? fixed_cases : generic_cases;
        const size_t ncases = v.shape_key ? sizeof fixed_cases / sizeof fixed_cases[0]
                                          : sizeof generic_cases / sizeof generic_cases[0];
        for (size_t k = 0; k < ncases; k++) run_case(&v, &cases[k]);
        kiln_force_variant(NULL);
        tested++;
    }
    if (gpu) {
        /* Unforced: hidden 4096 aligned takes its own variant; misaligned, the generic one. */
        dbuf x = dbuf_alloc(KILN_DTYPE_F16, 4 * 4096 + 8, 0), y = dbuf_alloc(KILN_DTYPE_F16, 4 * 4096 + 8, 0);
        kiln_status st = kiln_rmsnorm_fwd(KILN_DTYPE_F16, 4, 4096, x.ptr, NULL, NULL, 1e-5f, y.ptr, NULL, NULL, NULL);
        const int own = finished(st, "selection") && strncmp(kiln_last_variant(), "rmsnorm_fwd_h4096_f16_", 22) == 0;
        tap_ok(own, "aligned hidden 4096 selects its own variant (%s)", kiln_last_variant());
        st = kiln_rmsnorm_fwd(KILN_DTYPE_F16, 4, 4096, (char *)x.ptr + 2, NULL, NULL, 1e-5f, (char *)y.ptr + 2, NULL,
                              NULL, NULL);
        const int gen = finished(st, "selection") && strncmp(kiln_last_variant(), "rmsnorm_fwd_hany_f16_", 21) == 0;
        tap_ok(gen, "misaligned hidden 4096 selects the generic variant (%s)", kiln_last_variant());
        dbuf_free(&x);
        dbuf_free(&y);
    }
    tap_diag("%d of %d norm variants tested on the GPU", tested, listed);
    return tap_done();
}
