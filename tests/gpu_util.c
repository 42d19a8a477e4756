/*
 * gpu_util.c: see gpu_util.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/gpu_util.h"
#include "tests/half.h"
#include "tests/par.h"

int gpu_available(char *why, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, n, "no CUDA device (%s)", cudaGetErrorString(e));
        return 0;
    }
    if (count == 0) {
        snprintf(why, n, "no CUDA device");
        return 0;
    }
    return 1;
}

uint64_t test_seed(void)
{
    const char *s = getenv("KILN_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    tap_diag("seed %llu (replay with KILN_SEED=%llu)", (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

static uint64_t next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rng_uniform(rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next(r) >> 11) * (1.0 / 9007199254740992.0));
}

dbuf dbuf_alloc(kiln_dtype dtype, int64_t n, int64_t offset)
{
    dbuf b;
    b.dtype = dtype;
    b.n = n;
    b.es = dtype == KILN_DTYPE_F32 ? 4 : dtype == KILN_DTYPE_E4M3 || dtype == KILN_DTYPE_E5M2 ? 1 : 2;
    b.offset = offset;
    const size_t total = (size_t)(n + offset + 2 * GUARD_ELEMS) * b.es;
    CUDA_CHECK(cudaMalloc((void **)&b.base, total));
    b.ptr = b.base + (size_t)(GUARD_ELEMS + offset) * b.es;
    dbuf_poison(&b);
    return b;
}

void dbuf_free(dbuf *b)
{
    CUDA_CHECK(cudaFree(b->base));
    b->base = NULL;
    b->ptr = NULL;
}

void dbuf_upload(dbuf *b, double *v)
{
    unsigned char *h = malloc((size_t)b->n * b->es);
    if (!h) tap_bail("out of host memory");
    for (int64_t i = 0; i < b->n; i++) {
        const float f = (float)v[i];
        if (b->es == 1) { /* FP8: rounded from the double itself, saturating */
            const int e4 = b->dtype == KILN_DTYPE_E4M3;
            h[i] = e4 ? f64_to_e4m3(v[i]) : f64_to_e5m2(v[i]);
            v[i] = e4 ? e4m3_to_f64(h[i]) : e5m2_to_f64(h[i]);
        } else if (b->dtype == KILN_DTYPE_F32) {
            memcpy(h + i * 4, &f, 4);
            v[i] = f;
        } else {
            uint16_t q = b->dtype == KILN_DTYPE_F16 ? f32_to_f16(f) : f32_to_bf16(f);
            memcpy(h + i * 2, &q, 2);
            v[i] = b->dtype == KILN_DTYPE_F16 ? f16_to_f32(q) : bf16_to_f32(q);
        }
    }
    CUDA_CHECK(cudaMemcpy(b->ptr, h, (size_t)b->n * b->es, cudaMemcpyHostToDevice));
    free(h);
}

void dbuf_download(const dbuf *b, double *v)
{
    unsigned char *h = malloc((size_t)b->n * b->es);
    if (!h) tap_bail("out of host memory");
    CUDA_CHECK(cudaMemcpy(h, b->ptr, (size_t)b->n * b->es, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < b->n; i++) {
        if (b->es == 1) {
            v[i] = b->dtype == KILN_DTYPE_E4M3 ? e4m3_to_f64(h[i]) : e5m2_to_f64(h[i]);
        } else if (b->dtype == KILN_DTYPE_F32) {
            float f;
            memcpy(&f, h + i * 4, 4);
            v[i] = f;
        } else {
            uint16_t q;
            memcpy(&q, h + i * 2, 2);
            v[i] = b->dtype == KILN_DTYPE_F16 ? f16_to_f32(q) : bf16_to_f32(q);
        }
    }
    free(h);
}

void dbuf_poison(dbuf *b)
{
    CUDA_CHECK(cudaMemset(b->base, 0xff, (size_t)(b->n + b->offset + 2 * GUARD_ELEMS) * b->es));
}

static int all_ff(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xff) return 0;
    return 1;
}

int dbuf_guards_intact(const dbuf *b)
{
    const size_t before = (size_t)(GUARD_ELEMS + b->offset) * b->es, after = (size_t)GUARD_ELEMS * b->es;
    unsigned char *h = malloc(before > after ? before : after);
    if (!h) tap_bail("out of host memory");
    CUDA_CHECK(cudaMemcpy(h, b->base, before, cudaMemcpyDeviceToHost));
    int ok = all_ff(h, before);
    CUDA_CHECK(cudaMemcpy(h, (unsigned char *)b->ptr + (size_t)b->n * b->es, after, cudaMemcpyDeviceToHost));
    ok = ok && all_ff(h, after);
    free(h);
    return ok;
}

err compare(const double *out, const double *ref, int64_t n)
{
    err e = {0, 0, 0};
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(out[i]) || !isfinite(ref[i])) {
            e.rel = INFINITY;
            e.max_abs = INFINITY;
            return e;
        }
        const double d = out[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        if (fabs(d) > e.max_abs) e.max_abs = fabs(d);
        if (fabs(ref[i]) > e.ref_max) e.ref_max = fabs(ref[i]);
    }
    e.rel = den > 0 ? sqrt(num / den) : sqrt(num);
    return e;
}

