/*
 * bench_elementwise: bandwidth of the elementwise family, per op and variant.
 *
 *   bazel build //bench:bench_elementwise && bazel-bin/bench/bench_elementwise [--n N] [--iters K] [--all-archs]
 *
 * Method (docs/elementwise.md): 5 warm-up runs, then CUDA events around
 * samples of 10 back-to-back runs, the median of --iters samples; inputs rotate over enough buffer sets
 * that each run reads data not in L2 (the set count is derived from the L2
 * size); bytes are each input read once and each output written once. The
 * copy ceiling is measured here too (cudaMemcpyAsync device to device, read
 * + write), and every figure is also given as a fraction of it. Each variant
 * is checked against the double reference on a sample before it is timed.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "runtime/variant.h"
#include "tests/ref_elementwise.h"

typedef struct bench_case {
    const char *label;
    kiln_op op;
    kiln_activation act;
    int bias; /* elementwise: a bias over cols; bwd: also dbias */
} bench_case;

static const bench_case cases[] = {
    {"bias+gelu_tanh", KILN_OP_ELEMENTWISE_FWD, KILN_ACT_GELU_TANH, 1},
    {"bias+gelu_erf", KILN_OP_ELEMENTWISE_FWD, KILN_ACT_GELU_ERF, 1},
    {"bias+silu", KILN_OP_ELEMENTWISE_FWD, KILN_ACT_SILU, 1},
    {"bias+relu", KILN_OP_ELEMENTWISE_FWD, KILN_ACT_RELU, 1},
    {"swiglu", KILN_OP_GATED_FWD, KILN_ACT_SILU, 0},
    {"geglu_tanh", KILN_OP_GATED_FWD, KILN_ACT_GELU_TANH, 0},
    {"bias+gelu_tanh bwd+dbias", KILN_OP_ELEMENTWISE_BWD, KILN_ACT_GELU_TANH, 1},
    {"swiglu bwd", KILN_OP_GATED_BWD, KILN_ACT_SILU, 0},
};

typedef struct bufset {
    void *t[5]; /* op tensors: inputs then outputs */
    void *bias, *dbias, *ws;
} bufset;

static int n_in(kiln_op op) { return op == KILN_OP_ELEMENTWISE_FWD ? 1 : op == KILN_OP_GATED_BWD ? 3 : 2; }
static int n_out(kiln_op op) { return op == KILN_OP_GATED_BWD ? 2 : 1; }

static kiln_status run(const bench_case *c, kiln_dtype dt, int64_t rows, int64_t cols, const bufset *b, size_t ws_bytes)
{
    const int64_t n = rows * cols;
    switch (c->op) {
    case KILN_OP_ELEMENTWISE_FWD:
        return kiln_elementwise_fwd(dt, c->act, rows, cols, b->t[0], 1.0f, c->bias ? b->bias : NULL, b->t[1], NULL);
    case KILN_OP_ELEMENTWISE_BWD:
        return kiln_elementwise_bwd(dt, c->act, rows, cols, b->t[0], b->t[1], 1.0f, c->bias ? b->bias : NULL, b->t[2],
                                    c->bias ? b->dbias : NULL, b->ws, ws_bytes, NULL);
    case KILN_OP_GATED_FWD: return kiln_gated_fwd(dt, c->act, n, b->t[0], b->t[1], b->t[2], NULL);
    case KILN_OP_GATED_BWD: return kiln_gated_bwd(dt, c->act, n, b->t[0], b->t[1], b->t[2], b->t[3], b->t[4], NULL);
    default: break;
    }
    return KILN_STATUS_NOT_SUPPORTED;
}

typedef struct run_ctx {
    const bench_case *c;
    kiln_dtype dt;
    int64_t rows, cols;
    const bufset *sets;
    int nsets;
    size_t ws_bytes;
} run_ctx;

static kiln_status run_rotating(void *p, int i)
{
    const run_ctx *r = p;
    return run(r->c, r->dt, r->rows, r->cols, &r->sets[i % r->nsets], r->ws_bytes);
}

/* Relative error of the first output against the reference on the first
 * `sample` elements (whole rows), from the buffers of set 0. */
static double check_sample(const bench_case *c, kiln_dtype dt, int64_t cols, const bufset *b, int64_t sample)
{
    const int nin = n_in(c->op);
    double *h[4];
    for (int k = 0; k <= nin; k++) h[k] = bench_download(b->t[k], sample, dt);
    double *hb = bench_download(b->bias, cols, dt), *ref = malloc((size_t)sample * sizeof(double));
    for (int64_t i = 0; i < sample; i++) {
        const double bias = c->bias ? hb[i % cols] : 0, a = h[0][i];
        switch (c->op) {
        case KILN_OP_ELEMENTWISE_FWD: ref[i] = ref_act(c->act, a + bias); break;
        case KILN_OP_ELEMENTWISE_BWD: ref[i] = a * ref_act_grad(c->act, h[1][i] + bias); break;
        case KILN_OP_GATED_FWD: ref[i] = ref_act(c->act, a) * h[1][i]; break;
        default: ref[i] = a * h[2][i] * ref_act_grad(c->act, h[1][i]); break;
        }
    }
    const double err = bench_rel_err(h[nin], ref, sample);
    for (int k = 0; k <= nin; k++) free(h[k]);
    free(hb);
    free(ref);
    return err;
}

