/*
 * select.c: the selection rule over the generated table, the forced variant
 * (kiln_force_variant, KILN_VARIANT), the table's listing, and the current
 * device's capabilities, read once per device.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "runtime/dispatch.h"
#include "runtime/error.h"
#include "runtime/variant.h"

int kiln_variant_runs_on(const kiln_variant *v, int cc)
{
    if (v->sass_arch != 0 && cc / 10 == v->sass_arch / 10 && cc >= v->sass_arch) return 1;
    return v->ptx_arch != 0 && cc >= v->ptx_arch;
}

/* Code for one arch alone (sm_90a): SASS and no PTX. */
static int arch_specific(const kiln_variant *v) { return v->sass_arch != 0 && v->ptx_arch == 0; }

static const char *arch_reason(const kiln_variant *v, int cc, char *buf, size_t n)
{
    char sass[16] = "", ptx[24] = "";
    if (v->sass_arch) snprintf(sass, sizeof sass, "SASS sm_%d", v->sass_arch);
    if (v->ptx_arch) snprintf(ptx, sizeof ptx, "%sPTX compute_%d", v->sass_arch ? " and " : "", v->ptx_arch);
    if (!kiln_variant_runs_on(v, v->arch) && cc / 10 == v->arch / 10)
        snprintf(buf, n, "%s was written for sm_%d but built as %s%s (the toolkit cannot target sm_%d), "
                 "so it cannot run on this sm_%d GPU; rebuild with a CUDA 12.x toolkit (CUDA_PATH)",
                 v->name, v->arch, sass, ptx, v->arch, cc);
    else
        snprintf(buf, n, "%s carries %s%s and cannot run on this sm_%d GPU", v->name, sass, ptx, cc);
    return buf;
}

const kiln_variant *kiln_select_from(const kiln_variant *table, int size, const kiln_variant_key *key,
                                     const kiln_device_caps *caps, const char *forced, kiln_status *status)
{
    char why[320];
    if (forced != NULL) {
        for (int i = 0; i < size; i++) {
            const kiln_variant *v = &table[i];
            if (strcmp(v->name, forced) != 0) continue;
            if (v->op != key->op) break; /* forced for another op: select as usual */
            if (v->dtype != key->dtype || v->act != key->act || (v->shape_key != key->shape_key && v->shape_key != 0)) {
                *status = kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                                    "forced variant %s is %s %s shape %d; the call asks for %s %s shape %d",
                                    v->name, kiln_activation_name(v->act), kiln_dtype_name(v->dtype), v->shape_key,
                                    kiln_activation_name(key->act), kiln_dtype_name(key->dtype), key->shape_key);
                return NULL;
            }
            if (!kiln_variant_runs_on(v, caps->cc)) {
                *status = kiln_fail(KILN_STATUS_ARCH_MISMATCH, "forced variant %s",
                                    arch_reason(v, caps->cc, why, sizeof why));
                return NULL;
            }
            return v;
        }
    }

    /* A variant of the call's shape key, else a generic one (shape key 0). */
    const kiln_variant *best = NULL, *any = NULL;
    for (int i = 0; i < size; i++) {
        const kiln_variant *v = &table[i];
        if (v->op != key->op || v->dtype != key->dtype || v->act != key->act ||
            (v->shape_key != key->shape_key && v->shape_key != 0))
            continue;
        /* For the message: the variant written for the newest arch not past cc. */
        if (any == NULL || (v->arch <= caps->cc && (any->arch > caps->cc || v->arch > any->arch))) any = v;
        if (!kiln_variant_runs_on(v, caps->cc)) continue;
        /* The exact shape wins, then the highest arch; at one arch, machine
         * code before PTX, and arch-specific code (sm_90a: SASS, no PTX)
         * before portable code. */
        const int exact = v->shape_key == key->shape_key, best_exact = best && best->shape_key == key->shape_key;
        if (best == NULL || exact > best_exact ||
            (exact == best_exact &&
             (v->arch > best->arch ||
              (v->arch == best->arch &&
               (v->sass_arch > best->sass_arch ||
                (v->sass_arch == best->sass_arch && arch_specific(v) > arch_specific(best)))))))
            best = v;
    }
    if (best != NULL) return best;
    if (any != NULL)
        *status = kiln_fail(KILN_STATUS_ARCH_MISMATCH, "%s %s %s: no built variant runs on this sm_%d GPU (e.g. %s)",
                            kiln_op_name(key->op), kiln_activation_name(key->act), kiln_dtype_name(key->dtype),
                            caps->cc, arch_reason(any, caps->cc, why, sizeof why));
    else
        *status = kiln_fail(KILN_STATUS_NOT_SUPPORTED,
                            "%s %s %s: not in this build (bf16 needs sm_80+; see generated/VARIANTS.md and --//:archs)",
                            kiln_op_name(key->op), kiln_activation_name(key->act), kiln_dtype_name(key->dtype));
    return NULL;
}

