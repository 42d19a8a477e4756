/*
 * bench_linear: TFLOP/s of kiln's linear + activation against cuBLASLt in the
 * same process (its bias + GELU epilogue, and the plain GEMM alone).
 *
 *   bench_linear [--iters K] [--f16] [--fp8 | --no-fp8] [--only MxNxK]
 *
 * Shapes (m × n × k): 8192 × 8192 × 8192, 16384 × 4096 × 1024 and
 * 128 × 4096 × 4096 with bias + gelu_tanh; then the gated SwiGLU on
 * 8192 × 4096 (each weight) × 4096, and decode-sized 1 × 4096 × 4096 and
 * 16 × 4096 × 4096. bf16 in and out. FLOPs: 2·m·n·k per weight. The
 * bias + gelu_tanh rows also time kiln and cuBLASLt + GELU_BIAS in turn
 * (`in_turn_vs_cublaslt=`, as the FP8 rows below).
 * Then FP8 (--fp8: only these; --no-fp8: none): e4m3 in, bf16 out, the
 * first three shapes and 16 × 4096 × 4096 with bias + gelu_tanh, and the
 * first two plain (no bias, no activation: the work of a plain
 * `torch._scaled_mm`), scales per tensor, rowwise and in blocks (1 × 128
 * of X, 128 × 128 of W), beside cuBLASLt's FP8 matmul with the same scales
 * (bench_case_fp8; a plain row's ratio is against cuBLASLt plain), and
 * then kiln and cuBLASLt's same work timed again in turn
 * (bench_time_pair_ms: a sample of each back to back; the median of the
 * pairs' ratios, `in_turn_vs_cublaslt=`, is their ratio at the clock both
 * meet). Their table rows name the scaling after the shape (/tensor, /row,
 * /block); their BENCH lines carry
 * dtype=e4m3 out=bf16 scaling=tensor|rowwise|block. Without an FP8
 * variant for this GPU, kiln's columns are nan (the reason on stderr).
 * Buffer sets rotate so the weights of one run are not in L2 from the last
 * (bench_util.h: median of samples of back-to-back runs, events). Each kiln
 * case is checked against a double reference on four rows before it is
 * timed, and cuBLASLt's output against kiln's.
 * Then other epilogues on 8192³, 16384 × 4096 × 1024 and 1000 × 8192 × 4096
 * (m off the 128-row tiles: a token count), bf16 in and e4m3
 * in with per-tensor scales (--fp8: e4m3 alone, --no-fp8: bf16 alone): + bias + residual
 * into bf16 beside cuBLASLt's BIAS epilogue with beta 1 and C = the
 * residual, plain into f32 beside cuBLASLt plain into f32, and + residual
 * into f32 beside cuBLASLt plain with beta 1, each with its in-turn ratio
 * (bench_case_epi).
 * Last, on sm_90: the host's cost of a call (median CPU time of
 * kiln_linear_fwd on a small shape) as selected, then forced to the sm_90a
 * variant, which builds TMA tensor maps, and to the sm_90 one, which does
 * not.
 * --only MxNxK runs that shape alone (and no host cost): for a profiler.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>

#include "bench/bench_util.h"
#include "tests/half.h"
#include "tests/ref_elementwise.h"
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

/* cuBLASLt's side of a case, TN in its column-major view (Yᵀ = W·Xᵀ): [0]
 * with the bias + GELU epilogue, [1] plain; have[w] 0 where it has no
 * algorithm. */
typedef struct lt_plan {
    cublasLtMatmulDesc_t desc[2];
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo[2];
    int have[2];
} lt_plan;

/* The two descriptors (f32 compute, W transposed); the caller adds its own
 * attributes (FP8 scales) before lt_plan_finish. */
