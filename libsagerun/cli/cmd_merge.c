/* sagerun merge: combines the summaries of the shards of one sweep (sagerun sweep --shard I/N)
 * into one summary, with the shards' reports copied next to it. Refuses summaries of different
 * sweeps, and a workload that two summaries both have. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sweep.h"

static void merge_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun merge [--out-dir DIR] [--allow-missing] [--allow-mixed-gpus] "
            "DIR|SUMMARY.json...\n\n"
            "Combines the summaries of the shards of one sweep ('sagerun sweep --shard I/N',\n"
            "each in its own folder) into one: DIR/summary.json, DIR/summary.md and the table\n"
            "on stdout, with every shard's reports copied into DIR. Each argument is a sweep's\n"
            "output folder or its summary.json.\n\n"
            "Refused: summaries of different sweeps (another sweep file, other compare options\n"
            "or another shard count), the same workload in two summaries (a shard given twice,\n"
            "or overlapping shards), workloads in none of them (unless --allow-missing), a\n"
            "report that is not valid or not of its row's workload (its shape), and points\n"
            "that ran on different GPU models (each row's device; unless --allow-mixed-gpus).\n"
            "Under the table, where each point ran when that is more than one GPU.\n\n"
            "  --out-dir DIR      where the merged summary goes (default ./sweep-<name>); refused\n"
            "                     where DIR holds another sweep's or a shard's summary\n"
            "  --allow-missing    merge even when some workloads are in no summary (listed as\n"
            "                     missing)\n"
            "  --allow-mixed-gpus merge points of different GPU models (timings that do not\n"
            "                     compare along the sweep), listed in the summary's mixed_gpus\n"
            "  --quiet            print nothing but errors\n\n"
            "exit status: 0 every workload ran and is byte-exact (with --allow-missing: every\n"
            "workload merged; the missing ones are listed), 1 error (refused merge, unreadable\n"
            "summary or report, or a workload that failed), 2 usage, 3 some output not\n"
            "byte-exact\n");
}

/* One summary given on the command line. */
typedef struct input {
    char *path; /* the summary.json */
    char *dir;  /* its folder, where its reports are */
    json_t *root;
} input;

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void shard_text(const json_t *root, char *buf, size_t len)
{
    const json_t *sh = json_object_get(root, "shard");
    if (json_is_object(sh))
        snprintf(buf, len, "shard %lld/%lld",
                 (long long)json_integer_value(json_object_get(sh, "index")),
                 (long long)json_integer_value(json_object_get(sh, "count")));
    else if (json_is_array(json_object_get(root, "merged_from")))
        snprintf(buf, len, "a merged summary");
    else
        snprintf(buf, len, "not sharded");
}

/* Reads and checks the structure merge relies on; errors name the file and the key. */
static bool load_input(const char *arg, input *in)
{
    struct stat sb;
    memset(in, 0, sizeof(*in));
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (asprintf(&in->path, "%s/%s", arg, SR_SWEEP_SUMMARY_JSON) < 0)
            in->path = NULL;
    } else {
        in->path = strdup(arg);
    }
    char *copy = in->path ? strdup(in->path) : NULL;
    in->dir = copy ? strdup(dirname(copy)) : NULL;
    free(copy);
    if (!in->path || !in->dir) {
        sr_cli_error("merge: out of memory");
        return false;
    }
    json_error_t jerr;
    in->root = sr_cli_json_load(in->path, JSON_REJECT_DUPLICATES, &jerr);
    if (!in->root) {
        if (jerr.line <= 0 && jerr.position == 0)
            sr_cli_error("merge: %s%s", jerr.text,
                         S_ISDIR(sb.st_mode) ? " (not a sweep output folder?)" : "");
        else
            sr_cli_error("merge: %s:%d:%d: not valid JSON: %s", in->path, jerr.line, jerr.column,
                         jerr.text);
        return false;
    }
    const json_t *r = in->root, *v = json_object_get(r, "sagerun_sweep_summary");
    if (!json_is_object(r) || !v) {
        sr_cli_error("merge: %s: not a sweep summary (no key 'sagerun_sweep_summary'): give a "
                     "sweep's output folder or its %s",
                     in->path, SR_SWEEP_SUMMARY_JSON);
        return false;
    }
    if (!json_is_integer(v) || json_integer_value(v) != SR_SWEEP_SUMMARY_VERSION) {
        sr_cli_error("merge: %s: key 'sagerun_sweep_summary': version %s, this sagerun reads %d",
                     in->path, json_is_integer(v) ? "unknown" : "not an integer",
                     SR_SWEEP_SUMMARY_VERSION);
        return false;
    }
    char why[512];
    if (sr_sweep_summary_problem(r, why, sizeof why)) {
        sr_cli_error("merge: %s: %s", in->path, why);
        return false;
    }
    return true;
}