/* ---- per-thread forcing and KILN_VARIANT ---- */

/* A forced variant is found in the table once, when it is forced (the
 * thread's) or at the first call (KILN_VARIANT), so a forced call costs no
 * scan of the table's names. */
static __thread const kiln_variant *forced_variant;
static __thread int forced_set;
static __thread const char *last_variant = "";

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char env_forced[128];
static const kiln_variant *env_variant; /* NULL where KILN_VARIANT names none */

static const kiln_variant *find(const char *name)
{
    for (int i = 0; i < kiln_variant_table_size; i++)
        if (strcmp(kiln_variant_table[i].name, name) == 0) return &kiln_variant_table[i];
    return NULL;
}

/* A value too long for any variant name is kept as a prefix that names none,
 * so the calls fail with VARIANT_NOT_FOUND rather than run unforced. */
static void read_env(void)
{
    const char *s = getenv("KILN_VARIANT");
    if (s != NULL) snprintf(env_forced, sizeof env_forced, "%s", s);
    if (env_forced[0]) env_variant = find(env_forced);
}

kiln_status kiln_force_variant(const char *name)
{
    kiln_clear_error();
    if (name == NULL) {
        forced_set = 0;
        return KILN_STATUS_SUCCESS;
    }
    const kiln_variant *v = find(name);
    if (v == NULL)
        return kiln_fail(KILN_STATUS_VARIANT_NOT_FOUND,
                         "kiln_force_variant: name '%.100s' is not in the table of %d variants (kiln_variant_get lists them)",
                         name, kiln_variant_table_size);
    forced_variant = v;
    forced_set = 1;
    return KILN_STATUS_SUCCESS;
}

const char *kiln_last_variant(void) { return last_variant; }

/* ---- devices ---- */

#define KILN_MAX_DEVICES 64
static int caps_cc[KILN_MAX_DEVICES];
static int caps_sms[KILN_MAX_DEVICES];

kiln_status kiln_current_device_caps(kiln_device_caps *caps)
{
    kiln_status st = kiln_check_forced();
    if (st != KILN_STATUS_SUCCESS) return st;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return kiln_fail(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? KILN_STATUS_NO_DEVICE
                                                                                     : KILN_STATUS_CUDA_ERROR,
                         "cudaGetDevice: %s", cudaGetErrorString(e));
    if (dev < 0 || dev >= KILN_MAX_DEVICES)
        return kiln_fail(KILN_STATUS_NOT_SUPPORTED, "device %d: kiln handles devices 0 to %d", dev, KILN_MAX_DEVICES - 1);
    int cc = __atomic_load_n(&caps_cc[dev], __ATOMIC_ACQUIRE);
    if (cc == 0) {
        int major = 0, minor = 0, sms = 0;
        if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
            return kiln_fail(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? KILN_STATUS_NO_DEVICE
                                                                                         : KILN_STATUS_CUDA_ERROR,
                             "cudaDeviceGetAttribute(device %d): %s", dev, cudaGetErrorString(e));
        __atomic_store_n(&caps_sms[dev], sms, __ATOMIC_RELAXED);
        cc = major * 10 + minor;
        __atomic_store_n(&caps_cc[dev], cc, __ATOMIC_RELEASE);
    }
    caps->cc = cc;
    caps->sm_count = __atomic_load_n(&caps_sms[dev], __ATOMIC_RELAXED);
    return KILN_STATUS_SUCCESS;
}

