/*
 * bench_linear: TFLOP/s of kiln's linear + activation against cuBLASLt in the
 * same process (its bias + GELU epilogue, and the plain GEMM alone).
 *
 *   bench_linear [--iters K] [--f16]
 *
 * Shapes (m × n × k): 8192 × 8192 × 8192, 16384 × 4096 × 1024 and
 * 128 × 4096 × 4096 with bias + gelu_tanh; then the gated SwiGLU on
 * 8192 × 4096 (each weight) × 4096, and decode-sized 1 × 4096 × 4096 and
 * 16 × 4096 × 4096. bf16 in and out. FLOPs: 2·m·n·k per weight.
 * Buffer sets rotate so the weights of one run are not in L2 from the last
 * (bench_util.h: median of samples of back-to-back runs, events). Each kiln
 * case is checked against a double reference on four rows before it is
 * timed, and cuBLASLt's output against kiln's.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <string.h>

#include <cublasLt.h>

#include "bench/bench_util.h"
#include "tests/ref_linear.h"

#define LT_CHECK(call)                                                                  \
    do {                                                                                \
        cublasStatus_t s_ = (call);                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
                    (int)s_);                                                           \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

enum { MAX_SETS = 8 };

typedef struct lin_case {
    int64_t m, n, k;
    int gated;
    kiln_activation act;
} lin_case;

typedef struct run_ctx {
    kiln_dtype dt;
    int sets;
    kiln_linear_params p[MAX_SETS];
    /* cuBLASLt */
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc[2]; /* 0: bias + GELU epilogue, 1: none */
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo[2];
    void *lt_ws;
    size_t lt_ws_bytes;
    int which;
} run_ctx;

static kiln_status run_kiln(void *ctx, int i)
{
    const run_ctx *r = ctx;
    return kiln_linear_fwd(r->dt, r->dt, &r->p[i % r->sets], NULL);
}

static kiln_status run_lt(void *ctx, int i)
{
    run_ctx *r = ctx;
    const kiln_linear_params *p = &r->p[i % r->sets];
    const float one = 1.0f, zero = 0.0f;
    const int w = r->which;
    if (w == 0)
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias,
                                                sizeof(p->bias)));
    /* Column-major view: Yᵀ (n × m) = W (as k × n, transposed) · Xᵀ (k × m). */
    LT_CHECK(cublasLtMatmul(r->lt, r->desc[w], &one, p->w, r->la, p->x, r->lb, &zero, p->y, r->lc, p->y, r->lc,
                            &r->algo[w], r->lt_ws, r->lt_ws_bytes, NULL));
    return KILN_STATUS_SUCCESS;
}

static void lt_setup(run_ctx *r, const lin_case *c)
{
    const cudaDataType_t t = r->dt == KILN_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const cublasOperation_t trans = CUBLAS_OP_T, no = CUBLAS_OP_N;
    for (int w = 0; w < 2; w++) {
        LT_CHECK(cublasLtMatmulDescCreate(&r->desc[w], CUBLAS_COMPUTE_32F, CUDA_R_32F));
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc[w], CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc[w], CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
    }
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc[0], CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &r->p[0].bias,
                                            sizeof(r->p[0].bias)));
    LT_CHECK(cublasLtMatrixLayoutCreate(&r->la, t, (uint64_t)c->k, (uint64_t)c->n, c->k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&r->lb, t, (uint64_t)c->k, (uint64_t)c->m, c->k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&r->lc, t, (uint64_t)c->n, (uint64_t)c->m, c->n));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &r->lt_ws_bytes,
                                                  sizeof r->lt_ws_bytes));
    for (int w = 0; w < 2; w++) {
        cublasLtMatmulHeuristicResult_t h;
        int found = 0;
        LT_CHECK(cublasLtMatmulAlgoGetHeuristic(r->lt, r->desc[w], r->la, r->lb, r->lc, r->lc, pref, 1, &h, &found));
        if (!found) {
            fprintf(stderr, "cuBLASLt: no algorithm for %lld x %lld x %lld\n", (long long)c->m, (long long)c->n,
                    (long long)c->k);
            exit(1);
        }
        r->algo[w] = h.algo;
    }
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
}

