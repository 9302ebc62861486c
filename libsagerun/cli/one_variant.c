/* One variant on one workload (one_variant.h): what `run` and `profile` share. */
#include <string.h>

#include "one_variant.h"
#include "supervise.h"

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
    int saved = sr_cli_stdout_to_stderr();
    sr_cli_supervise_phase("create");
    bool ok = sagerun_workload_create_inputs(v->w, v->run_ctx, &v->in, &err) == SAGERUN_OK &&
              sagerun_instance_create(v->reg, index, v->run_ctx, v->in, &v->inst, &err) ==
                  SAGERUN_OK;
    sr_cli_stdout_back(saved);
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
    sagerun_workload_destroy(v->w);
    sagerun_instance_destroy(v->inst);
    sagerun_inputs_destroy(v->in);
    sagerun_registry_destroy(v->reg);
    sagerun_context_destroy(v->host_ctx);
    sagerun_context_destroy(v->ctx);
    memset(v, 0, sizeof *v);
}

/* The problem's ABI 0.2 fields where they are not the default, as the options state them. */
static void print_problem_02(const sagerun_problem *p, FILE *out)
{
    if (p->causal && p->align == SAGERUN_ALIGN_BOTTOM_RIGHT)
        fprintf(out, " bottom-right");
    if (!p->varlen && sagerun_problem_kv_len(p) != p->seq_len)
        fprintf(out, " kv_len %u", sagerun_problem_kv_len(p));
    if (p->window)
        fprintf(out, " window %d,%d%s", p->window_left, p->window_right,
                !p->causal && p->align == SAGERUN_ALIGN_BOTTOM_RIGHT ? " bottom-right" : "");
    if (p->softcap > 0)
        fprintf(out, " softcap %g", (double)p->softcap);
    if (p->varlen)
        fprintf(out, " varlen %u sequences (%u queries, %u keys)", p->batch, p->total_q,
                p->total_kv);
    if (p->page_size)
        fprintf(out, " paged %u pages of %u", p->pages, p->page_size);
}

void sr_cli_one_variant_print(const sr_cli_one_variant *v, const char *variant, FILE *out)
{
    const sagerun_problem *p = v->problem;
    /* the registry's label (every parameter, canonical: compare's), not the spec as typed */
    fprintf(out, "variant       %s (%s backend)\n", v->info.name ? v->info.name : variant,
           sagerun_backend_name(sagerun_context_backend(v->run_ctx)));
    fprintf(out, "workload      %s: [%u, %u, %u, %u] Hkv %u %s %s%s", sagerun_workload_name(v->w),
           p->batch, p->seq_len, p->heads_q, p->head_dim, p->heads_kv,
           p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD", sagerun_dtype_word((int)p->dtype),
           p->causal ? " causal" : "");
    print_problem_02(p, out);
    if (!sagerun_workload_input_path(v->w))
        fprintf(out, " synthetic seed %llu\n", (unsigned long long)sagerun_workload_seed(v->w));
    else
        fprintf(out, " from %s\n", sagerun_workload_input_path(v->w));
}

sagerun_status sr_cli_one_variant_output_end(const sr_cli_one_variant *v, sagerun_error *err)
{
    sagerun_status st = sagerun_instance_check_output_end(v->inst, err);
    if (st != SAGERUN_OK) {
        char why[sizeof err->message];
        memcpy(why, err->message, sizeof why);
        snprintf(err->message, sizeof err->message, "variant %s %s: %s", v->info.name,
                 st == SAGERUN_VARIANT ? "wrote past the end of its output"
                                       : "left the memory after its output unreadable",
                 why);
    }
    return st;
}