double tol_rel(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: return 2e-6;
    case KILN_DTYPE_F16: return 1e-3;
    case KILN_DTYPE_BF16: return 8e-3;
    case KILN_DTYPE_E4M3: return 0.125; /* twice the unit roundoff, as above: 2·2⁻⁴ */
    case KILN_DTYPE_E5M2: return 0.25;  /* 2·2⁻³ */
    }
    return 0;
}

double tol_abs(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: return 1e-6;
    case KILN_DTYPE_F16: return 1e-3;
    case KILN_DTYPE_BF16: return 8e-3;
    case KILN_DTYPE_E4M3: return 0.125;
    case KILN_DTYPE_E5M2: return 0.25;
    }
    return 0;
}

int within_tolerance(err e, kiln_dtype dtype)
{
    const double rt = tol_rel(dtype);
    return e.max_abs <= tol_abs(dtype) || (e.rel <= rt && e.max_abs <= 4 * rt * (e.ref_max > 1 ? e.ref_max : 1));
}

int within_tolerance_k(err e, kiln_dtype dtype, double k)
{
    const double rt = k * tol_rel(dtype);
    return e.max_abs <= k * tol_abs(dtype) || (e.rel <= rt && e.max_abs <= 4 * rt * (e.ref_max > 1 ? e.ref_max : 1));
}

int finished(kiln_status st, const char *what)
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

/* KILN_TEST_SHARD "i/n": *index and *count (0 and 1 when unset). */
static void shard(int *index, int *count)
{
    static int i = -1, n = 1;
    if (i < 0) {
        const char *e = getenv("KILN_TEST_SHARD");
        i = 0;
        if (e && *e) {
            char *end;
            const long a = strtol(e, &end, 10);
            const long b = *end == '/' ? strtol(end + 1, &end, 10) : 0;
            if (*end != '\0' || b < 1 || b > 1000 || a < 0 || a >= b)
                tap_bail("KILN_TEST_SHARD=%s: want i/n with 0 <= i < n", e);
            i = (int)a, n = (int)b;
        }
    }
    *index = i, *count = n;
}

int gpu_shard_first(void)
{
    int i, n;
    shard(&i, &n);
    return i == 0;
}

int gpu_sweep(const sweep *s, rng *r, int *tested)
{
    const char *filter = getenv("KILN_TEST_FILTER");
    char why[256];
    const int gpu = gpu_available(why, sizeof why);
    int cc = 0, listed = 0, admitted = 0, si, sn;
    shard(&si, &sn);
    *tested = 0;
    if (gpu) {
        struct cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        cc = prop.major * 10 + prop.minor;
        tap_diag("device: %s, sm_%d, %d SMs", prop.name, cc, prop.multiProcessorCount);
        /* Shards started in the same second may read the same clock seed:
         * each draws from its own stream. */
        r->s = test_seed() + (uint64_t)si;
    }
    if (sn > 1)
        tap_diag("shard %d/%d of the %s variants, inputs from seed + %d (replay with the seed and KILN_TEST_SHARD=%d/%d)",
                 si, sn, s->family, si, si, sn);
    const double t0 = par_now(), ref0 = par_seconds();
    double t_ptx = 0, t_sass = 0, t_max = 0;
    int n_ptx = 0;
    const char *slowest = "";
    for (int i = 0; i < kiln_variant_count(); i++) {
        kiln_variant_info v;
        if (kiln_variant_get(i, &v) != KILN_STATUS_SUCCESS) tap_bail("kiln_variant_get(%d): %s", i, kiln_last_error());
        if (!s->match(&v) || (filter && !strstr(v.name, filter))) continue;
        if (admitted++ % sn != si) continue;
        listed++;
        if (!gpu) {
            tap_skip(why, "%s", v.name);
            continue;
        }
        const kiln_variant *kv = &kiln_variant_table[i];
        if (!kiln_variant_runs_on(kv, cc)) {
            char reason[64];
            snprintf(reason, sizeof reason, "carries no code for sm_%d", cc);
            tap_skip(reason, "%s", v.name);
            continue;
        }
        const double tv = par_now();
        if (kiln_force_variant(v.name) != KILN_STATUS_SUCCESS) tap_bail("%s", kiln_last_error());
        s->run(&v);
        tap_ok(strcmp(kiln_last_variant(), v.name) == 0, "%s ran as forced (last variant %s)", v.name,
               kiln_last_variant());
        kiln_force_variant(NULL);
        (*tested)++;
        /* As kiln_variant_runs_on decides: SASS of the same major arch, else PTX. */
        const int sass = kv->sass_arch != 0 && cc / 10 == kv->sass_arch / 10 && cc >= kv->sass_arch;
        const double dt = par_now() - tv;
        if (sass) {
            t_sass += dt;
        } else {
            t_ptx += dt;
            n_ptx++;
        }
        if (dt > t_max) t_max = dt, slowest = kv->name;
    }
    tap_diag("%d of %d %s variants tested on the GPU", *tested, listed, s->family);
    if (*tested > 0)
        tap_diag("%s sweep: %.1f s; %d variants from PTX (the JIT) %.1f s, %d from SASS %.1f s; threaded references "
                 "%.1f s (%d threads); slowest %s %.2f s",
                 s->family, par_now() - t0, n_ptx, t_ptx, *tested - n_ptx, t_sass, par_seconds() - ref0,
                 par_threads(), slowest, t_max);
    return cc;
}
