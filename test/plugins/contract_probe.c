/* A plugin written from include/sagerun/plugin.h alone (no other sagerun file, no template): it
 * checks every rule the header states about the calls it receives and records each breach, and
 * the order of its calls, for test_contract.c to read through two exported functions.
 *
 * A factory of two variants (section 1, 1.1):
 *   probe       host backend, three parameters: fail_create (bool), fail_prepare (int: how many
 *               prepares fail before one succeeds), gain (float, scales nothing: it is echoed
 *               into the trace so the test sees the value create received)
 *   probe-twin  host backend, no parameters, SAGERUN_VARIANT_GRAPH_CAPTURABLE
 * run copies V into O and writes every element of O (section 7). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>

#define PROBE_SLOTS 256
#define PROBE_MAGIC 0x50524f42u
#define PROBE_DEAD 0xdeadu

enum probe_state { PROBE_CREATED = 1, PROBE_PREPARED = 2 };

typedef struct probe_instance {
    unsigned magic; /* PROBE_MAGIC while alive, PROBE_DEAD after destroy */
    int id;
    enum probe_state state;
    atomic_int in_call; /* section 5: one thread at a time per instance */
    int prepares_to_fail;
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *inputs;
} probe_instance;

/* States are never freed (a slot per create), so a destroy twice or a call after destroy is seen
 * as such instead of as a use after free. */
static probe_instance slots[PROBE_SLOTS];
static atomic_int n_slots;

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;
static char trace[8192];
static char breaches[8192];
static int n_breaches;

static void append(char *buf, size_t cap, const char *fmt, va_list ap)
{
    size_t at = strlen(buf);
    if (at + 1 < cap)
        vsnprintf(buf + at, cap - at, fmt, ap);
}

static void append_str(char *buf, size_t cap, const char *text)
{
    size_t at = strlen(buf);
    if (at + 1 < cap)
        snprintf(buf + at, cap - at, "%s", text);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&record_lock);
    append(trace, sizeof trace, fmt, ap);
    append_str(trace, sizeof trace, " ");
    pthread_mutex_unlock(&record_lock);
    va_end(ap);
}

static void breach(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void breach(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&record_lock);
    n_breaches++;
    append(breaches, sizeof breaches, fmt, ap);
    append_str(breaches, sizeof breaches, "; ");
    pthread_mutex_unlock(&record_lock);
    va_end(ap);
}

/* For the test: the calls received, in order ("create#0 prepare#0 run#0 destroy#0 ..."). */
SAGERUN_PLUGIN_EXPORT const char *contract_probe_trace(void) { return trace; }
/* For the test: how many rules were broken, and which. */
SAGERUN_PLUGIN_EXPORT int contract_probe_breaches(const char **what)
{
    *what = breaches;
    return n_breaches;
}
SAGERUN_PLUGIN_EXPORT void contract_probe_reset(void)
{
    pthread_mutex_lock(&record_lock);
    trace[0] = breaches[0] = '\0';
    n_breaches = 0;
    pthread_mutex_unlock(&record_lock);
}

static int fail(char *err, size_t errlen, int status, const char *why)
{
    if (errlen < SAGERUN_PLUGIN_MIN_ERRLEN)
        breach("errlen %zu below SAGERUN_PLUGIN_MIN_ERRLEN", errlen);
    snprintf(err, errlen, "%s", why);
    return status;
}

/* The instance a call received, checked: alive, not inside another call. */
static probe_instance *enter(void *state, const char *call)
{
    probe_instance *p = state;
    if (!p || p < slots || p >= slots + PROBE_SLOTS || p->magic != PROBE_MAGIC) {
        breach("%s on a state that is not a live instance (%s)", call,
               p && p >= slots && p < slots + PROBE_SLOTS && p->magic == PROBE_DEAD
                   ? "destroyed"
                   : "unknown");
        return NULL;
    }
    if (atomic_fetch_add(&p->in_call, 1) != 0)
        breach("%s#%d while another call on the instance is running", call, p->id);
    return p;
}

static void leave(probe_instance *p) { atomic_fetch_sub(&p->in_call, 1); }

static uint64_t output_bytes(const sagerun_problem *pr)
{
    return (uint64_t)pr->batch * pr->seq_len * pr->heads_q * pr->head_dim * 2;
}

