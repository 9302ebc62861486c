/* Instances: one variant bound to one set of inputs. create → prepare → run* → destroy.
 * sr_instance_call is one call of the variant; the comparison's timing loop is schedule.c, its
 * samples timer.c; sagerun_instance_run times one call with events for the public API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nvtx.h"

#define SR_PLUGIN_ERR_SIZE 512
_Static_assert(SR_PLUGIN_ERR_SIZE >= SAGERUN_PLUGIN_MIN_ERRLEN, "plugin.h section 8");
#define SR_OUTPUT_ALIGN (2ull << 20)

/* The plugin inputs as the 1.0 and 1.1 headers lay them out: what a plugin built with them reads
 * (plugin.h section 11). */
typedef struct sr_plugin_inputs_1_1 {
    uint32_t struct_size;
    uint32_t problem[SR_PROBLEM_0_1_SIZE / 4]; /* sagerun_problem up to sm_scale */
    uint64_t q, k, v;
    const sagerun_sage2_tensors *sage2;
    uint64_t o;
    const double *param_values;
    uint32_t n_param_values;
    uint32_t reserved;
    const sagerun_plugin_device *device;
} sr_plugin_inputs_1_1;
_Static_assert(sizeof(sr_plugin_inputs_1_1) == 112 && offsetof(sr_plugin_inputs_1_1, q) == 48,
               "the 1.1 header's sagerun_plugin_inputs");

struct sagerun_instance {
    sagerun_context *ctx;
    sagerun_inputs *in;
    const sagerun_variant_descriptor *desc;
    sagerun_plugin_inputs plugin_inputs;
    sr_plugin_inputs_1_1 plugin_inputs_1_1; /* what a 1.0/1.1 plugin is given */
    double param_values[SAGERUN_PLUGIN_MAX_PARAMS]; /* what plugin_inputs.param_values names */
    sr_input_kind kind;           /* the variant's input kind (input_kinds.c) */
    sr_provided_inputs provided;  /* what its provider made; plugin_inputs.sage2 points at
                                     provided.sage2 for the sage2 kind */
    sagerun_launch_geometry geometry;
    uint64_t o, o_bytes;
    void *state;
    sr_timer timer;
    bool prepared;
    bool ran; /* a run returned: O holds an output (before it, uninitialised memory) */
};

/* The instance whose create, prepare, run or destroy this thread is in (NULL: none): whose inputs
 * an extension's services give (sr_instance_sage2_tensors). */
static _Thread_local const sagerun_instance *calling;

/* A call into the variant of inst begins (its name on its log lines, its inputs for the
 * extensions) and ends. */
static void call_begins(const sagerun_instance *inst)
{
    calling = inst;
    sr_plugin_calling = inst->desc->name;
}

static void call_ends(void)
{
    calling = NULL;
    sr_plugin_calling = NULL;
}

const sagerun_sage2_tensors *sr_instance_sage2_tensors(void *host)
{
    const sagerun_instance *inst = calling;
    if (!inst || (void *)inst->ctx != host || !inst->plugin_inputs.sage2)
        return NULL;
    return inst->plugin_inputs.sage2;
}

/* geometry_with (1.1) when the variant has it, else geometry. */
static int call_geometry(const sagerun_variant_descriptor *d, const sagerun_context *ctx,
                         const double *values, const sagerun_problem *p,
                         sagerun_launch_geometry *g, char *why, size_t len)
{
    bool covered = d->struct_size >= offsetof(sagerun_variant_descriptor, geometry_with) +
                                         sizeof d->geometry_with;
    if (!covered || !d->geometry_with)
        return d->geometry(p, g, why, len);
    uint32_t n = sr_descriptor_param_count(d);
    sagerun_geometry_args args = {.struct_size = sizeof args,
                                  .n_param_values = n,
                                  .device = &ctx->plugin_device,
                                  .param_values = n ? values : NULL};
    return d->geometry_with(&args, p, g, why, len);
}

