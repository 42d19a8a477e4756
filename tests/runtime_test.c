/*
 * runtime_test.c: the runtime's CPU cases, which run with or without a GPU:
 * selection over a fake table and fake devices, the generated table itself,
 * forcing by name, the argument checks of every entry point (each
 * must fail before any CUDA call, with its status and a message naming the
 * argument), the status strings, and the references against known values.
 *
 *   bazel test //tests:runtime_test
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/dispatch.h"
#include "runtime/kiln.h"
#include "runtime/norm.h"
#include "runtime/variant.h"
#include "tests/half.h"
#include "tests/ref_elementwise.h"
#include "tests/tap.h"

/* ---- selection over a fake table ---- */

#define V(name, arch, sass, ptx) {name, KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_F16, 0, KILN_ACT_RELU, arch, sass, ptx, 256, 0, NULL, NULL}

static const kiln_variant fake[] = {
    V("v70", 70, 0, 75), /* Volta built by CUDA 13: compute_75 PTX only */
    V("v75", 75, 75, 75),
    V("v80", 80, 80, 80),
    V("v86", 86, 86, 86),
    V("v89", 89, 89, 89),
    V("v90", 90, 90, 90),
    V("v90a", 90, 90, 0), /* arch-specific SASS, no PTX */
    {"bf16_80", KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_BF16, 0, KILN_ACT_RELU, 80, 80, 80, 256, 0, NULL, NULL},
    {"gated_80", KILN_OP_GATED_FWD, KILN_DTYPE_F16, 0, KILN_ACT_RELU, 80, 80, 80, 256, 0, NULL, NULL},
};
static const int nfake = (int)(sizeof fake / sizeof fake[0]);

static const char *pick(int cc, const kiln_variant_key *key, const char *forced, kiln_status *st)
{
    kiln_device_caps caps = {cc, 100};
    *st = KILN_STATUS_SUCCESS;
    const kiln_variant *v = kiln_select_from(fake, nfake, key, &caps, forced, st);
    return v ? v->name : "(none)";
}

static void test_selection(void)
{
    const kiln_variant_key relu16 = {KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_F16, 0, KILN_ACT_RELU};
    static const struct {
        int cc;
        const char *want;
    } cases[] = {
        {75, "v75"}, {80, "v80"}, {86, "v86"}, {87, "v86"}, {89, "v89"},
        {90, "v90a"}, /* arch-specific SASS before sm_90's portable SASS */
        {100, "v90"}, /* a newer GPU runs the newest PTX */
        {120, "v90"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_status st;
        const char *got = pick(cases[i].cc, &relu16, NULL, &st);
        tap_ok(strcmp(got, cases[i].want) == 0 && st == KILN_STATUS_SUCCESS, "sm_%d selects %s (got %s)",
               cases[i].cc, cases[i].want, got);
    }
    kiln_status st;
    const char *got = pick(70, &relu16, NULL, &st);
    tap_ok(st == KILN_STATUS_ARCH_MISMATCH && strstr(kiln_last_error(), "CUDA 12") != NULL,
           "a real sm_70 cannot run compute_75 PTX: ARCH_MISMATCH naming CUDA 12 (got %s: %s)", got, kiln_last_error());
    got = pick(90, &relu16, "v90a", &st);
    tap_ok(st == KILN_STATUS_SUCCESS && strcmp(got, "v90a") == 0, "sm_90a SASS can be forced on sm_90");
    got = pick(89, &relu16, "v90a", &st);
    tap_ok(st == KILN_STATUS_ARCH_MISMATCH, "sm_90a SASS is refused on sm_89 (%s)", kiln_last_error());
    got = pick(100, &relu16, "v90a", &st);
    tap_ok(st == KILN_STATUS_ARCH_MISMATCH, "sm_90a SASS is refused on sm_100 (%s)", kiln_last_error());
    got = pick(90, &relu16, "v75", &st);
    tap_ok(st == KILN_STATUS_SUCCESS && strcmp(got, "v75") == 0, "an older variant can be forced (PTX on sm_90)");
    got = pick(80, &relu16, "v86", &st);
    tap_ok(st == KILN_STATUS_ARCH_MISMATCH, "sm_86 code is refused on sm_80 (%s)", kiln_last_error());
    got = pick(90, &relu16, "bf16_80", &st);
    tap_ok(st == KILN_STATUS_NOT_SUPPORTED && strstr(kiln_last_error(), "bf16") != NULL,
           "forcing a variant of another dtype fails, no fallback (%s)", kiln_last_error());
    got = pick(90, &relu16, "gated_80", &st);
    tap_ok(st == KILN_STATUS_SUCCESS && strcmp(got, "v90a") == 0, "a variant forced for another op leaves this one to selection");
    const kiln_variant_key bf16 = {KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_BF16, 0, KILN_ACT_RELU};
    got = pick(75, &bf16, NULL, &st);
    tap_ok(st == KILN_STATUS_ARCH_MISMATCH, "bf16 on sm_75: ARCH_MISMATCH (%s)", kiln_last_error());
    const kiln_variant_key silu = {KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_F16, 0, KILN_ACT_SILU};
    got = pick(90, &silu, NULL, &st);
    tap_ok(st == KILN_STATUS_NOT_SUPPORTED, "a key not in the table: NOT_SUPPORTED (%s)", kiln_last_error());
}

/* Variants of one arch's code serving later archs of its major version
 * (SASS for each), and a release build's (--//:ptx=newest) variants without
 * PTX: SASS of sm_80 runs on sm_86, never on sm_90; code built for sm_75 alone
 * from an sm_70 variant (CUDA 13) says why a real sm_70 cannot run it. */
static void test_merged_and_ptx_free(void)
{
#define M(name, arch, sass, ptx) {name, KILN_OP_RMSNORM_FWD, KILN_DTYPE_F16, 0, KILN_ACT_NONE, arch, sass, ptx, 128, 0, NULL, NULL}
    static const kiln_variant t[] = {M("m70", 70, 75, 0), M("m80", 80, 80, 0)};
#undef M
    const kiln_variant_key key = {KILN_OP_RMSNORM_FWD, KILN_DTYPE_F16, 0, KILN_ACT_NONE};
    kiln_device_caps caps = {86, 84};
    kiln_status st = KILN_STATUS_SUCCESS;
    const kiln_variant *v = kiln_select_from(t, 2, &key, &caps, NULL, &st);
    tap_ok(v && strcmp(v->name, "m80") == 0, "sm_80 SASS without PTX serves an sm_86 GPU");
    caps.cc = 75;
    v = kiln_select_from(t, 2, &key, &caps, NULL, &st);
    tap_ok(v && strcmp(v->name, "m70") == 0, "an sm_70 variant built as sm_75 SASS serves an sm_75 GPU");
    caps.cc = 90;
    v = kiln_select_from(t, 2, &key, &caps, NULL, &st);
    tap_ok(v == NULL && st == KILN_STATUS_ARCH_MISMATCH, "no PTX: an sm_90 GPU is refused (%s)", kiln_last_error());
    caps.cc = 70;
    v = kiln_select_from(t, 2, &key, &caps, NULL, &st);
    tap_ok(v == NULL && st == KILN_STATUS_ARCH_MISMATCH && strstr(kiln_last_error(), "CUDA 12") != NULL,
           "a real sm_70 is refused, naming CUDA 12 (%s)", kiln_last_error());
}

/* kiln_choose keeps the table scan's answers per thread, by key and compute
 * capability: asked again, on another arch in between, and for keys that
 * share nothing, it gives what a fresh scan of the built table gives (no
 * device needed: the caps are made up). */
static void test_choose_cache(void)
{
    const kiln_variant_key keys[] = {
        {KILN_OP_LINEAR_FWD, KILN_DTYPE_BF16, 128, KILN_ACT_GELU_TANH},
        {KILN_OP_LINEAR_FWD, KILN_DTYPE_BF16, 64, KILN_ACT_GELU_TANH},
        {KILN_OP_LINEAR_FWD, KILN_DTYPE_F16, 128, KILN_ACT_GELU_TANH},
        {KILN_OP_RMSNORM_FWD, KILN_DTYPE_BF16, 4096, KILN_ACT_NONE},
    };
    const int ccs[] = {90, 80, 75, 90, 80, 75};
    int same = 0, asked = 0, found = 0;
    for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const kiln_device_caps caps = {ccs[c], 132};
            kiln_status st = KILN_STATUS_SUCCESS, st_scan = KILN_STATUS_SUCCESS;
            const kiln_variant *v = kiln_choose(&keys[k], &caps, &st);
            const kiln_variant *scan =
                kiln_select_from(kiln_variant_table, kiln_variant_table_size, &keys[k], &caps, NULL, &st_scan);
            same += v == scan && st == st_scan;
            found += v != NULL;
            asked++;
        }
    tap_ok(same == asked && found > 0, "kiln_choose's kept answers match a fresh scan (%d of %d calls; %d found a variant)",
           same, asked, found);
}

