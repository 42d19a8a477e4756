/*
 * linear.c: the linear entry points. Checks every argument before any CUDA
 * call, picks the variant (its block tile) and the split of k from the shape,
 * the SM count and the variants the call could run (make_plan), then hands
 * a kiln_linear_args to it.
 */
#include <stdint.h>

#include "runtime/check.h"
#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/linear.h"
#include "runtime/variant.h"

enum { MAX_SPLITS = 32, MIN_SPLIT_K_TILES = 4 };

static kiln_status check_ld(const char *fn, const char *name, int64_t ld, int64_t min, int64_t multiple,
                            int64_t *out)
{
    if (ld == 0) ld = min;
    if (ld < min || ld > KILN_MAX_ELEMENTS)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %lld; it must be 0 (dense) or from %lld to 2^40", fn,
                         name, (long long)ld, (long long)min);
    if (ld % multiple != 0)
        return kiln_fail(KILN_STATUS_MISALIGNED,
                         "%s: %s is %lld; it must be a multiple of %lld elements (rows are read 16 bytes at a time)",
                         fn, name, (long long)ld, (long long)multiple);
    *out = ld;
    return KILN_STATUS_SUCCESS;
}

/* FP8 inputs need a scaling mode and its factors; 16-bit ones take none.
 * Block scales need k in whole blocks of 128. */
static kiln_status check_scaling(const char *fn, kiln_dtype in, const kiln_linear_params *p)
{
    kiln_status st;
    if (!kiln_dtype_is_fp8(in)) {
        if (p->x_scale || p->w_scale || p->w_up_scale)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: a scale pointer is given for %s inputs; scales are for FP8 "
                             "inputs (e4m3, e5m2) only: NULL here", fn, kiln_dtype_name(in));
        if (p->scaling != KILN_SCALING_NONE)
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: scaling %d with %s inputs; 16-bit inputs take "
                             "KILN_SCALING_NONE (0)", fn, (int)p->scaling, kiln_dtype_name(in));
        return KILN_STATUS_SUCCESS;
    }
    if (p->scaling != KILN_SCALING_TENSOR && p->scaling != KILN_SCALING_ROWWISE && p->scaling != KILN_SCALING_BLOCK)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                         "%s: scaling %d with %s inputs; FP8 takes KILN_SCALING_TENSOR (1), KILN_SCALING_ROWWISE (2) "
                         "or KILN_SCALING_BLOCK (3)",
                         fn, (int)p->scaling, kiln_dtype_name(in));
    if (p->scaling == KILN_SCALING_BLOCK && p->k % KILN_LINEAR_SCALE_BLOCK != 0)
        return kiln_fail(KILN_STATUS_INVALID_VALUE,
                         "%s: k is %lld; KILN_SCALING_BLOCK needs k a multiple of %d (one scale per %d of k)", fn,
                         (long long)p->k, KILN_LINEAR_SCALE_BLOCK, KILN_LINEAR_SCALE_BLOCK);
    if ((st = kiln_check_ptr(fn, "x_scale", p->x_scale, 4, 0)) || (st = kiln_check_ptr(fn, "w_scale", p->w_scale, 4, 0)))
        return st;
    if (p->w_up && !p->w_up_scale)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: w_up_scale is NULL; a gated FP8 call needs the up "
                         "projection's factors (rowwise, a fused gate_up weight: w_scale + n)", fn);
    if (!p->w_up && p->w_up_scale)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: w_up_scale is given but w_up is NULL (not gated)", fn);
    return kiln_check_ptr(fn, "w_up_scale", p->w_up_scale, 4, 1);
}