static sagerun_status variant_failed(sagerun_error *err, const sagerun_variant_descriptor *d,
                                     const char *call, int rc, const char *why)
{
    sagerun_status st = rc == SAGERUN_UNSUPPORTED ? SAGERUN_UNSUPPORTED : SAGERUN_VARIANT;
    char shown[sizeof err->message]; /* the plugin's own text: shown, not obeyed */
    sr_text_copy(shown, sizeof shown, why[0] ? why : "no reason given");
    if (!strcmp(sagerun_status_name(rc), "SAGERUN_UNKNOWN_STATUS")) /* 1, a C habit, or another */
        return sr_error_set(err, st,
                            "variant %s: %s returned %d, which is not a sagerun_status (0, or a "
                            "negative SAGERUN_* on failure: plugin.h section 8): %s",
                            d->name, call, rc, shown);
    return sr_error_set(err, st, "variant %s: %s failed (%s): %s", d->name, call,
                        sagerun_status_name(rc), shown);
}

/* O and its guard (internal.h) after it: on CUDA in whole 2 MiB pages, so that every instance's
 * output starts on a page of its own and two instances of one variant (A/A) write to
 * alike-aligned memory. */
static sagerun_status output_alloc(sagerun_instance *inst, sagerun_error *err)
{
    uint64_t bytes = inst->o_bytes + SR_OUTPUT_GUARD_BYTES;
    if (inst->ctx->backend == SAGERUN_BACKEND_CUDA)
        bytes = (bytes + SR_OUTPUT_ALIGN - 1) / SR_OUTPUT_ALIGN * SR_OUTPUT_ALIGN;
    sagerun_status st = sagerun_mem_alloc(inst->ctx, bytes, &inst->o, err);
    if (st == SAGERUN_OK)
        st = sagerun_mem_fill(inst->ctx, inst->o + inst->o_bytes, SR_OUTPUT_GUARD_BYTE,
                              SR_OUTPUT_GUARD_BYTES, err);
    /* the variant may fill its output through mem_fill (its guard after it is not its) */
    if (st == SAGERUN_OK && !sr_plugin_memory_add(inst->ctx->plugin_memory, inst->o, inst->o_bytes))
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    return st;
}

sagerun_status sagerun_instance_check_output_end(const sagerun_instance *inst, sagerun_error *err)
{
    if (!inst)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance_check_output_end: NULL instance");
    uint8_t *seen = malloc(SR_OUTPUT_GUARD_BYTES);
    if (!seen)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory reading the output guard");
    sagerun_status st = sagerun_mem_download(inst->ctx, seen, inst->o + inst->o_bytes,
                                             SR_OUTPUT_GUARD_BYTES, err);
    uint64_t changed = 0, first = 0;
    for (uint64_t i = 0; st == SAGERUN_OK && i < SR_OUTPUT_GUARD_BYTES; i++)
        if (seen[i] != SR_OUTPUT_GUARD_BYTE && changed++ == 0)
            first = i;
    free(seen);
    if (st == SAGERUN_OK && changed)
        st = sr_error_set(err, SAGERUN_VARIANT,
                          "%llu of the %u bytes after o changed, the first at byte %llu past its "
                          "end (o is %llu bytes; plugin.h section 7)",
                          (unsigned long long)changed, SR_OUTPUT_GUARD_BYTES,
                          (unsigned long long)first, (unsigned long long)inst->o_bytes);
    return st;
}

/* The inputs in the layout the variant's header has: a descriptor that covers head_dims was
 * built with the 1.2 header; an older one gets the 1.1 layout (the same values). */
static const sagerun_plugin_inputs *plugin_inputs_for(sagerun_instance *inst)
{
    const sagerun_variant_descriptor *d = inst->desc;
    if (d->struct_size >= offsetof(sagerun_variant_descriptor, head_dims) + sizeof d->head_dims)
        return &inst->plugin_inputs;
    const sagerun_plugin_inputs *pi = &inst->plugin_inputs;
    sr_plugin_inputs_1_1 *old = &inst->plugin_inputs_1_1;
    old->struct_size = sizeof *old;
    memcpy(old->problem, &pi->problem, sizeof old->problem);
    old->problem[0] = sizeof old->problem; /* its struct_size */
    old->q = pi->q;
    old->k = pi->k;
    old->v = pi->v;
    old->sage2 = pi->sage2;
    old->o = pi->o;
    old->param_values = pi->param_values;
    old->n_param_values = pi->n_param_values;
    old->device = pi->device;
    return (const sagerun_plugin_inputs *)(const void *)old;
}

