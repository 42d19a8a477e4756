/*
 * bench_attention: TFLOP/s of the attention forward, per head dim, mask and
 * variant.
 *
 *   bench_attention [--iters K] [--f16] [--all-archs] [--seq S] [--hdim D]
 *                   [--batch B] [--only prefill|varlen|decode|fp8|bwd] [--fp8]
 *                   [--bwd] [--mask none|causal] [--no-workspace]
 *
 * Prefill: head dims 64, 128 and 256 (or --hdim's), batch × heads filling
 * the GPU (4 × 16 at seq 4096, scaled so batch·heads·seq stays 262144; or
 * --batch's batch of 16 heads, for shapes whose K and V exceed the L2),
 * BSHD, heads_q = heads_kv, the workspace the call asks for (causal
 * calls: the tile counter; --no-workspace: none, so causal calls run the
 * fixed order, an A/B of the counter in one binary). FLOPs: 4·seq_q·seq_k·head_dim per (batch,
 * head), halved for causal (the half computed).
 * Varlen: a packed batch of 8 sequences of mixed lengths (VARLEN_LENS,
 * 16384 rows in all, the longest first), 16 heads, head dim 128 (or
 * --hdim's), cu_seqlens, none and causal, the workspace the call asks for
 * (sm_90a: the TMA kernel's maps a sequence; --no-workspace: none, the
 * cp.async kernel); FLOPs summed per sequence.
 * Decode: one query row per (batch, head), head dim 128, BHSD K and V of
 * 32768 keys, batch 64 × 32 heads (the K and V reads alone: 34 GB), then
 * batch 1 and 4 with and without the split workspace; GB/s of K and V read
 * once.
 * FP8 (--fp8, the same as --only fp8: these alone): e4m3 Q, K and V, bf16 O,
 * head dims 128 and 256 (or --hdim's), prefill's shapes, none and causal,
 * FLOPs as prefill counts them. The data: e4m3 codes of values uniform in
 * [-1, 1] quantized with their amax (a descale of 1/448 a tensor). Beside
 * each, kiln's bf16 call of the same shape on the same values (the
 * dequantized inputs in bf16), in the same process, and the ratio
 * e4m3 / bf16; then the two again in turn (bench_time_pair_ms: a sample of
 * each back to back, `--iters` pairs) and that ratio as the median over
 * the pairs (in_turn_ratio=): both then run at the same clock, where each
 * alone runs at the clock the power management gives it. Their BENCH
 * lines carry dtype=e4m3 out=bf16 and the bf16 figures (bf16_TFLOPs=).
 * Without an e4m3 variant for this GPU (they are sm_90a code) or in this
 * build, the e4m3 figures are nan (the reason on stderr). --f16 leaves
 * them as they are.
 * Backward (--bwd, the same as --only bwd: these alone): kiln_attention_bwd
 * on prefill's shapes (bf16, or --f16; batch 4 × 16 heads at seq 4096), head
 * dims 64, 128 and 256 (or --hdim's), none and causal, the default
 * (atomic dQ sums) and deterministic modes; O and lse from one
 * kiln_attention_fwd first, dout random; the workspace the call asks for.
 * FLOPs: 2.5 × the forward's (S and dP, then dV, dK and dQ: five
 * products against the forward's two), halved for causal. rel_err: dq of
 * the last 4 query rows of batch 0, head 0 (each row's dq needs that row
 * alone) against ref_attention_bwd. Without a backward variant for this GPU
 * the figures are nan (the reason on stderr).
 * Method as the other benches (bench_util.h): median of samples of
 * back-to-back runs. Each case is checked against a double reference on a
 * few query rows of the first (batch, head) before it is timed (e4m3: the
 * reference of the dequantized inputs).
 * Output: a table, then one `BENCH key=value ...` line per measurement.
 */
#include <math.h>
#include <string.h>

#include "bench/bench_util.h"
#include "runtime/variant.h"
#include "tests/half.h"
#include "tests/ref_attention.h"

