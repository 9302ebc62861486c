/* A sagerun variant outside the sagerun tree: the plugin glue of a plain fp16 attention kernel.
 * Build with the Makefile beside this file; drop my-variant.so into a plugins folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

#include "my_variant_params.h"

extern const unsigned char my_variant_fatbin[]; /* my_variant.fatbin, linked in by the Makefile */

enum { ROWS_PER_CTA = 128 };

typedef struct state {
    const sagerun_host_services *services;
    sagerun_function *kernel;
    my_variant_params params;
    uint32_t grid[3];
} state;

/* Which problems this variant runs, and its launch shape (reported as the "scheduler"). */
static int my_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                       size_t errlen)
{
    if (p->head_dim > 128 || p->causal || p->dtype != SAGERUN_DTYPE_F16) {
        snprintf(err, errlen, "needs head_dim <= 128, non-causal, F16");
        return SAGERUN_UNSUPPORTED;
    }
    g->cta_q = g->warp_q = ROWS_PER_CTA;
    g->cta_k = g->warp_k = 1;
    g->threads_per_cta = ROWS_PER_CTA;
    g->grid_ctas = (uint64_t)((p->seq_len + ROWS_PER_CTA - 1) / ROWS_PER_CTA) * p->heads_q *
                   p->batch;
    return 0;
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

/* Loads the kernel and fills its parameters once; run only launches. */
static int my_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in, void **out,
                     char *err, size_t errlen)
{
    state *st = calloc(1, sizeof *st);
    if (!st)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    sagerun_module *m;
    int rc = s->module_load(s->host, my_variant_fatbin, &m, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, m, "my_variant_attention", &st->kernel, err, errlen);
    if (rc != 0) {
        free(st);
        return rc;
    }
    const sagerun_problem *p = &in->problem;
    my_variant_params *a = &st->params;
    a->q = in->q, a->k = in->k, a->v = in->v, a->o = in->o;
    strides(p, p->heads_q, &a->q_stride_b, &a->q_stride_n, &a->q_stride_h);
    strides(p, p->heads_kv, &a->k_stride_b, &a->k_stride_n, &a->k_stride_h);
    a->seq_len = (int32_t)p->seq_len, a->heads_q = (int32_t)p->heads_q;
    a->heads_kv = (int32_t)p->heads_kv, a->head_dim = (int32_t)p->head_dim;
    a->sm_scale = p->sm_scale > 0 ? p->sm_scale : (float)(1.0 / sqrt((double)p->head_dim));
    st->grid[0] = (p->seq_len + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    st->grid[1] = p->heads_q;
    st->grid[2] = p->batch;
    st->services = s;
    *out = st;
    return 0;
}

/* The timed call: enqueue the kernel on sagerun's stream and return. */
static int my_run(void *state_, char *err, size_t errlen)
{
    state *st = state_;
    const uint32_t block[3] = {ROWS_PER_CTA, 1, 1};
    void *args[] = {&st->params};
    return st->services->launch(st->services->host, st->kernel, st->grid, block, 0, args, err,
                                errlen);
}

static void my_destroy(void *state_) { free(state_); }

static const sagerun_variant_descriptor my_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "my-variant",
    .version = "0.1.0",
    .description = "template: plain fp16 attention, one thread per query row",
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = 80,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = my_geometry,
    .create = my_create,
    .run = my_run,
    .destroy = my_destroy,
};

SAGERUN_PLUGIN_DEFINE_ENTRY(my_variant)
