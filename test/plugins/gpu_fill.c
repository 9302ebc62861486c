/* Test plugin "gpu-fill": a CUDA variant whose run fills O with fp16 1.0 through an embedded
 * kernel, exercising module_load, module_get_function, launch and memory services end to end. */
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

extern const unsigned char sagerun_variant_image[];

#define FILL_VALUE 0x3c00u /* fp16 1.0 */

typedef struct fill_state {
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *in;
    sagerun_function *fn;
} fill_state;

static int fill_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                         size_t errlen)
{
    (void)p;
    (void)err;
    (void)errlen;
    g->threads_per_cta = 256;
    g->grid_ctas = 1024;
    return 0;
}

static int fill_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    fill_state *f = calloc(1, sizeof *f);
    if (!f)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    sagerun_module *m;
    int rc = s->module_load(s->host, sagerun_variant_image, &m, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, m, "sagerun_test_fill_u16", &f->fn, err, errlen);
    if (rc != 0) {
        free(f);
        return rc;
    }
    f->services = s;
    f->in = in;
    *state = f;
    return 0;
}

static int fill_run(void *state, char *err, size_t errlen)
{
    fill_state *f = state;
    const sagerun_problem *p = &f->in->problem;
    uint64_t out = f->in->o;
    uint64_t count = (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim;
    uint16_t value = FILL_VALUE;
    void *params[] = {&out, &count, &value};
    const uint32_t grid[3] = {1024, 1, 1}, block[3] = {256, 1, 1};
    return f->services->launch(f->services->host, f->fn, grid, block, 0, params, err, errlen);
}

static void fill_destroy(void *state) { free(state); }

static const sagerun_variant_descriptor fill_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "gpu-fill",
    .version = "0.0.1",
    .description = "test plugin: fills O with 1.0 on the GPU",
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = 89,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = fill_geometry,
    .create = fill_create,
    .run = fill_run,
    .destroy = fill_destroy,
    .flags = SAGERUN_VARIANT_GRAPH_CAPTURABLE, /* run only launches on the host's stream */
};

SAGERUN_PLUGIN_DEFINE_ENTRY(fill_variant)