static void lt_plan_descs(lt_plan *pl)
{
    const cublasOperation_t trans = CUBLAS_OP_T, no = CUBLAS_OP_N;
    for (int w = 0; w < 2; w++) {
        LT_CHECK(cublasLtMatmulDescCreate(&pl->desc[w], CUBLAS_COMPUTE_32F, CUDA_R_32F));
        LT_CHECK(cublasLtMatmulDescSetAttribute(pl->desc[w], CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
        LT_CHECK(cublasLtMatmulDescSetAttribute(pl->desc[w], CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
    }
}

/* The epilogue of [0], epi (its bias pointer read from bias_slot, a pointer
 * variable), the layouts of W and X in ab and Y in cd, and each descriptor's
 * algorithm within ws_bytes. */
static void lt_plan_finish(lt_plan *pl, cublasLtHandle_t lt, const lin_case *c, cudaDataType_t ab, cudaDataType_t cd,
                           cublasLtEpilogue_t epi, const void *bias_slot, size_t ws_bytes, const char *what)
{
    LT_CHECK(cublasLtMatmulDescSetAttribute(pl->desc[0], CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT_CHECK(cublasLtMatmulDescSetAttribute(pl->desc[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_slot, sizeof(void *)));
    LT_CHECK(cublasLtMatrixLayoutCreate(&pl->la, ab, (uint64_t)c->k, (uint64_t)c->n, c->k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&pl->lb, ab, (uint64_t)c->k, (uint64_t)c->m, c->k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&pl->lc, cd, (uint64_t)c->n, (uint64_t)c->m, c->n));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                  sizeof ws_bytes));
    for (int w = 0; w < 2; w++) {
        cublasLtMatmulHeuristicResult_t h;
        int found = 0;
        const cublasStatus_t st =
            cublasLtMatmulAlgoGetHeuristic(lt, pl->desc[w], pl->la, pl->lb, pl->lc, pl->lc, pref, 1, &h, &found);
        pl->have[w] = st == CUBLAS_STATUS_SUCCESS && found > 0;
        if (pl->have[w]) pl->algo[w] = h.algo;
        else
            fprintf(stderr, "cuBLASLt: no %s %s algorithm for %lld x %lld x %lld (status %d)\n", what,
                    w ? "plain" : epi == CUBLASLT_EPILOGUE_BIAS ? "BIAS" : "GELU_BIAS", (long long)c->m, (long long)c->n,
                    (long long)c->k, (int)st);
    }
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
}

static void lt_plan_destroy(lt_plan *pl)
{
    for (int w = 0; w < 2; w++) LT_CHECK(cublasLtMatmulDescDestroy(pl->desc[w]));
    LT_CHECK(cublasLtMatrixLayoutDestroy(pl->la));
    LT_CHECK(cublasLtMatrixLayoutDestroy(pl->lb));
    LT_CHECK(cublasLtMatrixLayoutDestroy(pl->lc));
}

typedef struct run_ctx {
    kiln_dtype dt;
    int sets;
    kiln_linear_params p[MAX_SETS];
    /* cuBLASLt */
    cublasLtHandle_t lt;
    lt_plan pl;
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
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias,
                                                sizeof(p->bias)));
    /* Column-major view: Yᵀ (n × m) = W (as k × n, transposed) · Xᵀ (k × m). */
    LT_CHECK(cublasLtMatmul(r->lt, r->pl.desc[w], &one, p->w, r->pl.la, p->x, r->pl.lb, &zero, p->y, r->pl.lc, p->y,
                            r->pl.lc, &r->pl.algo[w], r->lt_ws, r->lt_ws_bytes, NULL));
    return KILN_STATUS_SUCCESS;
}

static void lt_setup(run_ctx *r, const lin_case *c)
{
    lt_plan_descs(&r->pl);
    lt_plan_finish(&r->pl, r->lt, c, r->dt == KILN_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F,
                   r->dt == KILN_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F, CUBLASLT_EPILOGUE_GELU_BIAS, &r->p[0].bias,
                   r->lt_ws_bytes, kiln_dtype_name(r->dt));
    if (!r->pl.have[0] || !r->pl.have[1]) exit(1);
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
    double lt_tf[2] = {NAN, NAN}, lt_err = NAN, in_turn = NAN;
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
        /* kiln and cuBLASLt + GELU_BIAS again, in turn (bench_time_pair_ms):
         * their ratio at the clock both meet. */
        float ms_kiln, ms_lt;
        r.which = 0;
        in_turn = bench_time_pair_ms(run_kiln, &r, run_lt, &r, iters, &ms_kiln, &ms_lt);
        lt_plan_destroy(&r.pl);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
    printf("%-22s %-10s %-40s %9.4f %8.1f %10.1f %10.1f %8.2f %9.2e %9.2e\n", shape, c->gated ? "swiglu" : "gelu_tanh",
           variant, ms, tf, lt_tf[0], lt_tf[1], tf / lt_tf[0], err, lt_err);
    printf("BENCH op=%s act=%s m=%lld n=%lld k=%lld dtype=%s variant=%s workspace=%zu sets=%d ms=%.5f TFLOPs=%.1f "
           "cublaslt_epilogue_TFLOPs=%.1f cublaslt_plain_TFLOPs=%.1f rel_err=%.2e vs_cublaslt=%.2e "
           "in_turn_vs_cublaslt=%.3f\n",
           c->gated ? "gated_linear" : "linear", kiln_activation_name(c->act), (long long)c->m, (long long)c->n,
           (long long)c->k, kiln_dtype_name(dt), variant, ws_bytes, r.sets, ms, tf, lt_tf[0], lt_tf[1], err, lt_err,
           in_turn);
    fflush(stdout);
    for (int s = 0; s < r.sets; s++)
        for (int j = 0; j < 6; j++)
            if (bufs[s][j]) CHECK(cudaFree(bufs[s][j]));
    if (ws) CHECK(cudaFree(ws));
}

/* ---- FP8: e4m3 X and W, bf16 out, f32 bias, per-tensor, rowwise or block scales ----
 * The data: e4m3 codes of values uniform in [-448, 448] (what quantizing
 * uniform data with its amax gives), scales near 1/448 (rowwise: varying by
 * row), so the real values are about uniform in [-1, 1] as in the bf16
 * cases. The f32 bias holds bf16 values, so cuBLASLt's bf16 bias (its bias
 * type for a bf16 D) is the same. cuBLASLt runs TN (e4m3 A = W, B = X, bf16
 * C / D), its scales through A_SCALE_POINTER / B_SCALE_POINTER, rowwise as
 * its OUTER_VEC_32F scale mode, blocks as BLK128x128_32F (W) and
 * VEC128_32F (X); FAST_ACCUM off (it promotes, as kiln does).
 * Where cuBLASLt has no algorithm for a case, its columns say nan. */
enum { FP8_TENSOR, FP8_ROWWISE, FP8_BLOCK };
static const char *const fp8_scaling_names[3] = {"tensor", "rowwise", "block"};

typedef struct fp8_ctx {
    int sets, scaling; /* FP8_TENSOR, FP8_ROWWISE or FP8_BLOCK */
    kiln_linear_params p[MAX_SETS];
    void *lt_bias[MAX_SETS]; /* bf16 copy of set s's bias */
    cublasLtHandle_t lt;
    lt_plan pl;
    void *lt_ws;
    size_t lt_ws_bytes;
    int which;
} fp8_ctx;

static kiln_status run_kiln_fp8(void *ctx, int i)
{
    const fp8_ctx *r = ctx;
    return kiln_linear_fwd(KILN_DTYPE_E4M3, KILN_DTYPE_BF16, &r->p[i % r->sets], NULL);
}

static kiln_status run_lt_fp8(void *ctx, int i)
{
    fp8_ctx *r = ctx;
    const int s = i % r->sets, w = r->which;
    const kiln_linear_params *p = &r->p[s];
    const float one = 1.0f, zero = 0.0f;
    if (w == 0)
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[0], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &r->lt_bias[s],
                                                sizeof r->lt_bias[s]));
    const cublasStatus_t st = cublasLtMatmul(r->lt, r->pl.desc[w], &one, p->w, r->pl.la, p->x, r->pl.lb, &zero, p->y,
                                             r->pl.lc, p->y, r->pl.lc, &r->pl.algo[w], r->lt_ws, r->lt_ws_bytes, NULL);
    return st == CUBLAS_STATUS_SUCCESS ? KILN_STATUS_SUCCESS : KILN_STATUS_CUDA_ERROR;
}

/* Descriptors and algorithms, the scales per tensor or rowwise; have[w] 0
 * where cuBLASLt finds none. */
static void lt_setup_fp8(fp8_ctx *r, const lin_case *c)
{
    const int32_t modes[3][2] = {
        {CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F},
        {CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F},
        {CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
    };
    const int32_t mode_a = modes[r->scaling][0], mode_b = modes[r->scaling][1]; /* A = W, B = X */
    lt_plan_descs(&r->pl);
    for (int w = 0; w < 2; w++) {
        /* Every set shares set 0's scales (a few bytes; their cache state does not matter). */
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[w], CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &r->p[0].w_scale,
                                                sizeof r->p[0].w_scale));
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[w], CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &r->p[0].x_scale,
                                                sizeof r->p[0].x_scale));
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[w], CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a,
                                                sizeof mode_a));
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[w], CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b,
                                                sizeof mode_b));
    }
    lt_plan_finish(&r->pl, r->lt, c, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLASLT_EPILOGUE_GELU_BIAS, &r->lt_bias[0],
                   r->lt_ws_bytes,
                   r->scaling == FP8_BLOCK ? "FP8 block" : r->scaling == FP8_ROWWISE ? "FP8 rowwise" : "FP8 per-tensor");
}

