/*
 * par.h: a parallel for on host threads (pthreads), for the CPU references of
 * the GPU tests. Each index is handed to one thread, so a reference that
 * computes each output from its index alone gives the same bits whatever the
 * thread count.
 *
 * Threads: KILN_TEST_THREADS when set (1: no threads), else the online CPUs.
 */
#ifndef KILN_TESTS_PAR_H
#define KILN_TESTS_PAR_H

#include <stdint.h>

/* Runs body(ctx, lo, hi) over disjoint ranges that cover [0, n), chunks of
 * `chunk` indices (the last may be short) taken in turn by up to
 * par_threads() threads, the caller's among them. With one chunk, or one
 * thread, body(ctx, 0, n) on the caller's thread. Returns when all are done. */
typedef void (*par_body)(void *ctx, int64_t lo, int64_t hi);
void par_for(int64_t n, int64_t chunk, par_body body, void *ctx);

int par_threads(void);

/* Wall seconds spent in par_for so far (by the calling process). */
double par_seconds(void);

/* A monotonic clock, seconds. */
double par_now(void);

#endif /* KILN_TESTS_PAR_H */