/* The output: f16, bf16 or f32, or e4m3 (FP8 inputs) with its scale. */
static kiln_status check_output(const char *fn, kiln_dtype in, kiln_dtype out, const kiln_linear_params *p)
{
    kiln_status st;
    if (out != KILN_DTYPE_E4M3) {
        if (kiln_dtype_is_fp8(out))
            return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: out_dtype %s; linear writes f16, bf16, f32 or (from FP8 "
                             "inputs) e4m3", fn, kiln_dtype_name(out));
        if (p->y_scale || p->y_amax)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: y_scale or y_amax is given for out_dtype %s; they are "
                             "for e4m3 output only (NULL here)", fn, kiln_dtype_name(out));
        return kiln_check_dtype(fn, out);
    }
    if (!kiln_dtype_is_fp8(in))
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: out_dtype e4m3 from %s inputs; e4m3 output is for FP8 "
                         "inputs (e4m3, e5m2)", fn, kiln_dtype_name(in));
    if (p->residual)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: residual with out_dtype e4m3; an e4m3 output takes no "
                         "residual (add it in 16 or 32 bits)", fn);
    if (!p->y_scale)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: y_scale is NULL; out_dtype e4m3 needs the output's factor "
                         "(y is stored as e4m3 of y·y_scale[0])", fn);
    if ((st = kiln_check_ptr(fn, "y_scale", p->y_scale, 4, 0))) return st;
    return kiln_check_ptr(fn, "y_amax", p->y_amax, 4, 1);
}

/* The factors are read while y is written and y_amax raised: y (y_bytes)
 * and y_amax must not overlap any of them, nor each other. */
static kiln_status check_scale_alias(const char *fn, kiln_dtype in, const kiln_linear_params *p, size_t y_bytes)
{
    if (!kiln_dtype_is_fp8(in)) return KILN_STATUS_SUCCESS;
    const int64_t kbs = (p->k + KILN_LINEAR_SCALE_BLOCK - 1) / KILN_LINEAR_SCALE_BLOCK;
    const int64_t nbs = (p->n + KILN_LINEAR_SCALE_BLOCK - 1) / KILN_LINEAR_SCALE_BLOCK;
    const int64_t xs = p->scaling == KILN_SCALING_BLOCK ? kbs * p->m : p->scaling == KILN_SCALING_ROWWISE ? p->m : 1;
    const int64_t ws = p->scaling == KILN_SCALING_BLOCK ? nbs * kbs : p->scaling == KILN_SCALING_ROWWISE ? p->n : 1;
    const struct {
        const char *name;
        const void *ptr;
        size_t bytes;
    } read[] = {{"x_scale", p->x_scale, (size_t)xs * 4}, {"w_scale", p->w_scale, (size_t)ws * 4},
                {"w_up_scale", p->w_up_scale, (size_t)ws * 4}, {"y_scale", p->y_scale, 4}};
    kiln_status st;
    for (size_t i = 0; i < sizeof read / sizeof read[0]; i++) {
        if (!read[i].ptr) continue;
        if ((st = kiln_check_alias(fn, "y", p->y, y_bytes, read[i].name, read[i].ptr, read[i].bytes, 0)) ||
            (p->y_amax && (st = kiln_check_alias(fn, "y_amax", p->y_amax, 4, read[i].name, read[i].ptr, read[i].bytes, 0))))
            return st;
    }
    if (p->y_amax && (st = kiln_check_alias(fn, "y_amax", p->y_amax, 4, "y", p->y, y_bytes, 0))) return st;
    return KILN_STATUS_SUCCESS;
}

