/*
 * par.c: see par.h. Threads are made per call and joined before it returns
 * (a call costs tens of microseconds a thread, against references of
 * milliseconds and more); they take chunks from a shared counter, so a
 * thread the OS leaves waiting holds up no more than its chunk. A thread
 * that cannot be made leaves its share to the others.
 */
#define _POSIX_C_SOURCE 200809L

#include "tests/par.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PAR_MAX_THREADS 256

typedef struct par_job {
    pthread_mutex_t lock;
    int64_t next, n, chunk;
    par_body body;
    void *ctx;
} par_job;

static double spent;

double par_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double par_seconds(void) { return spent; }

int par_threads(void)
{
    static int threads;
    if (threads == 0) {
        const char *s = getenv("KILN_TEST_THREADS");
        long t = s && *s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
        threads = t < 1 ? 1 : t > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)t;
    }
    return threads;
}

static void *work(void *arg)
{
    par_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        const int64_t lo = j->next;
        j->next = lo < j->n ? lo + j->chunk : lo;
        pthread_mutex_unlock(&j->lock);
        if (lo >= j->n) return NULL;
        j->body(j->ctx, lo, lo + j->chunk < j->n ? lo + j->chunk : j->n);
    }
}

void par_for(int64_t n, int64_t chunk, par_body body, void *ctx)
{
    if (n <= 0) return;
    const double t0 = par_now();
    if (chunk < 1) chunk = 1;
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int threads = chunks < par_threads() ? (int)chunks : par_threads();
    if (threads <= 1) {
        body(ctx, 0, n);
    } else {
        par_job j;
        pthread_mutex_init(&j.lock, NULL);
        j.next = 0, j.n = n, j.chunk = chunk, j.body = body, j.ctx = ctx;
        pthread_t t[PAR_MAX_THREADS];
        int made[PAR_MAX_THREADS];
        for (int i = 1; i < threads; i++) made[i] = pthread_create(&t[i], NULL, work, &j) == 0;
        work(&j);
        for (int i = 1; i < threads; i++)
            if (made[i]) pthread_join(t[i], NULL);
        pthread_mutex_destroy(&j.lock);
    }
    spent += par_now() - t0;
}
