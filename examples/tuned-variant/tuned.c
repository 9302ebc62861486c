/* A parameterized sagerun variant (plugin ABI 1.1): one typed parameter, `block` (threads per
 * CTA), is its tuning axis. sagerun checks values against the declaration (int, 32..1024) and this
 * file refuses the ones it cannot launch (not a multiple of 32) in geometry_with, so
 *   sagerun compare --variant 'tuned[block=64]' --variant 'tuned[block=128]' --variant 'tuned[block=256]'
 * measures three points of the axis in one comparison, each labelled with its value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

#include "tuned_params.h"

extern const unsigned char tuned_fatbin[]; /* tuned.fatbin, linked in by the Makefile */

enum { PARAM_BLOCK = 0 }; /* index in tuned_params_decl and in the values sagerun passes */

static const sagerun_param_decl tuned_params_decl[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "block",
     "threads (query rows) per CTA, a multiple of 32", 128, 32, 1024},
};

typedef struct state {
    const sagerun_host_services *services;
    sagerun_function *kernel;
    tuned_params params;
    uint32_t grid[3], block;
} state;

static int tuned_geometry_with(const sagerun_geometry_args *args, const sagerun_problem *p,
                               sagerun_launch_geometry *g, char *err, size_t errlen)
{
    uint32_t block = (uint32_t)args->param_values[PARAM_BLOCK];
    if (block % 32) {
        snprintf(err, errlen, "block=%u is not a multiple of 32 (a whole number of warps)", block);
        return SAGERUN_UNSUPPORTED;
    }
    if (p->head_dim > 128 || p->causal || p->dtype != SAGERUN_DTYPE_F16) {
        snprintf(err, errlen, "needs head_dim <= 128, non-causal, F16");
        return SAGERUN_UNSUPPORTED;
    }
    g->cta_q = g->warp_q = block;
    g->cta_k = g->warp_k = 1;
    g->threads_per_cta = block;
    g->grid_ctas = (uint64_t)((p->seq_len + block - 1) / block) * p->heads_q * p->batch;
    return 0;
}

/* A 1.0 host never calls this (it refuses a 1.1 plugin); geometry is required all the same. */
static int tuned_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                          size_t errlen)
{
    const double block = tuned_params_decl[PARAM_BLOCK].default_value;
    const sagerun_geometry_args args = {sizeof args, 1, NULL, &block};
    return tuned_geometry_with(&args, p, g, err, errlen);
}

static void strides(const sagerun_problem *p, int64_t heads, int64_t *b, int64_t *n, int64_t *h)
{
    int64_t N = p->seq_len, D = p->head_dim;
    if (p->layout == SAGERUN_LAYOUT_HND) {
        *b = heads * N * D, *h = N * D, *n = D;
    } else {
        *b = N * heads * D, *n = heads * D, *h = D;
    }
}

static int tuned_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **out, char *err, size_t errlen)
{
    state *st = calloc(1, sizeof *st);
    if (!st)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    sagerun_module *m;
    int rc = s->module_load(s->host, tuned_fatbin, &m, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, m, "tuned_attention", &st->kernel, err, errlen);
    if (rc != 0) {
        free(st); /* a failed create frees what it made: no destroy follows */
        return rc;
    }
    const sagerun_problem *p = &in->problem;
    tuned_params *a = &st->params;
    a->q = in->q, a->k = in->k, a->v = in->v, a->o = in->o;
    strides(p, p->heads_q, &a->q_stride_b, &a->q_stride_n, &a->q_stride_h);
    strides(p, p->heads_kv, &a->k_stride_b, &a->k_stride_n, &a->k_stride_h);
    a->seq_len = (int32_t)p->seq_len, a->heads_q = (int32_t)p->heads_q;
    a->heads_kv = (int32_t)p->heads_kv, a->head_dim = (int32_t)p->head_dim;
    a->sm_scale = p->sm_scale > 0 ? p->sm_scale : (float)(1.0 / sqrt((double)p->head_dim));
    st->block = (uint32_t)in->param_values[PARAM_BLOCK];
    st->grid[0] = (p->seq_len + st->block - 1) / st->block;
    st->grid[1] = p->heads_q;
    st->grid[2] = p->batch;
    st->services = s;
    *out = st;
    return 0;
}

static int tuned_run(void *state_, char *err, size_t errlen)
{
    state *st = state_;
    const uint32_t block[3] = {st->block, 1, 1};
    void *args[] = {&st->params};
    return st->services->launch(st->services->host, st->kernel, st->grid, block, 0, args, err,
                                errlen);
}

static void tuned_destroy(void *state_) { free(state_); }

/* No SAGERUN_VARIANT_GRAPH_CAPTURABLE, on purpose: `--timer graph` refuses this variant and says
 * why (its run would be capturable; the flag is the variant's promise, not a guess). */
static const sagerun_variant_descriptor tuned_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "tuned",
    .version = "0.1.0",
    .description = "example: plain fp16 attention with its block size as a parameter",
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = 80,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = tuned_geometry,
    .create = tuned_create,
    .run = tuned_run,
    .destroy = tuned_destroy,
    .n_params = sizeof tuned_params_decl / sizeof tuned_params_decl[0],
    .params = tuned_params_decl,
    .geometry_with = tuned_geometry_with,
};

SAGERUN_PLUGIN_DEFINE_ENTRY(tuned_variant)