/* kiln_smallest_shape (the head dim an attention call runs on) against a
 * scan of the built table here, each question asked twice with others in
 * between, on three archs and with no device (cc 0). */
static void test_smallest_shape(void)
{
    const kiln_op ops[] = {KILN_OP_ATTENTION_FWD, KILN_OP_ATTENTION_BWD};
    const int dims[] = {24, 64, 100, 150, 160, 200, 256, 300};
    const int ccs[] = {90, 80, 0, 90, 80, 0};
    int same = 0, asked = 0, found = 0;
    for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
                int any = 0, runs = 0;
                for (int i = 0; i < kiln_variant_table_size; i++) {
                    const kiln_variant *v = &kiln_variant_table[i];
                    if (v->op != ops[o] || v->dtype != KILN_DTYPE_BF16 || v->shape_key < dims[d]) continue;
                    if (!any || v->shape_key < any) any = v->shape_key;
                    if (ccs[c] && kiln_variant_runs_on(v, ccs[c]) && (!runs || v->shape_key < runs)) runs = v->shape_key;
                }
                const int got = kiln_smallest_shape(ops[o], KILN_DTYPE_BF16, dims[d], ccs[c]);
                same += got == (runs ? runs : any);
                found += got != 0;
                asked++;
            }
    tap_ok(same == asked && found > 0, "kiln_smallest_shape matches a scan of the table (%d of %d; %d found a head dim)",
           same, asked, found);
}

/* A shape key selects its own variant, else the generic one (shape 0), even
 * where the generic one is of a newer arch. */
static void test_shape_selection(void)
{
#define N(name, shape, arch) {name, KILN_OP_RMSNORM_FWD, KILN_DTYPE_BF16, shape, KILN_ACT_NONE, arch, arch, arch, 128, 0, NULL, NULL}
    static const kiln_variant t[] = {
        N("h4096_80", 4096, 80), N("any_80", 0, 80), N("any_90", 0, 90), N("h768_90", 768, 90),
    };
#undef N
    kiln_device_caps caps = {90, 132};
    kiln_status st = KILN_STATUS_SUCCESS;
    kiln_variant_key key = {KILN_OP_RMSNORM_FWD, KILN_DTYPE_BF16, 4096, KILN_ACT_NONE};
    const kiln_variant *v = kiln_select_from(t, 4, &key, &caps, NULL, &st);
    tap_ok(v && strcmp(v->name, "h4096_80") == 0, "hidden 4096 takes its own variant over a newer generic one");
    key.shape_key = 1000;
    v = kiln_select_from(t, 4, &key, &caps, NULL, &st);
    tap_ok(v && strcmp(v->name, "any_90") == 0, "hidden 1000 takes the newest generic variant");
    key.shape_key = 768;
    v = kiln_select_from(t, 4, &key, &caps, "any_80", &st);
    tap_ok(v && strcmp(v->name, "any_80") == 0, "a generic variant can be forced for any hidden size");
    v = kiln_select_from(t, 4, &key, &caps, "h4096_80", &st);
    tap_ok(v == NULL && st == KILN_STATUS_NOT_SUPPORTED, "a fixed-size variant forced for another size is refused (%s)",
           kiln_last_error());
}

/* ---- the generated table ---- */

static void test_table(void)
{
    /* portable: a portable arch (one with PTX: every arch but sm_90a) is
     * built; the elementwise, norm and softmax families have variants on
     * those alone, so a build of sm_90a alone (--//:archs=sm_90a) has none. */
    int bad = 0, ops[12] = {0}, fp8_archs = 0, portable = 0;
    for (int i = 0; i < kiln_variant_table_size; i++) {
        const kiln_variant *v = &kiln_variant_table[i];
        if (v->op >= 0 && v->op < 12) ops[v->op]++;
        if (v->ptx_arch != 0) portable = 1, fp8_archs |= v->arch >= 89;
        /* Each variant runs on the arch it was written for, unless it was
         * not built for it (the toolkit could not target it, or --//:archs
         * left it out): then it carries code for newer archs only. */
        const int runs = kiln_variant_runs_on(v, v->arch);
        if (!(runs || v->sass_arch > v->arch || v->ptx_arch > v->arch) || v->launch == NULL || v->attributes == NULL ||
            (v->dtype == KILN_DTYPE_BF16 && v->arch < 80) ||
            ((v->op == KILN_OP_LAYERNORM_FWD_FP8 || v->op == KILN_OP_RMSNORM_FWD_FP8) && v->arch < 89)) {
            tap_diag("bad record %s", v->name);
            bad++;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(kiln_variant_table[j].name, v->name) == 0) bad++;
    }
    tap_ok(kiln_variant_table_size > 0 && bad == 0, "the table's %d records are sound and unique", kiln_variant_table_size);
    tap_ok(portable ? ops[0] && ops[1] && ops[2] && ops[3] : !(ops[0] || ops[1] || ops[2] || ops[3]),
           "the table has every elementwise op exactly when a portable arch is built (%d/%d/%d/%d)", ops[0], ops[1],
           ops[2], ops[3]);
    tap_ok(portable ? ops[4] && ops[5] && ops[6] && ops[7] : !(ops[4] || ops[5] || ops[6] || ops[7]),
           "the table has the norm ops exactly when a portable arch is built (%d/%d/%d/%d)", ops[4], ops[5], ops[6],
           ops[7]);
    tap_ok(fp8_archs ? ops[8] && ops[9] : !ops[8] && !ops[9],
           "FP8 norm variants exactly when a portable sm_89+ arch is built (%d/%d)", ops[8], ops[9]);
    tap_ok(portable ? ops[10] > 0 : ops[10] == 0, "the table has softmax exactly when a portable arch is built (%d)",
           ops[10]);
    tap_ok(ops[11] > 0, "the table has attention on every arch built (%d)", ops[11]);
    kiln_variant_info info;
    tap_ok(kiln_variant_get(kiln_variant_count(), &info) == KILN_STATUS_INVALID_VALUE, "kiln_variant_get past the end");
    tap_ok(kiln_force_variant("no_such_variant") == KILN_STATUS_VARIANT_NOT_FOUND &&
               strstr(kiln_last_error(), "no_such_variant") != NULL,
           "forcing an unknown name: VARIANT_NOT_FOUND (%s)", kiln_last_error());
    tap_ok(kiln_variant_get(0, &info) == KILN_STATUS_SUCCESS && kiln_force_variant(info.name) == KILN_STATUS_SUCCESS &&
               kiln_force_variant(NULL) == KILN_STATUS_SUCCESS,
           "forcing a listed name and clearing it");
}

/* ---- argument checks ---- */

static void expect(kiln_status got, kiln_status want, const char *needle, const char *what)
{
    const char *msg = kiln_last_error();
    tap_ok(got == want && strstr(msg, needle) != NULL, "%s: %s (message: %s)", what, kiln_status_string(want), msg);
}

