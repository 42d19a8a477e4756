/*
 * bench_norm: bandwidth of the norm family, per op, hidden size and variant.
 *
 *   bench_norm [--n N] [--iters K] [--f16|--f32] [--all-archs]
 *
 * Method as bench_elementwise (bench_util.h): median of samples of
 * back-to-back runs, inputs rotated past L2, the copy ceiling measured in the
 * same process. Bytes: each row read once per input and written once per
 * output (gamma and beta once per call). Every case is checked against the
 * double reference on its first rows before it is timed.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_util.h"
#include "runtime/variant.h"
#include "tests/ref_norm.h"

typedef struct norm_case {
    const char *label;
    int rms, residual;
} norm_case;

static const norm_case cases[] = {
    {"layernorm", 0, 0},
    {"rmsnorm", 1, 0},
    {"add+layernorm", 0, 1},
    {"add+rmsnorm", 1, 1},
};

typedef struct bufset {
    void *x, *res, *y, *s;
} bufset;

typedef struct run_ctx {
    const norm_case *c;
    kiln_dtype dt;
    int64_t rows, hidden;
    const bufset *sets;
    int nsets;
    const void *gamma, *beta;
} run_ctx;

static kiln_status run(void *p, int i)
{
    const run_ctx *r = p;
    const bufset *b = &r->sets[i % r->nsets];
    const void *res = r->c->residual ? b->res : NULL;
    void *sout = r->c->residual ? b->s : NULL;
    if (r->c->rms) return kiln_rmsnorm_fwd(r->dt, r->rows, r->hidden, b->x, res, r->gamma, 1e-5f, b->y, sout, NULL, NULL);
    return kiln_layernorm_fwd(r->dt, r->rows, r->hidden, b->x, res, r->gamma, r->beta, 1e-5f, b->y, sout, NULL, NULL, NULL);
}

/* ‖y − ref‖/‖ref‖ over the first `rows` rows of set 0, run once more. */
static double check(run_ctx *r, int64_t rows)
{
    KCHECK(run(r, 0));
    CHECK(cudaDeviceSynchronize());
    const int64_t h = r->hidden, n = rows * h;
    const size_t es = bench_dtype_size(r->dt);
    unsigned char *hx = malloc((size_t)n * es), *hr = malloc((size_t)n * es), *hy = malloc((size_t)n * es);
    unsigned char *hg = malloc((size_t)h * es), *hb = malloc((size_t)h * es);
    double *x = malloc(sizeof(double) * (size_t)n), *res = malloc(sizeof(double) * (size_t)n);
    double *g = malloc(sizeof(double) * (size_t)h), *be = malloc(sizeof(double) * (size_t)h);
    double *y = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    double *mean = malloc(sizeof(double) * (size_t)rows), *rstd = malloc(sizeof(double) * (size_t)rows);
    CHECK(cudaMemcpy(hx, r->sets[0].x, (size_t)n * es, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hr, r->sets[0].res, (size_t)n * es, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hy, r->sets[0].y, (size_t)n * es, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hg, r->gamma, (size_t)h * es, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hb, r->beta, (size_t)h * es, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) {
        x[i] = bench_load(hx, i, r->dt);
        res[i] = bench_load(hr, i, r->dt);
    }
    for (int64_t i = 0; i < h; i++) {
        g[i] = bench_load(hg, i, r->dt);
        be[i] = bench_load(hb, i, r->dt);
    }
    ref_norm_fwd(r->c->rms, rows, h, x, r->c->residual ? res : NULL, g, be, 1e-5, y, s, mean, rstd);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = bench_load(hy, i, r->dt) - y[i];
        num += d * d;
        den += y[i] * y[i];
    }
    free(hx), free(hr), free(hy), free(hg), free(hb), free(x), free(res), free(g), free(be), free(y), free(s);
    free(mean), free(rstd);
    return isfinite(num) ? sqrt(num / den) : INFINITY;
}

int main(int argc, char **argv)
{
    int64_t n = (int64_t)32 << 20;
    int iters = 50, all_archs = 0;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--f16")) dt = KILN_DTYPE_F16;
        else if (!strcmp(argv[i], "--f32")) dt = KILN_DTYPE_F32;
        else if (!strcmp(argv[i], "--all-archs")) all_archs = 1;
        else {
            fprintf(stderr, "usage: %s [--n N] [--iters K] [--f16|--f32] [--all-archs]\n", argv[0]);
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
    }
    static const int64_t hiddens[] = {768, 4096, 8192};
    printf("%-16s %7s %-36s %9s %9s %7s %9s\n", "op", "hidden", "variant", "ms", "GB/s", "copy", "rel_err");
    for (size_t hi = 0; hi < sizeof hiddens / sizeof hiddens[0]; hi++) {
        const int64_t h = hiddens[hi], rows = n / h;
        void *gamma, *beta;
        CHECK(cudaMalloc(&gamma, (size_t)h * es));
        CHECK(cudaMalloc(&beta, (size_t)h * es));
        bench_fill_random(gamma, h, dt, 11, 0.5, 1.5);
        bench_fill_random(beta, h, dt, 12, -0.5, 0.5);
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            const norm_case *c = &cases[ci];
            run_ctx rc = {c, dt, rows, h, sets, nsets, gamma, beta};
            const double moved = (double)rows * (double)h * (double)es * (c->residual ? 4 : 2) +
                                 (double)h * (double)es * (c->rms ? 1 : 2);
            const kiln_op op = c->rms ? KILN_OP_RMSNORM_FWD : KILN_OP_LAYERNORM_FWD;
            for (int i = -1; i < kiln_variant_count(); i++) {
                if (i >= 0) {
                    const kiln_variant *v = &kiln_variant_table[i];
                    if (!all_archs || v->op != op || v->dtype != dt || v->shape_key != h || !kiln_variant_runs_on(v, cc))
                        continue;
                    KCHECK(kiln_force_variant(v->name));
                }
                const double err = check(&rc, rows < 64 ? rows : 64);
                const float ms = bench_time_ms(run, &rc, iters);
                const double gbs = moved / (ms * 1e-3) / 1e9;
                printf("%-16s %7lld %-36s %9.4f %9.1f %6.1f%% %9.2e%s\n", c->label, (long long)h, kiln_last_variant(), ms,
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
    }
    for (int s = 0; s < nsets; s++) {
        CHECK(cudaFree(sets[s].x));
        CHECK(cudaFree(sets[s].res));
        CHECK(cudaFree(sets[s].y));
        CHECK(cudaFree(sets[s].s));
    }
    free(sets);
    return 0;
}
