/*
 * bench_util.h: what kiln's benchmarks share: error checks, the timing rule
 * (5 warm-up runs, then CUDA events around samples of BENCH_BATCH
 * back-to-back runs, the median over samples), the copy ceiling measured on
 * the device at hand, and random device data of any kiln dtype.
 */
#ifndef KILN_BENCH_UTIL_H
#define KILN_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "runtime/kiln.h"

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define KCHECK(call)                                                                                 \
    do {                                                                                             \
        kiln_status s_ = (call);                                                                     \
        if (s_ != KILN_STATUS_SUCCESS) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, kiln_last_error());        \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

/* Runs per timed sample, back to back: the GPU stays busy, so the host's
 * launch gaps do not count (the peers script times the same way). */
#define BENCH_BATCH 10

/* One run; `i` counts runs from 0 (for rotating buffer sets). */
typedef kiln_status (*bench_run_fn)(void *ctx, int i);

/* Median milliseconds of one run over `iters` samples. */
float bench_time_ms(bench_run_fn run, void *ctx, int iters);

/* Two calls timed in turn, for a ratio in one run: `iters` pairs of
 * samples, A's and B's back to back (A first in even pairs, B first in odd
 * ones), so both meet the same clock and temperature, which on an H100
 * drift by several % between samples taken seconds apart. Sets each call's
 * median ms and returns the median over pairs of ms_b / ms_a (A's speed as
 * a multiple of B's). */
double bench_time_pair_ms(bench_run_fn run_a, void *ctx_a, bench_run_fn run_b, void *ctx_b, int iters, float *ms_a,
                          float *ms_b);

/* Device-to-device cudaMemcpy of `bytes`, in GB/s counting read + write. */
double bench_copy_ceiling(size_t bytes, int iters);

/* n values uniform in [lo, hi), stored as dtype, from a fixed seed. */
void bench_fill_random(void *dev, int64_t n, kiln_dtype dtype, uint64_t seed, double lo, double hi);

/* Element i of host data stored as dtype, widened to double. */
double bench_load(const void *host, int64_t i, kiln_dtype dtype);

size_t bench_dtype_size(kiln_dtype dtype);

/* n elements of dtype from the device, widened to double (malloc'd; free it). */
double *bench_download(const void *dev, int64_t n, kiln_dtype dtype);

/* ‖got − ref‖₂ / ‖ref‖₂; Inf when either holds a NaN or an Inf. */
double bench_rel_err(const double *got, const double *ref, int64_t n);

/* Buffer sets to rotate so that one run's inputs (bytes per set) are not in
 * L2 from the run before. */
int bench_sets_for(size_t bytes_per_set, int l2_bytes);

#endif /* KILN_BENCH_UTIL_H */
