/* The sage2 extension (sagerun/sage2.h) from a plugin of ABI 1.2, host backend: one file of five
 * variants, each writing into O a mix of every quantized tensor it is given (not attention: a
 * fingerprint of the quantization, so that two variants given the same tensors agree byte for
 * byte and any other quantization shows).
 *   sage2-enum        the 1.0/1.1 spelling: input_kind SAGERUN_INPUT_SAGE2 with quant (sm89),
 *                     reading inputs->sage2
 *   sage2-by-id       input_id "sagerun.sage2/1" with input_params (sm89), reading the tensors
 *                     through get_extension's instance_tensors; its prepare also quantizes with
 *                     the extension's quantize (Hopper granularities) and frees what it made
 *   sage2-both        both spellings, alike (a plugin that also loads in a 1.1 host)
 *   sage2-by-id-sm90  input_id with the Hopper granularities: other tensors, other bytes
 *   sage2-ext-probe   the generic core (no input kind): get_extension gives the sage2 table, NULL
 *                     for an unknown id, and instance_tensors NULL (it is not of that kind)
 * Each check failing fails create or prepare with the reason. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>
#include <sagerun/sage2.h>

#pragma GCC diagnostic ignored "-Wunused-function" /* the conversions it does not use */
#include "../../variants/common/reference_convert.h"

static const sagerun_sage2_quant_params sm89 = {sizeof sm89, 32, 128, 64, 64, 448.0f};
static const sagerun_sage2_quant_params sm90 = {sizeof sm90, 16, 64, 128, 128, 448.0f};

typedef struct ext_state {
    const sagerun_host_services *s;
    const sagerun_plugin_inputs *in;
    const sagerun_sage2_extension *x;
    const sagerun_sage2_tensors *t; /* NULL: read inputs->sage2 (the 1.0/1.1 spelling) */
} ext_state;

static int ext_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                        size_t errlen)
{
    (void)p, (void)g, (void)err, (void)errlen;
    return 0;
}

static int fail(char *err, size_t errlen, const char *why)
{
    snprintf(err, errlen, "%s", why);
    return SAGERUN_VARIANT;
}

/* The extension through the services (checking what an unknown id gives); NULL with err set. */
static const sagerun_sage2_extension *ext_get(const sagerun_host_services *s, char *err,
                                              size_t errlen)
{
    if (s->struct_size < offsetof(sagerun_host_services, get_extension) + sizeof(void *))
        return fail(err, errlen, "the services have no get_extension"), NULL;
    if (s->get_extension(s->host, "sagerun.no-such-extension/1") != NULL ||
        s->get_extension(s->host, NULL) != NULL)
        return fail(err, errlen, "get_extension gave a table for an unknown id"), NULL;
    const sagerun_sage2_extension *x = s->get_extension(s->host, SAGERUN_SAGE2_EXTENSION_ID);
    if (!x || x->struct_size < sizeof *x || !x->quantize || !x->tensors_free ||
        !x->instance_tensors)
        return fail(err, errlen, "get_extension(sagerun.sage2/1) gave no usable table"), NULL;
    return x;
}

static int ext_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                      void **state, char *err, size_t errlen, bool by_id)
{
    const sagerun_sage2_extension *x = ext_get(s, err, errlen);
    if (!x)
        return SAGERUN_VARIANT;
    const sagerun_sage2_tensors *t = x->instance_tensors(s->host);
    if (!t || t != in->sage2)
        return fail(err, errlen, "instance_tensors is not the instance's inputs->sage2");
    if (t->q_int8 != 0)
        return fail(err, errlen, "the sage2 tensors are filled before prepare");
    ext_state *st = calloc(1, sizeof *st);
    if (!st)
        return fail(err, errlen, "out of memory");
    *st = (ext_state){s, in, x, by_id ? t : NULL};
    *state = st;
    return 0;
}

static int create_enum(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    return ext_create(s, in, state, err, errlen, false);
}

static int create_by_id(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    return ext_create(s, in, state, err, errlen, true);
}

static int create_probe(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    const sagerun_sage2_extension *x = ext_get(s, err, errlen);
    if (!x)
        return SAGERUN_VARIANT;
    if (x->instance_tensors(s->host) != NULL || in->sage2 != NULL)
        return fail(err, errlen, "an instance of the generic core was given sage2 tensors");
    *state = (void *)in;
    return 0;
}

