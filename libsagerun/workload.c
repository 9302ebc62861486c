/* Workloads: the built-in default, JSON workload files, safetensors input files. */
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "safe_io.h"
#include "safetensors.h"

/* From ../shared/fixtures/seed-report.json, "metadata": the call the seed report measured. */
const char sr_workload_seed_metadata[] =
    "{\"width\": 1344, \"height\": 768, \"frames\": 124, \"steps\": 12, \"sampler_step\": 1,"
    " \"seed\": 440420, \"text_tokens\": 100, \"block_index\": 24, \"attention\": \"sage2\","
    " \"hidden_shape\": [37810, 5376], \"h_msa_shape\": [37810, 5376],"
    " \"segments\": [[0, 100, 1], [100, 514, 2], [514, 37810, 0]]}";

static const char *const top_keys[] = {"name",    "shape",    "heads_kv", "layout", "dtype",
                                       "causal",  "sm_scale", "input",    "metadata", "kv_len",
                                       "window",  "softcap",  "varlen",   "page_size", "align"};
static const char *const synthetic_keys[] = {"source", "seed",   "q_std",           "k_std",
                                             "v_std",  "k_bias", "outlier_channels", "outlier_scale"};
static const char *const file_keys[] = {"source", "path"};

void sr_workload_free(sr_workload *w)
{
    if (!w)
        return;
    free(w->name);
    free(w->origin);
    free(w->input_path);
    json_decref(w->metadata);
    free(w->cu_seqlens_q);
    free(w->cu_seqlens_kv);
    free(w->block_table);
    memset(w, 0, sizeof *w);
}

sagerun_status sr_metadata_parse(const char *text, json_t **out, sagerun_error *err)
{
    json_error_t jerr;
    json_t *meta = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!meta)
        return sr_error_set(err, SAGERUN_FORMAT, "metadata: not valid JSON: %s (column %d)",
                            jerr.text, jerr.column);
    if (!json_is_object(meta)) {
        json_decref(meta);
        return sr_error_set(err, SAGERUN_FORMAT, "metadata: expected a JSON object");
    }
    *out = meta;
    return SAGERUN_OK;
}

static void workload_init(sr_workload *w)
{
    memset(w, 0, sizeof *w);
    w->problem = sagerun_problem_make(1, 37810, 56, 56, 128);
    w->source = SR_WORKLOAD_SYNTHETIC;
    sr_synthetic_default(&w->synthetic, SAGERUN_WORKLOAD_DEFAULT_SEED);
}

sagerun_status sr_workload_default(sr_workload *w, sagerun_error *err)
{
    workload_init(w);
    w->name = strdup("seed");
    w->origin = strdup("built-in");
    w->metadata = json_loads(sr_workload_seed_metadata, JSON_REJECT_DUPLICATES, NULL);
    if (!w->name || !w->origin || !w->metadata) {
        sr_workload_free(w);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "default workload: out of memory");
    }
    return SAGERUN_OK;
}

/* ---- strict JSON helpers: every error names the origin and the key ---- */

static sagerun_status check_keys(const char *origin, const char *where, json_t *obj,
                                 const char *const *known, size_t n, sagerun_error *err)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        bool ok = false;
        for (size_t i = 0; i < n && !ok; i++)
            ok = strcmp(key, known[i]) == 0;
        if (!ok)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: unknown key '%s%s'", origin, where,
                                key);
    }
    return SAGERUN_OK;
}

static sagerun_status wrong_type(const char *origin, const char *key, const char *expected,
                                 sagerun_error *err)
{
    return sr_error_set(err, SAGERUN_FORMAT, "%s: key '%s' must be %s", origin, key, expected);
}

/* "w.json: key 'kv_len': 0: expected an integer >= 1": the value as the file has it. */
static sagerun_status bad_value(const char *origin, const char *key, json_t *j,
                                const char *expected, sagerun_error *err)
{
    char *text = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    sr_error_set(err, SAGERUN_FORMAT, "%s: key '%s': %.60s: expected %s", origin, key,
                 text ? text : "?", expected);
    free(text);
    return SAGERUN_FORMAT;
}

/* A size of ABI 0.2's keys (kv_len, page_size): an integer from 1 to 2^30. */
static sagerun_status get_size(const char *origin, const char *key, json_t *j, uint32_t *out,
                               sagerun_error *err)
{
    if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > (1 << 30))
        return bad_value(origin, key, j, "an integer from 1 to 1073741824", err);
    *out = (uint32_t)json_integer_value(j);
    return SAGERUN_OK;
}