/* The masks to run (--mask): bit 0 none, bit 1 causal. */
static int masks = 3;

typedef struct run_ctx {
    kiln_dtype dt;
    kiln_attention_params p;
    float descale[3]; /* e4m3: the host's copies of Q's, K's and V's descales */
} run_ctx;

static kiln_status run(void *ctx, int i)
{
    (void)i;
    const run_ctx *r = ctx;
    return kiln_attention_fwd(r->dt, &r->p, NULL);
}

/* d elements of dtype dt at device address `at`, widened to double into
 * out: e4m3 codes times `descale`, 16-bit values as they are. */
static void load_row(const char *at, int d, kiln_dtype dt, double descale, double *out)
{
    if (dt == KILN_DTYPE_E4M3) {
        unsigned char c[256];
        CHECK(cudaMemcpy(c, at, (size_t)d, cudaMemcpyDeviceToHost));
        for (int e = 0; e < d; e++) out[e] = e4m3_to_f64(c[e]) * descale;
    } else {
        double *row = bench_download(at, d, dt);
        memcpy(out, row, sizeof(double) * (size_t)d);
        free(row);
    }
}

/* ‖O − ref‖/‖ref‖ over `rows` query rows (the last ones: they see the most
 * keys under causal) of batch 0, head 0. */
static double check(run_ctx *r, int rows)
{
    KCHECK(run(r, 0));
    CHECK(cudaDeviceSynchronize());
    const kiln_attention_params *p = &r->p;
    const int d = p->head_dim, sq = p->seq_q, sk = p->seq_k, first = sq - rows;
    const int fp8 = r->dt == KILN_DTYPE_E4M3;
    const size_t es = fp8 ? 1 : 2;                  /* bytes of a Q, K or V element */
    const kiln_dtype od = fp8 ? p->o_dtype : r->dt; /* O's dtype */
    double *q = malloc(sizeof(double) * (size_t)rows * d), *o = malloc(sizeof(double) * (size_t)rows * d);
    double *k = malloc(sizeof(double) * (size_t)sk * d), *v = malloc(sizeof(double) * (size_t)sk * d);
    double *ref = malloc(sizeof(double) * (size_t)rows * d);
    /* Row s of head 0 starts at s·seq stride; gather d elements a row. */
    for (int s = 0; s < sk; s++) {
        load_row((const char *)p->k + (size_t)s * p->k_stride[1] * es, d, r->dt, r->descale[1], k + (size_t)s * d);
        load_row((const char *)p->v + (size_t)s * p->v_stride[1] * es, d, r->dt, r->descale[2], v + (size_t)s * d);
    }
    for (int s = 0; s < rows; s++) {
        load_row((const char *)p->q + (size_t)(first + s) * p->q_stride[1] * es, d, r->dt, r->descale[0],
                 q + (size_t)s * d);
        load_row((const char *)p->o + (size_t)(first + s) * p->o_stride[1] * 2, d, od, 1, o + (size_t)s * d);
    }
    /* The last `rows` queries against all keys: seq_q' = rows keeps the
     * bottom-right alignment (shift seq_k - rows for query first + i'). */
    ref_attention(rows, sk, 1, 1, d, q, k, v, d, d, d, d, p->scale, p->causal ? -1 : p->window_left,
                  p->causal ? 0 : p->window_right, ref, d, d, NULL);
    const double err = bench_rel_err(o, ref, (int64_t)rows * d);
    free(q), free(k), free(v), free(o), free(ref);
    return err;
}

static double check4(void *ctx) { return check(ctx, 4); }

/* A case's figures: nan (variant "none") where it did not run. */
typedef struct timed {
    char variant[128];
    double err, tf;
    float ms;
} timed;

/* A case that may have no variant for this GPU or in this build: when its
 * first run succeeds, checked (chk) and timed; else nan figures and the
 * reason on stderr. */
