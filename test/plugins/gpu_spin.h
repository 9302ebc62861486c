/* Test plugins "gpu-spin" and "gpu-spin-slowed": CUDA variants of a known duration, for checking
 * the timer and the judgement on a GPU. run launches a kernel that spins on the global timer for
 * SAGERUN_TEST_SPIN_NS nanoseconds (default 10 ms) and writes fp16 1.0 into O; the slowed variant
 * then launches a second spin of SAGERUN_TEST_SLOW_FRACTION of that (default 0.02): its true
 * speedup is 1 / (1 + fraction) - 1 (-1.96%), plus one launch gap. A plugin file defines
 * SPIN_NAME and SPIN_SLOWED (0 or 1), then includes this file. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

extern const unsigned char sagerun_variant_image[];

typedef struct spin_state {
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *in;
    sagerun_function *spin;
    unsigned long long ns, extra_ns;
} spin_state;

static double env_number(const char *name, double fallback)
{
    const char *v = getenv(name);
    char *end;
    double x = v ? strtod(v, &end) : fallback;
    return v && (*end || !(x >= 0)) ? fallback : x;
}

static int spin_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                         size_t errlen)
{
    (void)p;
    (void)err;
    (void)errlen;
    g->threads_per_cta = 256;
    g->grid_ctas = 1;
    return 0;
}

static int spin_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    spin_state *f = calloc(1, sizeof *f);
    if (!f)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    sagerun_module *m;
    int rc = s->module_load(s->host, sagerun_variant_image, &m, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, m, "sagerun_test_spin", &f->spin, err, errlen);
    if (rc != 0) {
        free(f);
        return rc;
    }
    f->services = s;
    f->in = in;
    f->ns = (unsigned long long)env_number("SAGERUN_TEST_SPIN_NS", 10e6);
    f->extra_ns = SPIN_SLOWED ? (unsigned long long)(env_number("SAGERUN_TEST_SLOW_FRACTION",
                                                                0.02) * (double)f->ns)
                              : 0;
    *state = f;
    return 0;
}

/* One spin of ns; write_o: then O's every element (the extra spin writes nothing, so that the
 * slowed call is longer by the fraction of the spin alone, not by a second write of O: that made
 * a 3% slowdown 32% on a small O). */
static int spin_launch(spin_state *f, unsigned long long ns, bool write_o, char *err,
                       size_t errlen)
{
    const sagerun_problem *p = &f->in->problem;
    uint64_t out = f->in->o;
    uint64_t count = write_o ? (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim : 0;
    void *params[] = {&out, &count, &ns};
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    return f->services->launch(f->services->host, f->spin, grid, block, 0, params, err, errlen);
}

static int spin_run(void *state, char *err, size_t errlen)
{
    spin_state *f = state;
    int rc = spin_launch(f, f->ns, true, err, errlen);
    if (rc == 0 && f->extra_ns)
        rc = spin_launch(f, f->extra_ns, false, err, errlen);
    return rc;
}

static void spin_destroy(void *state) { free(state); }

static const sagerun_variant_descriptor spin_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = SPIN_NAME,
    .version = "0.0.1",
    .description = SPIN_SLOWED ? "test plugin: spins, then spins a known fraction longer"
                               : "test plugin: spins on the global timer for a known time",
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = 89,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = spin_geometry,
    .create = spin_create,
    .run = spin_run,
    .destroy = spin_destroy,
    .flags = SAGERUN_VARIANT_GRAPH_CAPTURABLE, /* run only launches on the host's stream */
};

SAGERUN_PLUGIN_DEFINE_ENTRY(spin_variant)
