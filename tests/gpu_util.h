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
#include "runtime/variant.h"
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
/* Stores v in the dtype; v is replaced by the values actually stored (FP8:
 * rounded to nearest even from the double, saturating at ±max, NaN as NaN). */
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
/* The same with tol_rel and tol_abs times k, for results that sum many terms. */
int within_tolerance_k(err e, kiln_dtype dtype, double k);

/* After a kiln call: 0 (with a diagnostic) when it returned a failure, else
 * 1 once the GPU has finished it without an error (a CUDA error bails out). */
int finished(kiln_status st, const char *what);

/* The per-variant sweep of a GPU test: every variant of the table that
 * `match` accepts and KILN_TEST_FILTER (a substring) admits is forced by name
 * and handed to `run`, which checks it (TAP lines); then the sweep checks
 * that the variant ran as forced. Without a GPU, or for a variant with no
 * code for this GPU, a # SKIP line. Returns the GPU's compute capability
 * (0: none) after seeding `r`; `tested` gets the variants run. The summary
 * line gives the sweep's wall time, split between variants run from PTX
 * (through the driver's JIT) and from SASS, and the time in the threaded
 * references (par.h).
 *
 * KILN_TEST_SHARD=i/n (0 ≤ i < n) runs every n-th of the variants admitted,
 * from the i-th: n processes given 0/n … n-1/n share one sweep (the others
 * print nothing of the ones they leave). A test runs its checks after the
 * sweep only where gpu_shard_first() says so, so they run once. */
typedef struct sweep {
    const char *family;                      /* for the summary line */
    int (*match)(const kiln_variant_info *v);
    void (*run)(const kiln_variant_info *v);
} sweep;
int gpu_sweep(const sweep *s, rng *r, int *tested);

/* 1 without KILN_TEST_SHARD, or in its shard 0/n. */
int gpu_shard_first(void);

#endif /* KILN_TESTS_GPU_UTIL_H */
