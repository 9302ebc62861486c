/* Small plugins for the registry tests, one behaviour each. A test plugin file defines FAKE_NAME
 * and the FAKE_* switches it needs, then includes this file. The variant itself copies V into O
 * (host backend), which is enough to run it through the harness. */
#include <stdio.h>
#include <string.h>

#include <sagerun/plugin.h>

#ifndef FAKE_NAME
#define FAKE_NAME "fake-good"
#endif
#ifndef FAKE_BACKEND
#define FAKE_BACKEND SAGERUN_BACKEND_HOST
#endif
#ifndef FAKE_MIN_CC
#define FAKE_MIN_CC 0
#endif
#ifndef FAKE_ANSWER_MAJOR
#define FAKE_ANSWER_MAJOR SAGERUN_PLUGIN_ABI_MAJOR
#endif
#ifndef FAKE_DESCRIPTOR_SIZE
#define FAKE_DESCRIPTOR_SIZE sizeof(sagerun_variant_descriptor)
#endif
#ifndef FAKE_RUN
#define FAKE_RUN fake_run
#endif
#ifndef FAKE_ENTRY
#define FAKE_ENTRY sagerun_plugin_entry
#endif
#ifndef FAKE_VERSION
#define FAKE_VERSION "0.0.1"
#endif
#ifndef FAKE_DESCRIPTION
#define FAKE_DESCRIPTION "test plugin"
#endif

static int fake_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                         size_t errlen)
{
#ifdef FAKE_HEAD_DIM_ONLY /* refuses other head dimensions, as plugin.h says: UNSUPPORTED */
    if (p->head_dim != FAKE_HEAD_DIM_ONLY)
        return snprintf(err, errlen, "head_dim %u: only %d", p->head_dim, FAKE_HEAD_DIM_ONLY),
               SAGERUN_UNSUPPORTED;
#endif
    (void)err;
    (void)errlen;
    g->cta_q = g->warp_q = 1;
    g->cta_k = g->warp_k = p->seq_len;
    g->threads_per_cta = 1;
    g->grid_ctas = 1;
    return 0;
}

static int fake_create(const sagerun_host_services *services, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    (void)services;
    (void)err;
    (void)errlen;
    *state = (void *)in;
    return 0;
}

__attribute__((unused)) static int fake_run(void *state, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    const sagerun_plugin_inputs *in = state;
    uint64_t bytes = (uint64_t)in->problem.batch * in->problem.seq_len * in->problem.heads_q *
                     in->problem.head_dim * 2;
    uint64_t vbytes = (uint64_t)in->problem.batch * in->problem.seq_len * in->problem.heads_kv *
                      in->problem.head_dim * 2;
    memcpy((void *)(uintptr_t)in->o, (const void *)(uintptr_t)in->v,
           bytes < vbytes ? bytes : vbytes);
    if (bytes > vbytes)
        memset((char *)(uintptr_t)in->o + vbytes, 0, bytes - vbytes);
    return 0;
}

static void fake_destroy(void *state) { (void)state; }

/* A descriptor followed by room for fields of a future ABI minor, so FAKE_DESCRIPTOR_SIZE may
 * claim more than version 1 defines. */
static const struct {
    sagerun_variant_descriptor d;
    char future_fields[64];
} fake_variant = {{
    .struct_size = FAKE_DESCRIPTOR_SIZE,
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = FAKE_NAME,
    .version = FAKE_VERSION,
    .description = FAKE_DESCRIPTION,
    .backend = FAKE_BACKEND,
    .min_compute_capability = FAKE_MIN_CC,
#ifdef FAKE_INPUT_KIND /* the 1.0/1.1 spelling of an input kind, sm89's sage2 granularities */
    .input_kind = FAKE_INPUT_KIND,
    .quant = {sizeof(sagerun_sage2_quant_params), 32, 128, 64, 64, 448.0f},
#else
    .input_kind = SAGERUN_INPUT_FP16,
#endif
    .geometry = fake_geometry,
    .create = fake_create,
    .run = FAKE_RUN,
    .destroy = fake_destroy,
#ifdef FAKE_PARAMS
    .n_params = sizeof FAKE_PARAMS / sizeof FAKE_PARAMS[0],
    .params = FAKE_PARAMS,
#endif
#ifdef FAKE_INPUT_ID /* (1.2) an input kind by id, with FAKE_INPUT_PARAMS (a pointer or NULL) */
    .input_id = FAKE_INPUT_ID,
    .input_params = FAKE_INPUT_PARAMS,
#endif
#ifdef FAKE_FEATURES /* (1.2) what the variant declares it does */
    .features = FAKE_FEATURES,
    .dtypes = FAKE_DTYPES,
    .n_head_dims = sizeof FAKE_HEAD_DIMS / sizeof FAKE_HEAD_DIMS[0],
    .head_dims = FAKE_HEAD_DIMS,
#endif
}, {0}};

SAGERUN_PLUGIN_EXPORT int FAKE_ENTRY(const sagerun_plugin_query *query,
                                     sagerun_plugin_answer *answer);
SAGERUN_PLUGIN_EXPORT int FAKE_ENTRY(const sagerun_plugin_query *query,
                                     sagerun_plugin_answer *answer)
{
    (void)query;
#ifdef FAKE_INIT_FAILS
    snprintf(answer->reason, sizeof answer->reason, "%s", FAKE_INIT_FAILS);
    return -1;
#endif
    answer->abi_major = FAKE_ANSWER_MAJOR;
    answer->abi_minor = 0;
    answer->variant = &fake_variant.d;
    return 0;
}