/* options.compare_args as one string per option and its values, ordered by option (a stable
 * sort: an option given twice keeps its order, where the later wins or the order is the
 * variants'), so that the same command line spelled in another order matches. */
typedef struct arg_group {
    const char *name;
    size_t at;
    char *text;
} arg_group;

static int by_option(const void *a, const void *b)
{
    const arg_group *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

static json_t *canonical_args(const json_t *args)
{
    size_t n = json_array_size(args), groups = 0;
    arg_group *g = calloc(n ? n : 1, sizeof *g);
    json_t *out = g ? json_array() : NULL;
    for (size_t i = 0; out && i < n; i++) {
        const char *a = json_string_value(json_array_get(args, i));
        if (!a)
            a = "";
        if (strncmp(a, "--", 2) == 0 || !groups) {
            g[groups].name = a;
            g[groups].at = groups;
            g[groups++].text = strdup(a);
        } else {
            char *t = NULL;
            if (asprintf(&t, "%s\x1f%s", g[groups - 1].text, a) < 0)
                t = NULL;
            free(g[groups - 1].text);
            g[groups - 1].text = t;
        }
    }
    if (out)
        qsort(g, groups, sizeof *g, by_option);
    for (size_t i = 0; out && i < groups; i++)
        if (!g[i].text || json_array_append_new(out, json_string(g[i].text)) != 0) {
            json_decref(out);
            out = NULL;
        }
    for (size_t i = 0; g && i < groups; i++)
        free(g[i].text);
    free(g);
    return out;
}

/* The options of two shards alike, compare_args in any order of its options. */
static bool same_options(const json_t *a, const json_t *b)
{
    json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
    json_t *cx = canonical_args(json_object_get(a, "compare_args"));
    json_t *cy = canonical_args(json_object_get(b, "compare_args"));
    bool same = x && y && cx && cy;
    if (same) {
        json_object_set(x, "compare_args", cx);
        json_object_set(y, "compare_args", cy);
        same = json_equal(x, y);
    }
    json_decref(x);
    json_decref(y);
    json_decref(cx);
    json_decref(cy);
    return same;
}

/* Why two summaries are not shards of the same sweep, or NULL. */
static const char *mismatch(const json_t *a, const json_t *b)
{
    const json_t *sa = json_object_get(a, "sweep"), *sb = json_object_get(b, "sweep");
    if (strcmp(str_of(sa, "name"), str_of(sb, "name")) != 0)
        return "the sweeps' names differ";
    if (strcmp(str_of(sa, "sha256"), str_of(sb, "sha256")) != 0)
        return "the sweep files differ (sweep.sha256)";
    if (!json_equal(json_object_get(sa, "workloads"), json_object_get(sb, "workloads")))
        return "the workloads differ";
    if (!same_options(json_object_get(a, "options"), json_object_get(b, "options")))
        return "the compare options differ (options: the baseline, variants, schedule, threshold, "
               "checks or the compare command line, compare_args)";
    const json_t *ha = json_object_get(a, "shard"), *hb = json_object_get(b, "shard");
    if (json_is_object(ha) && json_is_object(hb) &&
        !json_equal(json_object_get(ha, "count"), json_object_get(hb, "count")))
        return "the shard counts differ";
    return NULL;
}

/* Whether a report is of its row's workload (shape [B, N, Hq, D] and heads_kv, as the sweep
 * wrote them): two reports swapped in a shard's folder merged as each other's rows, and only a
 * later diff saw it. false after saying which. */
static bool report_fits_row(const input *in, const char *src, const json_t *row,
                            const sagerun_compare_result *r)
{
    sagerun_compare_info ci = {.struct_size = sizeof ci};
    const json_t *shape = json_object_get(row, "shape");
    if (sagerun_compare_result_info(r, &ci, NULL) != SAGERUN_OK || !ci.has_problem ||
        json_array_size(shape) != 4)
        return true; /* nothing to tell by (a seed-format report, a row without its shape) */
    const sagerun_problem *p = &ci.problem;
    long long want[5] = {(long long)p->batch, (long long)p->seq_len, (long long)p->heads_q,
                         (long long)p->head_dim, (long long)p->heads_kv};
    long long row_kv = json_integer_value(json_object_get(row, "heads_kv"));
    bool same = !json_object_get(row, "heads_kv") || row_kv == want[4];
    for (size_t k = 0; k < 4; k++)
        same = same && json_integer_value(json_array_get(shape, k)) == want[k];
    if (!same)
        sr_cli_error("merge: %s lists the report %s for workload %s (%lldx%lldx%lldx%lld, Hkv "
                     "%lld), but it holds %lldx%lldx%lldx%lld, Hkv %lld: another workload's "
                     "report?",
                     in->path, src, str_of(row, "name") ? str_of(row, "name") : "?",
                     json_integer_value(json_array_get(shape, 0)),
                     json_integer_value(json_array_get(shape, 1)),
                     json_integer_value(json_array_get(shape, 2)),
                     json_integer_value(json_array_get(shape, 3)), row_kv, want[0], want[1],
                     want[2], want[3], want[4]);
    return same;
}

/* Checks that DIR_IN/file is a regular file holding a valid report of the row's workload, and
 * (copy) copies it to DIR_OUT/file unless they are the same file. */
static bool copy_report(const input *in, const char *out_dir, const json_t *row, const char *file,
                        bool copy)
{
    char *src = NULL, *dst = NULL, *bytes = NULL;
    bool ok = false;
    if (asprintf(&src, "%s/%s", in->dir, file) < 0 || asprintf(&dst, "%s/%s", out_dir, file) < 0) {
        sr_cli_error("merge: out of memory");
        return false;
    }
    struct stat a;
    if (lstat(src, &a) != 0) {
        sr_cli_error("merge: %s lists the report %s, which cannot be read: %s", in->path, src,
                     strerror(errno));
        goto out;
    }
    if (!S_ISREG(a.st_mode)) {
        sr_cli_error("merge: %s lists the report %s, which is %s, not a regular file: not "
                     "copied",
                     in->path, src, S_ISLNK(a.st_mode) ? "a symlink" : S_ISDIR(a.st_mode)
                                                                 ? "a folder" : "a special file");
        goto out;
    }
    sagerun_compare_result *parsed = NULL;
    sagerun_error err = {0};
    if (sagerun_compare_result_read(src, &parsed, &err) != SAGERUN_OK) {
        sr_cli_error("merge: %s lists the report %s, which is not a valid report: %s", in->path,
                     src, err.message);
        goto out;
    }
    bool fits = report_fits_row(in, src, row, parsed);
    sagerun_compare_result_destroy(parsed);
    if (!fits)
        goto out;
    if (!copy || sr_cli_same_file(src, dst)) {
        ok = true;
        goto out;
    }
    size_t size;
    if (sagerun_file_read(src, SIZE_MAX - 1, &bytes, &size, &err) != SAGERUN_OK ||
        sagerun_file_write(dst, bytes, size, &err) != SAGERUN_OK) {
        sr_cli_error("merge: %s", err.message);
        goto out;
    }
    ok = true;
out:
    free(bytes);
    free(src);
    free(dst);
    return ok;
}

/* Two workloads naming one report file (in the same shard's folder, or in the merged folder,
 * where the reports of every shard land): one of them would be lost. */
static bool reports_claimed_once(const input *in, json_t *const *owner,
                                 const size_t *owner_input, size_t count)
{
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; owner[i] && k < i; k++) {
            const char *a = str_of(owner[i], "report"), *b = owner[k] ? str_of(owner[k], "report") : NULL;
            if (a && b && strcmp(a, b) == 0) {
                sr_cli_error("merge: workloads %zu (%s, in %s) and %zu (%s, in %s) both claim the "
                             "report %s: one would overwrite the other",
                             k, str_of(owner[k], "name"), in[owner_input[k]].path, i,
                             str_of(owner[i], "name"), in[owner_input[i]].path, a);
                return false;
            }
        }
    return true;
}