static sagerun_status get_u32(const char *origin, const char *key, json_t *j, uint32_t min,
                              uint32_t *out, sagerun_error *err)
{
    if (!json_is_integer(j) || json_integer_value(j) < (json_int_t)min ||
        json_integer_value(j) > (json_int_t)UINT32_MAX) {
        char what[64];
        snprintf(what, sizeof what, "an integer in [%u, %u]", min, UINT32_MAX);
        return wrong_type(origin, key, what, err);
    }
    *out = (uint32_t)json_integer_value(j);
    return SAGERUN_OK;
}

static sagerun_status get_real(const char *origin, const char *key, json_t *j, double *out,
                               sagerun_error *err)
{
    if (!json_is_number(j))
        return wrong_type(origin, key, "a number", err);
    *out = json_number_value(j);
    return SAGERUN_OK;
}

static char *join_path(const char *base_dir, const char *path)
{
    char *out = NULL;
    if (path[0] == '/' || !base_dir || !base_dir[0])
        return strdup(path);
    if (asprintf(&out, "%s/%s", base_dir, path) < 0)
        return NULL;
    return out;
}

static sagerun_status parse_input(const char *origin, const char *base_dir, json_t *in,
                                  sr_workload *w, sagerun_error *err)
{
    if (!json_is_object(in))
        return wrong_type(origin, "input", "an object", err);
    json_t *src = json_object_get(in, "source");
    const char *source = src ? json_string_value(src) : "synthetic";
    if (!source)
        return wrong_type(origin, "input.source", "a string (\"synthetic\" or \"safetensors\")",
                          err);
    sagerun_status st;
    if (strcmp(source, "safetensors") == 0) {
        if ((st = check_keys(origin, "input.", in, file_keys, SR_ARRAY_LEN(file_keys), err)))
            return st;
        json_t *p = json_object_get(in, "path");
        if (!json_is_string(p) || !json_string_value(p)[0])
            return wrong_type(origin, "input.path", "a non-empty string", err);
        w->source = SR_WORKLOAD_SAFETENSORS;
        if (!(w->input_path = join_path(base_dir, json_string_value(p))))
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", origin);
        return SAGERUN_OK;
    }
    if (strcmp(source, "synthetic") != 0)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: key 'input.source': unknown source '%s' (\"synthetic\" or "
                            "\"safetensors\")",
                            origin, source);
    if ((st = check_keys(origin, "input.", in, synthetic_keys, SR_ARRAY_LEN(synthetic_keys), err)))
        return st;
    sr_synthetic *s = &w->synthetic;
    json_t *j;
    if ((j = json_object_get(in, "seed"))) {
        if (!json_is_integer(j) || json_integer_value(j) < 0)
            return wrong_type(origin, "input.seed", "a non-negative integer", err);
        s->seed = (uint64_t)json_integer_value(j);
    }
    struct {
        const char *key, *path;
        double *dst;
    } reals[] = {{"q_std", "input.q_std", &s->q_std},
                 {"k_std", "input.k_std", &s->k_std},
                 {"v_std", "input.v_std", &s->v_std},
                 {"k_bias", "input.k_bias", &s->k_bias},
                 {"outlier_scale", "input.outlier_scale", &s->outlier_scale}};
    for (size_t i = 0; i < SR_ARRAY_LEN(reals); i++)
        if ((j = json_object_get(in, reals[i].key)) &&
            (st = get_real(origin, reals[i].path, j, reals[i].dst, err)))
            return st;
    if ((j = json_object_get(in, "outlier_channels")) &&
        (st = get_u32(origin, "input.outlier_channels", j, 0, &s->outlier_channels, err)))
        return st;
    if ((st = sr_synthetic_check(s, &w->problem, err)))
        return sr_error_prefix(st, err, "%s: key 'input'", origin);
    return SAGERUN_OK;
}

static char *name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *raw = strndup(base, len), *name = raw ? sr_text_utf8(raw) : NULL; /* a name is UTF-8 */
    free(raw);
    return name;
}

