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

/* The current device's compute capability and SM count. A KILN_VARIANT
 * that names no variant fails it first (VARIANT_NOT_FOUND), so every entry
 * point reports that before any CUDA call, as elementwise always did. */
kiln_status kiln_current_device_caps(kiln_device_caps *caps);

/* VARIANT_NOT_FOUND when KILN_VARIANT names no variant (and the thread forces
 * none of its own): for the calls that need no device, the size queries. */
kiln_status kiln_check_forced(void);

/* The variant the calling thread forces (kiln_force_variant, else
 * KILN_VARIANT) when it is of op; NULL otherwise. Entry points whose shape
 * key is a choice of theirs (linear's block tile) follow it. */
const kiln_variant *kiln_forced_for(kiln_op op);

/* The smallest shape key of op and dtype that is at least `shape` among
 * the variants that run on compute capability cc, else (none there, or cc
 * 0: no device) among all; 0: none. Kept per thread, as the selection's
 * answers are: attention calls ask it for their head dim on every call. */
int kiln_smallest_shape(kiln_op op, kiln_dtype dtype, int shape, int cc);

/* How many ways to split work of `blocks` blocks (k, or keys) so that
 * waves of `slots` resident blocks fill: 1 while the blocks alone fill a
 * wave; else the fewest splits from 2 to `most` whose blocks fill their
 * waves within 95 % of the best fill any count reaches; 1 when none does.
 * A split count that leaves a sliver of a second wave costs nearly a whole
 * wave (attention decode and linear with small m, docs/attention.md,
 * docs/linear.md). */
int kiln_wave_splits(int64_t blocks, int64_t slots, int64_t most);

kiln_status kiln_dispatch(const kiln_variant_key *key, const void *args, kiln_stream stream);

/* The variant kiln_dispatch would run for key on a device of caps (the
 * forced one included), or NULL with *status (and the error) saying why
 * none would. */
const kiln_variant *kiln_choose(const kiln_variant_key *key, const kiln_device_caps *caps, kiln_status *status);

/* Launches v (from kiln_choose) as kiln_dispatch launches what it selects. */
kiln_status kiln_run(const kiln_variant *v, const void *args, kiln_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* KILN_DISPATCH_H */