/* n e4m3 codes of values about uniform in [-448, 448], from a fixed seed. */
static void fill_e4m3(unsigned char *h, int64_t n, uint64_t seed)
{
    static unsigned char table[4096];
    static int made = 0;
    if (!made) {
        for (int i = 0; i < 4096; i++) table[i] = f64_to_e4m3(-448.0 + 896.0 * (i + 0.5) / 4096);
        made = 1;
    }
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = table[s >> 52];
    }
}

/* ‖Y − ref‖/‖ref‖ over four rows of set 0, the reference in double from the
 * host copies of its codes, scales (in kiln's layouts) and bias. */
static double check_fp8(const fp8_ctx *r, const lin_case *c, const unsigned char *x, const unsigned char *w,
                        const float *xs, const float *ws, const float *bias)
{
    double dec[256];
    for (int i = 0; i < 256; i++) dec[i] = e4m3_to_f64((uint8_t)i);
    const int64_t rows[4] = {0, c->m / 3, c->m / 2, c->m - 1};
    double num = 0, den = 0;
    for (int i = 0; i < 4; i++) {
        const int64_t row = rows[i];
        double *y = bench_download((const char *)r->p[0].y + (size_t)(row * c->n) * 2, c->n, KILN_DTYPE_BF16);
        const unsigned char *xr = x + row * c->k;
        for (int64_t j = 0; j < c->n; j++) {
            const unsigned char *wr = w + j * c->k;
            double s = 0;
            if (r->scaling == FP8_BLOCK) {
                const int64_t kbs = c->k / 128;
                for (int64_t t = 0; t < c->k; t++)
                    s += dec[xr[t]] * dec[wr[t]] * xs[t / 128 * c->m + row] * ws[j / 128 * kbs + t / 128];
            } else {
                const int rw = r->scaling == FP8_ROWWISE;
                for (int64_t t = 0; t < c->k; t++) s += dec[xr[t]] * dec[wr[t]];
                s *= (double)xs[rw ? row : 0] * ws[rw ? j : 0];
            }
            const double ref = ref_act(c->act, s + bias[j]);
            num += (y[j] - ref) * (y[j] - ref);
            den += ref * ref;
        }
        free(y);
    }
    return isfinite(num) ? sqrt(num / den) : INFINITY;
}