/* "shape" [B, N, Hq, D] and "heads_kv" into p (the rest of p at its defaults). */
static sagerun_status parse_shape(json_t *root, const char *origin, sagerun_problem *p,
                                  sagerun_error *err)
{
    sagerun_status st;
    json_t *j = json_object_get(root, "shape");
    if (!j)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: key 'shape' ([B, N, Hq, D]) is missing",
                            origin);
    if (!json_is_array(j) || json_array_size(j) != 4)
        return wrong_type(origin, "shape", "an array of 4 positive integers [B, N, Hq, D]", err);
    static const char *const dims[] = {"shape[0] (B)", "shape[1] (N)", "shape[2] (Hq)",
                                       "shape[3] (D)"};
    uint32_t shape[4];
    for (int i = 0; i < 4; i++)
        if ((st = get_u32(origin, dims[i], json_array_get(j, (size_t)i), 1, &shape[i], err)))
            return st;
    *p = sagerun_problem_make(shape[0], shape[1], shape[2], shape[2], shape[3]);
    if ((j = json_object_get(root, "heads_kv")) &&
        (st = get_u32(origin, "heads_kv", j, 1, &p->heads_kv, err)))
        return st;
    if (p->heads_q % p->heads_kv != 0)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: key 'heads_kv': Hq = %u is not a multiple of heads_kv = %u",
                            origin, p->heads_q, p->heads_kv);
    return SAGERUN_OK;
}

/* "layout" and "dtype", where given. */
static sagerun_status parse_layout_dtype(json_t *root, const char *origin, sagerun_problem *p,
                                         sagerun_error *err)
{
    json_t *j;
    if ((j = json_object_get(root, "layout"))) {
        const char *s = json_string_value(j);
        if (!s)
            return wrong_type(origin, "layout", "a string (\"NHD\" or \"HND\")", err);
        if (strcasecmp(s, "NHD") == 0) /* any case, as the CLI's --layout and dtypes */
            p->layout = SAGERUN_LAYOUT_NHD;
        else if (strcasecmp(s, "HND") == 0)
            p->layout = SAGERUN_LAYOUT_HND;
        else
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: key 'layout': unknown layout '%s' (\"NHD\" or \"HND\")",
                                origin, s);
    }
    if ((j = json_object_get(root, "dtype"))) {
        const char *s = json_string_value(j);
        if (!s)
            return wrong_type(origin, "dtype", "a string: " SAGERUN_DTYPE_WORDS, err);
        int dtype = sagerun_dtype_parse(s);
        if (dtype < 0)
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: key 'dtype': unsupported dtype '%s' (expected "
                                SAGERUN_DTYPE_WORDS ")",
                                origin, s);
        p->dtype = (uint32_t)dtype;
    }
    return SAGERUN_OK;
}

/* "causal" and "sm_scale", where given. */
static sagerun_status parse_causal_scale(json_t *root, const char *origin, sagerun_problem *p,
                                         sagerun_error *err)
{
    json_t *j;
    if ((j = json_object_get(root, "causal"))) {
        const char *s = json_string_value(j);
        if (!json_is_boolean(j) && (!s || (strcmp(s, "top-left") && strcmp(s, "bottom-right")))) {
            char *text = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
            sr_error_set(err, SAGERUN_FORMAT,
                         "%s: key 'causal' must be a boolean, \"top-left\" or \"bottom-right\" "
                         "(not %.60s)", origin, text ? text : "?");
            free(text);
            return SAGERUN_FORMAT;
        }
        /* true is top-left: SageAttention's and torch SDPA's is_causal */
        p->causal = json_is_false(j) ? 0 : 1;
        p->align = s && !strcmp(s, "bottom-right") ? SAGERUN_ALIGN_BOTTOM_RIGHT
                                                   : SAGERUN_ALIGN_TOP_LEFT;
    }
    /* "align": the diagonal of a window without causal (with causal, "causal" names it) */
    if ((j = json_object_get(root, "align"))) {
        const char *s = json_string_value(j), *c = json_string_value(json_object_get(root, "causal"));
        if (!s || (strcmp(s, "top-left") && strcmp(s, "bottom-right")))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: key 'align' must be \"top-left\" or \"bottom-right\"", origin);
        if (c && strcmp(c, s))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: key 'align' is \"%s\" but key 'causal' says \"%s\"", origin, s,
                                c);
        p->align = !strcmp(s, "bottom-right") ? SAGERUN_ALIGN_BOTTOM_RIGHT : SAGERUN_ALIGN_TOP_LEFT;
    }
    if ((j = json_object_get(root, "sm_scale"))) {
        double v = 0.0;
        sagerun_status st;
        if ((st = get_real(origin, "sm_scale", j, &v, err)))
            return st;
        /* as a float: a value that rounds to 0 would silently mean the default D^-0.5 */
        if (!(v > 0.0) || !isfinite((float)v) || !((float)v > 0.0f))
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: key 'sm_scale': %g must be a positive finite number (as a "
                                "32-bit float)",
                                origin, v);
        p->sm_scale = (float)v;
    }
    return SAGERUN_OK;
}

