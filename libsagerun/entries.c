/* The comparison's entries (engine.h): which variants, their instances, and the hooks announced
 * around every call into a variant's code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "resource_limits.h"
#include "nvtx.h"

void sr_entry_fail(sr_entry *e, const sagerun_error *err, const char *what, const char *phase)
{
    e->failed = true;
    snprintf(e->failure, sizeof(e->failure), "%s: %s", what,
             err->message[0] ? err->message : sagerun_status_message(err->status));
    snprintf(e->failure_phase, sizeof(e->failure_phase), "%s", phase);
}

sagerun_instance *sr_entry_instance(const sr_entry *e, size_t k)
{
    return k == 0 || k >= e->instances ? e->inst : e->more[k - 1];
}

sr_timer_graph *sr_entry_graph(const sr_entry *e, size_t k)
{
    return k == 0 || k >= e->instances ? e->timing.graph : e->timing.more_graphs[k - 1];
}

/* ---- hooks (compare.h) ------------------------------------------------------------------------ */

/* Every call into a variant is also an NVTX range (nvtx.h): "LABEL PHASE", a timed sample
 * "LABEL sample (round R)" (the timer's own kernels included; the variant's calls are the "run
 * NAME" ranges inside). */
double sr_hook_begin(const sagerun_compare_hooks *h, const sr_entry *e, const char *phase,
                     uint32_t round, uint32_t calls)
{
    if (h->call) {
        sagerun_compare_call c = {.struct_size = sizeof c, .label = e->label, .phase = phase,
                                  .round = round, .calls = calls};
        h->call(h->call_user, &c);
    }
    if (strcmp(phase, "run") == 0)
        sr_nvtx_push("%s sample (round %u)", e->label, round);
    else
        sr_nvtx_push("%s %s", e->label, phase);
    return sr_monotonic_seconds();
}

void sr_hook_end(const sagerun_compare_hooks *h, const sr_entry *e, const char *phase,
                 uint32_t round, uint32_t calls, double t0, bool context_lost)
{
    sr_nvtx_pop();
    if (!h->call)
        return;
    sagerun_compare_call c = {.struct_size = sizeof c, .end = 1, .label = e->label,
                              .phase = phase, .round = round,
                              .seconds = sr_monotonic_seconds() - t0,
                              .failure = e->failed ? e->failure : NULL,
                              .failure_phase = e->failed ? e->failure_phase : NULL,
                              .context_lost = context_lost, .calls = calls};
    h->call(h->call_user, &c);
}

bool sr_hook_interrupted(const sagerun_compare_hooks *h)
{
    return h->interrupted && h->interrupted(h->interrupted_user);
}

/* An illegal address, a trap or a launch failure is sticky: every later call in this CUDA context
 * fails alike, so no other variant can be measured in this process. (A supervising process re-runs
 * the comparison without the culprit: sagerun compare.) */
bool sr_entry_lost_context(sagerun_context *ctx, const sr_entry *e, sagerun_error *err)
{
    if (!e->failed || sagerun_context_backend(ctx) != SAGERUN_BACKEND_CUDA ||
        sagerun_context_synchronize(ctx, NULL) == SAGERUN_OK)
        return false;
    sr_error_set(err, SAGERUN_CUDA,
                 "%s (%s) left the CUDA context unusable, so no other variant can run in this "
                 "process: %s",
                 e->label, e->failure_phase, e->failure);
    return true;
}

/* ---- which variants ----------------------------------------------------------------------- */

static sagerun_status find_variant(sagerun_registry *reg, const char *name, size_t *index,
                                   sagerun_error *err)
{
    long i = sagerun_registry_find(reg, name);
    if (i < 0 && strchr(name, '[')) { /* NAME[key=value,...]: its own entry, errors name the key */
        sagerun_status st = sagerun_registry_bind(reg, name, &i, err);
        if (st != SAGERUN_OK)
            return st;
    }
    if (i >= 0) {
        *index = (size_t)i;
        return SAGERUN_OK;
    }
    char known[256] = "";
    size_t used = 0;
    for (size_t k = 0; k < sagerun_registry_variant_count(reg) && used < sizeof(known); k++) {
        sagerun_variant_info vi = {.struct_size = sizeof(vi)};
        if (sagerun_registry_variant_info(reg, k, &vi, NULL) == SAGERUN_OK)
            used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", k ? ", " : "",
                                     vi.name);
    }
    return sr_error_set(err, SAGERUN_NOT_FOUND,
                        "no variant named '%s' (found: %s; see 'sagerun list' for rejected "
                        "plugin files)",
                        name, known[0] ? known : "none");
}

