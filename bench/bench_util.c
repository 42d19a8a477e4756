/*
 * bench_util.c: see bench_util.h.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_util.h"
#include "tests/half.h"

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of n samples (sorts them in place). */
static float median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof(float), cmp_float);
    return v[n / 2];
}

/* One sample of BENCH_BATCH runs, in ms a run, between events e0 and e1. */
static float sample_ms(bench_run_fn run, void *ctx, int s, cudaEvent_t e0, cudaEvent_t e1)
{
    float ms;
    CHECK(cudaEventRecord(e0, NULL));
    for (int k = 0; k < BENCH_BATCH; k++) KCHECK(run(ctx, s * BENCH_BATCH + k));
    CHECK(cudaEventRecord(e1, NULL));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / BENCH_BATCH;
}

float bench_time_ms(bench_run_fn run, void *ctx, int iters)
{
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 5; i++) KCHECK(run(ctx, i));
    float *ms = malloc(sizeof(float) * (size_t)iters);
    if (!ms) exit(1);
    for (int s = 0; s < iters; s++) ms[s] = sample_ms(run, ctx, s, e0, e1);
    const float med = median(ms, iters);
    free(ms);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return med;
}

double bench_time_pair_ms(bench_run_fn run_a, void *ctx_a, bench_run_fn run_b, void *ctx_b, int iters, float *ms_a,
                          float *ms_b)
{
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 5; i++) KCHECK(run_a(ctx_a, i));
    for (int i = 0; i < 5; i++) KCHECK(run_b(ctx_b, i));
    float *a = malloc(sizeof(float) * 3 * (size_t)iters);
    if (!a) exit(1);
    float *b = a + iters, *r = b + iters;
    for (int s = 0; s < iters; s++) {
        if (s % 2 == 0) {
            a[s] = sample_ms(run_a, ctx_a, s, e0, e1);
            b[s] = sample_ms(run_b, ctx_b, s, e0, e1);
        } else {
            b[s] = sample_ms(run_b, ctx_b, s, e0, e1);
            a[s] = sample_ms(run_a, ctx_a, s, e0, e1);
        }
        r[s] = b[s] / a[s];
    }
    *ms_a = median(a, iters);
    *ms_b = median(b, iters);
    const double ratio = median(r, iters);
    free(a);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return ratio;
}

typedef struct copy_ctx {
    void *a, *b;
    size_t bytes;
} copy_ctx;

static kiln_status copy_run(void *p, int i)
{
    (void)i;
    const copy_ctx *c = p;
    return cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice, NULL) == cudaSuccess ? KILN_STATUS_SUCCESS
                                                                                               : KILN_STATUS_CUDA_ERROR;
}

double bench_copy_ceiling(size_t bytes, int iters)
{
    copy_ctx c = {NULL, NULL, bytes};
    CHECK(cudaMalloc(&c.a, bytes));
    CHECK(cudaMalloc(&c.b, bytes));
    CHECK(cudaMemset(c.a, 1, bytes));
    const float ms = bench_time_ms(copy_run, &c, iters);
    CHECK(cudaFree(c.a));
    CHECK(cudaFree(c.b));
    return 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
}

size_t bench_dtype_size(kiln_dtype dtype) { return dtype == KILN_DTYPE_F32 ? 4 : 2; }

void bench_fill_random(void *dev, int64_t n, kiln_dtype dtype, uint64_t seed, double lo, double hi)
{
    const size_t es = bench_dtype_size(dtype);
    unsigned char *h = malloc((size_t)n * es);
    if (!h) exit(1);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const float v = (float)(lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0);
        if (dtype == KILN_DTYPE_F32) memcpy(h + i * 4, &v, 4);
        else {
            const uint16_t q = dtype == KILN_DTYPE_F16 ? f32_to_f16(v) : f32_to_bf16(v);
            memcpy(h + i * 2, &q, 2);
        }
    }
    CHECK(cudaMemcpy(dev, h, (size_t)n * es, cudaMemcpyHostToDevice));
    free(h);
}

double bench_load(const void *host, int64_t i, kiln_dtype dtype)
{
    const unsigned char *h = host;
    if (dtype == KILN_DTYPE_F32) {
        float f;
        memcpy(&f, h + i * 4, 4);
        return f;
    }
    uint16_t q;
    memcpy(&q, h + i * 2, 2);
    return dtype == KILN_DTYPE_F16 ? f16_to_f32(q) : bf16_to_f32(q);
}

int bench_sets_for(size_t bytes_per_set, int l2_bytes)
{
    return bytes_per_set >= 2 * (size_t)l2_bytes ? 2 : (int)(4 * (size_t)l2_bytes / bytes_per_set) + 2;
}

double *bench_download(const void *dev, int64_t n, kiln_dtype dtype)
{
    const size_t es = bench_dtype_size(dtype);
    unsigned char *h = malloc((size_t)n * es);
    double *v = malloc((size_t)n * sizeof(double));
    if (!h || !v) {
        fprintf(stderr, "bench_download: out of host memory\n");
        exit(1);
    }
    CHECK(cudaMemcpy(h, dev, (size_t)n * es, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) v[i] = bench_load(h, i, dtype);
    free(h);
    return v;
}

double bench_rel_err(const double *got, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return isfinite(num) && isfinite(den) ? sqrt(num / den) : INFINITY;
}
