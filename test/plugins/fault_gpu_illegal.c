/* Test plugin "fault-gpu-illegal": a CUDA variant whose kernel reads an illegal address on its
 * third run call (the others copy V into O). An illegal address is sticky: it poisons the CUDA
 * context of the whole process, so `sagerun compare` must measure the other variants in a new
 * process. The first two calls are correct so that, with --warmup 1, the fault happens in the
 * first timed call: compare makes the warm-up calls, then the first checked call, then the
 * rounds (with its second call faulting, the checked call failed, and test_faults.sh, written
 * when the checks came after the rounds, failed on the H200: issue 17 run 44). */
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

extern const unsigned char sagerun_variant_image[];

/* Far outside any allocation, and not 0 (a kernel may treat NULL specially). */
#define BOGUS_DEVICE_ADDRESS 0x10000ull

typedef struct fault_state {
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *in;
    sagerun_function *fn;
    unsigned runs;
} fault_state;

static int fault_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                          size_t errlen)
{
    (void)p;
    (void)err;
    (void)errlen;
    g->threads_per_cta = 256;
    g->grid_ctas = 1024;
    return 0;
}

static int fault_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    fault_state *f = calloc(1, sizeof *f);
    if (!f)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    sagerun_module *m;
    int rc = s->module_load(s->host, sagerun_variant_image, &m, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, m, "sagerun_test_fault_copy_u16", &f->fn, err,
                                    errlen);
    if (rc != 0) {
        free(f);
        return rc;
    }
    f->services = s;
    f->in = in;
    *state = f;
    return 0;
}

static int fault_run(void *state, char *err, size_t errlen)
{
    fault_state *f = state;
    const sagerun_problem *p = &f->in->problem;
    uint64_t out = f->in->o;
    /* V has Hkv heads: copy no more than it holds (the output's rest is left as it is) */
    uint64_t count = (uint64_t)p->batch * p->seq_len * p->heads_kv * p->head_dim;
    uint64_t src = ++f->runs == 3 ? BOGUS_DEVICE_ADDRESS : f->in->v;
    void *params[] = {&src, &out, &count};
    const uint32_t grid[3] = {1024, 1, 1}, block[3] = {256, 1, 1};
    return f->services->launch(f->services->host, f->fn, grid, block, 0, params, err, errlen);
}

static void fault_destroy(void *state) { free(state); }

static const sagerun_variant_descriptor fault_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "fault-gpu-illegal",
    .version = "0.0.1",
    .description = "test plugin: reads an illegal device address on its second run",
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = 89,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = fault_geometry,
    .create = fault_create,
    .run = fault_run,
    .destroy = fault_destroy,
};

SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
                                               sagerun_plugin_answer *answer)
{
    (void)query;
    if (!getenv("SAGERUN_TEST_FAULTS")) { /* like fault_plugin.h: opt-in */
        snprintf(answer->reason, sizeof answer->reason,
                 "fault-injection test plugin: loads only with SAGERUN_TEST_FAULTS set");
        return -1;
    }
    answer->abi_major = SAGERUN_PLUGIN_ABI_MAJOR;
    answer->abi_minor = SAGERUN_PLUGIN_ABI_MINOR;
    answer->variant = &fault_variant;
    return 0;
}