static void lt_teardown(run_ctx *r)
{
    for (int w = 0; w < 2; w++) LT_CHECK(cublasLtMatmulDescDestroy(r->desc[w]));
    LT_CHECK(cublasLtMatrixLayoutDestroy(r->la));
    LT_CHECK(cublasLtMatrixLayoutDestroy(r->lb));
    LT_CHECK(cublasLtMatrixLayoutDestroy(r->lc));
}

/* ‖Y − ref‖/‖ref‖ over four rows (first, two inside, last) of set 0. */
static double check(const run_ctx *r, const lin_case *c)
{
    const kiln_linear_params *p = &r->p[0];
    const int64_t rows[4] = {0, c->m / 3, c->m / 2, c->m - 1};
    double *w = bench_download(p->w, c->n * c->k, r->dt);
    double *wu = c->gated ? bench_download(p->w_up, c->n * c->k, r->dt) : NULL;
    double *b = bench_download(p->bias, c->n, r->dt);
    double *bu = c->gated ? bench_download(p->bias_up, c->n, r->dt) : NULL;
    double *ref = malloc(sizeof(double) * (size_t)c->n);
    double num = 0, den = 0;
    for (int i = 0; i < 4; i++) {
        const size_t es = bench_dtype_size(r->dt);
        double *x = bench_download((const char *)p->x + (size_t)(rows[i] * c->k) * es, c->k, r->dt);
        double *y = bench_download((const char *)p->y + (size_t)(rows[i] * c->n) * es, c->n, r->dt);
        ref_linear_fwd(p->act, 1, c->n, c->k, x, c->k, w, c->k, b, wu, c->k, bu, NULL, 0, ref, c->n);
        for (int64_t j = 0; j < c->n; j++) {
            num += (y[j] - ref[j]) * (y[j] - ref[j]);
            den += ref[j] * ref[j];
        }
        free(x);
        free(y);
    }
    free(w), free(wu), free(b), free(bu), free(ref);
    return isfinite(num) ? sqrt(num / den) : INFINITY;
}