static timed time_checked(bench_run_fn fn, void *ctx, double (*chk)(void *), int iters, double flops, const char *what,
                          int d)
{
    timed t = {"none", NAN, NAN, NAN};
    if (fn(ctx, 0) == KILN_STATUS_SUCCESS) {
        CHECK(cudaDeviceSynchronize());
        snprintf(t.variant, sizeof t.variant, "%s", kiln_last_variant());
        t.err = chk(ctx);
        t.ms = bench_time_ms(fn, ctx, iters);
        t.tf = flops / (t.ms * 1e-3) / 1e12;
    } else {
        fprintf(stderr, "kiln %s, head dim %d: %s\n", what, d, kiln_last_error());
    }
    return t;
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

static void varlen(kiln_dtype dt, int iters, int d, int use_workspace)
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
        if (!(masks >> causal & 1)) continue;
        run_ctx rc = {dt, {VARLEN_N, VARLEN_LENS[0], VARLEN_LENS[0], heads, heads, d, q, k, v, o, {st[0], st[1], st[2]},
                           {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                           (float)(1.0 / sqrt((double)d)), causal, -1, -1, dcu, dcu, NULL}};
        size_t ws_bytes = 0;
        void *ws = NULL;
        if (use_workspace) KCHECK(kiln_attention_fwd_workspace(dt, &rc.p, &ws_bytes));
        if (ws_bytes) CHECK(cudaMalloc(&ws, ws_bytes));
        rc.p.workspace = ws, rc.p.workspace_bytes = ws_bytes;
        double flops = 0.0;
        for (int i = 0; i < VARLEN_N; i++)
            flops += 4.0 * heads * (double)VARLEN_LENS[i] * VARLEN_LENS[i] * d * (causal ? 0.5 : 1.0);
        const double err = check(&rc, 4);
        const float ms = bench_time_ms(run, &rc, iters);
        const double tf = flops / (ms * 1e-3) / 1e12;
        printf("%-10s %5d %-32s %9.4f %9.1f %9.2e  varlen %s, workspace %zu B\n", causal ? "causal" : "none", d,
               kiln_last_variant(), ms, tf, err, lens, ws_bytes);
        printf("BENCH op=attention_varlen mask=%s hdim=%d variant=%s dtype=%s heads=%d lens=%s workspace=%zu ms=%.5f "
               "TFLOPs=%.1f rel_err=%.2e\n",
               causal ? "causal" : "none", d, kiln_last_variant(), kiln_dtype_name(dt), heads, lens, ws_bytes, ms, tf,
               err);
        if (ws) CHECK(cudaFree(ws));
    }
    CHECK(cudaFree(q));
    CHECK(cudaFree(k));
    CHECK(cudaFree(v));
    CHECK(cudaFree(o));
    CHECK(cudaFree(dcu));
}

/* n e4m3 codes of values about uniform in [-1, 1] quantized with their amax
 * (descale 1/448: the codes about uniform in [-448, 448]), from a fixed seed;
 * bf16 gets the dequantized values, code / 448, in bf16. */
static void fill_e4m3(unsigned char *codes, uint16_t *bf16, int64_t n, uint64_t seed)
{
    static unsigned char table[4096];
    static uint16_t dequant[256];
    static int made = 0;
    if (!made) {
        for (int i = 0; i < 4096; i++) table[i] = f64_to_e4m3(-448.0 + 896.0 * (i + 0.5) / 4096);
        for (int c = 0; c < 256; c++) dequant[c] = f32_to_bf16((float)(e4m3_to_f64((uint8_t)c) * (1.0f / 448)));
        made = 1;
    }
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        codes[i] = table[s >> 52];
        bf16[i] = dequant[codes[i]];
    }
}

/* FP8 prefill: e4m3 Q, K, V (BSHD, rows padded to 16 elements), bf16 O,
 * beside kiln's bf16 call of the same shape on the same values. */
