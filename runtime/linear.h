/*
 * linear.h: the arguments kiln_linear_fwd (runtime/linear.c) hands to a
 * variant's launcher (generated from templates/linear.cu.tmpl). Internal; C
 * and CUDA C++ both read it.
 */
#ifndef KILN_LINEAR_H
#define KILN_LINEAR_H

#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* k elements a block takes per pipeline stage, on every path: the runtime
 * splits k in whole steps of it. */
#define KILN_LINEAR_BLOCK_K 64

/* FP8: k elements a stage (128 bytes). (A variant's tile columns and
 * whether it is persistent are in the selection table: tile_n, persistent.) */
#define KILN_LINEAR_FP8_BLOCK_K 128

/* KILN_SCALING_BLOCK: k elements of a scale block (of X: 1 × 128; of a
 * weight: 128 × 128). One FP8 stage is one block of k. */
#define KILN_LINEAR_SCALE_BLOCK 128

/* Row strides in elements, already resolved from 0 (dense). */
typedef struct kiln_linear_args {
    int64_t m, n, k;
    const void *x, *w, *w_up; /* w_up: the up projection of the gated op, else NULL */
    int64_t ldx, ldw, ldw_up;
    const void *bias, *bias_up;
    const void *residual;
    int64_t ldr;
    void *y;
    int64_t ldy;
    kiln_dtype out_dtype;
    int pair_store; /* y and residual take 2-element accesses (aligned pointers, even strides) */
    /* Split k: blockIdx.z = split, each taking k_tiles_per_split steps of
     * KILN_LINEAR_BLOCK_K. With splits > 1 the main kernel stores raw f32
     * sums to part, [split][weight][m][n rounded up to even], and a second
     * kernel adds them in split order and applies the epilogue. */
    int splits;
    int k_tiles_per_split;
    float *part;
    int sm_count; /* the device's SMs (kiln_device_caps): persistent kernels size their grid by it */
    /* FP8 inputs: the descale factors in the layout of `scaling` (a
     * kiln_scaling: TENSOR, ROWWISE or BLOCK); NULL otherwise. */
    const float *x_scale, *w_scale, *w_up_scale;
    int scaling;
    /* e4m3 out: y = e4m3(y·y_scale[0]), y_amax (or NULL) raised to max |y|. */
    const float *y_scale;
    float *y_amax;
} kiln_linear_args;

#ifdef __cplusplus
}
#endif

#endif /* KILN_LINEAR_H */