/* "window" [L, R] (each an integer >= -1), "softcap" (>= 0) and "kv_len" (>= 1), where given. */
static sagerun_status parse_mask(json_t *root, const char *origin, sagerun_problem *p,
                                 sagerun_error *err)
{
    json_t *j = json_object_get(root, "window");
    sagerun_status st;
    if (j) {
        json_t *l = json_array_get(j, 0), *r = json_array_get(j, 1);
        if (json_array_size(j) != 2 || !json_is_integer(l) || !json_is_integer(r) ||
            json_integer_value(l) < -1 || json_integer_value(r) < -1 ||
            json_integer_value(l) > INT32_MAX || json_integer_value(r) > INT32_MAX)
            return bad_value(origin, "window", j,
                             "[L, R], the keys before and after the diagonal, each an integer "
                             ">= 0 or -1 (unbounded)",
                             err);
        p->window = 1;
        p->window_left = (int32_t)json_integer_value(l);
        p->window_right = (int32_t)json_integer_value(r);
    }
    if ((j = json_object_get(root, "softcap"))) {
        double v = json_number_value(j);
        if (!json_is_number(j) || !(v >= 0.0) || !isfinite((float)v))
            return bad_value(origin, "softcap", j, "a finite number >= 0 (0: none)", err);
        p->softcap = (float)v;
    }
    if ((j = json_object_get(root, "kv_len")) &&
        (st = get_size(origin, "kv_len", j, &p->kv_len, err)))
        return st;
    return SAGERUN_OK;
}

/* "varlen": [100, "1:4096", ...]: each entry a length (queries = keys) or a "Q:K" string. */
static sagerun_status parse_length_array(const char *origin, json_t *arr, sr_workload *w,
                                         sagerun_error *err)
{
    size_t n = json_array_size(arr);
    if (!json_is_array(arr) || n == 0 || n > UINT32_MAX)
        return wrong_type(origin, "varlen",
                          "a non-empty array of lengths (integers or \"Q:K\" strings) or a "
                          "string \"random:MIN-MAX:SEED\"",
                          err);
    uint32_t *q = malloc(sizeof *q * n), *kv = malloc(sizeof *kv * n);
    sagerun_status st = q && kv ? SAGERUN_OK
                                : sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; st == SAGERUN_OK && i < n; i++) {
        json_t *e = json_array_get(arr, i);
        char num[32];
        const char *text = json_is_string(e) ? json_string_value(e) : num;
        if (json_is_integer(e))
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(e));
        if (!json_is_integer(e) && !json_is_string(e))
            st = sr_error_set(err, SAGERUN_FORMAT, "expected a length or a \"Q:K\" string");
        else
            st = sr_varlen_entry(text, strlen(text), &q[i], &kv[i], err);
        if (st != SAGERUN_OK)
            st = sr_error_prefix(SAGERUN_FORMAT, err, "%s: key 'varlen[%zu]'", origin, i);
    }
    if (st == SAGERUN_OK && (st = sr_workload_set_lengths(w, q, kv, (uint32_t)n, err)))
        st = sr_error_prefix(SAGERUN_FORMAT, err, "%s: key 'varlen'", origin);
    free(q);
    free(kv);
    return st;
}

/* "varlen": an array of lengths (integers, or "Q:K" strings) or the string SPEC; then
 * "page_size". Both need synthetic inputs (an input file holds its own dense tensors). */