static void fp8(int iters, int batch, int heads, int seq, int d)
{
    const int dp = (d + 15) / 16 * 16; /* e4m3 strides: multiples of 16 */
    const int64_t n = (int64_t)batch * seq * heads * dp;
    unsigned char *codes = malloc((size_t)n);
    uint16_t *h16 = malloc((size_t)n * 2);
    if (!codes || !h16) {
        fprintf(stderr, "bench_attention: out of host memory\n");
        exit(1);
    }
    void *x8[3], *x16[4]; /* Q, K, V in e4m3; Q, K, V, O in bf16 (O shared by both calls) */
    for (int t = 0; t < 3; t++) {
        fill_e4m3(codes, h16, n, 11 + (uint64_t)t);
        CHECK(cudaMalloc(&x8[t], (size_t)n));
        CHECK(cudaMalloc(&x16[t], (size_t)n * 2));
        CHECK(cudaMemcpy(x8[t], codes, (size_t)n, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(x16[t], h16, (size_t)n * 2, cudaMemcpyHostToDevice));
    }
    free(codes), free(h16);
    CHECK(cudaMalloc(&x16[3], (size_t)n * 2));
    const float ds[3] = {1.0f / 448, 1.0f / 448, 1.0f / 448};
    float *dds;
    CHECK(cudaMalloc((void **)&dds, sizeof ds));
    CHECK(cudaMemcpy(dds, ds, sizeof ds, cudaMemcpyHostToDevice));
    const int64_t st[3] = {(int64_t)seq * heads * dp, (int64_t)heads * dp, dp};
    for (int causal = 0; causal <= 1; causal++) {
        if (!(masks >> causal & 1)) continue;
        const kiln_attention_params p16 = {batch, seq, seq, heads, heads, d, x16[0], x16[1], x16[2], x16[3],
                                           {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                                           {st[0], st[1], st[2]}, (float)(1.0 / sqrt((double)d)), causal, -1, -1,
                                           NULL, NULL, NULL};
        run_ctx r16 = {KILN_DTYPE_BF16, p16}, r8 = {KILN_DTYPE_E4M3, p16, {ds[0], ds[1], ds[2]}};
        r8.p.q = x8[0], r8.p.k = x8[1], r8.p.v = x8[2];
        r8.p.o_dtype = KILN_DTYPE_BF16, r8.p.q_descale = dds, r8.p.k_descale = dds + 1, r8.p.v_descale = dds + 2;
        const double flops = 4.0 * batch * heads * (double)seq * seq * d * (causal ? 0.5 : 1.0);
        const double err16 = check(&r16, 4);
        const float ms16 = bench_time_ms(run, &r16, iters);
        const double tf16 = flops / (ms16 * 1e-3) / 1e12;
        char variant16[128];
        snprintf(variant16, sizeof variant16, "%s", kiln_last_variant());
        /* A build or GPU without the e4m3 variant: nan and the reason. */
        const timed t = time_checked(run, &r8, check4, iters, flops, "e4m3 attention", d);
        /* The two again, in turn (bench_time_pair_ms): the ratio at the
         * clock both meet, where the one above lets each run at the clock
         * the power management gives it alone. */
        float pair_ms8 = NAN, pair_ms16 = NAN;
        const double in_turn =
            isnan(t.tf) ? NAN : bench_time_pair_ms(run, &r8, run, &r16, iters, &pair_ms8, &pair_ms16);
        printf("%-10s %5d %-32s %9.4f %9.1f %9.2e  e4m3 -> bf16: %.2f of bf16, %.2f in turn (%s %.1f TFLOP/s, "
               "rel_err %.2e)\n",
               causal ? "causal" : "none", d, t.variant, t.ms, t.tf, t.err, t.tf / tf16, in_turn, variant16, tf16,
               err16);
        printf("BENCH op=attention dtype=e4m3 out=bf16 mask=%s hdim=%d variant=%s batch=%d heads=%d seq=%d ms=%.5f "
               "TFLOPs=%.1f rel_err=%.2e bf16_variant=%s bf16_ms=%.5f bf16_TFLOPs=%.1f bf16_rel_err=%.2e ratio=%.3f "
               "in_turn_ms=%.5f in_turn_bf16_ms=%.5f in_turn_ratio=%.3f\n",
               causal ? "causal" : "none", d, t.variant, batch, heads, seq, t.ms, t.tf, t.err, variant16, ms16, tf16,
               err16, t.tf / tf16, pair_ms8, pair_ms16, in_turn);
        fflush(stdout);
    }
    for (int t = 0; t < 3; t++) CHECK(cudaFree(x8[t]));
    for (int t = 0; t < 4; t++) CHECK(cudaFree(x16[t]));
    CHECK(cudaFree(dds));
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

typedef struct bwd_ctx {
    kiln_dtype dt;
    kiln_attention_bwd_params p;
} bwd_ctx;

static kiln_status run_bwd(void *ctx, int i)
{
    (void)i;
    const bwd_ctx *r = ctx;
    return kiln_attention_bwd(r->dt, &r->p, NULL);
}

/* ‖dq − ref‖/‖ref‖ over the last 4 query rows of batch 0, head 0 (the call
 * has run): a row's dq needs only its own q, dout and the keys, so
 * ref_attention_bwd on those rows against all keys (seq_q' = rows keeps the
 * bottom-right alignment) gives it exactly; its dk and dv are left unused. */
static double check_bwd(void *ctx)
{
    const bwd_ctx *r = ctx;
    const int rows = 4;
    const kiln_attention_bwd_params *p = &r->p;
    const int d = p->head_dim, sk = p->seq_k, first = p->seq_q - rows;
    const size_t nr = (size_t)rows * d, nk = (size_t)sk * d;
    double *q = malloc(sizeof(double) * nr), *g = malloc(sizeof(double) * nr), *dq = malloc(sizeof(double) * nr);
    double *ref = malloc(sizeof(double) * nr), *k = malloc(sizeof(double) * nk), *v = malloc(sizeof(double) * nk);
    double *dk = malloc(sizeof(double) * nk), *dv = malloc(sizeof(double) * nk);
    for (int s = 0; s < sk; s++) {
        load_row((const char *)p->k + (size_t)s * p->k_stride[1] * 2, d, r->dt, 1, k + (size_t)s * d);
        load_row((const char *)p->v + (size_t)s * p->v_stride[1] * 2, d, r->dt, 1, v + (size_t)s * d);
    }
    for (int s = 0; s < rows; s++) {
        load_row((const char *)p->q + (size_t)(first + s) * p->q_stride[1] * 2, d, r->dt, 1, q + (size_t)s * d);
        load_row((const char *)p->dout + (size_t)(first + s) * p->dout_stride[1] * 2, d, r->dt, 1, g + (size_t)s * d);
        load_row((const char *)p->dq + (size_t)(first + s) * p->dq_stride[1] * 2, d, r->dt, 1, dq + (size_t)s * d);
    }
    ref_attention_bwd(rows, sk, 1, 1, d, q, k, v, g, d, d, d, d, p->scale, p->causal ? -1 : p->window_left,
                      p->causal ? 0 : p->window_right, ref, dk, dv);
    const double err = bench_rel_err(dq, ref, (int64_t)nr);
    free(q), free(g), free(dq), free(ref), free(k), free(v), free(dk), free(dv);
    return err;
}

/* The backward on prefill's shapes (BSHD, heads_q = heads_kv), none and
 * causal, default and deterministic: O and lse from kiln's forward first. */
static void bwd(kiln_dtype dt, int iters, int batch, int heads, int seq, int d)
{
    const int64_t n = (int64_t)batch * seq * heads * d, st[3] = {(int64_t)seq * heads * d, (int64_t)heads * d, d};
    void *t[8]; /* q, k, v, o, dout, dq, dk, dv */
    for (int i = 0; i < 8; i++) CHECK(cudaMalloc(&t[i], (size_t)n * 2));
    for (int i = 0; i < 5; i++)
        if (i != 3) bench_fill_random(t[i], n, dt, 21 + (uint64_t)i, -1, 1);
    float *lse;
    CHECK(cudaMalloc((void **)&lse, sizeof(float) * (size_t)batch * heads * seq));
    for (int causal = 0; causal <= 1; causal++) {
        if (!(masks >> causal & 1)) continue;
        const kiln_attention_params fp = {batch, seq, seq, heads, heads, d, t[0], t[1], t[2], t[3],
                                          {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                                          {st[0], st[1], st[2]}, (float)(1.0 / sqrt((double)d)), causal, -1, -1,
                                          NULL, NULL, lse};
        KCHECK(kiln_attention_fwd(dt, &fp, NULL));
        bwd_ctx r = {dt};
        kiln_attention_bwd_params *p = &r.p;
        p->batch = batch, p->seq_q = p->seq_k = seq, p->heads_q = p->heads_kv = heads, p->head_dim = d;
        p->q = t[0], p->k = t[1], p->v = t[2], p->o = t[3], p->dout = t[4], p->lse = lse;
        p->dq = t[5], p->dk = t[6], p->dv = t[7];
        int64_t *const s[8] = {p->q_stride, p->k_stride, p->v_stride, p->o_stride, p->dout_stride,
                               p->dq_stride, p->dk_stride, p->dv_stride};
        for (int i = 0; i < 8; i++) memcpy(s[i], st, sizeof st);
        p->scale = fp.scale, p->causal = causal, p->window_left = p->window_right = -1;
        /* A bad call's size query fails as the call does: no workspace,
         * and the call says why. */
        size_t bytes = 0;
        void *ws = NULL;
        if (kiln_attention_bwd_workspace(dt, p, &bytes) == KILN_STATUS_SUCCESS) CHECK(cudaMalloc(&ws, bytes));
        p->workspace = ws, p->workspace_bytes = bytes;
        const double flops = 2.5 * 4.0 * batch * heads * (double)seq * seq * d * (causal ? 0.5 : 1.0);
        for (int det = 0; det <= 1; det++) {
            p->deterministic = det;
            /* A build or GPU without a backward variant: nan and the reason. */
            const timed t = time_checked(run_bwd, &r, check_bwd, iters, flops, "attention backward", d);
            printf("%-10s %5d %-32s %9.4f %9.1f %9.2e  bwd%s, workspace %zu B\n", causal ? "causal" : "none", d,
                   t.variant, t.ms, t.tf, t.err, det ? " deterministic" : "", bytes);
            printf("BENCH op=attention_bwd mask=%s hdim=%d variant=%s dtype=%s batch=%d heads=%d seq=%d "
                   "deterministic=%d workspace=%zu ms=%.5f TFLOPs=%.1f rel_err=%.2e\n",
                   causal ? "causal" : "none", d, t.variant, kiln_dtype_name(dt), batch, heads, seq, det, bytes, t.ms,
                   t.tf, t.err);
            fflush(stdout);
        }
        if (ws) CHECK(cudaFree(ws));
    }
    for (int i = 0; i < 8; i++) CHECK(cudaFree(t[i]));
    CHECK(cudaFree(lse));
}

int main(int argc, char **argv)
{
    int iters = 30, all_archs = 0, seq = 4096, hdim = 0, batch_arg = 0, batch_given = 0, no_workspace = 0;
    const char *only = NULL;
    kiln_dtype dt = KILN_DTYPE_BF16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seq") && i + 1 < argc) seq = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hdim") && i + 1 < argc) hdim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch_arg = atoi(argv[++i]), batch_given = 1;
        else if (!strcmp(argv[i], "--no-workspace")) no_workspace = 1;
        else if (!strcmp(argv[i], "--f16")) dt = KILN_DTYPE_F16;
        else if (!strcmp(argv[i], "--all-archs")) all_archs = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--mask") && i + 1 < argc && !strcmp(argv[i + 1], "none")) masks = 1, i++;
        else if (!strcmp(argv[i], "--mask") && i + 1 < argc && !strcmp(argv[i + 1], "causal")) masks = 2, i++;
        else if (!strcmp(argv[i], "--fp8")) only = "fp8";
        else if (!strcmp(argv[i], "--bwd")) only = "bwd";
        else {
            fprintf(stderr,
                    "usage: %s [--iters K] [--seq S] [--hdim D] [--batch B] [--f16] [--all-archs] "
                    "[--only prefill|varlen|decode|fp8|bwd] [--fp8] [--bwd] [--mask none|causal] [--no-workspace]\n",
                    argv[0]);
            return 2;
        }
    }
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int cc = prop.major * 10 + prop.minor;
    printf("device %s (sm_%d, %d SMs); %s, seq %d\n", prop.name, cc, prop.multiProcessorCount, kiln_dtype_name(dt), seq);
    if (hdim < 0 || hdim > 256 || seq < 1 || (batch_given && batch_arg < 1)) {
        fprintf(stderr, "--hdim takes 1 to 256 (got %d), --seq and --batch at least 1 (got %d, %d)\n", hdim, seq,
                batch_arg);
        return 2;
    }
    const int dims[] = {hdim ? hdim : 64, 128, 256}, n_dims = hdim ? 1 : 3;
    const int bh = 262144 / seq, heads = 16, batch = batch_given ? batch_arg : bh / heads > 0 ? bh / heads : 1;
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
            if (!(masks >> causal & 1)) continue;
            run_ctx rc = {dt, {batch, seq, seq, heads, heads, d, q, k, v, o, {st[0], st[1], st[2]},
                               {st[0], st[1], st[2]}, {st[0], st[1], st[2]}, {st[0], st[1], st[2]},
                               (float)(1.0 / sqrt((double)d)), causal, -1, -1, NULL, NULL, NULL}};
            size_t ws_bytes = 0;
            void *ws = NULL;
            if (!no_workspace) KCHECK(kiln_attention_fwd_workspace(dt, &rc.p, &ws_bytes));
            if (ws_bytes) CHECK(cudaMalloc(&ws, ws_bytes));
            rc.p.workspace = ws, rc.p.workspace_bytes = ws_bytes;
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
                       "workspace=%zu ms=%.5f TFLOPs=%.1f rel_err=%.2e\n",
                       causal ? "causal" : "none", d, kiln_last_variant(), i < 0, kiln_dtype_name(dt), batch, heads, seq,
                       ws_bytes, ms, tf, err);
                KCHECK(kiln_force_variant(NULL));
            }
            if (ws) CHECK(cudaFree(ws));
        }
        CHECK(cudaFree(q));
        CHECK(cudaFree(k));
        CHECK(cudaFree(v));
        CHECK(cudaFree(o));
    }
    if (!only || !strcmp(only, "fp8")) {
        printf("FP8: e4m3 Q, K, V (a descale a tensor), bf16 O; beside kiln's bf16 call on the same values\n");
        const int fp8_dims[] = {hdim ? hdim : 128, 256};
        for (int di = 0; di < (hdim ? 1 : 2); di++) fp8(iters, batch, heads, seq, fp8_dims[di]);
    }
    if (!only || !strcmp(only, "varlen")) varlen(dt, iters, hdim ? hdim : 128, !no_workspace);
    if (!only || !strcmp(only, "decode")) {
        decode(dt, iters, 64, 32, 32768, 1);
        for (int b = 1; b <= 4; b *= 4)
            for (int ws = 0; ws <= 1; ws++) decode(dt, iters, b, 32, 32768, ws);
    }
    if (!only || !strcmp(only, "bwd")) {
        printf("Backward: dq, dk, dv (rel_err: dq of 4 rows); FLOPs 2.5 x the forward's\n");
        for (int di = 0; di < n_dims; di++) bwd(dt, iters, batch, heads, seq, dims[di]);
    }
    return 0;
}
