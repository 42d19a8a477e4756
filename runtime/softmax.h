/*
 * softmax.h: the arguments kiln_softmax_fwd (runtime/softmax.c) hands to a
 * variant's launcher (generated from templates/softmax.cu.tmpl). Internal; C
 * and CUDA C++ both read it.
 */
#ifndef KILN_SOFTMAX_H
#define KILN_SOFTMAX_H

#include <stdint.h>

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_softmax_args {
    int64_t rows;
    int64_t cols;
    const void *x;
    float scale;
    int log;   /* 0: softmax, else log-softmax */
    void *y;
} kiln_softmax_args;

#ifdef __cplusplus
}
#endif

#endif /* KILN_SOFTMAX_H */
