/*
 * gpu_util.h: what the GPU tests share: the CUDA check macro, a seeded random
 * source, device buffers of any kiln dtype with poisoned guard zones on both
 * sides, and the error measures (‖out − ref‖ / ‖ref‖ and max |out − ref|).
 */
#ifndef KILN_TESTS_GPU_UTIL_H
#define KILN_TESTS_GPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "runtime/kiln.h"
#include "tests/tap.h"

#define CUDA_CHECK(call)                                                                                   \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) tap_bail("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    } while (0)

/* Whether a usable CUDA device is there; `why` gets the reason when not. */
int gpu_available(char *why, size_t n);

/* splitmix64. The seed comes from KILN_SEED, else the clock; it is printed. */
typedef struct rng {
    uint64_t s;
} rng;
uint64_t test_seed(void);
double rng_uniform(rng *r, double lo, double hi);

/* Elements of guard on each side of a buffer; poisoned with 0xFF bytes (NaN
 * in every float type) and checked after each run. */
#define GUARD_ELEMS 64

typedef struct dbuf {
    kiln_dtype dtype;
    int64_t n;
    size_t es;
    unsigned char *base; /* device allocation */
    void *ptr;           /* first element: base + (GUARD_ELEMS + offset) elements */
    int64_t offset;
} dbuf;

/* n elements starting `offset` elements past a 256-byte aligned guard zone. */
dbuf dbuf_alloc(kiln_dtype dtype, int64_t n, int64_t offset);
void dbuf_free(dbuf *b);
/* Stores v in the dtype; v is replaced by the values actually stored. */
void dbuf_upload(dbuf *b, double *v);
void dbuf_download(const dbuf *b, double *v);
void dbuf_poison(dbuf *b);
/* 1 when both guard zones still hold the poison. */
int dbuf_guards_intact(const dbuf *b);

typedef struct err {
    double rel;   /* ‖out − ref‖₂ / ‖ref‖₂; inf when out or ref has a NaN or Inf */
    double max_abs;
    double ref_max;
} err;
err compare(const double *out, const double *ref, int64_t n);

/* Tolerances for results stored in dtype. A result passes when its max-abs
 * error is within tol_abs (outputs whose reference is tiny, where a relative
 * error says nothing), or when ‖out − ref‖/‖ref‖ is within tol_rel and no
 * element is off by more than 4·tol_rel·max(1, max |ref|). NaN never passes. */
double tol_rel(kiln_dtype dtype);
double tol_abs(kiln_dtype dtype);
int within_tolerance(err e, kiln_dtype dtype);

#endif /* KILN_TESTS_GPU_UTIL_H */