static void bench_case_fp8(const lin_case *c, int scaling, int iters, int l2, cublasLtHandle_t lt, void *lt_ws,
                           size_t lt_ws_bytes)
{
    static const kiln_scaling modes[3] = {KILN_SCALING_TENSOR, KILN_SCALING_ROWWISE, KILN_SCALING_BLOCK};
    const size_t set_bytes = (size_t)(c->m * c->k + c->n * c->k) + (size_t)(c->m * c->n) * 2 + (size_t)c->n * 6;
    fp8_ctx r = {0};
    r.scaling = scaling;
    r.sets = bench_sets_for(set_bytes, l2);
    if (r.sets > MAX_SETS) r.sets = MAX_SETS;
    /* Host: set 0's codes (the check reads them), the scales, the bias. */
    unsigned char *hx = malloc((size_t)(c->m * c->k)), *hw = malloc((size_t)(c->n * c->k));
    const int64_t kbs = c->k / 128; /* the shapes' k are multiples of 128 */
    const int64_t nxs = scaling == FP8_BLOCK ? kbs * c->m : scaling == FP8_ROWWISE ? c->m : 1;
    const int64_t nws = scaling == FP8_BLOCK ? (c->n + 127) / 128 * kbs : scaling == FP8_ROWWISE ? c->n : 1;
    float *xs = malloc(sizeof(float) * (size_t)nxs), *ws = malloc(sizeof(float) * (size_t)nws);
    float *bias = malloc(sizeof(float) * (size_t)c->n);
    uint16_t *bias16 = malloc(sizeof(uint16_t) * (size_t)c->n);
    if (!hx || !hw || !xs || !ws || !bias || !bias16) {
        fprintf(stderr, "bench_linear: out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < nxs; i++) xs[i] = (float)((1.0 + 0.5 * (double)(i % 7) / 7) / 448);
    for (int64_t j = 0; j < nws; j++) ws[j] = (float)((1.0 + 0.5 * (double)(j % 5) / 5) / 448);
    uint64_t s = 77;
    const int plain = c->act == KILN_ACT_NONE; /* no bias either; the reference's is 0 */
    for (int64_t j = 0; j < c->n; j++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        bias16[j] = f32_to_bf16(plain ? 0.0f : (float)(-1.0 + 2.0 * (double)(s >> 11) / 9007199254740992.0));
        bias[j] = bf16_to_f32(bias16[j]);
    }
    void *dxs, *dws, *bufs[MAX_SETS][4] = {{0}}; /* x, w, bias (f32), y */
    CHECK(cudaMalloc(&dxs, sizeof(float) * (size_t)nxs));
    CHECK(cudaMalloc(&dws, sizeof(float) * (size_t)nws));
    CHECK(cudaMemcpy(dxs, xs, sizeof(float) * (size_t)nxs, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dws, ws, sizeof(float) * (size_t)nws, cudaMemcpyHostToDevice));
    unsigned char *tmp = malloc((size_t)(c->m * c->k > c->n * c->k ? c->m * c->k : c->n * c->k));
    if (!tmp) exit(1);
    for (int st = 0; st < r.sets; st++) {
        unsigned char *x = st ? tmp : hx;
        CHECK(cudaMalloc(&bufs[st][0], (size_t)(c->m * c->k)));
        fill_e4m3(x, c->m * c->k, 1000u * (unsigned)st + 1);
        CHECK(cudaMemcpy(bufs[st][0], x, (size_t)(c->m * c->k), cudaMemcpyHostToDevice));
        unsigned char *w = st ? tmp : hw;
        CHECK(cudaMalloc(&bufs[st][1], (size_t)(c->n * c->k)));
        fill_e4m3(w, c->n * c->k, 1000u * (unsigned)st + 2);
        CHECK(cudaMemcpy(bufs[st][1], w, (size_t)(c->n * c->k), cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&bufs[st][2], sizeof(float) * (size_t)c->n));
        CHECK(cudaMemcpy(bufs[st][2], bias, sizeof(float) * (size_t)c->n, cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&r.lt_bias[st], sizeof(uint16_t) * (size_t)c->n));
        CHECK(cudaMemcpy(r.lt_bias[st], bias16, sizeof(uint16_t) * (size_t)c->n, cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&bufs[st][3], (size_t)(c->m * c->n) * 2));
        kiln_linear_params p = {c->m, c->n, c->k, bufs[st][0], 0, bufs[st][1], 0, plain ? NULL : bufs[st][2], NULL, 0, NULL, NULL,
                                0, bufs[st][3], 0, c->act, NULL, 0,
                                modes[scaling], dxs, dws, NULL};
        r.p[st] = p;
    }
    free(tmp);
    const double flops = 2.0 * c->m * c->n * c->k;
    /* kiln: a build or GPU without FP8 variants gets nan and the reason. */
    size_t ws_bytes = 0;
    void *kws = NULL; /* the split of k's workspace, where the call asks for one (small m) */
    kiln_status kst = kiln_linear_fwd_workspace(KILN_DTYPE_E4M3, KILN_DTYPE_BF16, &r.p[0], &ws_bytes);
    if (kst == KILN_STATUS_SUCCESS && ws_bytes > 0) {
        CHECK(cudaMalloc(&kws, ws_bytes));
        for (int s = 0; s < r.sets; s++) r.p[s].workspace = kws, r.p[s].workspace_bytes = ws_bytes;
    }
    if (kst == KILN_STATUS_SUCCESS) kst = run_kiln_fp8(&r, 0);
    char variant[128];
    double ms = NAN, tf = NAN, err = NAN;
    if (kst == KILN_STATUS_SUCCESS) {
        CHECK(cudaDeviceSynchronize());
        snprintf(variant, sizeof variant, "%s", kiln_last_variant());
        err = check_fp8(&r, c, hx, hw, xs, ws, bias);
        ms = bench_time_ms(run_kiln_fp8, &r, iters);
        tf = flops / (ms * 1e-3) / 1e12;
    } else {
        fprintf(stderr, "kiln FP8 %lldx%lldx%lld: %s\n", (long long)c->m, (long long)c->n, (long long)c->k,
                kiln_last_error());
        snprintf(variant, sizeof variant, "none");
    }
    double lt_tf[2] = {NAN, NAN}, lt_err = NAN;
    r.lt = lt, r.lt_ws = lt_ws, r.lt_ws_bytes = lt_ws_bytes;
    lt_setup_fp8(&r, c);
    const int64_t cmp = c->m * c->n > 1 << 22 ? 1 << 22 : c->m * c->n;
    double *mine = kst == KILN_STATUS_SUCCESS ? bench_download(r.p[0].y, cmp, KILN_DTYPE_BF16) : NULL;
    for (int w = plain; w < 2; w++) { /* a plain case: cuBLASLt plain alone, the output compared with it */
        if (!r.pl.have[w]) continue;
        r.which = w;
        if (run_lt_fp8(&r, 0) != KILN_STATUS_SUCCESS) {
            fprintf(stderr, "cuBLASLt: the FP8 %s matmul failed (%s scales)\n", w ? "plain" : "GELU_BIAS",
                    fp8_scaling_names[scaling]);
            continue;
        }
        CHECK(cudaDeviceSynchronize());
        if (w == plain && mine) {
            double *theirs = bench_download(r.p[0].y, cmp, KILN_DTYPE_BF16);
            lt_err = bench_rel_err(mine, theirs, cmp);
            free(theirs);
        }
        lt_tf[w] = flops / (bench_time_ms(run_lt_fp8, &r, iters) * 1e-3) / 1e12;
    }
    /* kiln and cuBLASLt's same work (plain, or GELU_BIAS) again, in turn
     * (bench_time_pair_ms): their ratio at the clock both meet, where the
     * figures above let each run at the clock the power management gives it
     * alone. */
    double in_turn = NAN;
    if (kst == KILN_STATUS_SUCCESS && r.pl.have[plain] && !isnan(lt_tf[plain])) { /* which 1: plain, 0: GELU_BIAS */
        float ms_kiln, ms_lt;
        r.which = plain;
        in_turn = bench_time_pair_ms(run_kiln_fp8, &r, run_lt_fp8, &r, iters, &ms_kiln, &ms_lt);
    }
    free(mine);
    lt_plan_destroy(&r.pl);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld/%s", (long long)c->m, (long long)c->n, (long long)c->k,
             scaling == FP8_BLOCK ? "block" : scaling == FP8_ROWWISE ? "row" : "tensor");
    printf("%-22s %-10s %-40s %9.4f %8.1f %10.1f %10.1f %8.2f %9.2e %9.2e\n", shape, kiln_activation_name(c->act),
           variant, ms, tf, lt_tf[0], lt_tf[1], tf / lt_tf[plain], err, lt_err);
    printf("BENCH op=linear act=%s m=%lld n=%lld k=%lld dtype=e4m3 out=bf16 scaling=%s variant=%s workspace=%zu "
           "sets=%d ms=%.5f TFLOPs=%.1f cublaslt_epilogue_TFLOPs=%.1f cublaslt_plain_TFLOPs=%.1f rel_err=%.2e "
           "vs_cublaslt=%.2e in_turn_vs_cublaslt=%.3f\n",
           kiln_activation_name(c->act), (long long)c->m, (long long)c->n, (long long)c->k,
           fp8_scaling_names[scaling], variant, ws_bytes, r.sets, ms, tf, lt_tf[0], lt_tf[1], err, lt_err, in_turn);
    fflush(stdout);
    for (int st = 0; st < r.sets; st++) {
        for (int j = 0; j < 4; j++) CHECK(cudaFree(bufs[st][j]));
        CHECK(cudaFree(r.lt_bias[st]));
    }
    CHECK(cudaFree(dxs));
    CHECK(cudaFree(dws));
    CHECK(cudaFree(kws));
    free(hx), free(hw), free(xs), free(ws), free(bias), free(bias16);
}

/* ---- Other epilogues: a residual, an f32 output ----
 * bf16 in, or e4m3 with per-tensor scales (1/448 for X and W, the data as
 * in the FP8 cases). "residual": y = X·Wᵀ + b + r into bf16 (r in bf16, y a
 * buffer of its own), beside cuBLASLt's BIAS epilogue with beta 1 and C = r;
 * "f32_out": plain into f32, beside cuBLASLt's plain matmul into an f32 D.
 * "residual_f32": y = X·Wᵀ + r into f32 (r in f32), beside cuBLASLt plain
 * with beta 1 and C = r.
 * Each timed alone, then the two in turn (bench_time_pair_ms); kiln checked
 * on four rows against the double reference, cuBLASLt against kiln. */
enum { EPI_RESIDUAL, EPI_F32, EPI_RESIDUAL_F32 };
static const char *const epi_names[3] = {"residual", "f32_out", "residual_f32"};

typedef struct epi_ctx {
    kiln_dtype in, out;
    int sets, kind;
    kiln_linear_params p[MAX_SETS];
    void *lt_bias[MAX_SETS]; /* set s's bias in bf16, for cuBLASLt */
    cublasLtHandle_t lt;
    lt_plan pl;
    void *lt_ws;
    size_t lt_ws_bytes;
} epi_ctx;

static kiln_status run_kiln_epi(void *ctx, int i)
{
    const epi_ctx *r = ctx;
    return kiln_linear_fwd(r->in, r->out, &r->p[i % r->sets], NULL);
}

/* cuBLASLt: [0] BIAS with C = the residual and beta 1 (residual), [1] plain
 * (f32_out; residual_f32 with C = the residual and beta 1). */
static kiln_status run_lt_epi(void *ctx, int i)
{
    epi_ctx *r = ctx;
    const int s = i % r->sets, res = r->kind != EPI_F32, biased = r->kind == EPI_RESIDUAL;
    const int plan = biased ? 0 : 1; /* r->pl's BIAS plan, or its plain one */
    const kiln_linear_params *p = &r->p[s];
    const float one = 1.0f, beta = res ? 1.0f : 0.0f;
    if (biased)
        LT_CHECK(cublasLtMatmulDescSetAttribute(r->pl.desc[plan], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &r->lt_bias[s],
                                                sizeof r->lt_bias[s]));
    const cublasStatus_t st =
        cublasLtMatmul(r->lt, r->pl.desc[plan], &one, p->w, r->pl.la, p->x, r->pl.lb, &beta, res ? p->residual : p->y,
                       r->pl.lc, p->y, r->pl.lc, &r->pl.algo[plan], r->lt_ws, r->lt_ws_bytes, NULL);
    if (st != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "cuBLASLt: cublasLtMatmul returned %d\n", (int)st);
    return st == CUBLAS_STATUS_SUCCESS ? KILN_STATUS_SUCCESS : KILN_STATUS_CUDA_ERROR;
}

/* n inputs from the device as doubles: bf16, or e4m3 codes times 1/448. */
static double *download_in(const void *dev, int64_t n, int fp8)
{
    if (!fp8) return bench_download(dev, n, KILN_DTYPE_BF16);
    unsigned char *h = malloc((size_t)n);
    double *d = malloc(sizeof(double) * (size_t)n);
    if (!h || !d) {
        fprintf(stderr, "bench_linear: out of host memory\n");
        exit(1);
    }
    CHECK(cudaMemcpy(h, dev, (size_t)n, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) d[i] = e4m3_to_f64(h[i]) / 448;
    free(h);
    return d;
}

static void bench_case_epi(const lin_case *c, kiln_dtype in, int kind, int iters, int l2, cublasLtHandle_t lt,
                           void *lt_ws, size_t lt_ws_bytes)
{
    const int fp8 = in == KILN_DTYPE_E4M3, res = kind != EPI_F32, biased = kind == EPI_RESIDUAL;
    epi_ctx r = {0};
    r.in = in, r.kind = kind, r.out = biased ? KILN_DTYPE_BF16 : KILN_DTYPE_F32;
    const size_t ies = fp8 ? 1 : 2, oes = bench_dtype_size(r.out);
    const size_t set_bytes = (size_t)(c->m * c->k + c->n * c->k) * ies + (size_t)(c->m * c->n) * oes * (res ? 2 : 1);
    r.sets = bench_sets_for(set_bytes, l2);
    if (r.sets > MAX_SETS) r.sets = MAX_SETS;
    float *scales = NULL; /* FP8: X's descale factor, W's 16 bytes on (cuBLASLt wants its pointers 16-byte aligned) */
    if (fp8) {
        const float sc[5] = {1.0f / 448, 0, 0, 0, 1.0f / 448};
        CHECK(cudaMalloc((void **)&scales, sizeof sc));
        CHECK(cudaMemcpy(scales, sc, sizeof sc, cudaMemcpyHostToDevice));
    }
    const int64_t most = c->m * c->k > c->n * c->k ? c->m * c->k : c->n * c->k;
    unsigned char *codes = fp8 ? malloc((size_t)most) : NULL;
    float *bias32 = fp8 ? malloc(sizeof(float) * (size_t)c->n) : NULL;
    if (fp8 && (!codes || !bias32)) exit(1);
    void *bufs[MAX_SETS][5] = {{0}}; /* x, w, kiln's bias (FP8: f32), residual, y */
    for (int s = 0; s < r.sets; s++) {
        const int64_t rows[2] = {c->m, c->n};
        for (int j = 0; j < 2; j++) {
            CHECK(cudaMalloc(&bufs[s][j], (size_t)(rows[j] * c->k) * ies));
            if (fp8) {
                fill_e4m3(codes, rows[j] * c->k, 1000u * (unsigned)s + (unsigned)j + 1);
                CHECK(cudaMemcpy(bufs[s][j], codes, (size_t)(rows[j] * c->k), cudaMemcpyHostToDevice));
            } else {
                bench_fill_random(bufs[s][j], rows[j] * c->k, KILN_DTYPE_BF16, 1000u * (unsigned)s + (unsigned)j, -1,
                                  1);
            }
        }
        if (biased) {
            CHECK(cudaMalloc(&r.lt_bias[s], sizeof(uint16_t) * (size_t)c->n));
            bench_fill_random(r.lt_bias[s], c->n, KILN_DTYPE_BF16, 1000u * (unsigned)s + 3, -1, 1);
            if (fp8) {
                double *b = bench_download(r.lt_bias[s], c->n, KILN_DTYPE_BF16);
                for (int64_t j = 0; j < c->n; j++) bias32[j] = (float)b[j];
                free(b);
                CHECK(cudaMalloc(&bufs[s][2], sizeof(float) * (size_t)c->n));
                CHECK(cudaMemcpy(bufs[s][2], bias32, sizeof(float) * (size_t)c->n, cudaMemcpyHostToDevice));
            }
        }
        if (res) {
            CHECK(cudaMalloc(&bufs[s][3], (size_t)(c->m * c->n) * oes));
            bench_fill_random(bufs[s][3], c->m * c->n, r.out, 1000u * (unsigned)s + 4, -1, 1);
        }
        CHECK(cudaMalloc(&bufs[s][4], (size_t)(c->m * c->n) * oes));
        const void *bias = biased ? (fp8 ? bufs[s][2] : r.lt_bias[s]) : NULL;
        kiln_linear_params p = {c->m, c->n, c->k, bufs[s][0], 0, bufs[s][1], 0, bias, NULL, 0, NULL, bufs[s][3], 0,
                                bufs[s][4], 0, KILN_ACT_NONE, NULL, 0, fp8 ? KILN_SCALING_TENSOR : KILN_SCALING_NONE,
                                fp8 ? scales : NULL, fp8 ? scales + 4 : NULL, NULL, NULL, NULL};
        r.p[s] = p;
    }
    free(codes), free(bias32);
    const double flops = 2.0 * c->m * c->n * c->k;
    size_t ws_bytes = 0;
    void *kws = NULL; /* a split of k's workspace, where the call asks for one */
    KCHECK(kiln_linear_fwd_workspace(in, r.out, &r.p[0], &ws_bytes));
    if (ws_bytes) {
        CHECK(cudaMalloc(&kws, ws_bytes));
        for (int s = 0; s < r.sets; s++) r.p[s].workspace = kws, r.p[s].workspace_bytes = ws_bytes;
    }
    KCHECK(run_kiln_epi(&r, 0));
    CHECK(cudaDeviceSynchronize());
    char variant[128];
    snprintf(variant, sizeof variant, "%s", kiln_last_variant());
    /* ‖y − ref‖/‖ref‖ over four rows of set 0. */
    double num = 0, den = 0;
    {
        const kiln_linear_params *p = &r.p[0];
        double *w = download_in(p->w, c->n * c->k, fp8);
        double *b = biased ? bench_download(r.lt_bias[0], c->n, KILN_DTYPE_BF16) : NULL;
        double *ref = malloc(sizeof(double) * (size_t)c->n);
        const int64_t rows[4] = {0, c->m / 3, c->m / 2, c->m - 1};
        for (int i = 0; i < 4; i++) {
            double *x = download_in((const char *)p->x + (size_t)(rows[i] * c->k) * ies, c->k, fp8);
            double *rr =
                res ? bench_download((const char *)p->residual + (size_t)(rows[i] * c->n) * oes, c->n, r.out) : NULL;
            double *y = bench_download((const char *)p->y + (size_t)(rows[i] * c->n) * oes, c->n, r.out);
            ref_linear_fwd(KILN_ACT_NONE, 1, c->n, c->k, x, c->k, w, c->k, b, NULL, 0, NULL, rr, c->n, ref, c->n);
            for (int64_t j = 0; j < c->n; j++) {
                num += (y[j] - ref[j]) * (y[j] - ref[j]);
                den += ref[j] * ref[j];
            }
            free(x), free(rr), free(y);
        }
        free(w), free(b), free(ref);
    }
    const double err = isfinite(num) ? sqrt(num / den) : INFINITY;
    const float ms = bench_time_ms(run_kiln_epi, &r, iters);
    const double tf = flops / (ms * 1e-3) / 1e12;
    /* cuBLASLt: FP8 scales per tensor, as kiln's. */
    r.lt = lt, r.lt_ws = lt_ws, r.lt_ws_bytes = lt_ws_bytes;
    lt_plan_descs(&r.pl);
    if (fp8)
        for (int w = 0; w < 2; w++) {
            const float *ws_ptr = scales + 4;
            LT_CHECK(cublasLtMatmulDescSetAttribute(r.pl.desc[w], CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &ws_ptr,
                                                    sizeof ws_ptr));
            LT_CHECK(cublasLtMatmulDescSetAttribute(r.pl.desc[w], CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scales,
                                                    sizeof scales));
        }
    lt_plan_finish(&r.pl, lt, c, fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF, biased ? CUDA_R_16BF : CUDA_R_32F,
                   CUBLASLT_EPILOGUE_BIAS, &r.lt_bias[0], lt_ws_bytes, fp8 ? "FP8" : "bf16");
    double lt_tf = NAN, lt_err = NAN, in_turn = NAN;
    if (r.pl.have[biased ? 0 : 1]) { /* the plan run_lt_epi takes */
        const int64_t cmp = c->m * c->n > 1 << 22 ? 1 << 22 : c->m * c->n;
        double *mine = bench_download(r.p[0].y, cmp, r.out);
        if (run_lt_epi(&r, 0) == KILN_STATUS_SUCCESS) {
            CHECK(cudaDeviceSynchronize());
            double *theirs = bench_download(r.p[0].y, cmp, r.out);
            lt_err = bench_rel_err(mine, theirs, cmp);
            free(theirs);
            lt_tf = flops / (bench_time_ms(run_lt_epi, &r, iters) * 1e-3) / 1e12;
            float ms_kiln, ms_lt;
            in_turn = bench_time_pair_ms(run_kiln_epi, &r, run_lt_epi, &r, iters, &ms_kiln, &ms_lt);
        } else {
            fprintf(stderr, "cuBLASLt: the %s %s matmul failed\n", fp8 ? "FP8" : "bf16", epi_names[kind]);
        }
        free(mine);
    }
    lt_plan_destroy(&r.pl);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld/%s", (long long)c->m, (long long)c->n, (long long)c->k,
             fp8 ? "e4m3" : "bf16");
    printf("%-22s %-12s %-38s %9.4f %8.1f %10.1f %10s %8.2f %9.2e %9.2e\n", shape, epi_names[kind], variant, ms, tf,
           lt_tf, "", tf / lt_tf, err, lt_err);
    printf("BENCH op=linear epilogue=%s m=%lld n=%lld k=%lld dtype=%s out=%s variant=%s workspace=%zu sets=%d "
           "ms=%.5f TFLOPs=%.1f cublaslt_TFLOPs=%.1f rel_err=%.2e vs_cublaslt=%.2e in_turn_vs_cublaslt=%.3f\n",
           epi_names[kind], (long long)c->m, (long long)c->n, (long long)c->k, kiln_dtype_name(in),
           kiln_dtype_name(r.out), variant, ws_bytes, r.sets, ms, tf, lt_tf, err, lt_err, in_turn);
    fflush(stdout);
    for (int s = 0; s < r.sets; s++) {
        for (int j = 0; j < 5; j++)
            if (bufs[s][j]) CHECK(cudaFree(bufs[s][j]));
        if (r.lt_bias[s]) CHECK(cudaFree(r.lt_bias[s]));
    }
    if (scales) CHECK(cudaFree(scales));
    if (kws) CHECK(cudaFree(kws));
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The variant host_us(NULL) ran: the selection's. */
static char host_variant[128];

/* Median CPU microseconds of a kiln_linear_fwd call (256 × 256 × 256, bf16)
 * with `variant` forced (NULL: selected); the queue is drained every 50
 * calls so no call waits for room in it. */
static double host_us(const char *variant)
{
    enum { CALLS = 400, N = 256 };
    if (kiln_force_variant(variant) != KILN_STATUS_SUCCESS) { /* not in this build (--//:archs): nan */
        fprintf(stderr, "host cost: %s\n", kiln_last_error());
        return NAN;
    }
    void *x, *w, *y;
    CHECK(cudaMalloc(&x, N * N * 2));
    CHECK(cudaMalloc(&w, N * N * 2));
    CHECK(cudaMalloc(&y, N * N * 2));
    bench_fill_random(x, N * N, KILN_DTYPE_BF16, 1, -1, 1);
    bench_fill_random(w, N * N, KILN_DTYPE_BF16, 2, -1, 1);
    kiln_linear_params p = {N, N, N, x, 0, w, 0, NULL, NULL, 0, NULL, NULL, 0, y, 0, KILN_ACT_GELU_TANH, NULL, 0};
    double t[CALLS];
    for (int i = 0; i < CALLS; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        KCHECK(kiln_linear_fwd(KILN_DTYPE_BF16, KILN_DTYPE_BF16, &p, NULL));
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) * 1e-3;
        if (i % 50 == 49) CHECK(cudaDeviceSynchronize());
    }
    if (!variant) snprintf(host_variant, sizeof host_variant, "%s", kiln_last_variant());
    KCHECK(kiln_force_variant(NULL));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(x));
    CHECK(cudaFree(w));
    CHECK(cudaFree(y));
    qsort(t, CALLS, sizeof t[0], cmp_double);
    return t[CALLS / 2];
}