static kiln_status check_params(const char *fn, kiln_dtype in, kiln_dtype out, const kiln_linear_params *p,
                                kiln_linear_args *a)
{
    kiln_status st;
    if (!p) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: params is NULL", fn);
    const int fp8 = kiln_dtype_is_fp8(in);
    if ((!fp8 && (st = kiln_check_dtype(fn, in))) || (st = check_output(fn, in, out, p)) ||
        (st = kiln_check_act(fn, p->act)))
        return st;
    if (in == KILN_DTYPE_F32)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "%s: in_dtype f32; linear takes f16, bf16, e4m3 and e5m2 inputs",
                         fn);
    const struct {
        const char *name;
        int64_t value;
    } dims[] = {{"m", p->m}, {"n", p->n}, {"k", p->k}};
    for (int i = 0; i < 3; i++)
        if (dims[i].value < 1 || dims[i].value > INT32_MAX)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %lld; it must be from 1 to %d", fn, dims[i].name,
                             (long long)dims[i].value, INT32_MAX);
    const int gated = p->w_up != NULL;
    if (!gated && p->bias_up)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bias_up is given but w_up is NULL (not gated)", fn);
    if ((st = check_scaling(fn, in, p))) return st;
    /* FP8 inputs take f32 biases; 16-bit ones biases of their own dtype. */
    const size_t is = kiln_dtype_size(in), os = kiln_dtype_size(out), bs = fp8 ? 4 : is;
    if ((st = kiln_check_ptr(fn, "x", p->x, 16, 0)) || (st = kiln_check_ptr(fn, "w", p->w, 16, 0)) ||
        (st = kiln_check_ptr(fn, "w_up", p->w_up, 16, 1)) || (st = kiln_check_ptr(fn, "bias", p->bias, bs, 1)) ||
        (st = kiln_check_ptr(fn, "bias_up", p->bias_up, bs, 1)) ||
        (st = kiln_check_ptr(fn, "residual", p->residual, os, 1)) || (st = kiln_check_ptr(fn, "y", p->y, os, 0)))
        return st;
    int64_t ldx, ldw, ldw_up = 0, ldr = 0, ldy;
    const int64_t row_elems = 16 / (int64_t)is; /* elements of a 16-byte read */
    if ((st = check_ld(fn, "ldx", p->ldx, p->k, row_elems, &ldx)) ||
        (st = check_ld(fn, "ldw", p->ldw, p->k, row_elems, &ldw)) ||
        (gated && (st = check_ld(fn, "ldw_up", p->ldw_up, p->k, row_elems, &ldw_up))) ||
        (p->residual && (st = check_ld(fn, "ldr", p->ldr, p->n, 1, &ldr))) ||
        (st = check_ld(fn, "ldy", p->ldy, p->n, 1, &ldy)))
        return st;
    /* rows × ld at most 2^40 for each matrix, compared by division (m, n below 2^31 and ld at most 2^40: the
     * product could overflow int64). */
    const struct {
        const char *name;
        int64_t ld, n;
    } mats[] = {{"x (m × ldx)", ldx, p->m},      {"w (n × ldw)", ldw, p->n},
                {"w_up (n × ldw_up)", ldw_up, p->n}, {"residual (m × ldr)", ldr, p->m},
                {"y (m × ldy)", ldy, p->m}};
    for (int i = 0; i < 5; i++)
        if (mats[i].ld > KILN_MAX_ELEMENTS / mats[i].n)
            return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: %s is %lld × %lld elements; it must be at most 2^40", fn,
                             mats[i].name, (long long)mats[i].n, (long long)mats[i].ld);
    /* y is written while x and the weights are still read; residual is read
     * at the very element y gets, so y may be residual itself. */
    const size_t y_bytes = (size_t)((p->m - 1) * ldy + p->n) * os;
    if ((st = kiln_check_alias(fn, "y", p->y, y_bytes, "x", p->x, (size_t)((p->m - 1) * ldx + p->k) * is, 0)) ||
        (st = kiln_check_alias(fn, "y", p->y, y_bytes, "w", p->w, (size_t)((p->n - 1) * ldw + p->k) * is, 0)) ||
        (gated &&
         (st = kiln_check_alias(fn, "y", p->y, y_bytes, "w_up", p->w_up, (size_t)((p->n - 1) * ldw_up + p->k) * is, 0))) ||
        (st = kiln_check_alias(fn, "y", p->y, y_bytes, "bias", p->bias, (size_t)p->n * bs, 0)) ||
        (st = kiln_check_alias(fn, "y", p->y, y_bytes, "bias_up", p->bias_up, (size_t)p->n * bs, 0)))
        return st;
    if (p->residual && p->residual != p->y &&
        (st = kiln_check_alias(fn, "y", p->y, y_bytes, "residual", p->residual, (size_t)((p->m - 1) * ldr + p->n) * os, 0)))
        return st;
    if ((st = check_scale_alias(fn, in, p, y_bytes))) return st;
    if (p->residual == p->y && ldr != ldy)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: y is residual but ldy (%lld) is not ldr (%lld)", fn,
                         (long long)ldy, (long long)ldr);
    const int pair_align = (int)(2 * os);
    const int pair_store = ldy % 2 == 0 && (uintptr_t)p->y % pair_align == 0 &&
                           (!p->residual || (ldr % 2 == 0 && (uintptr_t)p->residual % pair_align == 0));
    kiln_linear_args args = {p->m, p->n, p->k, p->x, p->w, p->w_up, ldx, ldw, ldw_up, p->bias, p->bias_up,
                             p->residual, ldr, p->y, ldy, out, pair_store, 1, 0, NULL, 0,
                             p->x_scale, p->w_scale, p->w_up_scale, (int)p->scaling, p->y_scale, p->y_amax};
    *a = args;
    return KILN_STATUS_SUCCESS;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The plan of a call: the variant (its shape key: the block tile's rows)
 * and the split of k. */
typedef struct plan {
    const kiln_variant *v; /* NULL: none runs the call, and st says why */
    kiln_status st;
    int splits, k_tiles_per_split;
} plan;

/* Planned from the variants the call would run (the selection table's
 * tile_n and persistent): 128-row tiles while they keep 90 % of the SMs
 * busy; else 64-row tiles (on sm_90a the Hopper kernel's 64 × 64 tiles;
 * the 128 × 256 ones split 8 ways ran 128 × 4096 × 4096 at 91 TFLOP/s on an
 * H100, the sm_90 m64 kernel split 4 ways at 140, same run; FP8 has 64-row
 * tiles on sm_90a only, so on sm_89 it keeps 128 rows and splits k); then,
 * when the tiles leave slots of a wave idle (two blocks an SM for 16 bits,
 * one for FP8 and for persistent kernels) and the caller passed a
 * workspace, k split to fill the waves (kiln_wave_splits), each split
 * keeping at least MIN_SPLIT_K_TILES steps. 128 × 4096 × 4096 split 5 ways
 * (320 blocks, 1.2 waves of 264) ran at 118 TFLOP/s on an H200, split 4
 * ways (256 blocks) at 173 (2026-11-23). Where no 64-row variant runs (a
 * build of sm_90a alone), the 128-row one keeps the call. A forced
 * variant's tile is kept. */
static plan make_plan(const kiln_linear_args *a, const kiln_device_caps *caps, kiln_op op, kiln_dtype in,
                      kiln_activation act, int may_split)
{
    const int fp8 = kiln_dtype_is_fp8(in);
    const int64_t k_tiles = ceil_div(a->k, fp8 ? KILN_LINEAR_FP8_BLOCK_K : KILN_LINEAR_BLOCK_K);
    plan pl = {NULL, KILN_STATUS_SUCCESS, 1, (int)k_tiles};
    kiln_variant_key key = {op, in, 128, act};
    const kiln_variant *forced = kiln_forced_for(op);
    if (forced) key.shape_key = forced->shape_key;
    const kiln_variant *v = kiln_choose(&key, caps, &pl.st);
    if (!v) return pl;
    if (!forced && ceil_div(a->m, 128) * ceil_div(a->n, v->tile_n) * 10 < (int64_t)caps->sm_count * 9) {
        key.shape_key = 64;
        kiln_status st64;
        const kiln_variant *v64 = kiln_choose(&key, caps, &st64);
        if (v64) v = v64;
        else kiln_clear_error(); /* none: the 128-row variant runs it */
    }
    pl.v = v;
    if (!may_split) return pl;
    const int64_t tiles = ceil_div(a->m, v->shape_key) * ceil_div(a->n, v->tile_n);
    const int64_t slots = (fp8 || v->persistent ? 1 : 2) * (int64_t)caps->sm_count;
    const int64_t most = k_tiles / MIN_SPLIT_K_TILES < MAX_SPLITS ? k_tiles / MIN_SPLIT_K_TILES : MAX_SPLITS;
    if (tiles * 10 >= slots * 9) return pl; /* 90 % of a wave busy: a split's second pass would cost more */
    const int want = kiln_wave_splits(tiles, slots, most);
    if (want < 2) return pl;
    pl.k_tiles_per_split = (int)ceil_div(k_tiles, want);
    pl.splits = (int)ceil_div(k_tiles, pl.k_tiles_per_split); /* no split left empty */
    return pl;
}

static size_t workspace_bytes(const kiln_linear_args *a, int gated, int splits)
{
    if (splits <= 1) return 0;
    return (size_t)splits * (gated ? 2 : 1) * (size_t)a->m * (size_t)((a->n + 1) / 2 * 2) * sizeof(float);
}

kiln_status kiln_linear_fwd_workspace(kiln_dtype in_dtype, kiln_dtype out_dtype, const kiln_linear_params *p,
                                      size_t *bytes)
{
    static const char fn[] = "kiln_linear_fwd_workspace";
    kiln_clear_error();
    if (!bytes) return kiln_fail(KILN_STATUS_INVALID_VALUE, "%s: bytes is NULL", fn);
    *bytes = 0;
    kiln_linear_args a;
    kiln_status st = check_params(fn, in_dtype, out_dtype, p, &a);
    if (st) return st;
    kiln_device_caps caps;
    if ((st = kiln_current_device_caps(&caps))) return st;
    const kiln_op op = p->w_up ? KILN_OP_GATED_LINEAR_FWD : KILN_OP_LINEAR_FWD;
    const plan pl = make_plan(&a, &caps, op, in_dtype, p->act, 1);
    if (!pl.v) return pl.st; /* no variant runs the call */
    *bytes = workspace_bytes(&a, p->w_up != NULL, pl.splits);
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_linear_fwd(kiln_dtype in_dtype, kiln_dtype out_dtype, const kiln_linear_params *p,
                            kiln_stream stream)
{
    static const char fn[] = "kiln_linear_fwd";
    kiln_clear_error();
    kiln_linear_args a;
    kiln_status st = check_params(fn, in_dtype, out_dtype, p, &a);
    if (st) return st;
    if (p->workspace && (st = kiln_check_ptr(fn, "workspace", p->workspace, 16, 1))) return st;
    kiln_device_caps caps;
    if ((st = kiln_current_device_caps(&caps))) return st;
    const kiln_op op = p->w_up ? KILN_OP_GATED_LINEAR_FWD : KILN_OP_LINEAR_FWD;
    const plan pl = make_plan(&a, &caps, op, in_dtype, p->act, p->workspace != NULL);
    if (!pl.v) return pl.st;
    const size_t need = workspace_bytes(&a, p->w_up != NULL, pl.splits);
    if (p->workspace && p->workspace_bytes < need)
        return kiln_fail(KILN_STATUS_WORKSPACE_TOO_SMALL,
                         "%s: workspace_bytes is %zu; this call needs %zu (kiln_linear_fwd_workspace)", fn,
                         p->workspace_bytes, need);
    a.splits = pl.splits;
    a.k_tiles_per_split = pl.k_tiles_per_split;
    a.part = pl.splits > 1 ? (float *)p->workspace : NULL;
    a.sm_count = caps.sm_count;
    return kiln_run(pl.v, &a, stream);
}