static void bench_case(const lin_case *c, kiln_dtype dt, int iters, int l2, cublasLtHandle_t lt, void *lt_ws,
                       size_t lt_ws_bytes)
{
    const size_t es = bench_dtype_size(dt);
    const int weights = c->gated ? 2 : 1;
    const size_t set_bytes = (size_t)(c->m * c->k + weights * c->n * c->k + c->m * c->n + weights * c->n) * es;
    run_ctx r = {0};
    r.dt = dt;
    r.sets = bench_sets_for(set_bytes, l2);
    if (r.sets > MAX_SETS) r.sets = MAX_SETS;
    void *bufs[MAX_SETS][6] = {{0}};
    size_t ws_bytes = 0;
    for (int s = 0; s < r.sets; s++) {
        const int64_t sizes[6] = {c->m * c->k, c->n * c->k, c->gated ? c->n * c->k : 0, c->n, c->gated ? c->n : 0,
                                  c->m * c->n};
        for (int j = 0; j < 6; j++) {
            if (!sizes[j]) continue;
            CHECK(cudaMalloc(&bufs[s][j], (size_t)sizes[j] * es));
            bench_fill_random(bufs[s][j], sizes[j], dt, 1000u * (unsigned)s + (unsigned)j, -1, 1);
        }
        kiln_linear_params p = {c->m, c->n, c->k, bufs[s][0], 0, bufs[s][1], 0, bufs[s][3], bufs[s][2], 0,
                                bufs[s][4], NULL, 0, bufs[s][5], 0, c->act, NULL, 0};
        r.p[s] = p;
        if (s == 0) KCHECK(kiln_linear_fwd_workspace(dt, dt, &p, &ws_bytes));
    }
    void *ws = NULL;
    if (ws_bytes) CHECK(cudaMalloc(&ws, ws_bytes));
    for (int s = 0; s < r.sets; s++) r.p[s].workspace = ws, r.p[s].workspace_bytes = ws_bytes;

    KCHECK(run_kiln(&r, 0));
    CHECK(cudaDeviceSynchronize());
    const char *variant = kiln_last_variant();
    const double err = check(&r, c);
    const float ms = bench_time_ms(run_kiln, &r, iters);
    const double flops = 2.0 * weights * c->m * c->n * c->k;
    const double tf = flops / (ms * 1e-3) / 1e12;
    double lt_tf[2] = {NAN, NAN}, lt_err = NAN;
    if (!c->gated && c->act == KILN_ACT_GELU_TANH) {
        /* cuBLASLt's GELU is the tanh form: its output is compared with kiln's. */
        r.lt = lt, r.lt_ws = lt_ws, r.lt_ws_bytes = lt_ws_bytes;
        lt_setup(&r, c);
        double *mine = bench_download(r.p[0].y, c->m * c->n > 1 << 22 ? 1 << 22 : c->m * c->n, dt);
        r.which = 0;
        run_lt(&r, 0);
        CHECK(cudaDeviceSynchronize());
        double *theirs = bench_download(r.p[0].y, c->m * c->n > 1 << 22 ? 1 << 22 : c->m * c->n, dt);
        lt_err = bench_rel_err(mine, theirs, c->m * c->n > 1 << 22 ? 1 << 22 : c->m * c->n);
        free(mine), free(theirs);
        for (int w = 0; w < 2; w++) {
            r.which = w;
            lt_tf[w] = flops / (bench_time_ms(run_lt, &r, iters) * 1e-3) / 1e12;
        }
        lt_teardown(&r);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
    printf("%-22s %-10s %-40s %9.4f %8.1f %10.1f %10.1f %8.2f %9.2e %9.2e\n", shape, c->gated ? "swiglu" : "gelu_tanh",
           variant, ms, tf, lt_tf[0], lt_tf[1], tf / lt_tf[0], err, lt_err);
    printf("BENCH op=%s act=%s m=%lld n=%lld k=%lld dtype=%s variant=%s workspace=%zu sets=%d ms=%.5f TFLOPs=%.1f "
           "cublaslt_epilogue_TFLOPs=%.1f cublaslt_plain_TFLOPs=%.1f rel_err=%.2e vs_cublaslt=%.2e\n",
           c->gated ? "gated_linear" : "linear", kiln_activation_name(c->act), (long long)c->m, (long long)c->n,
           (long long)c->k, kiln_dtype_name(dt), variant, ws_bytes, r.sets, ms, tf, lt_tf[0], lt_tf[1], err, lt_err);
    fflush(stdout);
    for (int s = 0; s < r.sets; s++)
        for (int j = 0; j < 6; j++)
            if (bufs[s][j]) CHECK(cudaFree(bufs[s][j]));
    if (ws) CHECK(cudaFree(ws));
}

int main(int argc, char **argv)
{
    int iters = 20;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--f16")) {
            dt = KILN_DTYPE_F16;
        } else {
            fprintf(stderr, "usage: %s [--iters K] [--f16]\n", argv[0]);
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("device %s (sm_%d%d, %d SMs, L2 %d MB); %s in and out\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, kiln_dtype_name(dt));
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    const size_t lt_ws_bytes = 32u << 20;
    void *lt_ws;
    CHECK(cudaMalloc(&lt_ws, lt_ws_bytes));
    const lin_case cases[] = {
        {8192, 8192, 8192, 0, KILN_ACT_GELU_TANH}, {16384, 4096, 1024, 0, KILN_ACT_GELU_TANH},
        {128, 4096, 4096, 0, KILN_ACT_GELU_TANH},  {16, 4096, 4096, 0, KILN_ACT_GELU_TANH},
        {1, 4096, 4096, 0, KILN_ACT_GELU_TANH},    {8192, 4096, 4096, 1, KILN_ACT_SILU},
    };
    printf("%-22s %-10s %-40s %9s %8s %10s %10s %8s %9s %9s\n", "m x n x k", "epilogue", "variant", "ms", "TFLOP/s",
           "cuBLASLt+", "cuBLASLt", "ratio", "rel_err", "vs_Lt");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bench_case(&cases[i], dt, iters, prop.l2CacheSize, lt, lt_ws, lt_ws_bytes);
    CHECK(cudaFree(lt_ws));
    LT_CHECK(cublasLtDestroy(lt));
    return 0;
}
