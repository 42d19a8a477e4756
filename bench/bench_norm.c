/*
 * bench_norm: bandwidth of the norm and softmax families, per op, row size
 * and variant: LayerNorm and RMSNorm (alone, with the fused residual add, with
 * FP8 output), their backward passes, softmax and log-softmax.
 *
 *   bench_norm [--n N] [--iters K] [--f16|--f32] [--all-archs] [--only SUBSTRING]
 *
 * Method as bench_elementwise (bench_util.h): median of samples of
 * back-to-back runs, inputs rotated past L2, the copy ceiling measured in the
 * same process. Bytes: each row tensor read once per input and written once
 * per output, at its own element size (an FP8 output is one byte an element);
 * gamma, beta, dgamma and dbeta once per call; the f32 statistics and the
 * backward's partial sums not counted. Every case is checked against the
 * double reference on its first rows before it is timed.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_util.h"
#include "runtime/variant.h"
#include "tests/half.h"
#include "tests/ref_norm.h"

enum kind { NORM, NORM_FP8, NORM_BWD, SOFTMAX };

typedef struct bench_case {
    const char *label;
    enum kind kind;
    int rms, residual, log;
    kiln_op op;
} bench_case;

static const bench_case cases[] = {
    {"layernorm", NORM, 0, 0, 0, KILN_OP_LAYERNORM_FWD},
    {"rmsnorm", NORM, 1, 0, 0, KILN_OP_RMSNORM_FWD},
    {"add+layernorm", NORM, 0, 1, 0, KILN_OP_LAYERNORM_FWD},
    {"add+rmsnorm", NORM, 1, 1, 0, KILN_OP_RMSNORM_FWD},
    {"rmsnorm->fp8", NORM_FP8, 1, 0, 0, KILN_OP_RMSNORM_FWD_FP8},
    {"add+rmsnorm->fp8", NORM_FP8, 1, 1, 0, KILN_OP_RMSNORM_FWD_FP8},
    {"softmax", SOFTMAX, 0, 0, 0, KILN_OP_SOFTMAX_FWD},
    {"log_softmax", SOFTMAX, 0, 0, 1, KILN_OP_SOFTMAX_FWD},
    {"layernorm bwd", NORM_BWD, 0, 0, 0, KILN_OP_LAYERNORM_BWD},
    {"rmsnorm bwd", NORM_BWD, 1, 0, 0, KILN_OP_RMSNORM_BWD},
};

/* One rotation set: the row tensors, and the statistics of x for the backward. */
typedef struct bufset {
    void *x, *res, *y, *s;
    float *mean, *rstd;
} bufset;

typedef struct run_ctx {
    const bench_case *c;
    kiln_dtype dt;
    int64_t rows, hidden;
    const bufset *sets;
    int nsets;
    const void *gamma, *beta;
    void *dgamma, *dbeta, *ws;
    size_t ws_bytes;
} run_ctx;

static const float kEps = 1e-5f, kFp8Scale = 64.0f;

/* The backward runs from x as s, res as dy, into y. */
static kiln_status run(void *p, int i)
{
    const run_ctx *r = p;
    const bench_case *c = r->c;
    const bufset *b = &r->sets[i % r->nsets];
    const void *res = c->residual ? b->res : NULL;
    void *sout = c->residual ? b->s : NULL;
    switch (c->kind) {
    case NORM:
        if (c->rms) return kiln_rmsnorm_fwd(r->dt, r->rows, r->hidden, b->x, res, r->gamma, kEps, b->y, sout, NULL, NULL);
        return kiln_layernorm_fwd(r->dt, r->rows, r->hidden, b->x, res, r->gamma, r->beta, kEps, b->y, sout, NULL, NULL,
                                  NULL);
    case NORM_FP8:
        return kiln_rmsnorm_fwd_fp8(r->dt, r->rows, r->hidden, b->x, res, r->gamma, kEps, kFp8Scale, b->y, sout, NULL,
                                    NULL, NULL);
    case SOFTMAX: return kiln_softmax_fwd(r->dt, r->rows, r->hidden, b->x, 1.0f, c->log, b->y, NULL);
    case NORM_BWD:
        if (c->rms)
            return kiln_rmsnorm_bwd(r->dt, r->rows, r->hidden, b->res, b->x, r->gamma, b->rstd, NULL, b->y, r->dgamma,
                                    r->ws, r->ws_bytes, NULL);
        return kiln_layernorm_bwd(r->dt, r->rows, r->hidden, b->res, b->x, r->gamma, b->mean, b->rstd, NULL, b->y,
                                  r->dgamma, r->dbeta, r->ws, r->ws_bytes, NULL);
    }
    return KILN_STATUS_NOT_SUPPORTED;
}