static void test_validation(void)
{
    /* Fake device addresses: never dereferenced, the checks come first. */
    void *a = (void *)(uintptr_t)0x1000000, *b = (void *)(uintptr_t)0x2000000, *c = (void *)(uintptr_t)0x3000000;
    void *odd = (void *)(uintptr_t)0x4000001, *ws = (void *)(uintptr_t)0x5000000;
    const kiln_dtype h = KILN_DTYPE_F16;
    const kiln_activation g = KILN_ACT_GELU_TANH;

    expect(kiln_elementwise_fwd(h, g, 4, 8, NULL, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "x is NULL", "fwd x NULL");
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, 1, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE, "y is NULL", "fwd y NULL");
    expect(kiln_elementwise_fwd(h, g, 0, 8, a, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "rows is 0", "fwd rows 0");
    expect(kiln_elementwise_fwd(h, g, 4, -3, a, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "cols is -3", "fwd cols negative");
    expect(kiln_elementwise_fwd(h, g, INT64_MAX / 2, 1 << 20, a, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "overflows",
           "fwd rows × cols overflow");
    expect(kiln_elementwise_fwd(h, g, 4, 8, odd, 1, NULL, b, NULL), KILN_STATUS_MISALIGNED, "x = ", "fwd x misaligned");
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, 1, odd, b, NULL), KILN_STATUS_MISALIGNED, "bias", "fwd bias misaligned");
    expect(kiln_elementwise_fwd(KILN_DTYPE_F32, g, 4, 8, a, 1, NULL, (char *)b + 2, NULL), KILN_STATUS_MISALIGNED,
           "aligned to 4", "fwd f32 y on a 2-byte boundary");
    expect(kiln_elementwise_fwd((kiln_dtype)7, g, 4, 8, a, 1, NULL, b, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype 7",
           "fwd unknown dtype");
    expect(kiln_elementwise_fwd(h, (kiln_activation)9, 4, 8, a, 1, NULL, b, NULL), KILN_STATUS_NOT_SUPPORTED, "act 9",
           "fwd unknown activation");
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, NAN, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "scale", "fwd NaN scale");
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, 1, NULL, (char *)a + 8, NULL), KILN_STATUS_INVALID_VALUE, "overlaps",
           "fwd y overlapping x partly");
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, 1, (char *)b + 4, b, NULL), KILN_STATUS_INVALID_VALUE, "bias",
           "fwd y overlapping bias");

    size_t need = 0;
    tap_ok(kiln_elementwise_bwd_workspace_size(h, 1000, 64, 1, &need) == KILN_STATUS_SUCCESS && need == 16 * 64 * 4,
           "bwd workspace for 1000 × 64 with dbias is 16 chunks × 64 × 4 bytes (%zu)", need);
    tap_ok(kiln_elementwise_bwd_workspace_size(h, 1000, 64, 0, &need) == KILN_STATUS_SUCCESS && need == 0,
           "bwd workspace without dbias is 0");
    expect(kiln_elementwise_bwd_workspace_size(h, 1000, 64, 1, NULL), KILN_STATUS_INVALID_VALUE, "bytes is NULL",
           "workspace size without an out pointer");
    expect(kiln_elementwise_bwd(h, g, 4, 8, a, b, 1, NULL, c, ws, NULL, 4096, NULL), KILN_STATUS_INVALID_VALUE,
           "workspace is NULL", "bwd dbias without workspace");
    expect(kiln_elementwise_bwd(h, g, 1000, 64, a, b, 1, NULL, c, ws, ws, 100, NULL), KILN_STATUS_WORKSPACE_TOO_SMALL,
           "needs 4096", "bwd workspace too small");
    expect(kiln_elementwise_bwd(h, g, 4, 8, NULL, b, 1, NULL, c, NULL, NULL, 0, NULL), KILN_STATUS_INVALID_VALUE,
           "dy is NULL", "bwd dy NULL");
    expect(kiln_elementwise_bwd(h, g, 4, 8, a, b, 1, NULL, c, odd, ws, 4096, NULL), KILN_STATUS_MISALIGNED, "dbias",
           "bwd dbias misaligned");
    expect(kiln_elementwise_bwd(h, g, 4, 8, a, b, 1, NULL, c, (char *)ws + 8, ws, 4096, NULL), KILN_STATUS_INVALID_VALUE,
           "overlaps", "bwd workspace overlapping dbias");

    expect(kiln_gated_fwd(h, KILN_ACT_SILU, 0, a, b, c, NULL), KILN_STATUS_INVALID_VALUE, "n is 0", "gated n 0");
    expect(kiln_gated_fwd(h, KILN_ACT_SILU, (int64_t)1 << 41, a, b, c, NULL), KILN_STATUS_INVALID_VALUE, "at most",
           "gated n too large");
    expect(kiln_gated_fwd(h, KILN_ACT_SILU, 16, a, NULL, c, NULL), KILN_STATUS_INVALID_VALUE, "up is NULL", "gated up NULL");
    expect(kiln_gated_fwd(h, KILN_ACT_SILU, 16, a, odd, c, NULL), KILN_STATUS_MISALIGNED, "up", "gated up misaligned");
    expect(kiln_gated_bwd(h, KILN_ACT_SILU, 16, a, b, c, ws, (char *)ws + 2, NULL), KILN_STATUS_INVALID_VALUE,
           "dgate overlaps dup", "gated bwd outputs overlapping");
    expect(kiln_gated_bwd(h, KILN_ACT_SILU, 16, a, b, c, ws, NULL, NULL), KILN_STATUS_INVALID_VALUE, "dup is NULL",
           "gated bwd dup NULL");

    float *st = (float *)(uintptr_t)0x6000000;
    expect(kiln_layernorm_fwd(h, 0, 768, a, NULL, NULL, NULL, 1e-5f, b, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "rows is 0", "layernorm rows 0");
    expect(kiln_layernorm_fwd(h, 4, -768, a, NULL, NULL, NULL, 1e-5f, b, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "hidden is -768", "layernorm hidden negative");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, NULL, NULL, -1.0f, b, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "eps is -1", "layernorm negative eps");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, NULL, NULL, NAN, b, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "eps", "layernorm NaN eps");
    expect(kiln_layernorm_fwd(h, 4, 768, NULL, NULL, NULL, NULL, 1e-5f, b, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "x is NULL", "layernorm x NULL");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, odd, NULL, 1e-5f, b, NULL, NULL, NULL, NULL), KILN_STATUS_MISALIGNED,
           "gamma", "layernorm gamma misaligned");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, NULL, NULL, 1e-5f, b, NULL, (float *)((char *)st + 2), NULL, NULL),
           KILN_STATUS_MISALIGNED, "mean", "layernorm mean misaligned");
    expect(kiln_layernorm_fwd(h, 4, 768, a, c, NULL, NULL, 1e-5f, b, (char *)c + 64, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "residual_out overlaps residual", "layernorm residual_out partly over residual");
    expect(kiln_layernorm_fwd(h, 4, 768, a, c, NULL, NULL, 1e-5f, c, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "y overlaps residual", "layernorm y over residual");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, NULL, NULL, 1e-5f, b, NULL, st, st, NULL), KILN_STATUS_INVALID_VALUE,
           "mean overlaps rstd", "layernorm mean and rstd the same buffer");
    expect(kiln_rmsnorm_fwd(h, (int64_t)1 << 32, 1, a, NULL, NULL, 1e-5f, b, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "rows", "rmsnorm rows past 2^31");
    expect(kiln_rmsnorm_fwd((kiln_dtype)7, 4, 768, a, NULL, NULL, 1e-5f, b, NULL, NULL, NULL), KILN_STATUS_NOT_SUPPORTED,
           "dtype 7", "rmsnorm unknown dtype");

    /* FP8 output: y_e4m3 is one byte an element, so it can never take x's place. */
    expect(kiln_rmsnorm_fwd_fp8(h, 4, 768, a, NULL, NULL, 1e-5f, 0.0f, b, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "y_scale is 0", "rmsnorm fp8 zero scale");
    expect(kiln_rmsnorm_fwd_fp8(h, 4, 768, a, NULL, NULL, 1e-5f, INFINITY, b, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "y_scale", "rmsnorm fp8 infinite scale");
    expect(kiln_rmsnorm_fwd_fp8(h, 4, 768, a, NULL, NULL, 1e-5f, 1.0f, a, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "y_e4m3 overlaps x", "rmsnorm fp8 in place");
    expect(kiln_layernorm_fwd_fp8(h, 4, 768, a, NULL, NULL, NULL, 1e-5f, 1.0f, NULL, NULL, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "y_e4m3 is NULL", "layernorm fp8 y NULL");
    expect(kiln_layernorm_fwd_fp8(h, 4, 768, a, NULL, NULL, NULL, 1e-5f, 1.0f, b, NULL, NULL, NULL,
                                  (float *)((char *)st + 1), NULL),
           KILN_STATUS_MISALIGNED, "y_amax", "layernorm fp8 y_amax misaligned");
    expect(kiln_layernorm_fwd_fp8(h, 4, 768, a, NULL, NULL, NULL, 1e-5f, 1.0f, b, NULL, NULL, NULL, (float *)b, NULL),
           KILN_STATUS_INVALID_VALUE, "y_amax overlaps y_e4m3", "layernorm fp8 y_amax inside y");

    /* Backward. */
    need = 1;
    tap_ok(kiln_norm_bwd_workspace_size(h, 100, 768, 0, &need) == KILN_STATUS_SUCCESS && need == 0,
           "norm bwd workspace without dgamma / dbeta is 0");
    expect(kiln_norm_bwd_workspace_size(h, 0, 768, 1, &need), KILN_STATUS_INVALID_VALUE, "rows is 0",
           "norm bwd workspace rows 0");
    tap_ok(kiln_norm_bwd_max_partials(8192, 132) == 264 && kiln_norm_bwd_max_partials(1000, 132) == 63 &&
               kiln_norm_bwd_max_partials(1, 132) == 1,
           "norm bwd partials: two an SM, at least 16 rows each");
    expect(kiln_layernorm_bwd(h, 4, 768, a, b, NULL, NULL, st, NULL, c, NULL, NULL, NULL, 0, NULL),
           KILN_STATUS_INVALID_VALUE, "mean is NULL", "layernorm bwd without mean");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, NULL, NULL, NULL, c, NULL, NULL, 0, NULL), KILN_STATUS_INVALID_VALUE,
           "rstd is NULL", "rmsnorm bwd without rstd");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, NULL, st, NULL, c, ws, NULL, 0, NULL), KILN_STATUS_INVALID_VALUE,
           "gamma is NULL", "rmsnorm bwd dgamma without gamma");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, ws, st, NULL, b, NULL, NULL, 0, NULL), KILN_STATUS_INVALID_VALUE,
           "dx overlaps s", "rmsnorm bwd dx over s");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, ws, st, NULL, (char *)a + 2, NULL, NULL, 0, NULL),
           KILN_STATUS_INVALID_VALUE, "dx overlaps dy", "rmsnorm bwd dx partly over dy");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, ws, st, odd, c, NULL, NULL, 0, NULL), KILN_STATUS_MISALIGNED, "ds_extra",
           "rmsnorm bwd ds_extra misaligned");
    expect(kiln_layernorm_bwd(h, 4, 768, a, b, ws, st, st + 64, NULL, c, (char *)ws + 4, NULL, NULL, 0, NULL),
           KILN_STATUS_INVALID_VALUE, "dgamma overlaps gamma", "layernorm bwd dgamma over gamma");

    /* Softmax. */
    expect(kiln_softmax_fwd(h, 4, 768, a, 0.0f, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "scale is 0", "softmax scale 0");
    expect(kiln_softmax_fwd(h, 4, 768, a, NAN, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "scale", "softmax NaN scale");
    expect(kiln_softmax_fwd(h, 0, 768, a, 1.0f, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "rows is 0", "softmax rows 0");
    expect(kiln_softmax_fwd(h, 4, 0, a, 1.0f, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "cols is 0", "softmax cols 0");
    expect(kiln_softmax_fwd(h, 4, 768, odd, 1.0f, 0, b, NULL), KILN_STATUS_MISALIGNED, "x", "softmax x misaligned");
    expect(kiln_softmax_fwd(h, 4, 768, a, 1.0f, 1, (char *)a + 64, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps x",
           "softmax y partly over x");
    expect(kiln_softmax_fwd((kiln_dtype)5, 4, 768, a, 1.0f, 0, b, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype 5",
           "softmax unknown dtype");

    /* Attention. */
    const kiln_attention_params ap = {2, 64, 64, 8, 2, 128, a, b, c, ws, {65536, 1024, 128}, {16384, 256, 128},
                                      {16384, 256, 128}, {65536, 1024, 128}, 0.088f, 1, -1, -1, NULL, NULL, NULL};
    kiln_attention_params bad_p = ap;
    expect(kiln_attention_fwd(h, NULL, NULL), KILN_STATUS_INVALID_VALUE, "params is NULL", "attention params NULL");
    expect(kiln_attention_fwd(KILN_DTYPE_F32, &ap, NULL), KILN_STATUS_NOT_SUPPORTED, "attention takes f16",
           "attention f32");
    bad_p.heads_kv = 3;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "multiple of heads_kv", "attention GQA 8:3");
    bad_p = ap, bad_p.head_dim = 300;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "head_dim is 300", "attention head dim 300");
    bad_p = ap, bad_p.seq_k = 0;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "seq_k is 0", "attention seq_k 0");
    bad_p = ap, bad_p.k_stride[1] = 260;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_MISALIGNED, "k_stride[1] is 260", "attention odd stride");
    bad_p = ap, bad_p.v = (char *)c + 8;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_MISALIGNED, "v", "attention v misaligned");
    bad_p = ap, bad_p.window_right = 3;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "causal", "attention causal with a right window");
    bad_p = ap, bad_p.scale = 0.0f;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "scale", "attention scale 0");
    bad_p = ap, bad_p.cu_seqlens_q = (const int32_t *)a;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "both", "attention half a varlen pair");
    size_t ws_bytes = 1;
    expect(kiln_attention_fwd_workspace(h, &ap, NULL), KILN_STATUS_INVALID_VALUE, "bytes is NULL",
           "attention workspace query without bytes");
    bad_p = ap, bad_p.head_dim = 300;
    expect(kiln_attention_fwd_workspace(h, &bad_p, &ws_bytes), KILN_STATUS_INVALID_VALUE, "head_dim is 300",
           "attention workspace query checks the params as the call does");
    tap_ok(ws_bytes == 0, "a refused workspace query gives 0 bytes (%zu)", ws_bytes);
    bad_p = ap, bad_p.workspace = (char *)ws + 4, bad_p.workspace_bytes = 1 << 20;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_MISALIGNED, "workspace", "attention workspace misaligned");
    bad_p = ap, bad_p.o = (void *)ap.q;
    expect(kiln_attention_fwd(h, &bad_p, NULL), KILN_STATUS_INVALID_VALUE, "o must not be", "attention o over q");
}