/* Every variant of the context's backend but the baseline, by registry order. */
static size_t every_other(sagerun_registry *reg, sagerun_context *ctx, sr_report *rep,
                          sr_entry *es, size_t n)
{
    int backend = sagerun_context_backend(ctx);
    for (size_t k = 0; k < sagerun_registry_variant_count(reg); k++) {
        sagerun_variant_info vi = {.struct_size = sizeof(vi)};
        if (k == es[0].index || sagerun_registry_variant_info(reg, k, &vi, NULL) != SAGERUN_OK)
            continue;
        if (vi.backend != backend) {
            sr_report_add_warning(rep, "variant %s skipped: it runs on the %s backend, this "
                                       "comparison on %s",
                                  vi.name, sagerun_backend_name(vi.backend),
                                  sagerun_backend_name(backend));
            continue;
        }
        es[n].optional = true;
        es[n++].index = k;
    }
    if (n == 1)
        sr_report_add_warning(rep, "no variant besides the baseline was found");
    return n;
}

/* Labels unique in the report: the name, then name#2, name#3 for repeats (A/A). */
static sagerun_status label_entries(sagerun_registry *reg, sr_entry *es, size_t n,
                                    sagerun_error *err)
{
    for (size_t i = 0; i < n; i++) {
        es[i].info.struct_size = sizeof(es[i].info);
        sagerun_status st = sagerun_registry_variant_info(reg, es[i].index, &es[i].info, err);
        if (st != SAGERUN_OK)
            return st;
        unsigned repeat = 1;
        for (size_t j = 0; j < i; j++)
            repeat += es[j].index == es[i].index;
        if (repeat == 1)
            snprintf(es[i].label, sizeof(es[i].label), "%s", es[i].info.name);
        else
            snprintf(es[i].label, sizeof(es[i].label), "%s#%u", es[i].info.name, repeat);
    }
    return SAGERUN_OK;
}

sagerun_status sr_entries_select(sagerun_registry *reg, sagerun_context *ctx,
                                 const sagerun_compare_options *o, sr_report *rep, sr_entry **out,
                                 size_t *count, sagerun_error *err)
{
    size_t cap = 1 + (o->variants ? o->variant_count : sagerun_registry_variant_count(reg));
    sr_entry *es = calloc(cap, sizeof(*es));
    if (!es)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    size_t n = 0;
    sagerun_status st = find_variant(reg, o->baseline, &es[n++].index, err);
    for (size_t i = 0; st == SAGERUN_OK && o->variants && i < o->variant_count; i++) {
        if (!o->variants[i])
            st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant name %zu is NULL", i);
        else
            st = find_variant(reg, o->variants[i], &es[n++].index, err);
    }
    if (st == SAGERUN_OK && !o->variants)
        n = every_other(reg, ctx, rep, es, n);
    if (st == SAGERUN_OK)
        st = label_entries(reg, es, n, err);
    if (st != SAGERUN_OK) {
        free(es);
        return st;
    }
    *out = es;
    *count = n;
    return SAGERUN_OK;
}

sagerun_status sr_entries_skip(const sagerun_compare_hooks *h, sr_entry *es, size_t n,
                               sagerun_error *err)
{
    (void)err; /* nothing left out is an error any more: the baseline neither (below) */
    for (size_t k = 0; k < h->skip_count && h->skip_labels; k++) {
        for (size_t i = 0; i < n; i++) {
            if (!h->skip_labels[k] || strcmp(h->skip_labels[k], es[i].label) != 0)
                continue;
            es[i].failed = true;
            snprintf(es[i].failure, sizeof(es[i].failure), "%s",
                     h->skip_reasons && h->skip_reasons[k] ? h->skip_reasons[k] : "left out");
            snprintf(es[i].failure_phase, sizeof(es[i].failure_phase), "%s",
                     h->skip_phases && h->skip_phases[k] ? h->skip_phases[k] : "");
        }
    }
    if (n && es[0].failed)
        sr_entries_without_baseline(es, n);
    return SAGERUN_OK;
}

void sr_entries_without_baseline(sr_entry *es, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (!es[i].failed) {
            es[i].failed = true;
            snprintf(es[i].failure, sizeof(es[i].failure), "not measured: the baseline %s "
                     "failed", es[0].label);
        }
}

/* ---- instances --------------------------------------------------------------------------- */

sagerun_status sr_entries_check_memory(sagerun_registry *reg, sagerun_context *ctx,
                                       const sagerun_problem *p, bool with_inputs,
                                       const sr_entry *es, size_t n,
                                       const sagerun_compare_options *o, sagerun_error *err)
{
    sagerun_device_info di = {.struct_size = sizeof di};
    if (sagerun_context_backend(ctx) != SAGERUN_BACKEND_CUDA ||
        sagerun_context_device_info(ctx, &di, NULL) != SAGERUN_OK)
        return SAGERUN_OK; /* host: an allocation failure is reported where it happens */
    /* every instance of an entry has its own output and workspace: counted as that many entries */
    size_t k = o->instances > 1 && o->schedule != SAGERUN_SCHEDULE_SEED ? o->instances : 1;
    const sagerun_variant_descriptor **d = calloc(n ? n * k : 1, sizeof(*d));
    if (!d)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n * k; i++)
        d[i] = es[i / k].failed ? NULL : sr_registry_descriptor(reg, es[i / k].index);
    uint32_t rows = o->flags & SAGERUN_COMPARE_SKIP_ACCURACY
                        ? 0
                        : sr_verify_accuracy_rows(p, o->accuracy_rows,
                                                  sagerun_context_backend(ctx));
    sr_memory_estimate est;
    sr_memory_estimate_compare(p, d, n * k, with_inputs, rows, &est);
    free(d);
    return sr_memory_check(&est, di.free_memory, err);
}