/* Of n·blocks blocks, the fraction the waves they take keep busy. */
static double wave_fill(int64_t blocks, int64_t slots, int64_t n)
{
    const int64_t b = blocks * n, waves = (b + slots - 1) / slots;
    return (double)b / (double)(waves * slots);
}

int kiln_wave_splits(int64_t blocks, int64_t slots, int64_t most)
{
    if (blocks >= slots) return 1;
    double best = 0;
    for (int64_t n = 1; n <= most; n++)
        if (wave_fill(blocks, slots, n) > best) best = wave_fill(blocks, slots, n);
    for (int64_t n = 2; n <= most; n++)
        if (wave_fill(blocks, slots, n) >= 0.95 * best) return (int)n;
    return 1;
}

/* The calling thread's forced variant (NULL: none, or a KILN_VARIANT that
 * names none, which kiln_check_forced reports). */
static const kiln_variant *forced_now(void)
{
    pthread_once(&env_once, read_env);
    return forced_set ? forced_variant : env_variant;
}

const kiln_variant *kiln_forced_for(kiln_op op)
{
    const kiln_variant *v = forced_now();
    return v && v->op == op ? v : NULL;
}

/* A forced name must name a variant of the table (kiln_force_variant
 * checked its own). */
kiln_status kiln_check_forced(void)
{
    if (forced_now() == NULL && !forced_set && env_forced[0])
        return kiln_fail(KILN_STATUS_VARIANT_NOT_FOUND, "KILN_VARIANT '%s' is not in the table of %d variants",
                         env_forced, kiln_variant_table_size);
    return KILN_STATUS_SUCCESS;
}

/* The table scan's answers, by key and compute capability, per thread (no
 * locks), direct-mapped: a call's selection is then a lookup. (A scan of
 * the 1141 variants took about 2 µs, and a linear call can scan twice: a
 * selected 256³ linear call cost 10.4 µs of CPU time before, 5.9 µs with
 * this, H100, 2026-11-25.) */
typedef struct pick_entry {
    kiln_variant_key key;
    int cc;
    const kiln_variant *v; /* NULL: empty (failed selections are not kept) */
} pick_entry;
static __thread pick_entry pick_cache[64];

static pick_entry *pick_slot(const kiln_variant_key *k, int cc)
{
    unsigned h = (unsigned)k->op * 73856093u ^ (unsigned)k->dtype * 19349663u ^ (unsigned)k->act * 83492791u ^
                 (unsigned)k->shape_key * 2654435761u ^ (unsigned)cc * 40503u;
    return &pick_cache[(h ^ h >> 16) % (sizeof pick_cache / sizeof pick_cache[0])];
}

/* kiln_smallest_shape's answers, kept as the scan's above. */
typedef struct shape_entry {
    kiln_op op;
    kiln_dtype dtype;
    int shape, cc, answer;
    int used;
} shape_entry;
static __thread shape_entry shape_cache[32];

int kiln_smallest_shape(kiln_op op, kiln_dtype dtype, int shape, int cc)
{
    const unsigned h = (unsigned)op * 73856093u ^ (unsigned)dtype * 19349663u ^ (unsigned)shape * 2654435761u ^
                       (unsigned)cc * 40503u;
    shape_entry *e = &shape_cache[(h ^ h >> 16) % (sizeof shape_cache / sizeof shape_cache[0])];
    if (e->used && e->op == op && e->dtype == dtype && e->shape == shape && e->cc == cc) return e->answer;
    int best = 0, best_runs = 0;
    for (int i = 0; i < kiln_variant_table_size; i++) {
        const kiln_variant *v = &kiln_variant_table[i];
        if (v->op != op || v->dtype != dtype || v->shape_key < shape) continue;
        if (best == 0 || v->shape_key < best) best = v->shape_key;
        if (cc && kiln_variant_runs_on(v, cc) && (best_runs == 0 || v->shape_key < best_runs)) best_runs = v->shape_key;
    }
    *e = (shape_entry){op, dtype, shape, cc, best_runs ? best_runs : best, 1};
    return e->answer;
}