sagerun_status sagerun_instance_create(sagerun_registry *reg, size_t variant_index,
                                       sagerun_context *ctx, sagerun_inputs *in,
                                       sagerun_instance **out, sagerun_error *err)
{
    if (!reg || !ctx || !in || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance_create: NULL argument");
    *out = NULL;
    const sagerun_variant_descriptor *d = sr_registry_descriptor(reg, variant_index);
    if (!d)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            variant_index);
    if (in->ctx != ctx)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: the inputs belong to another context", d->name);
    if (d->backend != ctx->backend)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "variant %s runs on the %s backend, the context is %s", d->name,
                            sagerun_backend_name(d->backend), sagerun_backend_name(ctx->backend));
    if (d->backend == SAGERUN_BACKEND_CUDA &&
        d->min_compute_capability > ctx->compute_capability)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "variant %s needs compute capability %d.%d, the device has %d.%d",
                            d->name, d->min_compute_capability / 10,
                            d->min_compute_capability % 10, ctx->compute_capability / 10,
                            ctx->compute_capability % 10);
    sagerun_status fst = sr_features_check(d, &in->problem, err);
    if (fst != SAGERUN_OK)
        return fst;
    char why[SR_PLUGIN_ERR_SIZE] = "";
    sagerun_launch_geometry g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    int rc = call_geometry(d, ctx, sr_registry_values(reg, variant_index), &in->problem, &g, why,
                           sizeof why);
    if (rc != 0)
        return variant_failed(err, d, "geometry", rc, why);

    sagerun_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    inst->ctx = ctx;
    inst->in = in;
    inst->desc = d;
    inst->geometry = g;
    inst->o_bytes = in->q_bytes;
    sagerun_status st = output_alloc(inst, err);
    if (st == SAGERUN_OK)
        st = sr_timer_init(&inst->timer, ctx, err);
    if (st != SAGERUN_OK) {
        sagerun_instance_destroy(inst);
        return st;
    }
    sagerun_plugin_inputs *pi = &inst->plugin_inputs;
    pi->struct_size = sizeof *pi;
    pi->problem = in->problem;
    pi->q = in->q;
    pi->k = in->k;
    pi->v = in->v;
    pi->o = inst->o;
    inst->kind = sr_descriptor_input_kind(d); /* known and usable: checked at load */
    pi->sage2 = inst->kind.provider->kind == SAGERUN_INPUT_SAGE2 ? &inst->provided.sage2 : NULL;
    pi->n_param_values = sr_descriptor_param_count(d);
    memcpy(inst->param_values, sr_registry_values(reg, variant_index),
           pi->n_param_values * sizeof(double));
    pi->param_values = pi->n_param_values ? inst->param_values : NULL;
    pi->device = &ctx->plugin_device;
    pi->cu_seqlens_q = in->seq.d_cu_q;
    pi->cu_seqlens_kv = in->seq.d_cu_kv;
    pi->block_table = in->seq.d_table;
    pi->host_cu_seqlens_q = in->seq.cu_q;
    pi->host_cu_seqlens_kv = in->seq.cu_kv;
    pi->host_block_table = in->seq.table;
    call_begins(inst);
    rc = d->create(&ctx->services, plugin_inputs_for(inst), &inst->state, why, sizeof why);
    call_ends();
    if (rc != 0) {
        inst->state = NULL;
        st = variant_failed(err, d, "create", rc, why);
        sagerun_instance_destroy(inst);
        return st;
    }
    *out = inst;
    return SAGERUN_OK;
}

void sagerun_instance_destroy(sagerun_instance *inst)
{
    if (!inst)
        return;
    if (inst->state) {
        call_begins(inst);
        inst->desc->destroy(inst->state);
        call_ends();
    }
    if (inst->kind.provider && inst->kind.provider->release)
        inst->kind.provider->release(&inst->provided, inst->ctx);
    sr_timer_fini(&inst->timer);
    if (inst->o)
        sr_plugin_memory_remove(inst->ctx->plugin_memory, inst->o);
    sagerun_mem_free(inst->ctx, inst->o);
    free(inst);
}

