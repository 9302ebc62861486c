/* The public workload handle (sagerun/workload.h) over workload.c's workloads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "sagerun/workload.h"

/* Runs load (one of workload.c's readers) into a new handle. */
static sagerun_status new_handle(sagerun_workload **out, sagerun_error *err,
                                 sagerun_status (*load)(sr_workload *w, const void *arg,
                                                        sagerun_error *err),
                                 const void *arg)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload: NULL argument");
    *out = NULL;
    sagerun_workload *h = calloc(1, sizeof(*h));
    if (!h)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_status st = load(&h->w, arg, err);
    if (st != SAGERUN_OK) {
        free(h); /* the readers free what they made on failure */
        return st;
    }
    *out = h;
    return SAGERUN_OK;
}

static sagerun_status load_default(sr_workload *w, const void *arg, sagerun_error *err)
{
    (void)arg;
    return sr_workload_default(w, err);
}

static sagerun_status load_file(sr_workload *w, const void *path, sagerun_error *err)
{
    return sr_workload_load(path, w, err);
}

sagerun_status sagerun_workload_default(sagerun_workload **out, sagerun_error *err)
{
    return new_handle(out, err, load_default, NULL);
}

sagerun_status sagerun_workload_load(const char *path, sagerun_workload **out, sagerun_error *err)
{
    if (!path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_load: NULL path");
    return new_handle(out, err, load_file, path);
}

typedef struct parse_args {
    const char *text, *origin, *base_dir;
} parse_args;

static sagerun_status load_text(sr_workload *w, const void *arg, sagerun_error *err)
{
    const parse_args *a = arg;
    return sr_workload_parse(a->text, a->origin ? a->origin : "workload", a->base_dir, w, err);
}

sagerun_status sagerun_workload_parse(const char *json_text, const char *origin,
                                      const char *base_dir, sagerun_workload **out,
                                      sagerun_error *err)
{
    if (!json_text)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_parse: NULL text");
    parse_args a = {json_text, origin, base_dir};
    return new_handle(out, err, load_text, &a);
}

typedef struct file_args {
    const char *path;
    int layout;
} file_args;

static sagerun_status load_safetensors(sr_workload *w, const void *arg, sagerun_error *err)
{
    const file_args *a = arg;
    return sr_workload_from_safetensors(a->path, a->layout, w, err);
}

sagerun_status sagerun_workload_from_safetensors(const char *path, int layout,
                                                 sagerun_workload **out, sagerun_error *err)
{
    if (out)
        *out = NULL;
    if (!path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_from_safetensors: NULL path");
    if (layout != -1 && layout != SAGERUN_LAYOUT_NHD && layout != SAGERUN_LAYOUT_HND)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s: layout %d: expected NHD (0), HND (1) or -1 (the file's)", path,
                            layout);
    file_args a = {path, layout};
    return new_handle(out, err, load_safetensors, &a);
}

sagerun_status sagerun_workload_synthetic(const sagerun_problem *problem, uint64_t seed,
                                          const char *name, sagerun_workload **out,
                                          sagerun_error *err)
{
    if (out)
        *out = NULL;
    if (!problem || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_synthetic: NULL argument");
    sagerun_status st = sagerun_problem_check(problem, err);
    if (st == SAGERUN_OK)
        st = sagerun_workload_default(out, err);
    if (st != SAGERUN_OK)
        return st;
    sr_workload *w = &(*out)->w;
    w->problem = *problem;
    w->problem.struct_size = sizeof(w->problem);
    w->synthetic.seed = seed;
    json_object_clear(w->metadata);
    if ((st = sagerun_workload_set_name(*out, name ? name : "synthetic", err)) != SAGERUN_OK) {
        sagerun_workload_destroy(*out);
        *out = NULL;
    }
    return st;
}

void sagerun_workload_destroy(sagerun_workload *h)
{
    if (!h)
        return;
    sr_workload_free(&h->w);
    free(h);
}

const char *sagerun_workload_name(const sagerun_workload *h)
{
    return h ? h->w.name : NULL;
}

const sagerun_problem *sagerun_workload_problem(const sagerun_workload *h)
{
    return h ? &h->w.problem : NULL;
}

const char *sagerun_workload_input_path(const sagerun_workload *h)
{
    return h && h->w.source == SR_WORKLOAD_SAFETENSORS ? h->w.input_path : NULL;
}

uint64_t sagerun_workload_seed(const sagerun_workload *h)
{
    return h && h->w.source == SR_WORKLOAD_SYNTHETIC ? h->w.synthetic.seed : 0;
}

sagerun_status sagerun_workload_set_name(sagerun_workload *h, const char *name,
                                         sagerun_error *err)
{
    if (!h || !name || !*name)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_name: %s",
                            h ? "empty name" : "NULL workload");
    json_t *utf8 = json_string(name); /* jansson's check: a name goes into JSON files */
    if (!utf8)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "workload_set_name: the name is not valid UTF-8");
    json_decref(utf8);
    char *copy = strdup(name);
    if (!copy)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    free(h->w.name);
    h->w.name = copy;
    return SAGERUN_OK;
}

sagerun_status sagerun_workload_set_problem(sagerun_workload *h, const sagerun_problem *problem,
                                            sagerun_error *err)
{
    if (!h || !problem)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_problem: NULL argument");
    sagerun_status st = sagerun_problem_check(problem, err);
    if (st == SAGERUN_OK && h->w.source == SR_WORKLOAD_SYNTHETIC)
        st = sr_synthetic_check(&h->w.synthetic, problem, err);
    if (st != SAGERUN_OK)
        return st;
    h->w.problem = *problem;
    h->w.problem.struct_size = sizeof(h->w.problem);
    return SAGERUN_OK;
}

sagerun_status sagerun_workload_set_seed(sagerun_workload *h, uint64_t seed, sagerun_error *err)
{
    if (!h)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_seed: NULL workload");
    if (h->w.source != SR_WORKLOAD_SYNTHETIC)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "workload %s: its inputs come from %s, not from the generator: no "
                            "seed to set",
                            h->w.name ? h->w.name : "?", h->w.input_path);
    h->w.synthetic.seed = seed;
    return SAGERUN_OK;
}

sagerun_status sagerun_workload_set_metadata(sagerun_workload *h, const char *metadata_json,
                                             sagerun_error *err)
{
    if (!h)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_metadata: NULL workload");
    json_t *meta = NULL;
    sagerun_status st = metadata_json ? sr_metadata_parse(metadata_json, &meta, err)
                        : (meta = json_object()) ? SAGERUN_OK
                                                 : sr_error_set(err, SAGERUN_OUT_OF_MEMORY,
                                                                "out of memory");
    if (st != SAGERUN_OK)
        return st;
    json_decref(h->w.metadata);
    h->w.metadata = meta;
    return SAGERUN_OK;
}

char *sagerun_workload_to_json(const sagerun_workload *h, int indent)
{
    json_t *j = h ? sr_workload_to_json(&h->w) : NULL;
    size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) |
                   (indent > 0 ? JSON_INDENT(indent > 31 ? 31 : indent) : JSON_COMPACT);
    char *text = j ? json_dumps(j, flags) : NULL;
    json_decref(j);
    return text;
}

sagerun_status sagerun_workload_create_inputs(const sagerun_workload *h, sagerun_context *ctx,
                                              sagerun_inputs **out, sagerun_error *err)
{
    if (!h || !ctx || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_create_inputs: NULL argument");
    return sr_inputs_create_for_workload(ctx, &h->w, out, err);
}