/* The merged summary goes into out_dir: if that is a shard's folder, its summary is replaced. */
static bool out_dir_not_an_input(const char *out_dir, const input *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sr_cli_same_file(out_dir, in[i].dir)) {
            sr_cli_error("merge: --out-dir %s is the folder of the input %s: its summary would "
                         "be replaced; merge into another folder",
                         out_dir, in[i].path);
            return false;
        }
    return true;
}

/* The inputs and, per workload index of the sweep, the row taken and the input it came from. */
typedef struct merge {
    input *in;
    size_t n;
    json_t **owner; /* NULL: in no input */
    size_t *owner_input;
    size_t count; /* the sweep's workloads */
    json_t *models; /* the devices the rows ran on, each once */
} merge;

/* Every input a summary of the same sweep, none given twice. */
static bool inputs_agree(const merge *m)
{
    for (size_t i = 1; i < m->n; i++) {
        const char *why = mismatch(m->in[0].root, m->in[i].root);
        if (why) {
            sr_cli_error("merge: %s and %s are not shards of one sweep: %s", m->in[0].path,
                         m->in[i].path, why);
            return false;
        }
    }
    for (size_t i = 0; i < m->n; i++)
        for (size_t k = 0; k < i; k++) {
            struct stat a, b;
            if (stat(m->in[i].path, &a) == 0 && stat(m->in[k].path, &b) == 0 &&
                a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                sr_cli_error("merge: %s is given twice (also as %s)", m->in[i].path,
                             m->in[k].path);
                return false;
            }
        }
    return true;
}

