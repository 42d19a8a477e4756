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

kiln_status kiln_dispatch(const kiln_variant_key *key, const void *args, kiln_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* KILN_DISPATCH_H */
