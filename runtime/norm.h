/*
 * norm.h: the arguments the normalization entry points (runtime/norm.c) hand
 * to a variant's launcher (generated from templates/norm.cu.tmpl). Internal;
 * C and CUDA C++ both read it.
 */
#ifndef KILN_NORM_H
#define KILN_NORM_H

#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* layernorm_fwd, rmsnorm_fwd and their _fp8 forms (beta and mean unused by
 * rmsnorm; y_scale and y_amax only by _fp8, whose y holds e4m3 bytes). */
typedef struct kiln_norm_args {
    int64_t rows;
    int64_t hidden;
    const void *x;
    const void *residual;  /* may be NULL */
    const void *gamma;     /* may be NULL */
    const void *beta;      /* may be NULL */
    float eps;
    void *y;
    void *residual_out;    /* may be NULL */
    float *mean;           /* may be NULL */
    float *rstd;           /* may be NULL */
    float y_scale;
    float *y_amax;         /* may be NULL */
} kiln_norm_args;

/* layernorm_bwd and rmsnorm_bwd (mean and dbeta unused by rmsnorm). The
 * launcher runs at most max_partials blocks; each leaves its dgamma and dbeta
 * partial sums in the workspace, [2][blocks][hidden] f32, and a second kernel
 * adds them in block order. */
typedef struct kiln_norm_bwd_args {
    int64_t rows;
    int64_t hidden;
    const void *dy;
    const void *s;
    const void *gamma;     /* may be NULL */
    const float *mean;
    const float *rstd;
    const void *ds_extra;  /* may be NULL */
    void *dx;
    void *dgamma;          /* may be NULL */
    void *dbeta;           /* may be NULL */
    float *workspace;      /* NULL when neither dgamma nor dbeta is asked */
    int max_partials;
} kiln_norm_bwd_args;

/* Partial sums for a backward of `rows` rows on a GPU of `sm_count` SMs: two
 * blocks an SM, and at least 16 rows a block so the partials stay small
 * against the rows. */
int kiln_norm_bwd_max_partials(int64_t rows, int sm_count);

#ifdef __cplusplus
}
#endif

#endif /* KILN_NORM_H */