/* Each row of each input to its workload index; a workload in two inputs is an error. */
static bool take_rows(merge *m)
{
    m->owner = calloc(m->count ? m->count : 1, sizeof(*m->owner));
    m->owner_input = calloc(m->count ? m->count : 1, sizeof(*m->owner_input));
    if (!m->owner || !m->owner_input) {
        sr_cli_error("merge: out of memory");
        return false;
    }
    for (size_t i = 0; i < m->n; i++) {
        json_t *rows = json_object_get(m->in[i].root, "workloads");
        for (size_t k = 0; k < json_array_size(rows); k++) {
            json_t *row = json_array_get(rows, k);
            size_t idx = (size_t)json_integer_value(json_object_get(row, "index"));
            if (m->owner[idx]) {
                char a[64], b[64];
                shard_text(m->in[m->owner_input[idx]].root, a, sizeof(a));
                shard_text(m->in[i].root, b, sizeof(b));
                sr_cli_error("merge: duplicate: workload %zu (%s) is in both %s (%s) and %s (%s): "
                             "a shard given twice, or shards that overlap",
                             idx, str_of(row, "name"), m->in[m->owner_input[idx]].path, a,
                             m->in[i].path, b);
                return false;
            }
            m->owner[idx] = row;
            m->owner_input[idx] = i;
        }
    }
    return true;
}

/* The GPU models the rows ran on (their "device"), each once, into m->models: more than one is
 * refused unless allowed. false after saying which models and where. */
static bool models_agree(merge *m, bool allow_mixed)
{
    m->models = json_array();
    size_t first[2] = {0, 0}; /* the input of the first row of the first two models */
    for (size_t idx = 0; m->models && idx < m->count; idx++) {
        const char *dev = m->owner[idx] ? str_of(m->owner[idx], "device") : NULL;
        size_t k = 0;
        while (dev && k < json_array_size(m->models) &&
               strcmp(json_string_value(json_array_get(m->models, k)), dev) != 0)
            k++;
        if (!dev || k < json_array_size(m->models))
            continue;
        if (k < 2)
            first[k] = m->owner_input[idx];
        json_array_append_new(m->models, json_string(dev));
    }
    if (!m->models) {
        sr_cli_error("merge: out of memory");
        return false;
    }
    if (json_array_size(m->models) < 2 || allow_mixed)
        return true;
    sr_cli_error("merge: the points ran on different GPU models: %s (%s) and %s (%s)%s: their "
                 "timings do not compare along the sweep; --allow-mixed-gpus merges them, "
                 "flagged in the summary",
                 sr_cli_text(json_string_value(json_array_get(m->models, 0))), m->in[first[0]].path,
                 sr_cli_text(json_string_value(json_array_get(m->models, 1))), m->in[first[1]].path,
                 json_array_size(m->models) > 2 ? ", and more" : "");
    return false;
}

