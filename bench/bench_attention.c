/*
 * bench_attention: TFLOP/s of the attention forward, per head dim, mask and
 * variant.
 *
 *   bench_attention [--iters K] [--f16] [--all-archs] [--seq S] [--hdim D] [--only prefill|varlen|decode]
 *
 * Prefill: head dims 64, 128 and 256 (or --hdim's), batch × heads filling
 * the GPU (4 × 16 at seq 4096, scaled so batch·heads·seq stays 262144),
 * BSHD, heads_q = heads_kv. FLOPs: 4·seq_q·seq_k·head_dim per (batch,
 * head), halved for causal (the half computed).
 * Varlen: a packed batch of 8 sequences of mixed lengths (VARLEN_LENS,
 * 16384 rows in all, the longest first), 16 heads, head dim 128 (or
 * --hdim's), cu_seqlens, none and causal; FLOPs summed per sequence.
 * Decode: one query row per (batch, head), head dim 128, BHSD K and V of
 * 32768 keys, batch 64 × 32 heads (the K and V reads alone: 34 GB), then
 * batch 1 and 4 with and without the split workspace; GB/s of K and V read
 * once.
 * Method as the other benches (bench_util.h): median of samples of
 * back-to-back runs. Each case is checked against a double reference on a
 * few query rows of the first (batch, head) before it is timed.
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_util.h"
#include "runtime/variant.h"
#include "tests/ref_attention.h"

typedef struct run_ctx {
    kiln_dtype dt;
    kiln_attention_params p;
} run_ctx;

static kiln_status run(void *ctx, int i)
{
    (void)i;
    const run_ctx *r = ctx;
    return kiln_attention_fwd(r->dt, &r->p, NULL);
}

/* ‖O − ref‖/‖ref‖ over `rows` query rows (the last ones: they see the most
 * keys under causal) of batch 0, head 0. */
static double check(run_ctx *r, int rows)
{
    KCHECK(run(r, 0));
    CHECK(cudaDeviceSynchronize());
    const kiln_attention_params *p = &r->p;
    const int d = p->head_dim, sq = p->seq_q, sk = p->seq_k, first = sq - rows;
    double *q = malloc(sizeof(double) * (size_t)rows * d), *o = malloc(sizeof(double) * (size_t)rows * d);
    double *k = malloc(sizeof(double) * (size_t)sk * d), *v = malloc(sizeof(double) * (size_t)sk * d);
    double *ref = malloc(sizeof(double) * (size_t)rows * d);
    /* Row s of head 0 starts at s·seq stride; gather d elements a row. */
    for (int s = 0; s < sk; s++) {
        double *kr = bench_download((const char *)p->k + (size_t)s * p->k_stride[1] * 2, d, r->dt);
        double *vr = bench_download((const char *)p->v + (size_t)s * p->v_stride[1] * 2, d, r->dt);
        memcpy(k + (size_t)s * d, kr, sizeof(double) * (size_t)d);
        memcpy(v + (size_t)s * d, vr, sizeof(double) * (size_t)d);
        free(kr), free(vr);
    }
    for (int s = 0; s < rows; s++) {
        double *qr = bench_download((const char *)p->q + (size_t)(first + s) * p->q_stride[1] * 2, d, r->dt);
        double *orow = bench_download((const char *)p->o + (size_t)(first + s) * p->o_stride[1] * 2, d, r->dt);
        memcpy(q + (size_t)s * d, qr, sizeof(double) * (size_t)d);
        memcpy(o + (size_t)s * d, orow, sizeof(double) * (size_t)d);
        free(qr), free(orow);
    }
    /* The last `rows` queries against all keys: seq_q' = rows keeps the
     * bottom-right alignment (shift seq_k - rows for query first + i'). */
    ref_attention(rows, sk, 1, 1, d, q, k, v, d, d, d, d, p->scale, p->causal ? -1 : p->window_left,
                  p->causal ? 0 : p->window_right, ref, d, d, NULL);
    const double err = bench_rel_err(o, ref, (int64_t)rows * d);
    free(q), free(k), free(v), free(o), free(ref);
    return err;
}

/* n random values: a 16M-element random run, repeated to fill (the decode
 * tensors are too large to draw on the host; the bench times bytes). */
static void fill_tiled(void *dev, int64_t n, kiln_dtype dt, uint64_t seed)
{
    const int64_t chunk = n < (1 << 24) ? n : (1 << 24);
    bench_fill_random(dev, chunk, dt, seed, -1, 1);
    for (int64_t have = chunk; have < n;) {
        const int64_t m = have < n - have ? have : n - have;
        CHECK(cudaMemcpy((char *)dev + have * 2, dev, (size_t)m * 2, cudaMemcpyDeviceToDevice));
        have += m;
    }
}

/* The varlen batch's sequence lengths: the longest first, so check()'s
 * batch 0 is a whole sequence of seq_q = seq_k rows. */
static const int VARLEN_LENS[] = {4096, 512, 2048, 1024, 3072, 256, 1280, 4096};
enum { VARLEN_N = sizeof VARLEN_LENS / sizeof VARLEN_LENS[0] };