/* The extension's own quantizer, on the Hopper granularities, made and freed. */
static int prepare_by_id(void *state, char *err, size_t errlen)
{
    ext_state *st = state;
    if (st->t->q_int8 == 0)
        return fail(err, errlen, "instance_tensors still empty at prepare");
    sagerun_sage2_tensors mine = {.struct_size = sizeof mine};
    int rc = st->x->quantize(st->s->host, &st->in->problem, st->in->q, st->in->k, st->in->v, &sm90,
                             &mine, err, errlen);
    if (rc != 0)
        return rc;
    bool made = mine.q_int8 && mine.params.k_block_rows == 128 && mine.q_int8 != st->t->q_int8;
    st->x->tensors_free(st->s->host, &mine);
    return made ? 0 : fail(err, errlen, "quantize gave no tensors of its granularities");
}

/* O[i] from element i (cycled) of every quantized tensor. */
static int ext_run(void *state, char *err, size_t errlen)
{
    const ext_state *st = state;
    const sagerun_sage2_tensors *t = st->t ? st->t : st->in->sage2;
    const sagerun_problem *p = &st->in->problem;
    uint64_t kv = p->kv_len ? p->kv_len : p->seq_len, d = p->head_dim;
    uint64_t n_o = (uint64_t)p->batch * p->seq_len * p->heads_q * d;
    uint64_t n_k = (uint64_t)p->batch * kv * p->heads_kv * d;
    uint64_t n_qs = (uint64_t)p->batch * p->heads_q * t->q_scale_per_head;
    uint64_t n_ks = (uint64_t)p->batch * p->heads_kv * t->k_scale_per_head;
    uint64_t n_vs = (uint64_t)p->batch * p->heads_kv * d, n_v = n_vs * t->v_len;
    const int8_t *q8 = (const int8_t *)(uintptr_t)t->q_int8, *k8 = (const int8_t *)(uintptr_t)t->k_int8;
    const uint8_t *v8 = (const uint8_t *)(uintptr_t)t->v_fp8;
    const float *qs = (const float *)(uintptr_t)t->q_scale, *ks = (const float *)(uintptr_t)t->k_scale;
    const float *vs = (const float *)(uintptr_t)t->v_scale;
    uint16_t *o = (uint16_t *)(uintptr_t)st->in->o;
    if (!t->q_int8)
        return fail(err, errlen, "no sage2 tensors at run");
    for (uint64_t i = 0; i < n_o; i++)
        o[i] = double_to_half((double)q8[i] * qs[i % n_qs] + (double)k8[i % n_k] * ks[i % n_ks] +
                              v8[i % n_v] / 256.0 * vs[i % n_vs]);
    return 0;
}

/* The generic core: O = 0. */
static int run_probe(void *state, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const sagerun_plugin_inputs *in = state;
    const sagerun_problem *p = &in->problem;
    memset((void *)(uintptr_t)in->o, 0,
           (size_t)p->batch * p->seq_len * p->heads_q * p->head_dim * 2);
    return 0;
}

static void ext_destroy(void *state) { free(state); }
static void probe_destroy(void *state) { (void)state; }

#define EXT_VARIANT(vname, what, create_fn, prepare_fn, run_fn, destroy_fn)                        \
    .struct_size = sizeof(sagerun_variant_descriptor), .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,      \
    .name = vname, .version = "1.2.0", .description = what, .backend = SAGERUN_BACKEND_HOST,       \
    .geometry = ext_geometry, .create = create_fn, .prepare = prepare_fn, .run = run_fn,           \
    .destroy = destroy_fn, .features = SAGERUN_FEATURE_KV_LEN,                                     \
    .dtypes = 1u << SAGERUN_DTYPE_F16

static const sagerun_variant_descriptor variants[] = {
    {EXT_VARIANT("sage2-enum", "sage2 by input_kind", create_enum, NULL, ext_run, ext_destroy),
     .input_kind = SAGERUN_INPUT_SAGE2, .quant = sm89},
    {EXT_VARIANT("sage2-by-id", "sage2 by input_id", create_by_id, prepare_by_id, ext_run,
                 ext_destroy),
     .input_id = SAGERUN_SAGE2_EXTENSION_ID, .input_params = &sm89},
    {EXT_VARIANT("sage2-both", "sage2 by both, alike", create_by_id, NULL, ext_run, ext_destroy),
     .input_kind = SAGERUN_INPUT_SAGE2, .quant = sm89, .input_id = SAGERUN_SAGE2_EXTENSION_ID,
     .input_params = &sm89},
    {EXT_VARIANT("sage2-by-id-sm90", "sage2 by input_id, Hopper granularities", create_by_id, NULL,
                 ext_run, ext_destroy),
     .input_id = SAGERUN_SAGE2_EXTENSION_ID, .input_params = &sm90},
    {EXT_VARIANT("sage2-ext-probe", "the generic core asking for sage2", create_probe, NULL,
                 run_probe, probe_destroy)},
};

SAGERUN_PLUGIN_DEFINE_FACTORY(variants)
