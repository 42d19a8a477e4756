/*
 * env_variant_test.c: KILN_VARIANT, read at the first call, forces a variant
 * for every thread; a name not in the table fails the call with
 * KILN_STATUS_VARIANT_NOT_FOUND naming the variable, before any CUDA call, and
 * kiln_force_variant(NULL) does not lift it (only a thread's own forcing
 * overrides it). Every family says so before it asks for the device, so on
 * a machine without a GPU too. Run with KILN_VARIANT=no_such_variant
 * (tests/BUILD sets it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kiln.h"
#include "tests/tap.h"

int main(void)
{
    tap_plan(9);
    const char *env = getenv("KILN_VARIANT");
    if (env == NULL || strcmp(env, "no_such_variant") != 0) tap_bail("run me with KILN_VARIANT=no_such_variant");
    void *x = (void *)(uintptr_t)0x1000000, *y = (void *)(uintptr_t)0x2000000;
    kiln_status st = kiln_elementwise_fwd(KILN_DTYPE_F16, KILN_ACT_RELU, 4, 8, x, 1.0f, NULL, y, NULL);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND && strstr(kiln_last_error(), "KILN_VARIANT 'no_such_variant'"),
           "an unknown KILN_VARIANT fails the call (%s)", kiln_last_error());
    kiln_force_variant(NULL);
    st = kiln_gated_fwd(KILN_DTYPE_F16, KILN_ACT_SILU, 64, x, y, (char *)y + 4096, NULL);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "it holds for every op and after kiln_force_variant(NULL)");
    /* Attention and linear ask for the device's SM count before they pick
     * a variant: the unknown name still comes first. */
    const kiln_attention_params ap = {1, 16, 16, 1, 1, 64, x, x, x, y, {1024, 64, 64}, {1024, 64, 64}, {1024, 64, 64},
                                      {1024, 64, 64}, 0.125f, 0, -1, -1, NULL, NULL, NULL};
    st = kiln_attention_fwd(KILN_DTYPE_F16, &ap, NULL);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "attention: VARIANT_NOT_FOUND (%s)", kiln_status_string(st));
    const kiln_linear_params lp = {4, 64, 64, x, 0, (char *)x + 4096, 0, NULL, NULL, 0, NULL, NULL, 0, y, 0,
                                   KILN_ACT_NONE, NULL, 0, KILN_SCALING_NONE, NULL, NULL, NULL};
    st = kiln_linear_fwd(KILN_DTYPE_F16, KILN_DTYPE_F16, &lp, NULL);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "linear: VARIANT_NOT_FOUND (%s)", kiln_status_string(st));
    /* The size queries, which need no device, say it too. */
    size_t bytes = 0;
    st = kiln_elementwise_bwd_workspace_size(KILN_DTYPE_F16, 4, 8, 1, &bytes);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "elementwise bwd workspace size: VARIANT_NOT_FOUND (%s)",
           kiln_status_string(st));
    st = kiln_norm_bwd_workspace_size(KILN_DTYPE_F16, 4, 768, 0, &bytes);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "norm bwd workspace size: VARIANT_NOT_FOUND (%s)",
           kiln_status_string(st));
    st = kiln_attention_fwd_workspace(KILN_DTYPE_F16, &ap, &bytes);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "attention fwd workspace: VARIANT_NOT_FOUND (%s)",
           kiln_status_string(st));
    const kiln_attention_bwd_params bp = {.batch = 1, .seq_q = 16, .seq_k = 16, .heads_q = 1, .heads_kv = 1,
                                          .head_dim = 64, .q = x, .k = x, .v = x, .o = x, .dout = x,
                                          .lse = (const float *)y, .dq = (char *)y + 4096, .dk = (char *)y + 8192,
                                          .dv = (char *)y + 12288, .q_stride = {1024, 64, 64}, .k_stride = {1024, 64, 64},
                                          .v_stride = {1024, 64, 64}, .o_stride = {1024, 64, 64},
                                          .dout_stride = {1024, 64, 64}, .dq_stride = {1024, 64, 64},
                                          .dk_stride = {1024, 64, 64}, .dv_stride = {1024, 64, 64}, .scale = 0.125f,
                                          .window_left = -1, .window_right = -1};
    st = kiln_attention_bwd_workspace(KILN_DTYPE_F16, &bp, &bytes);
    tap_ok(st == KILN_STATUS_VARIANT_NOT_FOUND, "attention bwd workspace: VARIANT_NOT_FOUND (%s)",
           kiln_status_string(st));
    /* The table's first variant is elementwise_fwd none f32: forced for an f16
     * relu call it must be refused (no launch), or, without a GPU, the call
     * stops at the device; either way KILN_VARIANT no longer decides. */
    kiln_variant_info info;
    kiln_variant_get(0, &info);
    kiln_force_variant(info.name);
    st = kiln_elementwise_fwd(KILN_DTYPE_F16, KILN_ACT_RELU, 4, 8, x, 1.0f, NULL, y, NULL);
    tap_ok(st == KILN_STATUS_NOT_SUPPORTED || st == KILN_STATUS_NO_DEVICE,
           "a thread's own kiln_force_variant(%s) overrides it (%s)", info.name, kiln_status_string(st));
    return tap_done();
}