static int probe_geometry_any(const sagerun_problem *pr, sagerun_launch_geometry *g, char *err,
                              size_t errlen)
{
    if (!pr || !g || g->struct_size < sizeof *g)
        return fail(err, errlen, SAGERUN_INVALID_ARGUMENT, "geometry: bad arguments");
    if (pr->head_dim == 96)
        return fail(err, errlen, SAGERUN_UNSUPPORTED, "head_dim 96 is not supported");
    g->cta_q = g->warp_q = 1;
    g->cta_k = g->warp_k = pr->seq_len;
    g->threads_per_cta = 1;
    g->grid_ctas = 1;
    return 0;
}

/* Section 4: the 1.1 host calls geometry_with, not geometry. */
static int probe_geometry(const sagerun_problem *pr, sagerun_launch_geometry *g, char *err,
                          size_t errlen)
{
    breach("geometry called although geometry_with is set");
    return probe_geometry_any(pr, g, err, errlen);
}

static int probe_geometry_with(const sagerun_geometry_args *args, const sagerun_problem *pr,
                               sagerun_launch_geometry *g, char *err, size_t errlen, uint32_t n)
{
    const sagerun_plugin_device *dev = args ? args->device : NULL;
    if (!args || args->struct_size < sizeof *args || !dev || dev->struct_size < sizeof *dev)
        breach("geometry_with: arguments or device info missing or too small");
    else if (dev->backend == SAGERUN_BACKEND_HOST && (dev->compute_capability || dev->sm_count))
        breach("geometry_with: host backend device info is not zero");
    else if (args->n_param_values != n || (n && !args->param_values))
        breach("geometry_with: %u parameter values, declared %u", args->n_param_values, n);
    if (args && args->n_param_values == 3)
        note("geometry(gain=%g)", args->param_values[2]);
    else
        note("geometry");
    if (args && args->n_param_values == 3 && args->param_values[2] == 3.75) /* a declared value
                                                                                it cannot launch */
        return fail(err, errlen, SAGERUN_UNSUPPORTED, "gain=3.75 cannot be launched");
    return probe_geometry_any(pr, g, err, errlen);
}

/* The checks of section 3 and 7 on what create receives. */
static void check_create_arguments(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                                   uint32_t want_params)
{
    if (!s || s->struct_size < offsetof(sagerun_host_services, cuda_context) + sizeof(void *))
        breach("create: services missing or without the 1.1 fields");
    else if (s->abi_minor < 1)
        breach("create: services abi_minor %u, want >= 1", s->abi_minor);
    else if (s->backend(s->host) == SAGERUN_BACKEND_HOST &&
             (s->cuda_stream(s->host) || s->cuda_context(s->host)))
        breach("create: a stream or context on the host backend");
    if (!in || in->struct_size < offsetof(sagerun_plugin_inputs, device) + sizeof(void *)) {
        breach("create: inputs missing or without the 1.1 fields");
        return;
    }
    if (in->o % 256 || in->q % 256 || in->k % 256 || in->v % 256)
        breach("create: a tensor is not 256-byte aligned");
    if (in->n_param_values != want_params || (want_params && !in->param_values))
        breach("create: %u parameter values, declared %u", in->n_param_values, want_params);
    if (!in->device || in->device->struct_size < sizeof(sagerun_plugin_device))
        breach("create: no device info");
}

static int probe_create_common(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                               void **state, char *err, size_t errlen, uint32_t n_params)
{
    check_create_arguments(s, in, n_params);
    int fail_create = n_params ? (int)in->param_values[0] : 0;
    int id = atomic_fetch_add(&n_slots, 1);
    if (id >= PROBE_SLOTS)
        return fail(err, errlen, SAGERUN_OUT_OF_MEMORY, "probe: out of slots");
    note("create#%d", id);
    if (n_params)
        note("gain=%g", in->param_values[2]);
    if (fail_create) {
        slots[id].magic = PROBE_DEAD; /* what it made is freed here: no destroy may follow */
        s->log(s->host, SAGERUN_LOG_INFO, "probe: create#%d fails on purpose", id);
        return fail(err, errlen, SAGERUN_VARIANT, "probe: create fails on purpose");
    }
    probe_instance *p = &slots[id];
    p->magic = PROBE_MAGIC;
    p->id = id;
    p->state = PROBE_CREATED;
    p->prepares_to_fail = n_params ? (int)in->param_values[1] : 0;
    p->services = s;
    p->inputs = in;
    *state = p;
    return 0;
}