/* FP8 inputs: linear's scaling, its pointers, block scales' k, f32 biases
 * and 16-byte row strides; linear's e4m3 output (FP8 inputs, a y_scale, no
 * residual) and no e5m2 output; attention's e4m3 (o_dtype, the descales,
 * fixed lengths, strides of 16) beyond the rows of test_status_table; every
 * other family refuses FP8 by name. Each call below fails its checks (fake
 * addresses, nothing launched). */
static void test_fp8_validation(void)
{
    const void *a = (const void *)(uintptr_t)0x1000000, *b = (const void *)(uintptr_t)0x2000000;
    void *c = (void *)(uintptr_t)0x3000000;
    const void *d = (const void *)(uintptr_t)0x4000000, *f32 = (const void *)(uintptr_t)0x5000000;
    const float *sc = (const float *)(uintptr_t)0x6000000;
    const kiln_dtype e4 = KILN_DTYPE_E4M3, e5 = KILN_DTYPE_E5M2, bf = KILN_DTYPE_BF16;
    /* A sound FP8 call but for what each case changes: X [4][64], W [64][64], per-tensor scales. */
    const kiln_linear_params ok = {4, 64, 64, a, 0, b, 0, NULL, NULL, 0, NULL, NULL, 0, c, 0, KILN_ACT_NONE, NULL, 0,
                                   KILN_SCALING_TENSOR, sc, sc + 4, NULL};
    kiln_linear_params p = ok;
    p.scaling = KILN_SCALING_NONE, p.x_scale = p.w_scale = NULL;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "scaling 0 with e4m3",
           "linear e4m3 with scaling NONE");
    size_t bytes = 1;
    expect(kiln_linear_fwd_workspace(e5, bf, &p, &bytes), KILN_STATUS_NOT_SUPPORTED, "scaling 0 with e5m2",
           "linear workspace query, e5m2 with scaling NONE");
    tap_ok(bytes == 0, "the refused FP8 workspace query gives 0 bytes (%zu)", bytes);
    p = ok, p.scaling = (kiln_scaling)7;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "scaling 7", "linear e4m3 with scaling 7");
    p = ok, p.x_scale = NULL;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "x_scale is NULL", "linear FP8 x_scale NULL");
    p = ok, p.w_scale = NULL, p.scaling = KILN_SCALING_ROWWISE;
    expect(kiln_linear_fwd(e5, KILN_DTYPE_F32, &p, NULL), KILN_STATUS_INVALID_VALUE, "w_scale is NULL",
           "linear FP8 rowwise w_scale NULL");
    p = ok, p.x_scale = (const float *)((const char *)sc + 2);
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "x_scale", "linear FP8 x_scale off 4 bytes");
    p = ok, p.w_up = d;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "w_up_scale is NULL",
           "linear FP8 gated without w_up_scale");
    p = ok, p.w_up_scale = sc + 8;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "w_up_scale is given",
           "linear FP8 w_up_scale without w_up");
    p = ok;
    expect(kiln_linear_fwd(bf, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "scale pointer is given for bf16",
           "linear bf16 with FP8 scales");
    p = ok, p.scaling = KILN_SCALING_NONE, p.w_scale = NULL;
    expect(kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &p, NULL), KILN_STATUS_INVALID_VALUE,
           "scale pointer is given for f16", "linear f16 with an x_scale alone");
    p = ok, p.ldx = 72; /* a multiple of 8: 16-bit rows would take it */
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "ldx is 72; it must be a multiple of 16",
           "linear FP8 ldx 72");
    p = ok, p.k = 24; /* dense: ldx = k = 24 */
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "ldx is 24", "linear FP8 dense k 24");
    p = ok, p.ldw = 88;
    expect(kiln_linear_fwd(e5, bf, &p, NULL), KILN_STATUS_MISALIGNED, "ldw is 88", "linear FP8 ldw 88");
    p = ok, p.w_up = d, p.w_up_scale = sc + 8, p.ldw_up = 72;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "ldw_up is 72", "linear FP8 ldw_up 72");
    p = ok, p.x = (const char *)a + 8;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "x = ", "linear FP8 x off 16 bytes");
    p = ok, p.bias = (const char *)f32 + 2; /* a bf16 bias could sit there; FP8 biases are f32 */
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "bias = ", "linear FP8 f32 bias off 4 bytes");
    p = ok, p.w_up = d, p.w_up_scale = sc + 8, p.bias = f32, p.bias_up = (const char *)f32 + 1030;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_MISALIGNED, "bias_up", "linear FP8 f32 bias_up off 4 bytes");
    p = ok, p.scaling = KILN_SCALING_BLOCK;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE,
           "k is 64; KILN_SCALING_BLOCK needs k a multiple of 128", "linear FP8 block scales, k 64");
    p = ok;
    expect(kiln_linear_fwd(e4, e4, &p, NULL), KILN_STATUS_INVALID_VALUE, "y_scale is NULL",
           "linear e4m3 out without y_scale");
    p = ok, p.y_scale = sc + 12, p.residual = d;
    expect(kiln_linear_fwd(e4, e4, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "residual with out_dtype e4m3",
           "linear e4m3 out with a residual");
    p = ok, p.y_scale = sc + 12, p.y_amax = (float *)((char *)c + 4098);
    expect(kiln_linear_fwd(e5, e4, &p, NULL), KILN_STATUS_MISALIGNED, "y_amax", "linear e4m3 out, y_amax off 4 bytes");
    p = ok, p.y_scale = sc + 12;
    expect(kiln_linear_fwd(e4, e5, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "out_dtype e5m2", "linear e5m2 out");
    p = ok, p.y_scale = sc + 12;
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "y_scale or y_amax is given for out_dtype bf16",
           "linear bf16 out with a y_scale");
    p = ok, p.scaling = KILN_SCALING_NONE, p.x_scale = p.w_scale = NULL, p.y_scale = sc + 12;
    expect(kiln_linear_fwd(bf, e4, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "out_dtype e4m3 from bf16 inputs",
           "linear bf16 in, e4m3 out");
    p = ok, p.scaling = KILN_SCALING_NONE, p.x_scale = p.w_scale = NULL;
    expect(kiln_linear_fwd(bf, e5, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "e5m2", "linear bf16 in, e5m2 out");
    p = ok, p.x_scale = (const float *)((const char *)c + 64); /* inside y */
    expect(kiln_linear_fwd(e4, bf, &p, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps x_scale",
           "linear FP8 y over x_scale");
    p = ok, p.y_scale = sc + 12, p.y_amax = (float *)((char *)c + 64);
    expect(kiln_linear_fwd(e4, e4, &p, NULL), KILN_STATUS_INVALID_VALUE, "y_amax overlaps y",
           "linear e4m3 out, y_amax inside y");
    p = ok, p.y_scale = sc + 12, p.y_amax = (float *)(sc + 4);
    expect(kiln_linear_fwd(e4, e4, &p, NULL), KILN_STATUS_INVALID_VALUE, "y_amax overlaps w_scale",
           "linear e4m3 out, y_amax on w_scale");

    /* Every other family: FP8 is refused by name. */
    const float *st = (const float *)(uintptr_t)0x7000000;
    expect(kiln_softmax_fwd(e4, 4, 768, a, 1.0f, 0, c, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype e4m3; FP8",
           "softmax e4m3");
    expect(kiln_rmsnorm_fwd(e5, 4, 768, a, NULL, NULL, 1e-5f, c, NULL, NULL, NULL), KILN_STATUS_NOT_SUPPORTED,
           "dtype e5m2; FP8", "rmsnorm e5m2");
    expect(kiln_layernorm_fwd(e4, 4, 768, a, NULL, NULL, NULL, 1e-5f, c, NULL, NULL, NULL, NULL),
           KILN_STATUS_NOT_SUPPORTED, "dtype e4m3; FP8", "layernorm e4m3");
    expect(kiln_rmsnorm_fwd_fp8(e4, 4, 768, a, NULL, NULL, 1e-5f, 1.0f, c, NULL, NULL, (float *)(uintptr_t)st, NULL),
           KILN_STATUS_NOT_SUPPORTED, "dtype e4m3; FP8", "rmsnorm_fp8 with e4m3 input");
    expect(kiln_elementwise_fwd(e4, KILN_ACT_RELU, 4, 8, a, 1, NULL, c, NULL), KILN_STATUS_NOT_SUPPORTED,
           "dtype e4m3; FP8", "elementwise e4m3");
    expect(kiln_gated_fwd(e5, KILN_ACT_SILU, 16, a, b, c, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype e5m2; FP8",
           "gated e5m2");

    /* Attention: a sound e4m3 call but for what each case changes (strides
     * multiples of 16, O bf16, per-tensor descales). */
    const kiln_attention_params ap = {2, 64, 64, 8, 2, 128, a, b, d, c, {65536, 1024, 128}, {16384, 256, 128},
                                      {16384, 256, 128}, {65536, 1024, 128}, 0.088f, 1, -1, -1, NULL, NULL, NULL,
                                      NULL, 0, bf, sc, sc + 1, sc + 2, 0};
    kiln_attention_params a8 = ap;
    a8.o_dtype = KILN_DTYPE_F32; /* 0: what a 16-bit call's positional initializer leaves */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_NOT_SUPPORTED, "o_dtype is 0",
           "attention e4m3 with o_dtype 0");
    a8 = ap, a8.v_descale = NULL;
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_INVALID_VALUE, "v_descale is NULL",
           "attention e4m3 without v_descale");
    a8 = ap, a8.k_descale = (const float *)((const char *)sc + 2);
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_MISALIGNED, "k_descale",
           "attention e4m3 k_descale off 4 bytes");
    a8 = ap, a8.k_stride[0] = 16392; /* the batch stride: a multiple of 8, not of 16 */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_MISALIGNED,
           "k_stride[0] is 16392; it must be a multiple of 16", "attention e4m3 k_stride[0] 16392");
    a8 = ap, a8.o_stride[1] = 1028; /* O is bf16: multiples of 8 */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_MISALIGNED, "o_stride[1] is 1028; it must be a multiple of 8",
           "attention e4m3 o_stride[1] 1028");
    a8 = ap, a8.k_stride[1] = 0; /* every key row the same: no broadcast a TMA map takes */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_NOT_SUPPORTED, "a stride [1] of 0",
           "attention e4m3 k_stride[1] 0");
    a8 = ap, a8.k_stride[0] = 0; /* K shared by the batch, V not */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_NOT_SUPPORTED, "broadcast different dimensions",
           "attention e4m3 k and v broadcast differently");
    a8 = ap, a8.v_descale = (const float *)((const char *)c + 256); /* inside O */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_INVALID_VALUE, "v_descale",
           "attention e4m3 v_descale inside o");
    a8 = ap, a8.lse = (float *)(uintptr_t)sc; /* lse over the descales */
    expect(kiln_attention_fwd(e4, &a8, NULL), KILN_STATUS_INVALID_VALUE, "q_descale",
           "attention e4m3 lse over q_descale");
    a8 = ap, a8.cu_seqlens_q = a8.cu_seqlens_k = (const int32_t *)st;
    bytes = 1;
    expect(kiln_attention_fwd_workspace(e4, &a8, &bytes), KILN_STATUS_NOT_SUPPORTED, "cu_seqlens_q",
           "attention workspace query, e4m3 with cu_seqlens");
    tap_ok(bytes == 0, "the refused e4m3 attention workspace query gives 0 bytes (%zu)", bytes);
    expect(kiln_attention_fwd_workspace(e5, &ap, &bytes), KILN_STATUS_NOT_SUPPORTED, "(e5m2)",
           "attention workspace query e5m2");
    a8 = ap, a8.q_descale = a8.k_descale = a8.v_descale = NULL, a8.o_dtype = KILN_DTYPE_F16;
    expect(kiln_attention_fwd(bf, &a8, NULL), KILN_STATUS_INVALID_VALUE, "o_dtype is 1",
           "attention bf16 with o_dtype f16");
    a8.o_dtype = bf, a8.descale_per_head = 1;
    expect(kiln_attention_fwd(bf, &a8, NULL), KILN_STATUS_INVALID_VALUE, "only e4m3 calls take descales",
           "attention bf16 with descale_per_head");
}