/* ‖out − ref‖/‖ref‖ over the first `rows` rows of set 0, run once more. */
static double check(run_ctx *r, int64_t rows)
{
    KCHECK(run(r, 0));
    CHECK(cudaDeviceSynchronize());
    const bench_case *c = r->c;
    const int64_t h = r->hidden, n = rows * h;
    double *x = bench_download(r->sets[0].x, n, r->dt), *res = bench_download(r->sets[0].res, n, r->dt);
    double *g = bench_download(r->gamma, h, r->dt), *be = bench_download(r->beta, h, r->dt);
    double *ref = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    double *mean = malloc(sizeof(double) * (size_t)rows), *rstd = malloc(sizeof(double) * (size_t)rows);
    double *dg = malloc(sizeof(double) * (size_t)h), *db = malloc(sizeof(double) * (size_t)h), *got;
    if (!ref || !s || !mean || !rstd || !dg || !db) exit(1);
    switch (c->kind) {
    case NORM:
    case NORM_FP8: ref_norm_fwd(c->rms, rows, h, x, c->residual ? res : NULL, g, be, kEps, ref, s, mean, rstd); break;
    case SOFTMAX: ref_softmax(rows, h, x, 1.0, c->log, ref); break;
    case NORM_BWD: {
        float *fm = malloc(sizeof(float) * (size_t)rows), *fr = malloc(sizeof(float) * (size_t)rows);
        CHECK(cudaMemcpy(fm, r->sets[0].mean, sizeof(float) * (size_t)rows, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(fr, r->sets[0].rstd, sizeof(float) * (size_t)rows, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < rows; i++) mean[i] = fm[i], rstd[i] = fr[i];
        ref_norm_bwd(c->rms, rows, h, res, x, g, mean, rstd, NULL, ref, dg, db);
        free(fm), free(fr);
        break;
    }
    }
    if (c->kind == NORM_FP8) {
        unsigned char *q = malloc((size_t)n);
        CHECK(cudaMemcpy(q, r->sets[0].y, (size_t)n, cudaMemcpyDeviceToHost));
        got = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++) got[i] = e4m3_to_f64(q[i]) / kFp8Scale;
        free(q);
    } else {
        got = bench_download(r->sets[0].y, n, r->dt);
    }
    const double err = bench_rel_err(got, ref, n);
    free(x), free(res), free(g), free(be), free(ref), free(s), free(mean), free(rstd), free(dg), free(db), free(got);
    return err;
}

static double moved_bytes(const bench_case *c, int64_t rows, int64_t h, size_t es)
{
    const double row = (double)rows * (double)h, vec = (double)h * (double)es;
    switch (c->kind) {
    case NORM: return row * (double)es * (c->residual ? 4 : 2) + vec * (c->rms ? 1 : 2);
    case NORM_FP8: return row * ((double)es * (c->residual ? 3 : 1) + 1) + vec;
    case SOFTMAX: return row * (double)es * 2;
    case NORM_BWD: return row * (double)es * 3 + vec * (c->rms ? 2 : 3);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n = (int64_t)32 << 20;
    int iters = 50, all_archs = 0;
    const char *only = NULL;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--f16")) dt = KILN_DTYPE_F16;
        else if (!strcmp(argv[i], "--f32")) dt = KILN_DTYPE_F32;
        else if (!strcmp(argv[i], "--all-archs")) all_archs = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--n N] [--iters K] [--f16|--f32] [--all-archs] [--only SUBSTRING]\n", argv[0]);
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int cc = prop.major * 10 + prop.minor;
    const size_t es = bench_dtype_size(dt), bytes = (size_t)n * es;
    const double copy = bench_copy_ceiling(bytes, iters);
    printf("device %s (sm_%d, %d SMs, L2 %d MB); %s, %lld elements a tensor; copy ceiling %.0f GB/s\n", prop.name, cc,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, kiln_dtype_name(dt), (long long)n, copy);
    printf("BENCH op=copy dtype=%s n=%lld GBps=%.1f device=\"%s\"\n", kiln_dtype_name(dt), (long long)n, copy, prop.name);
    const int nsets = bench_sets_for(2 * bytes, prop.l2CacheSize);
    bufset *sets = calloc((size_t)nsets, sizeof(bufset));
    for (int s = 0; s < nsets; s++) {
        void **t[4] = {&sets[s].x, &sets[s].res, &sets[s].y, &sets[s].s};
        for (int k = 0; k < 4; k++) {
            CHECK(cudaMalloc(t[k], bytes));
            bench_fill_random(*t[k], n, dt, 100u * (uint64_t)s + (uint64_t)k + 7, -2, 2);
        }
        CHECK(cudaMalloc((void **)&sets[s].mean, (size_t)n * sizeof(float) / 512));
        CHECK(cudaMalloc((void **)&sets[s].rstd, (size_t)n * sizeof(float) / 512));
    }
    static const int64_t hiddens[] = {768, 4096, 8192};
    printf("%-18s %7s %-40s %9s %9s %7s %9s\n", "op", "hidden", "variant", "ms", "GB/s", "copy", "rel_err");
    for (size_t hi = 0; hi < sizeof hiddens / sizeof hiddens[0]; hi++) {
        const int64_t h = hiddens[hi], rows = n / h;
        void *gamma, *beta, *dgamma, *dbeta, *ws = NULL;
        CHECK(cudaMalloc(&gamma, (size_t)h * es));
        CHECK(cudaMalloc(&beta, (size_t)h * es));
        CHECK(cudaMalloc(&dgamma, (size_t)h * es));
        CHECK(cudaMalloc(&dbeta, (size_t)h * es));
        bench_fill_random(gamma, h, dt, 11, 0.5, 1.5);
        bench_fill_random(beta, h, dt, 12, -0.5, 0.5);
        size_t ws_bytes = 0;
        KCHECK(kiln_norm_bwd_workspace_size(dt, rows, h, 1, &ws_bytes));
        CHECK(cudaMalloc(&ws, ws_bytes));
        /* Statistics of each set's x, for the backward. */
        for (int s = 0; s < nsets; s++)
            KCHECK(kiln_layernorm_fwd(dt, rows, h, sets[s].x, NULL, gamma, beta, kEps, sets[s].y, NULL, sets[s].mean,
                                      sets[s].rstd, NULL));
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            const bench_case *c = &cases[ci];
            if (only && !strstr(c->label, only)) continue;
            if (c->kind == NORM_FP8 && cc < 89) continue;
            run_ctx rc = {c, dt, rows, h, sets, nsets, gamma, beta, dgamma, dbeta, ws, ws_bytes};
            const double moved = moved_bytes(c, rows, h, es);
            for (int i = -1; i < kiln_variant_count(); i++) {
                if (i >= 0) {
                    const kiln_variant *v = &kiln_variant_table[i];
                    if (!all_archs || v->op != c->op || v->dtype != dt || v->shape_key != h || !kiln_variant_runs_on(v, cc))
                        continue;
                    KCHECK(kiln_force_variant(v->name));
                }
                const double err = check(&rc, rows < 64 ? rows : 64);
                const float ms = bench_time_ms(run, &rc, iters);
                const double gbs = moved / (ms * 1e-3) / 1e9;
                printf("%-18s %7lld %-40s %9.4f %9.1f %6.1f%% %9.2e%s\n", c->label, (long long)h, kiln_last_variant(), ms,
                       gbs, 100 * gbs / copy, err, i < 0 ? " (selected)" : "");
                printf("BENCH op=\"%s\" hidden=%lld variant=%s selected=%d dtype=%s n=%lld ms=%.5f GBps=%.1f "
                       "frac_copy=%.3f rel_err=%.2e\n",
                       c->label, (long long)h, kiln_last_variant(), i < 0, kiln_dtype_name(dt), (long long)(rows * h), ms,
                       gbs, gbs / copy, err);
                KCHECK(kiln_force_variant(NULL));
            }
        }
        CHECK(cudaFree(gamma));
        CHECK(cudaFree(beta));
        CHECK(cudaFree(dgamma));
        CHECK(cudaFree(dbeta));
        CHECK(cudaFree(ws));
    }
    for (int s = 0; s < nsets; s++) {
        CHECK(cudaFree(sets[s].x));
        CHECK(cudaFree(sets[s].res));
        CHECK(cudaFree(sets[s].y));
        CHECK(cudaFree(sets[s].s));
        CHECK(cudaFree(sets[s].mean));
        CHECK(cudaFree(sets[s].rstd));
    }
    free(sets);
    return 0;
}
