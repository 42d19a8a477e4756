/*
 * elementwise.h: the arguments the elementwise family's entry points
 * (runtime/elementwise.c) hand to a variant's launcher (generated from
 * templates/elementwise.cu.tmpl). Internal; C and CUDA C++ both read it.
 */
#ifndef KILN_ELEMENTWISE_H
#define KILN_ELEMENTWISE_H

#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dbias is reduced in two deterministic steps: each chunk of this many rows
 * writes its column sums to the workspace, then one kernel adds the chunks in
 * order. The workspace holds ceil(rows / chunk) × cols f32. */
#define KILN_EW_DBIAS_CHUNK_ROWS 64

/* elementwise_fwd and elementwise_bwd. Sizes are checked (rows, cols > 0,
 * rows·cols representable) before a launcher sees them. */
typedef struct kiln_elementwise_args {
    int64_t rows;
    int64_t cols;
    const void *x;
    const void *dy;     /* backward only */
    const void *bias;   /* may be NULL */
    float scale;
    void *out;          /* forward: y; backward: dx */
    void *dbias;        /* backward, may be NULL */
    float *workspace;   /* backward with dbias */
} kiln_elementwise_args;

/* gated_fwd and gated_bwd. */
typedef struct kiln_gated_args {
    int64_t n;
    const void *gate;
    const void *up;
    const void *dy;     /* backward only */
    void *out;          /* forward: y; backward: dgate */
    void *dup;          /* backward only */
} kiln_gated_args;

#ifdef __cplusplus
}
#endif

#endif /* KILN_ELEMENTWISE_H */