/* Whether --only (NULL: every shape) names c's m × n × k. */
static int picked(const lin_case *c, const char *only)
{
    char name[64];
    snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)c->m, (long long)c->n, (long long)c->k);
    return !only || !strcmp(name, only);
}

int main(int argc, char **argv)
{
    int iters = 20, run16 = 1, run8 = 1;
    const char *only = NULL;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--f16")) {
            dt = KILN_DTYPE_F16;
        } else if (!strcmp(argv[i], "--fp8")) {
            run16 = 0;
        } else if (!strcmp(argv[i], "--no-fp8")) {
            run8 = 0;
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--iters K] [--f16] [--fp8 | --no-fp8] [--only MxNxK]\n", argv[0]);
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
    for (size_t i = 0; run16 && i < sizeof cases / sizeof cases[0]; i++)
        if (picked(&cases[i], only)) bench_case(&cases[i], dt, iters, prop.l2CacheSize, lt, lt_ws, lt_ws_bytes);
    const lin_case fp8_cases[] = {
        {8192, 8192, 8192, 0, KILN_ACT_GELU_TANH},
        {16384, 4096, 1024, 0, KILN_ACT_GELU_TANH},
        {128, 4096, 4096, 0, KILN_ACT_GELU_TANH},
        {16, 4096, 4096, 0, KILN_ACT_GELU_TANH},
        {8192, 8192, 8192, 0, KILN_ACT_NONE},
        {16384, 4096, 1024, 0, KILN_ACT_NONE},
    };
    if (run8) printf("FP8: e4m3 in, bf16 out, f32 bias; scales per tensor (/tensor), rowwise (/row), blocks (/block)\n");
    for (size_t i = 0; run8 && i < sizeof fp8_cases / sizeof fp8_cases[0]; i++)
        for (int scaling = FP8_TENSOR; scaling <= FP8_BLOCK && picked(&fp8_cases[i], only); scaling++)
            bench_case_fp8(&fp8_cases[i], scaling, iters, prop.l2CacheSize, lt, lt_ws, lt_ws_bytes);
    const lin_case epi_cases[] = {
        {8192, 8192, 8192, 0, KILN_ACT_NONE}, {16384, 4096, 1024, 0, KILN_ACT_NONE}, {1000, 8192, 4096, 0, KILN_ACT_NONE}};
    printf("Other epilogues (bf16, or e4m3 with per-tensor scales, in): + bias + residual into bf16, plain into f32, "
           "+ residual into f32; cuBLASLt: BIAS with beta 1, plain, plain with beta 1\n");
    for (size_t i = 0; i < sizeof epi_cases / sizeof epi_cases[0]; i++)
        for (int fp8 = !run16; fp8 <= run8 && picked(&epi_cases[i], only); fp8++)
            for (int kind = EPI_RESIDUAL; kind <= EPI_RESIDUAL_F32; kind++)
                bench_case_epi(&epi_cases[i], fp8 ? KILN_DTYPE_E4M3 : KILN_DTYPE_BF16, kind, iters, prop.l2CacheSize, lt,
                               lt_ws, lt_ws_bytes);
    if (prop.major == 9 && prop.minor == 0 && !only) {
        const double chosen = host_us(NULL), maps = host_us("linear_fwd_m128_gelu_tanh_bf16_sm90a"),
                     plain = host_us("linear_fwd_m128_gelu_tanh_bf16_sm90");
        printf("host cost of a call (median CPU us, 256^3 bf16): selected (%s) %.2f, forced sm90a (3 tensor maps "
               "built) %.2f, forced sm90 (none) %.2f\n",
               host_variant, chosen, maps, plain);
        printf("HOST op=linear variant=%s us=%.3f\nHOST op=linear variant=sm90a us=%.3f\nHOST op=linear variant=sm90 "
               "us=%.3f\n",
               host_variant, chosen, maps, plain);
    }
    CHECK(cudaFree(lt_ws));
    LT_CHECK(cublasLtDestroy(lt));
    return 0;
}
