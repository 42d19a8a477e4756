/*
 * dispatch.h: from a checked call to a running variant (internal). Entry
 * points validate their arguments, fill their family's args struct and hand it
 * to kiln_dispatch, which selects (or takes the forced) variant for the
 * current device and launches it.
 */
#ifndef KILN_DISPATCH_H
#define KILN_DISPATCH_H

#include "runtime/variant.h"

#ifdef __cplusplus
extern "C" {
#endif

kiln_status kiln_current_device_caps(kiln_device_caps *caps);

/* The variant the calling thread forces (kiln_force_variant, else
 * KILN_VARIANT) when it is of op; NULL otherwise. Entry points whose shape
 * key is a choice of theirs (linear's block tile) follow it. */
const kiln_variant *kiln_forced_for(kiln_op op);

kiln_status kiln_dispatch(const kiln_variant_key *key, const void *args, kiln_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* KILN_DISPATCH_H */