sagerun_status sagerun_instance_prepare(sagerun_instance *inst, double *seconds,
                                        sagerun_error *err)
{
    if (!inst)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance is NULL");
    const sagerun_variant_descriptor *d = inst->desc;
    double t0 = sr_monotonic_seconds();
    sagerun_status st = SAGERUN_OK;
    /* The inputs of the variant's kind first (sage2: quantized once, input_kinds.c). */
    const sr_input_provider *p = inst->kind.provider;
    if (p->provide && (st = p->provide(&inst->provided, inst->ctx, inst->in, d, inst->kind.params,
                                       err)) != SAGERUN_OK)
        return st;
    if (d->prepare) {
        char why[SR_PLUGIN_ERR_SIZE] = "";
        call_begins(inst);
        int rc = d->prepare(inst->state, why, sizeof why);
        call_ends();
        if (rc != 0)
            return variant_failed(err, d, "prepare", rc, why);
    }
    if ((st = sagerun_context_synchronize(inst->ctx, err)) != SAGERUN_OK)
        return sr_error_prefix(st, err, "variant %s: prepare", d->name);
    inst->prepared = true;
    if (seconds)
        *seconds = sr_monotonic_seconds() - t0;
    return SAGERUN_OK;
}

int sr_instance_call(void *instance, sagerun_error *err)
{
    sagerun_instance *inst = instance;
    const sagerun_variant_descriptor *d = inst->desc;
    if (!inst->prepared) {
        sagerun_status st = sagerun_instance_prepare(inst, NULL, err);
        if (st != SAGERUN_OK)
            return st;
    }
    char why[SR_PLUGIN_ERR_SIZE] = "";
    sr_nvtx_push("run %s", d->name); /* the variant's own code, nothing else (nvtx.h) */
    call_begins(inst);
    int rc = d->run(inst->state, why, sizeof why);
    call_ends();
    sr_nvtx_pop();
    if (rc != 0)
        return variant_failed(err, d, "run", rc, why);
    inst->ran = true;
    return SAGERUN_OK;
}

sagerun_status sagerun_instance_run(sagerun_instance *inst, double *seconds, sagerun_error *err)
{
    if (!inst)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance is NULL");
    if (!inst->prepared) {
        sagerun_status st = sagerun_instance_prepare(inst, NULL, err);
        if (st != SAGERUN_OK)
            return st;
    }
    sagerun_status st = sr_timer_start(&inst->timer, err);
    if (st != SAGERUN_OK)
        return st;
    int rc = sr_instance_call(inst, err);
    if (rc != SAGERUN_OK) {
        sagerun_context_synchronize(inst->ctx, NULL);
        return (sagerun_status)rc;
    }
    double s = 0;
    st = sr_timer_stop(&inst->timer, &s, err);
    if (st != SAGERUN_OK)
        return sr_error_prefix(st, err, "variant %s: run", inst->desc->name);
    if (seconds)
        *seconds = s;
    return SAGERUN_OK;
}

uint64_t sagerun_instance_output(const sagerun_instance *inst, uint64_t *bytes)
{
    if (!inst)
        return 0;
    if (bytes)
        *bytes = inst->o_bytes;
    return inst->o;
}

sagerun_status sagerun_instance_write_output(sagerun_instance *inst, const char *path,
                                             sagerun_error *err)
{
    if (!inst || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance_write_output: NULL argument");
    if (!inst->ran)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: no output yet (instance_run has not run it)",
                            inst->desc->name);
    static const char *const name[1] = {"o"};
    return sr_inputs_write_tensors(inst->in, path, name, &inst->o, &inst->in->problem.heads_q, 1,
                                   err);
}

sagerun_status sagerun_instance_output_sha256(sagerun_instance *inst, char hex[65],
                                              sagerun_error *err)
{
    if (!inst || !hex)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "output_sha256: NULL argument");
    if (!inst->ran)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: no output yet (instance_run has not run it)",
                            inst->desc->name);
    return sr_sha256_memory(inst->ctx, inst->o, inst->o_bytes, hex, err);
}

sagerun_status sagerun_instance_geometry(const sagerun_instance *inst,
                                         sagerun_launch_geometry *out, sagerun_error *err)
{
    if (!inst || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "instance_geometry: NULL argument");
    /* as far as the caller's struct_size covers (0: this header's), as the registry's outputs */
    uint32_t size = out->struct_size && out->struct_size < sizeof *out ? out->struct_size
                                                                       : (uint32_t)sizeof *out;
    memcpy(out, &inst->geometry, size);
    out->struct_size = size;
    return SAGERUN_OK;
}
