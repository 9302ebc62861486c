/* A host variant whose call takes a chosen time, for tests of what the measurement says about a
 * variant's timing (test_timing_honesty.sh). It busy-waits on the monotonic clock, so a call takes
 * `us` microseconds on a loaded machine as on an idle one (within a scheduler slice).
 *
 *   spin  host backend; parameters:
 *         us     (float, default 200, [0, 1e7]): the call's time in microseconds;
 *         every  (int, default 0, [0, 1e6]): every every-th call (counted per instance; 0: none)
 *         slowx  (float, default 10, [1, 1000]): takes slowx times as long (a slow mode).
 *
 * The output is V copied into O (fake_plugin.h's convention), so every setting writes the same
 * bytes and is byte-exact with any other. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sagerun/plugin.h>

enum { PARAM_US, PARAM_EVERY, PARAM_SLOWX };

static const sagerun_param_decl spin_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "us", "microseconds per call", 200, 0, 1e7},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "every", "every N-th call is slow (0: none)", 0,
     0, 1e6},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "slowx", "how much slower a slow call is", 10,
     1, 1000},
};

typedef struct spin_state {
    const sagerun_plugin_inputs *in;
    double us, slowx;
    long every, calls;
} spin_state;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int spin_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                         size_t errlen)
{
    (void)err;
    (void)errlen;
    g->cta_q = g->warp_q = 1;
    g->cta_k = g->warp_k = p->seq_len;
    g->threads_per_cta = 1;
    g->grid_ctas = 1;
    return 0;
}

static int spin_create(const sagerun_host_services *services, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    (void)services;
    (void)err;
    (void)errlen;
    spin_state *s = calloc(1, sizeof(*s));
    if (!s)
        return SAGERUN_OUT_OF_MEMORY;
    s->in = in;
    s->us = in->n_param_values ? in->param_values[PARAM_US] : 200;
    s->every = in->n_param_values ? (long)in->param_values[PARAM_EVERY] : 0;
    s->slowx = in->n_param_values ? in->param_values[PARAM_SLOWX] : 10;
    *state = s;
    return 0;
}

static int spin_run(void *state, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    spin_state *s = state;
    double us = s->us;
    if (s->every && ++s->calls % s->every == 0)
        us *= s->slowx;
    for (double end = now_s() + us * 1e-6; now_s() < end;)
        ;
    const sagerun_problem *p = &s->in->problem;
    uint64_t obytes = (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim * 2;
    uint64_t vbytes = (uint64_t)p->batch * p->seq_len * p->heads_kv * p->head_dim * 2;
    memcpy((void *)(uintptr_t)s->in->o, (const void *)(uintptr_t)s->in->v,
           obytes < vbytes ? obytes : vbytes);
    if (obytes > vbytes)
        memset((char *)(uintptr_t)s->in->o + vbytes, 0, obytes - vbytes);
    return 0;
}

static void spin_destroy(void *state)
{
    free(state);
}

static const sagerun_variant_descriptor spin_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "spin",
    .version = "1.0.0",
    .description = "test: a call of a chosen time, with an optional slow mode (output = V)",
    .backend = SAGERUN_BACKEND_HOST,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = spin_geometry,
    .create = spin_create,
    .run = spin_run,
    .destroy = spin_destroy,
    .n_params = sizeof spin_params / sizeof spin_params[0],
    .params = spin_params,
};

SAGERUN_PLUGIN_DEFINE_ENTRY(spin_variant)