int main(int argc, char **argv)
{
    int64_t n = (int64_t)64 << 20, cols = 4096;
    int iters = 50, all_archs = 0;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--f16")) dt = KILN_DTYPE_F16;
        else if (!strcmp(argv[i], "--f32")) dt = KILN_DTYPE_F32;
        else if (!strcmp(argv[i], "--all-archs")) all_archs = 1;
        else {
            fprintf(stderr, "usage: %s [--n N] [--cols C] [--iters K] [--f16|--f32] [--all-archs]\n", argv[0]);
            return 2;
        }
    }
    if (n % cols) {
        fprintf(stderr, "--n must be a multiple of --cols\n");
        return 2;
    }
    const int64_t rows = n / cols;
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int cc = prop.major * 10 + prop.minor;
    const size_t es = bench_dtype_size(dt), bytes = (size_t)n * es;
    const double copy = bench_copy_ceiling(bytes, iters);
    printf("device %s (sm_%d, %d SMs, L2 %d MB); %s, %lld elements (%lld x %lld); copy ceiling %.0f GB/s\n", prop.name,
           cc, prop.multiProcessorCount, prop.l2CacheSize >> 20, kiln_dtype_name(dt), (long long)n, (long long)rows,
           (long long)cols, copy);
    printf("BENCH op=copy dtype=%s n=%lld GBps=%.1f device=\"%s\"\n", kiln_dtype_name(dt), (long long)n, copy, prop.name);

    /* Enough sets that one run's inputs are not in L2 from the run before. */
    const int nsets = bench_sets_for(bytes, prop.l2CacheSize);
    size_t ws_bytes = 0;
    KCHECK(kiln_elementwise_bwd_workspace_size(dt, rows, cols, 1, &ws_bytes));
    bufset *sets = calloc((size_t)nsets, sizeof(bufset));
    for (int s = 0; s < nsets; s++) {
        for (int k = 0; k < 5; k++) {
            CHECK(cudaMalloc(&sets[s].t[k], bytes));
            bench_fill_random(sets[s].t[k], n, dt, 1000u * (uint64_t)s + (uint64_t)k + 1, -3, 3);
        }
        CHECK(cudaMalloc(&sets[s].bias, (size_t)cols * es));
        CHECK(cudaMalloc(&sets[s].dbias, (size_t)cols * es));
        CHECK(cudaMalloc(&sets[s].ws, ws_bytes));
        bench_fill_random(sets[s].bias, cols, dt, 77u + (uint64_t)s, -1, 1);
    }

    printf("%-26s %-44s %9s %9s %7s %9s\n", "op", "variant", "ms", "GB/s", "copy", "rel_err");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const bench_case *c = &cases[ci];
        const double moved = (double)(n_in(c->op) + n_out(c->op)) * (double)bytes +
                             (c->bias ? (c->op == KILN_OP_ELEMENTWISE_BWD ? 2.0 : 1.0) * (double)cols * (double)es : 0);
        for (int i = -1; i < kiln_variant_count(); i++) {
            kiln_variant_info v;
            if (i >= 0) {
                KCHECK(kiln_variant_get(i, &v));
                if (!all_archs || v.op != c->op || v.act != c->act || v.dtype != dt ||
                    !kiln_variant_runs_on(&kiln_variant_table[i], cc))
                    continue;
                KCHECK(kiln_force_variant(v.name));
            }
            run_ctx rc = {c, dt, rows, cols, sets, nsets, ws_bytes};
            const float ms = bench_time_ms(run_rotating, &rc, iters);
            const double err = check_sample(c, dt, cols, &sets[(iters * BENCH_BATCH - 1) % nsets], cols * 64 < n ? cols * 64 : n);
            const double gbs = moved / (ms * 1e-3) / 1e9;
            const char *name = kiln_last_variant();
            printf("%-26s %-44s %9.4f %9.1f %6.1f%% %9.2e%s\n", c->label, name, ms, gbs, 100 * gbs / copy, err,
                   i < 0 ? " (selected)" : "");
            printf("BENCH op=\"%s\" variant=%s selected=%d dtype=%s n=%lld cols=%lld ms=%.5f GBps=%.1f frac_copy=%.3f rel_err=%.2e\n",
                   c->label, name, i < 0, kiln_dtype_name(dt), (long long)n, (long long)cols, ms, gbs, gbs / copy, err);
            KCHECK(kiln_force_variant(NULL));
        }
    }
    for (int s = 0; s < nsets; s++) {
        for (int k = 0; k < 5; k++) CHECK(cudaFree(sets[s].t[k]));
        CHECK(cudaFree(sets[s].bias));
        CHECK(cudaFree(sets[s].dbias));
        CHECK(cudaFree(sets[s].ws));
    }
    free(sets);
    return 0;
}
