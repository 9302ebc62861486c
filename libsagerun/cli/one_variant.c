/* One variant on one workload (one_variant.h): what `run` and `profile` share. */
#include <string.h>

#include "inputs.h"
#include "one_variant.h"
#include "safe_io.h"

/* The context the variant runs on: a host variant on the host whatever --backend says, a CUDA
 * variant only on a device. */
static bool pick_context(const sr_cli_one_variant_options *o, sr_cli_one_variant *v)
{
    sagerun_error err = {0};
    v->run_ctx = v->ctx;
    int have = sagerun_context_backend(v->ctx);
    if (v->info.backend == SAGERUN_BACKEND_HOST && have != SAGERUN_BACKEND_HOST) {
        if (sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &v->host_ctx, &err) != SAGERUN_OK) {
            sr_cli_error("%s", err.message);
            return false;
        }
        v->run_ctx = v->host_ctx;
    } else if (v->info.backend == SAGERUN_BACKEND_CUDA && have != SAGERUN_BACKEND_CUDA) {
        sagerun_context *probe = NULL;
        sagerun_context_create(SAGERUN_BACKEND_CUDA, o->device, &probe, &err);
        sagerun_context_destroy(probe);
        sr_cli_error("%s: variant %s needs a CUDA device: %s", o->cmd, o->variant,
                     err.message[0] ? err.message : "the host backend was requested");
        return false;
    }
    return true;
}

/* The workload, its inputs and the instance; the variant's prints go to stderr meanwhile. */
static bool create_instance(const sr_cli_one_variant_options *o, sr_cli_one_variant *v,
                            size_t index)
{
    sagerun_error err = {0};
    o->workload->on_host = sagerun_context_backend(v->run_ctx) == SAGERUN_BACKEND_HOST;
    if (sr_cli_workload(o->workload, &v->w, &err) != SAGERUN_OK) {
        sr_cli_error("%s: %s", o->cmd, err.message);
        return false;
    }
    v->have_workload = true;
    int saved = sr_stdout_divert();
    bool ok = sr_inputs_create_for_workload(v->run_ctx, &v->w, &v->in, &err) == SAGERUN_OK &&
              sagerun_instance_create(v->reg, index, v->run_ctx, v->in, &v->inst, &err) ==
                  SAGERUN_OK;
    sr_stdout_restore(saved);
    if (!ok)
        sr_cli_error("%s", err.message);
    else
        v->problem = sagerun_inputs_problem(v->in);
    return ok;
}

bool sr_cli_one_variant_open(const sr_cli_one_variant_options *o, sr_cli_one_variant *v)
{
    memset(v, 0, sizeof *v);
    sagerun_error err = {0};
    if (sr_cli_context(o->backend, o->device, true, &v->ctx, &err) != SAGERUN_OK ||
        sr_cli_registry(v->ctx, o->plugins, o->n_plugins, o->policy, &v->reg, &err) !=
            SAGERUN_OK ||
        sr_cli_bind_specs(v->reg, &o->variant, 1, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        return false;
    }
    long index = sagerun_registry_find(v->reg, o->variant);
    if (index < 0) {
        sr_cli_error("%s: no variant named '%s' (see 'sagerun list' for what was found and "
                     "rejected)",
                     o->cmd, o->variant);
        return false;
    }
    v->info.struct_size = sizeof v->info;
    sagerun_registry_variant_info(v->reg, (size_t)index, &v->info, NULL);
    return pick_context(o, v) && create_instance(o, v, (size_t)index);
}

void sr_cli_one_variant_close(sr_cli_one_variant *v)
{
    if (v->have_workload)
        sr_workload_free(&v->w);
    sagerun_instance_destroy(v->inst);
    sagerun_inputs_destroy(v->in);
    sagerun_registry_destroy(v->reg);
    sagerun_context_destroy(v->host_ctx);
    sagerun_context_destroy(v->ctx);
    memset(v, 0, sizeof *v);
}

void sr_cli_one_variant_print(const sr_cli_one_variant *v, const char *variant)
{
    const sagerun_problem *p = v->problem;
    printf("variant       %s (%s backend)\n", variant,
           sagerun_backend_name(sagerun_context_backend(v->run_ctx)));
    printf("workload      %s: [%u, %u, %u, %u] Hkv %u %s %s%s", v->w.name, p->batch, p->seq_len,
           p->heads_q, p->head_dim, p->heads_kv, p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD",
           sr_dtype_word((int)p->dtype), p->causal ? " causal" : "");
    if (v->w.source == SR_WORKLOAD_SYNTHETIC)
        printf(" synthetic seed %llu\n", (unsigned long long)v->w.synthetic.seed);
    else
        printf(" from %s\n", v->w.input_path);
}