/* The workloads in no input, as the summary's "missing" ([] when none); NULL, said, when some
 * are missing and that is not allowed. */
static json_t *missing_rows(const merge *m, const json_t *names, bool allow_missing)
{
    json_t *missing = json_array();
    size_t n_missing = 0;
    for (size_t idx = 0; missing && idx < m->count; idx++)
        if (!m->owner[idx]) {
            n_missing++;
            json_array_append_new(missing,
                                  json_pack("{s:I, s:O}", "index", (json_int_t)idx, "name",
                                            json_array_get(names, idx)));
        }
    if (!missing)
        sr_cli_error("merge: out of memory");
    if (!missing || !n_missing || allow_missing)
        return missing;
    char list[512] = "";
    size_t used = 0;
    for (size_t k = 0; k < json_array_size(missing) && used < sizeof(list); k++) {
        const json_t *x = json_array_get(missing, k);
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s (%lld)", k ? ", " : "",
                                 str_of(x, "name"),
                                 (long long)json_integer_value(json_object_get(x, "index")));
    }
    json_decref(missing);
    sr_cli_error("merge: %zu of %zu workloads are in none of the summaries: %s (a shard "
                 "missing or unfinished? --allow-missing merges anyway)",
                 n_missing, m->count, list);
    return NULL;
}

/* Every row's report checked (copy false) or copied into out_dir. */
static bool reports_each(const merge *m, const char *out_dir, bool copy)
{
    for (size_t idx = 0; idx < m->count; idx++) {
        const char *report = m->owner[idx] ? str_of(m->owner[idx], "report") : NULL;
        if (report && !copy_report(&m->in[m->owner_input[idx]], out_dir, m->owner[idx], report,
                                   copy))
            return false;
    }
    return true;
}

/* The rows taken, by workload index, each one's report copied into out_dir once all of them
 * checked (a refused merge leaves out_dir as it was); NULL when a report is not valid, a copy
 * failed or memory ran out (said). */
static json_t *merged_rows(const merge *m, const char *out_dir)
{
    if (!reports_each(m, out_dir, false) || !reports_each(m, out_dir, true))
        return NULL;
    json_t *rows = json_array();
    for (size_t idx = 0; rows && idx < m->count; idx++) {
        if (!m->owner[idx])
            continue;
        if (json_array_append(rows, m->owner[idx]) != 0) {
            json_decref(rows);
            rows = NULL;
        }
    }
    if (!rows)
        sr_cli_error("merge: out of memory");
    return rows;
}

/* The merged summary of m: its rows and where they came from; NULL when a report could not be
 * copied (said). */
static json_t *merged_summary(const merge *m, const char *out_dir, json_t *missing)
{
    json_t *rows = merged_rows(m, out_dir), *from = rows ? json_array() : NULL;
    for (size_t i = 0; from && i < m->n; i++) { /* every input, or none (one was dropped silently) */
        json_t *one = json_pack("{s:o, s:O}", "summary", sr_cli_json_text(m->in[i].path), "shard",
                                json_object_get(m->in[i].root, "shard"));
        if (json_array_append_new(from, one) != 0) {
            json_decref(from);
            from = NULL;
        }
    }
    if (rows && !from)
        sr_cli_error("merge: out of memory");
    if (!rows || !from) {
        json_decref(rows);
        json_decref(from);
        json_decref(missing);
        return NULL;
    }
    json_t *merged = json_pack(
        "{s:i, s:O, s:O, s:n, s:o, s:{s:s, s:s, s:s}, s:o}", "sagerun_sweep_summary",
        SR_SWEEP_SUMMARY_VERSION, "sweep", json_object_get(m->in[0].root, "sweep"), "options",
        json_object_get(m->in[0].root, "options"), "shard", "merged_from", from, "tool", "name",
        "sagerun", "version", SAGERUN_VERSION_STRING, "git_commit", SAGERUN_GIT_COMMIT,
        "workloads", rows);
    if (merged && json_array_size(m->models) > 1)
        json_object_set(merged, "mixed_gpus", m->models);
    if (merged && json_array_size(missing))
        json_object_set_new(merged, "missing", missing);
    else
        json_decref(missing);
    if (!merged)
        sr_cli_error("merge: out of memory");
    return merged;
}