/* Each thread keeps its own message: two threads fail different checks many
 * times over and each must always read its own. */
static void *fail_repeatedly(void *arg)
{
    const int which = *(const int *)arg;
    void *p = (void *)(uintptr_t)0x1000000;
    for (int i = 0; i < 20000; i++) {
        if (which == 0) kiln_gated_fwd(KILN_DTYPE_F16, KILN_ACT_SILU, 16, NULL, p, p, NULL);
        else kiln_gated_fwd(KILN_DTYPE_F16, KILN_ACT_SILU, -1, p, p, p, NULL);
        if (strstr(kiln_last_error(), which == 0 ? "gate is NULL" : "n is -1") == NULL) return (void *)1;
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[2];
    int which[2] = {0, 1};
    void *r[2] = {(void *)1, (void *)1};
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, fail_repeatedly, &which[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], &r[i]);
    tap_ok(r[0] == NULL && r[1] == NULL, "two threads each read their own kiln_last_error()");
}

static void test_strings(void)
{
    int ok = 1;
    for (int s = KILN_STATUS_SUCCESS; s <= KILN_STATUS_NO_DEVICE; s++)
        ok = ok && strncmp(kiln_status_string((kiln_status)s), "KILN_STATUS_", 12) == 0 &&
             strstr(kiln_status_string((kiln_status)s), "UNKNOWN") == NULL;
    tap_ok(ok, "every status has its string");
    tap_ok(strstr(kiln_status_string((kiln_status)99), "UNKNOWN") != NULL, "an unknown status says so");
    tap_ok(strcmp(kiln_dtype_name(KILN_DTYPE_BF16), "bf16") == 0 && strcmp(kiln_activation_name(KILN_ACT_SILU), "silu") == 0 &&
               strcmp(kiln_op_name(KILN_OP_GATED_BWD), "gated_bwd") == 0,
           "enum names");
}