static int probe_geometry3(const sagerun_geometry_args *args, const sagerun_problem *pr,
                           sagerun_launch_geometry *g, char *err, size_t errlen)
{
    return probe_geometry_with(args, pr, g, err, errlen, 3);
}

static int twin_geometry(const sagerun_geometry_args *args, const sagerun_problem *pr,
                         sagerun_launch_geometry *g, char *err, size_t errlen)
{
    return probe_geometry_with(args, pr, g, err, errlen, 0);
}

static int probe_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    return probe_create_common(s, in, state, err, errlen, 3);
}

static int twin_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    return probe_create_common(s, in, state, err, errlen, 0);
}

static int probe_prepare(void *state, char *err, size_t errlen)
{
    probe_instance *p = enter(state, "prepare");
    if (!p)
        return fail(err, errlen, SAGERUN_INTERNAL, "prepare: not a live instance");
    note("prepare#%d", p->id);
    if (p->state != PROBE_CREATED)
        breach("prepare#%d in state PREPARED (only after create or a failed prepare)", p->id);
    int rc = 0;
    if (p->prepares_to_fail > 0) {
        p->prepares_to_fail--;
        rc = fail(err, errlen, SAGERUN_VARIANT, "probe: prepare fails on purpose");
    } else {
        p->state = PROBE_PREPARED;
    }
    leave(p);
    return rc;
}

static int probe_run(void *state, char *err, size_t errlen)
{
    probe_instance *p = enter(state, "run");
    if (!p)
        return fail(err, errlen, SAGERUN_INTERNAL, "run: not a live instance");
    note("run#%d", p->id);
    if (p->state != PROBE_PREPARED)
        breach("run#%d before a successful prepare", p->id);
    const sagerun_plugin_inputs *in = p->inputs;
    uint64_t o = output_bytes(&in->problem);
    uint64_t v = (uint64_t)in->problem.batch * in->problem.seq_len * in->problem.heads_kv *
                 in->problem.head_dim * 2;
    memcpy((void *)(uintptr_t)in->o, (const void *)(uintptr_t)in->v, o < v ? o : v);
    if (o > v)
        memset((char *)(uintptr_t)in->o + v, 0, o - v);
    leave(p);
    return 0;
}

static void probe_destroy(void *state)
{
    if (!state) {
        note("destroy(NULL)");
        return;
    }
    probe_instance *p = enter(state, "destroy");
    if (!p)
        return;
    note("destroy#%d", p->id);
    p->magic = PROBE_DEAD;
    leave(p);
}

static const sagerun_param_decl probe_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_BOOL, "fail_create", "create fails", 0, 0, 1},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "fail_prepare",
     "prepares that fail before one succeeds", 0, 0, 3},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "gain", "echoed into the trace", 1.0,
     0.25, 4.0},
};

static const sagerun_variant_descriptor probe_variants[] = {
    {
        .struct_size = sizeof(sagerun_variant_descriptor),
        .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
        .name = "probe",
        .version = "1.1.0",
        .description = "test plugin: checks the call order plugin.h promises",
        .backend = SAGERUN_BACKEND_HOST,
        .input_kind = SAGERUN_INPUT_FP16,
        .geometry = probe_geometry,
        .create = probe_create,
        .prepare = probe_prepare,
        .run = probe_run,
        .destroy = probe_destroy,
        .n_params = sizeof probe_params / sizeof probe_params[0],
        .params = probe_params,
        .geometry_with = probe_geometry3,
    },
    {
        .struct_size = sizeof(sagerun_variant_descriptor),
        .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
        .name = "probe-twin",
        .version = "1.1.0",
        .description = "test plugin: the probe's second variant, graph-capturable",
        .backend = SAGERUN_BACKEND_HOST,
        .input_kind = SAGERUN_INPUT_FP16,
        .geometry = probe_geometry,
        .create = twin_create,
        .prepare = probe_prepare,
        .run = probe_run,
        .destroy = probe_destroy,
        .flags = SAGERUN_VARIANT_GRAPH_CAPTURABLE,
        .geometry_with = twin_geometry,
    },
};

SAGERUN_PLUGIN_DEFINE_FACTORY(probe_variants)