static sagerun_status parse_sequences(json_t *root, const char *origin, sr_workload *w,
                                      sagerun_error *err)
{
    json_t *v = json_object_get(root, "varlen"), *ps = json_object_get(root, "page_size");
    const char *key = v ? "varlen" : ps ? "page_size" : json_object_get(root, "kv_len") ? "kv_len"
                                                                                       : NULL;
    if (key && w->source != SR_WORKLOAD_SYNTHETIC)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: key '%s' applies to synthetic inputs (the input file holds its "
                            "own tensors)",
                            origin, key);
    if (v && json_object_get(root, "kv_len"))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: key 'kv_len' with 'varlen': each sequence's keys come from "
                            "'varlen' (\"Q:K\" entries)",
                            origin);
    sagerun_status st = SAGERUN_OK;
    if (json_is_string(v))
        st = sr_workload_set_varlen_spec(w, json_string_value(v), err);
    else if (v)
        st = parse_length_array(origin, v, w, err);
    if (st != SAGERUN_OK)
        return json_is_string(v) ? sr_error_prefix(SAGERUN_FORMAT, err, "%s: key 'varlen': '%.60s'",
                                                   origin, json_string_value(v))
                                 : st;
    uint32_t page_size = 0;
    if (ps && (st = get_size(origin, "page_size", ps, &page_size, err)))
        return st;
    if (ps && (st = sr_workload_set_paged(w, page_size, err)))
        return sr_error_prefix(SAGERUN_FORMAT, err, "%s: key 'page_size': %u", origin, page_size);
    return SAGERUN_OK;
}

/* The layout to read a safetensors file in: the one given (given, -1: none) or the one the file
 * says (its __metadata__ "layout", as sagerun writes it), NHD when neither says. The two must
 * agree: the given one over the file's read an NHD file as HND, its axes swapped, silently. A
 * word other than NHD or HND in the file is an error where none is given. */
static sagerun_status layout_of(const sr_safetensors *f, int given, int *layout,
                                sagerun_error *err)
{
    static const char *const names[] = {"NHD", "HND"};
    const char *ls = f->metadata ? json_string_value(json_object_get(f->metadata, "layout")) : NULL;
    int file = !ls ? -1 : !strcmp(ls, "HND") ? SAGERUN_LAYOUT_HND
                        : !strcmp(ls, "NHD") ? SAGERUN_LAYOUT_NHD : -2;
    if (file == -2 && given < 0)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: __metadata__ 'layout' is '%s' (NHD or HND)",
                            f->path, ls);
    if (given >= 0 && file >= 0 && given != file)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s: the layout given, %s, is not the file's (its __metadata__ says "
                            "%s)", f->path, names[given], names[file]);
    *layout = given >= 0 ? given : file >= 0 ? file : SAGERUN_LAYOUT_NHD;
    return SAGERUN_OK;
}

/* A workload reads its input file in the file's own layout (layout_of), its "layout" where given.
 * A file that cannot be opened now is left to the read that names why. */
static sagerun_status layout_from_file(const char *origin, bool given, sr_workload *w,
                                       sagerun_error *err)
{
    sr_safetensors *f;
    if (sr_safetensors_open(w->input_path, &f, NULL) != SAGERUN_OK)
        return SAGERUN_OK;
    int layout;
    sagerun_status st = layout_of(f, given ? (int)w->problem.layout : -1, &layout, err);
    if (st == SAGERUN_OK)
        w->problem.layout = (uint32_t)layout;
    sr_safetensors_close(f);
    if (st != SAGERUN_OK)
        sr_error_prefix(st, err, "%s: its input", origin);
    return st;
}

static sagerun_status parse_root(json_t *root, const char *origin, const char *base_dir,
                                 sr_workload *w, sagerun_error *err)
{
    sagerun_status st;
    if (!json_is_object(root))
        return sr_error_set(err, SAGERUN_FORMAT, "%s: a workload must be a JSON object", origin);
    if ((st = check_keys(origin, "", root, top_keys, SR_ARRAY_LEN(top_keys), err)) ||
        (st = parse_shape(root, origin, &w->problem, err)) ||
        (st = parse_layout_dtype(root, origin, &w->problem, err)) ||
        (st = parse_causal_scale(root, origin, &w->problem, err)) ||
        (st = parse_mask(root, origin, &w->problem, err)))
        return st;
    if ((st = sagerun_problem_check(&w->problem, err)))
        return sr_error_prefix(st, err, "%s", origin);
    json_t *j;
    if ((j = json_object_get(root, "input")) && (st = parse_input(origin, base_dir, j, w, err)))
        return st;
    if (w->source == SR_WORKLOAD_SAFETENSORS &&
        (st = layout_from_file(origin, json_object_get(root, "layout") != NULL, w, err)))
        return st;
    if ((st = parse_sequences(root, origin, w, err))) /* after the shape and kv_len: needs them */
        return st;
    j = json_object_get(root, "metadata");
    if (j && !json_is_object(j))
        return wrong_type(origin, "metadata", "an object", err);
    w->metadata = j ? json_deep_copy(j) : json_object();
    j = json_object_get(root, "name");
    if (j && (!json_is_string(j) || !json_string_value(j)[0]))
        return wrong_type(origin, "name", "a non-empty string", err);
    w->name = j ? strdup(json_string_value(j)) : name_from_path(origin);
    w->origin = strdup(origin);
    if (!w->metadata || !w->name || !w->origin)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", origin);
    return SAGERUN_OK;
}

