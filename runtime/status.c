/*
 * status.c: status strings, names of the enums, and the per-thread message of
 * the last failed call.
 */
#include <stdarg.h>
#include <stdio.h>

#include "runtime/error.h"
#include "runtime/kiln.h"

static __thread char last_error[512];

kiln_status kiln_fail(kiln_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void kiln_clear_error(void) { last_error[0] = '\0'; }

const char *kiln_last_error(void) { return last_error; }

const char *kiln_status_string(kiln_status status)
{
    switch (status) {
    case KILN_STATUS_SUCCESS: return "KILN_STATUS_SUCCESS: the call succeeded";
    case KILN_STATUS_INVALID_VALUE: return "KILN_STATUS_INVALID_VALUE: an argument is NULL, out of its range, contradicts another or overlaps another tensor";
    case KILN_STATUS_MISALIGNED: return "KILN_STATUS_MISALIGNED: a pointer or a row stride does not meet the alignment the kernel reads with";
    case KILN_STATUS_NOT_SUPPORTED: return "KILN_STATUS_NOT_SUPPORTED: this dtype, activation, scaling or combination of them is not offered (or not built)";
    case KILN_STATUS_ARCH_MISMATCH: return "KILN_STATUS_ARCH_MISMATCH: no variant built for this GPU's architecture";
    case KILN_STATUS_VARIANT_NOT_FOUND: return "KILN_STATUS_VARIANT_NOT_FOUND: no variant of that name in the table";
    case KILN_STATUS_WORKSPACE_TOO_SMALL: return "KILN_STATUS_WORKSPACE_TOO_SMALL: workspace_bytes is less than the call needs (its size query)";
    case KILN_STATUS_CUDA_ERROR: return "KILN_STATUS_CUDA_ERROR: the CUDA runtime reported an error";
    case KILN_STATUS_NO_DEVICE: return "KILN_STATUS_NO_DEVICE: no usable CUDA device";
    }
    return "KILN_STATUS_UNKNOWN: not a kiln status";
}

const char *kiln_dtype_name(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: return "f32";
    case KILN_DTYPE_F16: return "f16";
    case KILN_DTYPE_BF16: return "bf16";
    case KILN_DTYPE_E4M3: return "e4m3";
    case KILN_DTYPE_E5M2: return "e5m2";
    }
    return "unknown";
}

const char *kiln_activation_name(kiln_activation act)
{
    switch (act) {
    case KILN_ACT_NONE: return "none";
    case KILN_ACT_RELU: return "relu";
    case KILN_ACT_GELU_TANH: return "gelu_tanh";
    case KILN_ACT_GELU_ERF: return "gelu_erf";
    case KILN_ACT_SILU: return "silu";
    }
    return "unknown";
}

const char *kiln_op_name(kiln_op op)
{
    switch (op) {
    case KILN_OP_ELEMENTWISE_FWD: return "elementwise_fwd";
    case KILN_OP_ELEMENTWISE_BWD: return "elementwise_bwd";
    case KILN_OP_GATED_FWD: return "gated_fwd";
    case KILN_OP_GATED_BWD: return "gated_bwd";
    case KILN_OP_LAYERNORM_FWD: return "layernorm_fwd";
    case KILN_OP_RMSNORM_FWD: return "rmsnorm_fwd";
    case KILN_OP_LAYERNORM_BWD: return "layernorm_bwd";
    case KILN_OP_RMSNORM_BWD: return "rmsnorm_bwd";
    case KILN_OP_LAYERNORM_FWD_FP8: return "layernorm_fwd_fp8";
    case KILN_OP_RMSNORM_FWD_FP8: return "rmsnorm_fwd_fp8";
    case KILN_OP_SOFTMAX_FWD: return "softmax_fwd";
    case KILN_OP_ATTENTION_FWD: return "attention_fwd";
    case KILN_OP_ATTENTION_BWD: return "attention_bwd";
    case KILN_OP_LINEAR_FWD: return "linear_fwd";
    case KILN_OP_GATED_LINEAR_FWD: return "gated_linear_fwd";
    }
    return "unknown";
}
