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
    sagerun_problem p;
    if (st == SAGERUN_OK)
        sr_problem_load(problem, &p);
    if (st == SAGERUN_OK && (p.varlen || p.page_size)) /* their lengths: set_varlen, set_paged */
        st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                          "workload_synthetic: takes a dense problem (varlen 0, page_size 0); "
                          "the lengths and pages come from sagerun_workload_set_varlen (or "
                          "_set_lengths) and _set_paged");
    if (st == SAGERUN_OK)
        st = sagerun_workload_default(out, err);
    if (st != SAGERUN_OK)
        return st;
    sr_workload *w = &(*out)->w;
    w->problem = p;
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

/* Whether two problems store Q, K, V alike: the fields the lengths and pages depend on. */
static bool same_storage(const sagerun_problem *a, const sagerun_problem *b)
{
    return a->batch == b->batch && a->seq_len == b->seq_len &&
           sagerun_problem_kv_len(a) == sagerun_problem_kv_len(b) && a->varlen == b->varlen &&
           a->total_q == b->total_q && a->total_kv == b->total_kv &&
           a->page_size == b->page_size && a->pages == b->pages &&
           a->pages_per_seq == b->pages_per_seq;
}

sagerun_status sagerun_workload_set_problem(sagerun_workload *h, const sagerun_problem *problem,
                                            sagerun_error *err)
{
    if (!h || !problem)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_problem: NULL argument");
    sagerun_status st = sagerun_problem_check(problem, err);
    if (st != SAGERUN_OK)
        return st;
    /* a caller of ABI 0.1 changes the fields it has: the workload keeps its kv_len, masks,
     * lengths and pages (which that caller cannot see), checked together */
    sagerun_problem p = h->w.problem;
    memcpy(&p, problem, problem->struct_size < sizeof p ? problem->struct_size : sizeof p);
    p.struct_size = sizeof p;
    if (problem->struct_size < sizeof p && (st = sagerun_problem_check(&p, err)) != SAGERUN_OK)
        return st;
    bool dense = !p.varlen && !p.page_size;
    if (!dense && !same_storage(&p, &h->w.problem))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "workload_set_problem: a varlen or paged problem's lengths and pages "
                            "come from sagerun_workload_set_varlen (or _set_lengths) and "
                            "sagerun_workload_set_paged");
    if (h->w.source == SR_WORKLOAD_SYNTHETIC &&
        (st = sr_synthetic_check(&h->w.synthetic, &p, err)) != SAGERUN_OK)
        return st;
    if (dense) { /* the lengths and pages of a varlen or paged problem before: gone */
        free(h->w.cu_seqlens_q);
        free(h->w.cu_seqlens_kv);
        free(h->w.block_table);
        h->w.cu_seqlens_q = h->w.cu_seqlens_kv = h->w.block_table = NULL;
    }
    h->w.problem = p;
    return SAGERUN_OK;
}

/* Lengths and pages need the generator's inputs: a file holds its own dense tensors. */
static sagerun_status synthetic_only(const sagerun_workload *h, const char *what,
                                     sagerun_error *err)
{
    if (!h)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_%s: NULL workload", what);
    if (h->w.source == SR_WORKLOAD_SYNTHETIC)
        return SAGERUN_OK;
    return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                        "workload %s: its inputs come from %s: %s applies to synthetic inputs",
                        h->w.name ? h->w.name : "?", h->w.input_path, what);
}

sagerun_status sagerun_workload_set_varlen(sagerun_workload *h, const char *spec,
                                           sagerun_error *err)
{
    sagerun_status st = synthetic_only(h, "varlen", err);
    if (st == SAGERUN_OK && (st = sr_workload_set_varlen_spec(&h->w, spec, err)) != SAGERUN_OK &&
        strncmp(err ? err->message : "", "varlen", 6) != 0)
        sr_error_prefix(st, err, "varlen");
    return st;
}

sagerun_status sagerun_workload_set_lengths(sagerun_workload *h, const uint32_t *q_lens,
                                            const uint32_t *kv_lens, uint32_t count,
                                            sagerun_error *err)
{
    sagerun_status st = synthetic_only(h, "lengths", err);
    if (st == SAGERUN_OK && !q_lens)
        st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload_set_lengths: NULL q_lens");
    return st == SAGERUN_OK ? sr_workload_set_lengths(&h->w, q_lens, kv_lens, count, err) : st;
}

sagerun_status sagerun_workload_set_paged(sagerun_workload *h, uint32_t page_size,
                                          sagerun_error *err)
{
    sagerun_status st = synthetic_only(h, "paged", err);
    return st == SAGERUN_OK ? sr_workload_set_paged(&h->w, page_size, err) : st;
}

sagerun_status sagerun_workload_sequences(const sagerun_workload *h, sagerun_sequences *out,
                                          sagerun_error *err)
{
    if (!h || !out || (out->struct_size && out->struct_size < sizeof *out))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "workload_sequences: NULL argument or struct_size %u (needs %zu)",
                            out ? out->struct_size : 0, sizeof *out);
    sr_workload_sequences(&h->w, out);
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