/* kiln_select_from on the table, or on the forced variant alone where it is
 * of the key's op. */
static const kiln_variant *pick(const kiln_variant_key *key, const kiln_device_caps *caps, kiln_status *status)
{
    const kiln_variant *forced = forced_now();
    if (forced && forced->op == key->op) return kiln_select_from(forced, 1, key, caps, forced->name, status);
    pick_entry *e = pick_slot(key, caps->cc);
    if (e->v && e->cc == caps->cc && e->key.op == key->op && e->key.dtype == key->dtype &&
        e->key.shape_key == key->shape_key && e->key.act == key->act)
        return e->v;
    const kiln_variant *v = kiln_select_from(kiln_variant_table, kiln_variant_table_size, key, caps, NULL, status);
    if (v) *e = (pick_entry){*key, caps->cc, v};
    return v;
}

const kiln_variant *kiln_choose(const kiln_variant_key *key, const kiln_device_caps *caps, kiln_status *status)
{
    if ((*status = kiln_check_forced()) != KILN_STATUS_SUCCESS) return NULL;
    return pick(key, caps, status);
}

kiln_status kiln_dispatch(const kiln_variant_key *key, const void *args, kiln_stream stream)
{
    kiln_device_caps caps;
    kiln_status st = kiln_current_device_caps(&caps);
    if (st != KILN_STATUS_SUCCESS) return st;
    const kiln_variant *v = pick(key, &caps, &st);
    if (v == NULL) return st;
    return kiln_run(v, args, stream);
}

kiln_status kiln_run(const kiln_variant *v, const void *args, kiln_stream stream)
{
    const kiln_status st = v->launch(args, stream);
    if (st == KILN_STATUS_SUCCESS) last_variant = v->name;
    return st;
}

/* ---- listing ---- */

int kiln_variant_count(void) { return kiln_variant_table_size; }

kiln_status kiln_variant_get(int index, kiln_variant_info *info)
{
    kiln_clear_error();
    if (info == NULL) return kiln_fail(KILN_STATUS_INVALID_VALUE, "kiln_variant_get: info is NULL");
    if (index < 0 || index >= kiln_variant_table_size)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "kiln_variant_get: index %d is outside 0..%d", index,
                         kiln_variant_table_size - 1);
    const kiln_variant *v = &kiln_variant_table[index];
    info->name = v->name;
    info->op = v->op;
    info->dtype = v->dtype;
    info->shape_key = v->shape_key;
    info->act = v->act;
    info->arch = v->arch;
    info->sass_arch = v->sass_arch;
    info->ptx_arch = v->ptx_arch;
    info->threads = v->threads;
    info->smem_bytes = v->smem_bytes;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_variant_resources(int index, int *registers, int *static_smem_bytes)
{
    kiln_clear_error();
    if (registers == NULL || static_smem_bytes == NULL)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "kiln_variant_resources: %s is NULL",
                         registers == NULL ? "registers" : "static_smem_bytes");
    if (index < 0 || index >= kiln_variant_table_size)
        return kiln_fail(KILN_STATUS_INVALID_VALUE, "kiln_variant_resources: index %d is outside 0..%d", index,
                         kiln_variant_table_size - 1);
    kiln_device_caps caps;
    kiln_status st = kiln_current_device_caps(&caps);
    if (st != KILN_STATUS_SUCCESS) return st;
    const kiln_variant *v = &kiln_variant_table[index];
    char why[320];
    if (!kiln_variant_runs_on(v, caps.cc))
        return kiln_fail(KILN_STATUS_ARCH_MISMATCH, "kiln_variant_resources: %s", arch_reason(v, caps.cc, why, sizeof why));
    kiln_kernel_attributes a;
    st = v->attributes(&a);
    if (st != KILN_STATUS_SUCCESS) return st;
    *registers = a.registers;
    *static_smem_bytes = a.static_smem_bytes;
    return KILN_STATUS_SUCCESS;
}