/* ---- references ---- */

static void test_references(void)
{
    static const struct {
        kiln_activation act;
        double u, f;
    } known[] = {
        {KILN_ACT_GELU_ERF, 1.0, 0.8413447460685429},
        {KILN_ACT_GELU_TANH, 1.0, 0.8411919906082768},
        {KILN_ACT_SILU, 1.0, 0.7310585786300049},
        {KILN_ACT_SILU, -2.0, -0.2384058440442351},
        {KILN_ACT_RELU, -0.5, 0.0},
        {KILN_ACT_NONE, -0.5, -0.5},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        tap_ok(fabs(ref_act(known[i].act, known[i].u) - known[i].f) < 1e-12, "ref %s(%g) = %.10f",
               kiln_activation_name(known[i].act), known[i].u, known[i].f);
    for (int a = KILN_ACT_NONE; a <= KILN_ACT_SILU; a++) {
        double worst = 0;
        for (double u = -5.03; u < 5; u += 0.173) {
            const double h = 1e-6, fd = (ref_act((kiln_activation)a, u + h) - ref_act((kiln_activation)a, u - h)) / (2 * h);
            const double d = fabs(fd - ref_act_grad((kiln_activation)a, u));
            if (d > worst) worst = d;
        }
        tap_ok(worst < 1e-6, "ref %s' matches central differences (worst %.1e)", kiln_activation_name((kiln_activation)a), worst);
    }
    int ok = 1;
    for (uint32_t b = 0; b < 0x10000u; b++) {
        const uint16_t h = (uint16_t)b;
        const float f = f16_to_f32(h);
        if (f == f && f32_to_f16(f) != h) ok = 0;
        const float g = bf16_to_f32(h);
        if (g == g && f32_to_bf16(g) != h) ok = 0;
    }
    tap_ok(ok, "f16 and bf16 round-trip every non-NaN bit pattern");
    tap_ok(f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00 && f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02 &&
               f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80 && f32_to_bf16(1.0f + 3.0f / 256) == 0x3f82,
           "f16 and bf16 round half to even");
}

/* docs/status.md, row by row: each family's example call of each fault, with
 * fake addresses, must return the row's status and name the argument. The
 * workspace sizes of norm backward, attention and linear come from the GPU's
 * SM count, so without a GPU those cells are skipped; the selection rows run
 * on a fake table with one record per family. */
static void test_status_table(void)
{
    void *a = (void *)(uintptr_t)0x1000000, *b = (void *)(uintptr_t)0x2000000, *c = (void *)(uintptr_t)0x3000000;
    void *d = (void *)(uintptr_t)0x4000000, *e = (void *)(uintptr_t)0x5000000, *ws = (void *)(uintptr_t)0x7000000;
    char *odd = (char *)(uintptr_t)0x8000001;
    float *st = (float *)(uintptr_t)0x6000000;
    const kiln_dtype h = KILN_DTYPE_F16;
    const kiln_activation g = KILN_ACT_GELU_TANH;
    /* Sound calls but for what each case changes. */
    const kiln_attention_params ap = {2, 64, 64, 8, 2, 128, a, b, c, d, {65536, 1024, 128}, {16384, 256, 128},
                                      {16384, 256, 128}, {65536, 1024, 128}, 0.088f, 1, -1, -1, NULL, NULL, NULL};
    const kiln_linear_params lp = {4, 64, 64, a, 0, b, 0, NULL, NULL, 0, NULL, NULL, 0, c, 0, KILN_ACT_NONE, NULL, 0};
    /* ap in e4m3: O bf16, per-tensor descales. */
    kiln_attention_params ap8 = ap;
    ap8.o_dtype = KILN_DTYPE_BF16, ap8.q_descale = st, ap8.k_descale = st + 1, ap8.v_descale = st + 2;
    const kiln_dtype e4 = KILN_DTYPE_E4M3;
    kiln_attention_params p;
    kiln_linear_params q;

    /* A required pointer is NULL: INVALID_VALUE. */
    expect(kiln_elementwise_fwd(h, g, 4, 8, NULL, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "x is NULL",
           "NULL pointer, elementwise x");
    expect(kiln_rmsnorm_fwd(h, 4, 768, a, NULL, NULL, 1e-5f, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "y is NULL", "NULL pointer, rmsnorm y");
    expect(kiln_softmax_fwd(h, 4, 768, NULL, 1, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "x is NULL",
           "NULL pointer, softmax x");
    p = ap, p.k = NULL;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "k is NULL", "NULL pointer, attention k");
    p = ap8, p.q_descale = NULL;
    expect(kiln_attention_fwd(e4, &p, NULL), KILN_STATUS_INVALID_VALUE, "q_descale is NULL",
           "NULL pointer, attention e4m3 q_descale");
    q = lp, q.w = NULL;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "w is NULL", "NULL pointer, linear w");

    /* A pointer not aligned as the family reads it: MISALIGNED. */
    expect(kiln_gated_fwd(h, KILN_ACT_SILU, 16, a, odd, c, NULL), KILN_STATUS_MISALIGNED, "up = ",
           "misaligned pointer, gated up");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, odd, NULL, 1e-5f, b, NULL, NULL, NULL, NULL), KILN_STATUS_MISALIGNED,
           "gamma = ", "misaligned pointer, layernorm gamma");
    expect(kiln_softmax_fwd(h, 4, 768, a, 1, 0, odd, NULL), KILN_STATUS_MISALIGNED, "y = ", "misaligned pointer, softmax y");
    p = ap, p.q = (char *)a + 8;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_MISALIGNED, "q = ", "misaligned pointer, attention q off 16 bytes");
    q = lp, q.w = (char *)b + 8;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_MISALIGNED, "w = ", "misaligned pointer, linear w off 16 bytes");

    /* A row stride not a whole number of 16-byte reads: MISALIGNED. */
    p = ap, p.q_stride[1] = 1028;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_MISALIGNED, "q_stride[1] is 1028", "stride, attention q_stride[1]");
    p = ap8, p.q_stride[1] = 136; /* a multiple of 8, which 16-bit rows would take */
    expect(kiln_attention_fwd(e4, &p, NULL), KILN_STATUS_MISALIGNED, "q_stride[1] is 136",
           "stride, attention e4m3 q_stride[1] 136");
    q = lp, q.ldw = 68;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_MISALIGNED, "ldw is 68", "stride, linear ldw");

    /* A stride negative or shorter than its row: INVALID_VALUE. */
    p = ap, p.o_stride[0] = -8;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "o_stride[0] is -8",
           "negative stride, attention o_stride[0]");
    q = lp, q.ldy = 32;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "ldy is 32", "short stride, linear ldy < n");
    p = ap, p.q_stride[0] = (int64_t)1 << 62; /* an offset past int64 once multiplied */
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "q_stride[0] is 4611686018427387904",
           "stride past 2^40, attention q_stride[0] 2^62");
    q = lp, q.ldy = (int64_t)1 << 62;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "ldy is 4611686018427387904",
           "stride past 2^40, linear ldy 2^62");
    q = lp, q.m = 1 << 24, q.ldy = (int64_t)1 << 40; /* each in range; m × ldy is 2^64, which wrapped to 0 */
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "y (m × ldy) is 16777216 × 1099511627776",
           "size past 2^40, linear m 2^24 × ldy 2^40");
    p = ap, p.seq_q = 1 << 24, p.q_stride[1] = (int64_t)1 << 40; /* (seq_q − 1) × the stride wrapped past int64 */
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "q_stride[1] is 1099511627776",
           "stride past 2^40, attention q_stride[1] 2^40 over 2^24 rows");
    /* An output's stride shorter than its row along a dimension of more than one row: blocks would write the same
     * elements. */
    p = ap, p.o_stride[1] = 0;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "o_stride[1] is 0 with seq 64",
           "short stride, attention o_stride[1] 0");
    {
        /* Varlen: a packed O has a row a sequence at least, so its seq stride counts whatever seq_q is. */
        p = ap, p.seq_q = 1, p.cu_seqlens_q = (const int32_t *)e, p.cu_seqlens_k = (const int32_t *)e + 4;
        p.o_stride[1] = 0;
        expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "o_stride[1] is 0 with seq 2",
               "short stride, attention varlen o_stride[1] 0 with seq_q 1, batch 2");
        /* ... and its sizes are not batch × the longest: 2048 sequences of at most 131072 rows pass the checks
         * (the workspace query: SUCCESS on a GPU, NO_DEVICE without one). */
        p = ap, p.batch = 2048, p.seq_q = p.seq_k = 131072, p.heads_q = 64, p.heads_kv = 8;
        p.cu_seqlens_q = (const int32_t *)e, p.cu_seqlens_k = (const int32_t *)e + 4096;
        for (int i = 0; i < 3; i++) p.q_stride[i] = p.o_stride[i] = i == 1 ? 64 * 128 : i == 2 ? 128 : 0;
        for (int i = 0; i < 3; i++) p.k_stride[i] = p.v_stride[i] = i == 1 ? 8 * 128 : i == 2 ? 128 : 0;
        size_t bytes = 0;
        const kiln_status got = kiln_attention_fwd_workspace(h, &p, &bytes);
        tap_ok(got == KILN_STATUS_SUCCESS || got == KILN_STATUS_NO_DEVICE,
               "a varlen forward of 2048 sequences of at most 131072 rows is not refused by its sizes (%s: %s)",
               kiln_status_string(got), kiln_last_error());
    }
    p = ap, p.o_stride[2] = 64; /* heads 64 elements apart, rows of 128 */
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "o_stride[2] is 64 with heads 8",
           "short stride, attention o_stride[2] 64 < head_dim");

    /* A size zero, negative or past its maximum: INVALID_VALUE. */
    expect(kiln_elementwise_fwd(h, g, 4, 0, a, 1, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "cols is 0",
           "size, elementwise cols 0");
    expect(kiln_rmsnorm_fwd(h, 4, -1, a, NULL, NULL, 1e-5f, b, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "hidden is -1", "size, rmsnorm hidden -1");
    expect(kiln_softmax_fwd(h, 0, 768, a, 1, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "rows is 0", "size, softmax rows 0");
    p = ap, p.head_dim = 300;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "head_dim is 300", "size, attention head_dim 300");
    q = lp, q.k = 0;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "k is 0", "size, linear k 0");
    p = ap, p.batch = 65535, p.heads_q = p.heads_kv = 65535, p.seq_q = p.seq_k = 1024; /* each in range */
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "batch × heads_q × seq_q × head_dim is past 2^40",
           "size, attention 65535 × 65535 × 1024 × 128");
    {
        /* The backward's workspace query: its f32 dq rows are counted from the same product, which wrapped. */
        const kiln_attention_bwd_params bp = {.batch = 42694, .seq_q = 1073741823, .seq_k = 64, .heads_q = 62773,
                                              .heads_kv = 1, .head_dim = 256, .q = a, .k = b, .v = c, .o = d,
                                              .dout = e, .lse = st, .dq = ws, .dk = (char *)ws + 4096,
                                              .dv = (char *)ws + 8192, .scale = 0.0625f, .window_left = -1,
                                              .window_right = -1};
        size_t bytes = 1;
        expect(kiln_attention_bwd_workspace(h, &bp, &bytes), KILN_STATUS_INVALID_VALUE,
               "batch × heads_q × seq_q × head_dim is past 2^40", "size, attention bwd workspace query past 2^40");
        tap_ok(bytes == 0, "the refused query reports 0 bytes (%zu)", bytes);
        kiln_attention_bwd_params b2 = bp;
        b2.batch = 2, b2.seq_q = 64, b2.heads_q = 8, b2.heads_kv = 2, b2.head_dim = 128;
        const int64_t qs[3] = {65536, 1024, 128}, ks[3] = {16384, 256, 128};
        for (int i = 0; i < 3; i++)
            b2.q_stride[i] = b2.o_stride[i] = b2.dout_stride[i] = b2.dq_stride[i] = qs[i],
            b2.k_stride[i] = b2.v_stride[i] = b2.dk_stride[i] = b2.dv_stride[i] = ks[i];
        b2.dv_stride[1] = 0;
        expect(kiln_attention_bwd_workspace(h, &b2, &bytes), KILN_STATUS_INVALID_VALUE, "dv_stride[1] is 0 with seq 64",
               "short stride, attention bwd dv_stride[1] 0");
    }

    /* Arguments that contradict each other: INVALID_VALUE. */
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, NULL, st, NULL, c, d, ws, 1 << 20, NULL), KILN_STATUS_INVALID_VALUE,
           "gamma is NULL", "contradiction, rmsnorm bwd dgamma without gamma");
    p = ap, p.heads_kv = 3;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "heads_kv", "contradiction, attention heads 8:3");
    p = ap, p.q_descale = st;
    expect(kiln_attention_fwd(KILN_DTYPE_BF16, &p, NULL), KILN_STATUS_INVALID_VALUE, "only e4m3 calls take descales",
           "contradiction, attention bf16 with a q_descale");
    q = lp, q.bias_up = d;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "bias_up is given",
           "contradiction, linear bias_up without w_up");

    /* A host scalar not finite or out of its range: INVALID_VALUE. */
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, NAN, NULL, b, NULL), KILN_STATUS_INVALID_VALUE, "scale is nan",
           "scalar, elementwise scale NaN");
    expect(kiln_layernorm_fwd(h, 4, 768, a, NULL, NULL, NULL, -1.0f, b, NULL, NULL, NULL, NULL),
           KILN_STATUS_INVALID_VALUE, "eps is -1", "scalar, layernorm eps -1");
    expect(kiln_softmax_fwd(h, 4, 768, a, 0.0f, 0, b, NULL), KILN_STATUS_INVALID_VALUE, "scale is 0",
           "scalar, softmax scale 0");
    p = ap, p.scale = INFINITY;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "scale is inf", "scalar, attention scale Inf");

    /* An output over another tensor beyond the aliasing allowed: INVALID_VALUE. */
    expect(kiln_elementwise_fwd(h, g, 4, 8, a, 1, NULL, (char *)a + 8, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps x",
           "overlap, elementwise y partly over x");
    expect(kiln_layernorm_fwd(h, 4, 768, a, c, NULL, NULL, 1e-5f, c, NULL, NULL, NULL, NULL), KILN_STATUS_INVALID_VALUE,
           "y overlaps residual", "overlap, layernorm y over residual");
    expect(kiln_softmax_fwd(h, 4, 768, a, 1, 0, (char *)a + 64, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps x",
           "overlap, softmax y partly over x");
    p = ap, p.o = (void *)ap.v;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "o must not be", "overlap, attention o = v");
    q = lp, q.y = (char *)b + 64;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps w", "overlap, linear y over w");
    p = ap, p.lse = (float *)((char *)d + 4096); /* inside O's rows */
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "lse overlaps o", "overlap, attention lse in o");
    p = ap, p.lse = (float *)((char *)a + 256);
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_INVALID_VALUE, "lse overlaps q", "overlap, attention lse in q");
    q = lp, q.bias = (char *)c + 8;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_INVALID_VALUE, "y overlaps bias",
           "overlap, linear bias inside y");

    /* A workspace the call needs is NULL: INVALID_VALUE. */
    expect(kiln_elementwise_bwd(h, g, 4, 8, a, b, 1, NULL, c, d, NULL, 4096, NULL), KILN_STATUS_INVALID_VALUE,
           "workspace is NULL", "workspace NULL, elementwise bwd with dbias");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, c, st, NULL, d, e, NULL, 1 << 20, NULL), KILN_STATUS_INVALID_VALUE,
           "workspace is NULL", "workspace NULL, rmsnorm bwd with dgamma");

    /* A workspace not 16-byte aligned: MISALIGNED. */
    expect(kiln_elementwise_bwd(h, g, 4, 8, a, b, 1, NULL, c, d, (char *)ws + 8, 4096, NULL), KILN_STATUS_MISALIGNED,
           "workspace = ", "workspace misaligned, elementwise bwd");
    expect(kiln_rmsnorm_bwd(h, 4, 768, a, b, c, st, NULL, d, e, (char *)ws + 8, 1 << 20, NULL), KILN_STATUS_MISALIGNED,
           "workspace = ", "workspace misaligned, rmsnorm bwd");
    p = ap, p.workspace = (char *)ws + 4, p.workspace_bytes = 1 << 20;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_MISALIGNED, "workspace = ", "workspace misaligned, attention");
    q = lp, q.workspace = (char *)ws + 4, q.workspace_bytes = 1 << 20;
    expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_MISALIGNED, "workspace = ", "workspace misaligned, linear");

    /* workspace_bytes 16 short of the size query's: WORKSPACE_TOO_SMALL.
     * Decode shapes, so that attention and linear split on any GPU. */
    size_t need = 0;
    kiln_status got = kiln_elementwise_bwd_workspace_size(h, 1000, 64, 1, &need);
    if (tap_ok(got == KILN_STATUS_SUCCESS && need >= 16, "elementwise bwd 1000 × 64 asks for a workspace (%zu bytes)",
               need))
        expect(kiln_elementwise_bwd(h, g, 1000, 64, a, b, 1, NULL, c, d, ws, need - 16, NULL),
               KILN_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes", "workspace short, elementwise bwd");
    got = kiln_norm_bwd_workspace_size(h, 4096, 768, 1, &need);
    if (got == KILN_STATUS_NO_DEVICE)
        tap_skip("no GPU", "workspace short, rmsnorm bwd");
    else if (tap_ok(got == KILN_STATUS_SUCCESS && need >= 16, "rmsnorm bwd 4096 × 768 asks for a workspace (%zu bytes)",
                    need))
        expect(kiln_rmsnorm_bwd(h, 4096, 768, a, b, c, st, NULL, d, e, ws, need - 16, NULL),
               KILN_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes", "workspace short, rmsnorm bwd");
    const kiln_attention_params decode = {1, 1, 65536, 1, 1, 128, a, b, c, d, {128, 128, 128}, {1 << 23, 128, 128},
                                          {1 << 23, 128, 128}, {128, 128, 128}, 0.088f, 0, -1, -1, NULL, NULL, NULL};
    got = kiln_attention_fwd_workspace(h, &decode, &need);
    if (got == KILN_STATUS_NO_DEVICE) {
        tap_skip("no GPU", "workspace short, attention");
    } else if (tap_ok(got == KILN_STATUS_SUCCESS && need >= 16, "attention decode asks for a workspace (%zu bytes)",
                      need)) {
        p = decode, p.workspace = ws, p.workspace_bytes = need - 16;
        expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes",
               "workspace short, attention");
    }
    q = lp, q.m = 1, q.n = 1024, q.k = 4096;
    got = kiln_linear_fwd_workspace(h, h, &q, &need);
    if (got == KILN_STATUS_NO_DEVICE) {
        tap_skip("no GPU", "workspace short, linear");
    } else if (tap_ok(got == KILN_STATUS_SUCCESS && need >= 16, "linear decode asks for a workspace (%zu bytes)",
                      need)) {
        q.workspace = ws, q.workspace_bytes = need - 16;
        expect(kiln_linear_fwd(h, h, &q, NULL), KILN_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes",
               "workspace short, linear");
    }

    /* A dtype, activation or scaling unknown, or a combination the op lacks: NOT_SUPPORTED. */
    expect(kiln_elementwise_fwd(h, (kiln_activation)9, 4, 8, a, 1, NULL, b, NULL), KILN_STATUS_NOT_SUPPORTED, "act 9",
           "not offered, elementwise act 9");
    expect(kiln_rmsnorm_fwd(KILN_DTYPE_E4M3, 4, 768, a, NULL, NULL, 1e-5f, b, NULL, NULL, NULL),
           KILN_STATUS_NOT_SUPPORTED, "dtype e4m3", "not offered, rmsnorm e4m3");
    expect(kiln_softmax_fwd((kiln_dtype)5, 4, 768, a, 1, 0, b, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype 5",
           "not offered, softmax dtype 5");
    expect(kiln_attention_fwd(KILN_DTYPE_F32, &ap, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype 0 (f32)",
           "not offered, attention f32");
    expect(kiln_attention_fwd(KILN_DTYPE_E5M2, &ap, NULL), KILN_STATUS_NOT_SUPPORTED, "dtype 4 (e5m2)",
           "not offered, attention e5m2");
    p = ap8, p.o_dtype = e4;
    expect(kiln_attention_fwd(e4, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "o_dtype is 3",
           "not offered, attention e4m3 with o_dtype e4m3");
    p = ap, p.o_dtype = (kiln_dtype)99;
    expect(kiln_attention_fwd(h, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "o_dtype is 99, no kiln_dtype",
           "not offered, attention f16 with o_dtype 99");
    p = ap8, p.cu_seqlens_q = p.cu_seqlens_k = (const int32_t *)e;
    expect(kiln_attention_fwd(e4, &p, NULL), KILN_STATUS_NOT_SUPPORTED, "cu_seqlens_q is given",
           "not offered, attention e4m3 with cu_seqlens");
    q = lp, q.scaling = KILN_SCALING_NONE;
    expect(kiln_linear_fwd(KILN_DTYPE_E4M3, KILN_DTYPE_BF16, &q, NULL), KILN_STATUS_NOT_SUPPORTED, "scaling 0 with e4m3",
           "not offered, linear e4m3 without a scaling");

    /* Selection, which every family dispatches through: a record of each
     * family's op that runs on sm_90 alone (SASS, no PTX). */
    static const kiln_variant sm90a_only[] = {
        {"ew_sm90a", KILN_OP_ELEMENTWISE_FWD, KILN_DTYPE_F16, 0, KILN_ACT_RELU, 90, 90, 0, 256, 0, NULL, NULL},
        {"norm_sm90a", KILN_OP_LAYERNORM_FWD, KILN_DTYPE_F16, 0, KILN_ACT_NONE, 90, 90, 0, 256, 0, NULL, NULL},
        {"softmax_sm90a", KILN_OP_SOFTMAX_FWD, KILN_DTYPE_F16, 0, KILN_ACT_NONE, 90, 90, 0, 256, 0, NULL, NULL},
        {"attention_sm90a", KILN_OP_ATTENTION_FWD, KILN_DTYPE_F16, 128, KILN_ACT_NONE, 90, 90, 0, 128, 0, NULL, NULL},
        {"linear_sm90a", KILN_OP_LINEAR_FWD, KILN_DTYPE_F16, 128, KILN_ACT_RELU, 90, 90, 0, 384, 0, NULL, NULL},
    };
    const int n_sm90a = (int)(sizeof sm90a_only / sizeof sm90a_only[0]);
    const kiln_device_caps sm80 = {80, 108}, sm90 = {90, 132};
    for (int i = 0; i < n_sm90a; i++) {
        const kiln_variant *v = &sm90a_only[i];
        const kiln_variant_key key = {v->op, v->dtype, v->shape_key, v->act};
        const kiln_variant_key bf16 = {v->op, KILN_DTYPE_BF16, v->shape_key, v->act};
        kiln_status sel = KILN_STATUS_SUCCESS;
        kiln_select_from(sm90a_only, n_sm90a, &key, &sm80, NULL, &sel);
        expect(sel, KILN_STATUS_ARCH_MISMATCH, v->name, "no variant runs on this GPU (sm_80)");
        kiln_select_from(sm90a_only, n_sm90a, &bf16, &sm90, v->name, &sel);
        expect(sel, KILN_STATUS_NOT_SUPPORTED, v->name, "a forced variant of another dtype");
        kiln_select_from(sm90a_only, n_sm90a, &bf16, &sm90, NULL, &sel);
        expect(sel, KILN_STATUS_NOT_SUPPORTED, kiln_op_name(v->op), "a key the build has no variant of (bf16)");
    }
    expect(kiln_force_variant("no_such_variant"), KILN_STATUS_VARIANT_NOT_FOUND, "no_such_variant",
           "forcing a name not in the table");
}

int main(void)
{
    tap_plan_late();
    test_selection();
    test_shape_selection();
    test_choose_cache();
    test_smallest_shape();
    test_merged_and_ptx_free();
    test_table();
    test_validation();
    test_fp8_validation();
    test_status_table();
    test_threads();
    test_strings();
    test_references();
    return tap_done();
}