sagerun_status sr_workload_parse(const char *text, const char *origin, const char *base_dir,
                                 sr_workload *w, sagerun_error *err)
{
    workload_init(w);
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: not valid JSON: %s (line %d, column %d)",
                            origin, jerr.text, jerr.line, jerr.column);
    sagerun_status st = parse_root(root, origin, base_dir, w, err);
    json_decref(root);
    if (st != SAGERUN_OK)
        sr_workload_free(w);
    return st;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

sagerun_status sr_workload_load(const char *path, sr_workload *w, sagerun_error *err)
{
    if (ends_with(path, ".safetensors"))
        return sr_workload_from_safetensors(path, -1, w, err);
    workload_init(w);
    char *text;
    size_t len;
    sagerun_status st = sagerun_file_read(path, 16u << 20, &text, &len, err);
    if (st != SAGERUN_OK)
        return st;
    if (memchr(text, '\0', len)) {
        free(text);
        return sr_error_set(err, SAGERUN_FORMAT, "%s: not valid JSON: contains a NUL byte", path);
    }
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash)
        dir = strndup(path, (size_t)(slash - path) ? (size_t)(slash - path) : 1);
    st = sr_workload_parse(text, path, dir, w, err);
    free(dir);
    free(text);
    return st;
}

sagerun_status sr_workload_from_safetensors(const char *path, int layout_hint, sr_workload *w,
                                            sagerun_error *err)
{
    workload_init(w);
    sr_safetensors *f;
    sagerun_status st = sr_safetensors_open(path, &f, err);
    if (st != SAGERUN_OK)
        return st;
    int layout;
    sr_file_problem fp;
    if ((st = layout_of(f, layout_hint, &layout, err)) ||
        (st = sr_safetensors_problem(f, layout, &fp, err))) /* tensors, lengths, masks */
        goto done;
    w->problem = fp.problem;
    w->cu_seqlens_q = fp.cu_q; /* the workload owns them now */
    w->cu_seqlens_kv = fp.cu_kv;
    w->block_table = fp.table;
    w->source = SR_WORKLOAD_SAFETENSORS;
    w->input_path = strdup(path);
    w->origin = strdup(path);
    w->name = name_from_path(path);
    w->metadata = f->metadata ? json_deep_copy(f->metadata) : json_object();
    if (!w->input_path || !w->origin || !w->name || !w->metadata)
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
done:
    sr_safetensors_close(f);
    if (st != SAGERUN_OK)
        sr_workload_free(w);
    return st;
}

