/*
 * tap.c: the TAP producer of tap.h. Output is flushed line by line so a crash
 * leaves every finished test line in the log.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/tap.h"

static int tap_count;
static int tap_fails;
static int tap_planned = -1;
static int tap_late;

void tap_plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

void tap_plan_late(void) { tap_late = 1; }

static void line(int ok, const char *directive, const char *fmt, va_list ap)
{
    printf("%sok %d - ", ok ? "" : "not ", ++tap_count);
    vprintf(fmt, ap);
    if (directive) printf(" # %s", directive);
    printf("\n");
    fflush(stdout);
}

int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line(cond, NULL, fmt, ap);
    va_end(ap);
    if (!cond) tap_fails++;
    return cond;
}

void tap_skip(const char *reason, const char *fmt, ...)
{
    char directive[256];
    snprintf(directive, sizeof directive, "SKIP %s", reason);
    va_list ap;
    va_start(ap, fmt);
    line(1, directive, fmt, ap);
    va_end(ap);
}

int tap_todo(int cond, const char *reason, const char *fmt, ...)
{
    char directive[256];
    snprintf(directive, sizeof directive, "TODO %s", reason);
    va_list ap;
    va_start(ap, fmt);
    line(cond, directive, fmt, ap);
    va_end(ap);
    return cond;
}

void tap_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

void tap_bail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("Bail out! ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(1);
}

int tap_failed(void) { return tap_fails; }

int tap_done(void)
{
    if (tap_late) printf("1..%d\n", tap_count);
    else if (tap_planned >= 0 && tap_planned != tap_count) {
        printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
        tap_fails++;
    }
    printf("# %d passed, %d failed\n", tap_count - tap_fails, tap_fails);
    fflush(stdout);
    return tap_fails ? 1 : 0;
}
