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

/* layernorm_fwd and rmsnorm_fwd (beta and mean unused by rmsnorm). */
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
} kiln_norm_args;

#ifdef __cplusplus
}
#endif

#endif /* KILN_NORM_H */