/* create (geometry included), then prepare; the phase that failed is recorded. */
static void create_and_prepare(sagerun_registry *reg, sagerun_context *ctx, sagerun_inputs *in,
                               const sagerun_compare_hooks *h, sr_entry *e, bool *lost,
                               sagerun_error *e_err, sagerun_error *err)
{
    double t0 = sr_hook_begin(h, e, "create", 0, 1);
    if (sagerun_instance_create(reg, e->index, ctx, in, &e->inst, e_err) != SAGERUN_OK) {
        e->unsupported = e_err->status == SAGERUN_UNSUPPORTED;
        sr_entry_fail(e, e_err, "create", "create");
    } else {
        e->geometry.struct_size = sizeof(e->geometry);
        e->has_geometry = sagerun_instance_geometry(e->inst, &e->geometry, NULL) == SAGERUN_OK;
    }
    *lost = sr_entry_lost_context(ctx, e, err);
    sr_hook_end(h, e, "create", 0, 1, t0, *lost);
    if (*lost || e->failed)
        return;
    t0 = sr_hook_begin(h, e, "prepare", 0, 1);
    if (sagerun_instance_prepare(e->inst, &e->prepare_s, e_err) != SAGERUN_OK)
        sr_entry_fail(e, e_err, "prepare", "prepare");
    else
        e->prepared = true;
    *lost = sr_entry_lost_context(ctx, e, err);
    sr_hook_end(h, e, "prepare", 0, 1, t0, *lost);
}

/* The further instances of an entry (compare --instances), each created and prepared as the
 * first; one that fails fails the entry. */
static void create_more(sagerun_registry *reg, sagerun_context *ctx, sagerun_inputs *in,
                        const sagerun_compare_hooks *h, sr_entry *e, size_t instances, bool *lost,
                        sagerun_error *e_err, sagerun_error *err)
{
    for (size_t k = 1; k < instances && !e->failed && !*lost; k++) {
        double t0 = sr_hook_begin(h, e, "create", 0, 1), prepare_s;
        sagerun_instance **inst = &e->more[k - 1];
        if (sagerun_instance_create(reg, e->index, ctx, in, inst, e_err) != SAGERUN_OK)
            sr_entry_fail(e, e_err, "create (a further instance)", "create");
        else if (sagerun_instance_prepare(*inst, &prepare_s, e_err) != SAGERUN_OK)
            sr_entry_fail(e, e_err, "prepare (a further instance)", "prepare");
        else
            e->instances = k + 1;
        *lost = sr_entry_lost_context(ctx, e, err);
        sr_hook_end(h, e, "create", 0, 1, t0, *lost);
    }
}

sagerun_status sr_entries_prepare(sagerun_registry *reg, sagerun_context *ctx,
                                  sagerun_inputs *in, const sagerun_compare_hooks *h,
                                  const sagerun_compare_options *o, sr_entry *es, size_t n,
                                  bool *stop, sagerun_error *err)
{
    for (size_t i = 0; i < n; i++) {
        sagerun_error e_err = {0};
        if (es[i].failed)
            continue;
        if ((*stop = sr_hook_interrupted(h)))
            break;
        if (o->progress)
            o->progress(o->progress_user, "prepare", es[i].label, (uint32_t)i + 1, (uint32_t)n);
        bool lost;
        create_and_prepare(reg, ctx, in, h, &es[i], &lost, &e_err, err);
        es[i].instances = 1;
        if (!lost && !es[i].failed)
            create_more(reg, ctx, in, h, &es[i], sr_compare_instances(o), &lost, &e_err, err);
        if (lost)
            return SAGERUN_CUDA;
        if (es[i].failed && i == 0) {
            if (err)
                *err = e_err;
            return sr_error_prefix(e_err.status, err, "baseline %s", es[i].label);
        }
    }
    return SAGERUN_OK;
}

void sr_entries_destroy(sagerun_context *ctx, const sagerun_compare_hooks *h, sr_entry *es,
                        size_t n)
{
    sr_verify_release(ctx, es, n);
    for (size_t i = 0; i < n; i++) {
        if (!es[i].inst)
            continue;
        double t0 = sr_hook_begin(h, &es[i], "destroy", 0, 1);
        sagerun_instance_destroy(es[i].inst);
        for (size_t k = 0; k < SR_INSTANCES_MAX - 1; k++)
            sagerun_instance_destroy(es[i].more[k]);
        sr_hook_end(h, &es[i], "destroy", 0, 1, t0, false);
    }
    free(es);
}