static void varlen(kiln_dtype dt, int iters, int d)
{
    const int heads = 16;
    int32_t cu[VARLEN_N + 1] = {0};
    char lens[128] = "";
    for (int i = 0; i < VARLEN_N; i++) {
        cu[i + 1] = cu[i] + VARLEN_LENS[i];
        snprintf(lens + strlen(lens), sizeof lens - strlen(lens), "%s%d", i ? "," : "", VARLEN_LENS[i]);
    }
    const int64_t total = cu[VARLEN_N], n = total * heads * d;
    void *q, *k, *v, *o, *dcu;
    CHECK(cudaMalloc(&q, (size_t)n * 2));
    CHECK(cudaMalloc(&k, (size_t)n * 2));
    CHECK(cudaMalloc(&v, (size_t)n * 2));
    CHECK(cudaMalloc(&o, (size_t)n * 2));
    CHECK(cudaMalloc(&dcu, sizeof cu));
    CHECK(cudaMemcpy(dcu, cu, sizeof cu, cudaMemcpyHostToDevice));
    bench_fill_random(q, n, dt, 7, -1, 1);
    bench_fill_random(k, n, dt, 8, -1, 1);
    bench_fill_random(v, n, dt, 9, -1, 1);
    const int64_t st[3] = {0, (int64_t)heads * d, d};
    for (int causal = 0; causal <= 1; causal++) {
        run_ctx rc = {dt, {VARLEN_N, VARLEN_LENS[0], VARLEN_LENS[0], heads, heads, d, q, k, v, o, {st[0], st[1], st[2]},
                           {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                           (float)(1.0 / sqrt((double)d)), causal, -1, -1, dcu, dcu, NULL}};
        double flops = 0.0;
        for (int i = 0; i < VARLEN_N; i++)
            flops += 4.0 * heads * (double)VARLEN_LENS[i] * VARLEN_LENS[i] * d * (causal ? 0.5 : 1.0);
        const double err = check(&rc, 4);
        const float ms = bench_time_ms(run, &rc, iters);
        const double tf = flops / (ms * 1e-3) / 1e12;
        printf("%-10s %5d %-32s %9.4f %9.1f %9.2e  varlen %s\n", causal ? "causal" : "none", d, kiln_last_variant(), ms,
               tf, err, lens);
        printf("BENCH op=attention_varlen mask=%s hdim=%d variant=%s dtype=%s heads=%d lens=%s ms=%.5f TFLOPs=%.1f "
               "rel_err=%.2e\n",
               causal ? "causal" : "none", d, kiln_last_variant(), kiln_dtype_name(dt), heads, lens, ms, tf, err);
    }
    CHECK(cudaFree(q));
    CHECK(cudaFree(k));
    CHECK(cudaFree(v));
    CHECK(cudaFree(o));
    CHECK(cudaFree(dcu));
}

static void decode(kiln_dtype dt, int iters, int batch, int heads, int seq_k, int use_workspace)
{
    const int d = 128;
    const int64_t nq = (int64_t)batch * heads * d, nkv = (int64_t)batch * heads * seq_k * d;
    void *q, *k, *v, *o, *ws = NULL;
    CHECK(cudaMalloc(&q, (size_t)nq * 2));
    CHECK(cudaMalloc(&o, (size_t)nq * 2));
    CHECK(cudaMalloc(&k, (size_t)nkv * 2));
    CHECK(cudaMalloc(&v, (size_t)nkv * 2));
    bench_fill_random(q, nq, dt, 4, -1, 1);
    fill_tiled(k, nkv, dt, 5);
    fill_tiled(v, nkv, dt, 6);
    const int64_t qs[3] = {(int64_t)heads * d, (int64_t)heads * d, d};
    const int64_t ks[3] = {(int64_t)heads * seq_k * d, d, (int64_t)seq_k * d};
    run_ctx rc = {dt, {batch, 1, seq_k, heads, heads, d, q, k, v, o, {qs[0], qs[1], qs[2]}, {ks[0], ks[1], ks[2]},
                       {ks[0], ks[1], ks[2]}, {qs[0], qs[1], qs[2]}, (float)(1.0 / sqrt((double)d)), 0, -1, -1, NULL,
                       NULL, NULL, NULL, 0}};
    size_t bytes = 0;
    if (use_workspace) {
        KCHECK(kiln_attention_fwd_workspace(dt, &rc.p, &bytes));
        if (bytes) CHECK(cudaMalloc(&ws, bytes));
        rc.p.workspace = ws, rc.p.workspace_bytes = bytes;
    }
    const double err = check(&rc, 1);
    const float ms = bench_time_ms(run, &rc, iters);
    const double gbps = 2.0 * nkv * 2 / (ms * 1e-3) / 1e9;
    printf("%-10s %5d %-32s %9.4f %9.1f %9.2e  batch %d heads %d keys %d workspace %zu B\n", "decode", d,
           kiln_last_variant(), ms, gbps, err, batch, heads, seq_k, bytes);
    printf("BENCH op=attention_decode hdim=%d variant=%s dtype=%s batch=%d heads=%d seq_k=%d workspace=%zu ms=%.5f "
           "GBps=%.1f rel_err=%.2e\n",
           d, kiln_last_variant(), kiln_dtype_name(dt), batch, heads, seq_k, bytes, ms, gbps, err);
    CHECK(cudaFree(q));
    CHECK(cudaFree(o));
    CHECK(cudaFree(k));
    CHECK(cudaFree(v));
    if (ws) CHECK(cudaFree(ws));
}

int main(int argc, char **argv)
{
    int iters = 30, all_archs = 0, seq = 4096, hdim = 0;
    const char *only = NULL;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seq") && i + 1 < argc) seq = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hdim") && i + 1 < argc) hdim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--f16")) dt = KILN_DTYPE_F16;
        else if (!strcmp(argv[i], "--all-archs")) all_archs = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--iters K] [--seq S] [--hdim D] [--f16] [--all-archs] [--only prefill|varlen|decode]\n",
                    argv[0]);
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int cc = prop.major * 10 + prop.minor;
    printf("device %s (sm_%d, %d SMs); %s, seq %d\n", prop.name, cc, prop.multiProcessorCount, kiln_dtype_name(dt), seq);
    if (hdim < 0 || hdim > 256 || seq < 1) {
        fprintf(stderr, "--hdim takes 1 to 256 (got %d), --seq at least 1 (got %d)\n", hdim, seq);
        return 2;
    }
    const int dims[] = {hdim ? hdim : 64, 128, 256}, n_dims = hdim ? 1 : 3;
    const int bh = 262144 / seq, heads = 16, batch = bh / heads > 0 ? bh / heads : 1;
    printf("%-10s %5s %-32s %9s %9s %9s\n", "mask", "hdim", "variant", "ms", "TFLOP/s", "rel_err");
    for (int di = 0; di < n_dims && !(only && strcmp(only, "prefill")); di++) {
        const int d = dims[di];
        const int64_t n = (int64_t)batch * seq * heads * d;
        void *q, *k, *v, *o;
        CHECK(cudaMalloc(&q, (size_t)n * 2));
        CHECK(cudaMalloc(&k, (size_t)n * 2));
        CHECK(cudaMalloc(&v, (size_t)n * 2));
        CHECK(cudaMalloc(&o, (size_t)n * 2));
        bench_fill_random(q, n, dt, 1, -1, 1);
        bench_fill_random(k, n, dt, 2, -1, 1);
        bench_fill_random(v, n, dt, 3, -1, 1);
        const int64_t st[3] = {(int64_t)seq * heads * d, (int64_t)heads * d, d};
        for (int causal = 0; causal <= 1; causal++) {
            run_ctx rc = {dt, {batch, seq, seq, heads, heads, d, q, k, v, o, {st[0], st[1], st[2]},
                               {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                               (float)(1.0 / sqrt((double)d)), causal, -1, -1, NULL, NULL, NULL}};
            const double flops = 4.0 * batch * heads * (double)seq * seq * d * (causal ? 0.5 : 1.0);
            for (int i = -1; i < kiln_variant_count(); i++) {
                if (i >= 0) {
                    const kiln_variant *vt = &kiln_variant_table[i];
                    if (!all_archs || vt->op != KILN_OP_ATTENTION_FWD || vt->dtype != dt || vt->shape_key != d ||
                        !kiln_variant_runs_on(vt, cc))
                        continue;
                    KCHECK(kiln_force_variant(vt->name));
                }
                const double err = check(&rc, 4);
                const float ms = bench_time_ms(run, &rc, iters);
                const double tf = flops / (ms * 1e-3) / 1e12;
                printf("%-10s %5d %-32s %9.4f %9.1f %9.2e%s\n", causal ? "causal" : "none", d, kiln_last_variant(), ms,
                       tf, err, i < 0 ? " (selected)" : "");
                printf("BENCH op=attention mask=%s hdim=%d variant=%s selected=%d dtype=%s batch=%d heads=%d seq=%d "
                       "ms=%.5f TFLOPs=%.1f rel_err=%.2e\n",
                       causal ? "causal" : "none", d, kiln_last_variant(), i < 0, kiln_dtype_name(dt), batch, heads, seq,
                       ms, tf, err);
                KCHECK(kiln_force_variant(NULL));
            }
        }
        CHECK(cudaFree(q));
        CHECK(cudaFree(k));
        CHECK(cudaFree(v));
        CHECK(cudaFree(o));
    }
    if (!only || !strcmp(only, "varlen")) varlen(dt, iters, hdim ? hdim : 128);
    if (!only || !strcmp(only, "decode")) {
        decode(dt, iters, 64, 32, 32768, 1);
        for (int b = 1; b <= 4; b *= 4)
            for (int ws = 0; ws <= 1; ws++) decode(dt, iters, b, 32, 32768, ws);
    }
    return 0;
}