/* The merged summary into out_dir, which must be no input's folder. */
static bool write_merged(merge *m, const char *out_dir, bool allow_missing, json_t **merged)
{
    const json_t *sweep = json_object_get(m->in[0].root, "sweep");
    json_t *missing = missing_rows(m, json_object_get(sweep, "workloads"), allow_missing);
    if (!missing)
        return false;
    sagerun_error err = {0};
    bool ok = false;
    if (sr_sweep_mkdirs(out_dir, &err) != SAGERUN_OK)
        sr_cli_error("merge: --out-dir: %s", err.message);
    else if (reports_claimed_once(m->in, m->owner, m->owner_input, m->count) &&
             out_dir_not_an_input(out_dir, m->in, m->n) &&
             sr_sweep_out_dir_free("merge", out_dir, sweep, NULL)) {
        *merged = merged_summary(m, out_dir, missing);
        missing = NULL; /* the summary's now */
        if (*merged && sr_sweep_summary_write(out_dir, *merged, &err) != SAGERUN_OK)
            sr_cli_error("merge: %s", err.message);
        else
            ok = *merged != NULL;
    }
    json_decref(missing);
    return ok;
}

int sr_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"out-dir", required_argument, 0, 'o'},
                                         {"allow-missing", no_argument, 0, 'm'},
                                         {"allow-mixed-gpus", no_argument, 0, 'g'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *out_dir = NULL;
    bool allow_missing = false, allow_mixed = false, quiet = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 'm': allow_missing = true; break;
        case 'g': allow_mixed = true; break;
        case 'q': quiet = true; break;
        case 'h': merge_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("merge", c, argv, opts);
        }
    }
    if (out_dir && !*out_dir) {
        sr_cli_error("merge: --out-dir: an empty path");
        return SR_EXIT_USAGE;
    }
    if (optind >= argc) {
        sr_cli_error("merge: expected sweep output folders or summary files (see 'sagerun merge "
                     "--help')");
        return SR_EXIT_USAGE;
    }
    merge m = {.n = (size_t)(argc - optind)};
    json_t *merged = NULL;
    char *dir_buf = NULL;
    int rc = SR_EXIT_ERROR;
    if (!(m.in = calloc(m.n, sizeof(*m.in)))) {
        sr_cli_error("merge: out of memory");
        return SR_EXIT_ERROR;
    }
    for (size_t i = 0; i < m.n; i++)
        if (!load_input(argv[optind + (int)i], &m.in[i]))
            goto out;
    m.count = json_array_size(json_object_get(json_object_get(m.in[0].root, "sweep"),
                                              "workloads"));
    if (!inputs_agree(&m) || !take_rows(&m) || !models_agree(&m, allow_mixed))
        goto out;
    const char *name = str_of(json_object_get(m.in[0].root, "sweep"), "name");
    if (!out_dir && !(out_dir = dir_buf = sr_sweep_default_out_dir(name, 0, 0))) {
        sr_cli_error("merge: out of memory");
        goto out;
    }
    if (!write_merged(&m, out_dir, allow_missing, &merged))
        goto out;
    if (!quiet) {
        sr_sweep_summary_print(merged, stdout, false);
        printf("summary: %s/%s, %s/%s\n", out_dir, SR_SWEEP_SUMMARY_JSON, out_dir,
               SR_SWEEP_SUMMARY_MD);
    }
    rc = sr_sweep_summary_exit_code(merged);
out:
    json_decref(merged);
    for (size_t i = 0; i < m.n; i++) {
        free(m.in[i].path);
        free(m.in[i].dir);
        json_decref(m.in[i].root);
    }
    free(m.in);
    free(m.owner);
    free(m.owner_input);
    json_decref(m.models);
    free(dir_buf);
    return rc;
}