/* "varlen" as an explicit array: a length where queries = keys, else "Q:K". */
static json_t *lengths_json(const sr_workload *w)
{
    json_t *arr = json_array();
    for (uint32_t b = 0; arr && b < w->problem.batch; b++) {
        int32_t q = w->cu_seqlens_q[b + 1] - w->cu_seqlens_q[b];
        int32_t k = w->cu_seqlens_kv[b + 1] - w->cu_seqlens_kv[b];
        char pair[32];
        snprintf(pair, sizeof pair, "%d:%d", q, k);
        if (json_array_append_new(arr, q == k ? json_integer(q) : json_string(pair))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* The keys of ABI 0.2's problem fields, each only where it is not the default: a workload file
 * of ABI 0.1's keys is written as before. */
static int put_problem_02(json_t *o, const sr_workload *w)
{
    const sagerun_problem *p = &w->problem;
    int rc = 0;
    if (!p->varlen && sagerun_problem_kv_len(p) != p->seq_len)
        rc |= json_object_set_new(o, "kv_len", json_integer(sagerun_problem_kv_len(p)));
    if (p->window)
        rc |= json_object_set_new(o, "window", json_pack("[i, i]", (int)p->window_left,
                                                         (int)p->window_right));
    if (!p->causal && p->align == SAGERUN_ALIGN_BOTTOM_RIGHT) /* with causal, "causal" says it */
        rc |= json_object_set_new(o, "align", json_string("bottom-right"));
    if (p->softcap > 0)
        rc |= json_object_set_new(o, "softcap", json_real(p->softcap));
    if (p->varlen && w->cu_seqlens_q && w->cu_seqlens_kv)
        rc |= json_object_set_new(o, "varlen", lengths_json(w));
    if (p->page_size)
        rc |= json_object_set_new(o, "page_size", json_integer(p->page_size));
    return rc;
}

json_t *sr_workload_to_json(const sr_workload *w)
{
    const sagerun_problem *p = &w->problem;
    float sm = p->sm_scale > 0.0f ? p->sm_scale : (float)(1.0 / sqrt((double)p->head_dim));
    json_t *input;
    if (w->source == SR_WORKLOAD_SAFETENSORS) {
        input = json_pack("{s:s, s:s}", "source", "safetensors", "path",
                          w->input_path ? w->input_path : "");
    } else {
        const sr_synthetic *s = &w->synthetic;
        input = json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:I, s:f}", "source", "synthetic",
                          "seed", (json_int_t)s->seed, "q_std", s->q_std, "k_std", s->k_std,
                          "v_std", s->v_std, "k_bias", s->k_bias, "outlier_channels",
                          (json_int_t)s->outlier_channels, "outlier_scale", s->outlier_scale);
    }
    /* causal: true is top-left (as files before ABI 0.2 meant it), the other named */
    json_t *causal = p->causal && p->align == SAGERUN_ALIGN_BOTTOM_RIGHT
                         ? json_string("bottom-right")
                         : json_boolean(p->causal);
    json_t *o = json_pack("{s:s, s:[I, I, I, I], s:I, s:s, s:s, s:o}", "name",
                          w->name ? w->name : "", "shape", (json_int_t)p->batch,
                          (json_int_t)p->seq_len, (json_int_t)p->heads_q, (json_int_t)p->head_dim,
                          "heads_kv", (json_int_t)p->heads_kv, "layout",
                          p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD", "dtype",
                          sagerun_dtype_word((int)p->dtype), "causal", causal);
    if (!o || put_problem_02(o, w) || json_object_set_new(o, "sm_scale", json_real((double)sm))) {
        json_decref(input);
        json_decref(o);
        return NULL;
    }
    if (json_object_set_new(o, "input", input) ||
        json_object_set_new(o, "metadata",
                            w->metadata ? json_incref(w->metadata) : json_object())) {
        json_decref(o);
        return NULL;
    }
    return o;
}

sagerun_status sr_workload_fill_inputs(sagerun_context *ctx, const sr_workload *w, uint64_t q,
                                       uint64_t k, uint64_t v, sagerun_error *err)
{
    const sagerun_problem *p = &w->problem;
    if (w->source == SR_WORKLOAD_SYNTHETIC)
        return sr_generate_inputs(ctx, p, &w->synthetic, q, k, v, err);
    sr_safetensors *f;
    sagerun_status st = sr_safetensors_open(w->input_path, &f, err);
    if (st != SAGERUN_OK)
        return st;
    uint64_t n = p->seq_len, d = p->head_dim;
    bool nhd = p->layout == SAGERUN_LAYOUT_NHD;
    uint64_t qshape[4] = {p->batch, nhd ? n : p->heads_q, nhd ? p->heads_q : n, d};
    uint64_t kshape[4] = {p->batch, nhd ? n : p->heads_kv, nhd ? p->heads_kv : n, d};
    const char *const names[3] = {"q", "k", "v"};
    const uint64_t addrs[3] = {q, k, v};
    for (int i = 0; i < 3 && st == SAGERUN_OK; i++) {
        const sr_st_tensor *t;
        st = sr_safetensors_expect(f, names[i], (int)p->dtype, 4, i == 0 ? qshape : kshape, &t,
                                   err);
        if (st == SAGERUN_OK)
            st = sr_safetensors_upload_tensor(f, t, ctx, addrs[i], err);
    }
    sr_safetensors_close(f);
    return st;
}
