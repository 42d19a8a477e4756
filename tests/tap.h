/*
 * tap.h: a small TAP (Test Anything Protocol, version 13) producer in C.
 *
 *   tap_plan(n)                      "1..n"; tap_plan_late() prints it at the end
 *   tap_ok(cond, fmt, ...)           "ok N - ..." or "not ok N - ..."
 *   tap_skip(reason, fmt, ...)       "ok N - ... # SKIP reason"
 *   tap_todo(cond, reason, fmt, ...) "… # TODO reason" (a failure is not counted)
 *   tap_diag(fmt, ...)               "# ..." diagnostics
 *   tap_bail(fmt, ...)               "Bail out! ..." and exit(1)
 *   tap_done()                       exit status: 0 when nothing failed
 */
#ifndef KILN_TESTS_TAP_H
#define KILN_TESTS_TAP_H

#if defined(__GNUC__)
#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TAP_PRINTF(a, b)
#endif

void tap_plan(int n);
void tap_plan_late(void);
int tap_ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);
void tap_skip(const char *reason, const char *fmt, ...) TAP_PRINTF(2, 3);
int tap_todo(int cond, const char *reason, const char *fmt, ...) TAP_PRINTF(3, 4);
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);
void tap_bail(const char *fmt, ...) TAP_PRINTF(1, 2);
int tap_failed(void);
int tap_done(void);

#endif /* KILN_TESTS_TAP_H */
