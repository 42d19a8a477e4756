/*
 * error.h: how kiln code reports a failure (internal). kiln_fail records the
 * status and a printf-style message as the calling thread's last error and
 * returns the status, so a check reads `return kiln_fail(...)`.
 */
#ifndef KILN_ERROR_H
#define KILN_ERROR_H

#include "runtime/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
kiln_status kiln_fail(kiln_status status, const char *fmt, ...);

/* Clears the thread's last error; called at the start of every entry point. */
void kiln_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ERROR_H */
