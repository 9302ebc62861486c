/* Pieces shared by the CLI's commands. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "isolate.h"

void sr_cli_describe_signal(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);
    const char *desc = strsignal(sig);
    if (abbrev)
        snprintf(buf, len, "SIG%s (%s)", abbrev, desc ? desc : "?");
    else
        snprintf(buf, len, "signal %d", sig);
}

void sr_cli_error(const char *fmt, ...)
{
    /* a message quotes files (a key, a tensor name, a path): shown, not obeyed by the terminal */
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL, *shown = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    shown = text ? sagerun_text_escape(text, 0) : NULL;
    fprintf(stderr, "sagerun: %s\n", shown ? shown : text ? text : "out of memory");
    free(shown);
    free(text);
}

sagerun_status sr_cli_error_set(sagerun_error *err, sagerun_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

sagerun_status sr_cli_error_prefix(sagerun_error *err, const char *fmt, ...)
{
    if (!err)
        return SAGERUN_INTERNAL;
    char prefix[SAGERUN_ERROR_MESSAGE_SIZE], was[SAGERUN_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(was, sizeof was, "%s", err->message);
    /* too long for the buffer: its start (the prefix: which option) and its end (the reason), with
     * "..." between, cut at UTF-8 character boundaries. A message that filled the buffer alone
     * lost the prefix and the reason's end ("sagerun: : xxx...: File name too lo") */
    char whole[3 * SAGERUN_ERROR_MESSAGE_SIZE];
    snprintf(whole, sizeof whole, "%s: %s", prefix, was);
    size_t n = strlen(whole), cap = sizeof err->message - 1;
    if (n <= cap) {
        memcpy(err->message, whole, n + 1);
        return err->status;
    }
    size_t head = cap / 2 - 2, tail = n - (cap - head - 3);
    while (head > 0 && (whole[head] & 0xC0) == 0x80)
        head--;
    while (tail < n && (whole[tail] & 0xC0) == 0x80)
        tail++;
    snprintf(err->message, sizeof err->message, "%.*s...%s", (int)head, whole, whole + tail);
    return err->status;
}

int sr_cli_stdout_to_stderr(void)
{
    fflush(stdout);
    int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        close(saved);
        saved = -1;
    }
    return saved;
}

void sr_cli_stdout_back(int saved)
{
    if (saved < 0)
        return;
    fflush(stdout); /* what the variant printed: to stderr, before the switch back */
    dup2(saved, STDOUT_FILENO);
    close(saved);
}

/* The absolute path a file has or would have once created: its folder resolved (links, ".",
 * ".."), then its name; false when the folder does not exist either. */
static bool path_to_be(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[PATH_MAX], real[PATH_MAX];
    int n = slash ? snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) : 0;
    if (n < 0 || (size_t)n >= sizeof(dir) || !*name || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
        return false;
    if (!realpath(slash ? (n ? dir : "/") : ".", real))
        return false;
    n = snprintf(out, size, "%s/%s", strcmp(real, "/") == 0 ? "" : real, name);
    return n >= 0 && (size_t)n < size;
}

bool sr_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b)
        return false;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char pa[PATH_MAX], pb[PATH_MAX]; /* one or both still to be made: the same folder and name */
    return !ea && !eb && path_to_be(a, pa, sizeof(pa)) && path_to_be(b, pb, sizeof(pb)) &&
           strcmp(pa, pb) == 0;
}

sagerun_status sr_cli_write_file(const char *path, bool (*write)(FILE *f, const void *user),
                                 const void *user, sagerun_error *err)
{
    char *bytes = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&bytes, &len);
    bool ok = f && write(f, user);
    if (f)
        ok = fclose(f) == 0 && ok;
    sagerun_status st = ok ? sagerun_file_write(path, bytes, len, err)
                           : sr_cli_error_set(err, SAGERUN_IO, "%s: cannot write: %s", path,
                                              f ? "write failed" : "out of memory");
    free(bytes);
    return st;
}

json_t *sr_cli_json_load(const char *path, size_t flags, json_error_t *jerr)
{
    sagerun_error err = {0};
    char *text;
    size_t len;
    if (sagerun_file_read(path, 64u << 20, &text, &len, &err) != SAGERUN_OK) {
        memset(jerr, 0, sizeof *jerr);
        jerr->line = jerr->column = -1;
        snprintf(jerr->text, sizeof jerr->text, "%s", err.message);
        snprintf(jerr->source, sizeof jerr->source, "%s", path);
        return NULL;
    }
    json_t *root = json_loadb(text, len, flags, jerr);
    free(text);
    return root;
}

/* Why getopt refused a long option ("--name[=value]"): it takes no value, its prefix names
 * several options, or it is unknown. */
static const char *long_option_trouble(const char *arg, const struct option *opts)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name), matches = 0;
    for (const struct option *o = opts; o && o->name; o++) {
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return eq && o->has_arg == no_argument ? "option takes no value" : "unknown option";
        matches += strncmp(o->name, name, len) == 0;
    }
    return matches > 1 ? "ambiguous option (the start of several)" : "unknown option";
}

int sr_cli_bad_option(const char *cmd, int c, char **argv, const struct option *opts)
{
    /* a long option as written: getopt_long sets optopt to a long option's value too, which for
     * one like --markdown (value 'm') named "-m" for "--markdown=yes" */
    char shortopt[3] = {'-', (char)optopt, 0};
    const char *last = optind > 0 ? argv[optind - 1] : NULL;
    bool is_long = last && strncmp(last, "--", 2) == 0 && last[2];
    const char *arg = c == '?' && !is_long && optopt > 0 && optopt < 128 ? shortopt
                    : last                                               ? last
                                                                         : "?";
    const char *why = c == ':'                         ? "missing value for option"
                      : strncmp(arg, "--", 2) == 0 ? long_option_trouble(arg, opts)
                                                   : "unknown option";
    sr_cli_error("%s: %s '%s' (see 'sagerun help %s')", cmd, why, arg, cmd);
    return SR_EXIT_USAGE;
}

sagerun_status sr_cli_context(const char *backend, int device, bool quiet, sagerun_context **out,
                              sagerun_error *err)
{
    if (!backend || strcmp(backend, "auto") == 0) {
        sagerun_error cuda_err = {0};
        sagerun_status st = sagerun_context_create(SAGERUN_BACKEND_CUDA, device, out, &cuda_err);
        if (st == SAGERUN_OK)
            return st;
        if (st != SAGERUN_NO_DRIVER && st != SAGERUN_NO_DEVICE) {
            if (err)
                *err = cuda_err;
            return st;
        }
        if (!quiet)
            fprintf(stderr, "sagerun: %s: using the host backend (CPU)\n", cuda_err.message);
        return sagerun_context_create(SAGERUN_BACKEND_HOST, 0, out, err);
    }
    if (strcmp(backend, "host") == 0)
        return sagerun_context_create(SAGERUN_BACKEND_HOST, 0, out, err);
    if (strcmp(backend, "cuda") == 0)
        return sagerun_context_create(SAGERUN_BACKEND_CUDA, device, out, err);
    return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                        "--backend %s: expected auto, host or cuda", backend);
}

bool sr_cli_backend_option(const char *cmd, const char *text)
{
    if (strcmp(text, "auto") == 0 || strcmp(text, "host") == 0 || strcmp(text, "cuda") == 0)
        return true;
    sr_cli_error("%s: --backend '%s': expected auto, host or cuda", cmd, text);
    return false;
}

bool sr_cli_plugin_policy_option(sr_cli_plugin_policy *policy, int opt, const char *arg)
{
    if (opt == SR_OPT_ALLOW_UNSAFE) {
        policy->allow_unsafe = true;
        return true;
    }
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq || eq == arg || strlen(eq + 1) != 64 ||
        strspn(eq + 1, "0123456789abcdefABCDEF") != 64) {
        sr_cli_error("--expect-plugin-sha256 '%s': expected NAME=HEX (64 hex digits)",
                     arg ? arg : "");
        return false;
    }
    if (policy->n_pins == SR_CLI_MAX_PINS) {
        sr_cli_error("--expect-plugin-sha256: at most %d pins", SR_CLI_MAX_PINS);
        return false;
    }
    policy->pins[policy->n_pins++] = arg;
    return true;
}

bool sr_cli_plugin_path_option(const char *cmd, char **paths, int *n, char *arg)
{
    if (!*arg) {
        sr_cli_error("%s: --plugin: an empty path", cmd);
        return false;
    }
    paths[(*n)++] = arg;
    return true;
}

/* A file named by --plugin (not a folder, whose files may be rejected one by one, as `list`
 * shows) must give a variant: one that gave none (variants still `variants`) and was rejected
 * (a rejection recorded since `rejected`) is an error naming the file and why. */
static sagerun_status explicit_file_loaded(const sagerun_registry *reg, const char *path,
                                           size_t variants, size_t rejected, sagerun_error *err)
{
    struct stat sb;
    sagerun_rejection r = {.struct_size = sizeof(r)};
    if (sagerun_registry_variant_count(reg) > variants ||
        sagerun_registry_rejection_count(reg) == rejected ||
        (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) ||
        sagerun_registry_rejection(reg, rejected, &r, NULL) != SAGERUN_OK)
        return SAGERUN_OK;
    return sr_cli_error_set(err, SAGERUN_PLUGIN, "--plugin %s: not loaded: %s", path, r.reason);
}

sagerun_status sr_cli_registry(sagerun_context *ctx, char **plugin_paths, int n_plugin_paths,
                               const sr_cli_plugin_policy *policy, sagerun_registry **out,
                               sagerun_error *err)
{
    sagerun_registry *reg;
    sagerun_status st = sagerun_registry_create(ctx, &reg, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_registry_allow_unsafe(reg, policy && policy->allow_unsafe);
    /* Pins first: a file of another hash claiming a pinned name is refused before it runs. */
    for (int i = 0; policy && i < policy->n_pins && st == SAGERUN_OK; i++) {
        char name[256];
        const char *eq = strchr(policy->pins[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - policy->pins[i]), policy->pins[i]);
        if ((st = sagerun_registry_pin(reg, name, eq + 1, err)) != SAGERUN_OK)
            sr_cli_error_prefix(err, "--expect-plugin-sha256");
    }
    /* Explicit plugins first, so that they win over same-named ones on the search path. */
    for (int i = 0; i < n_plugin_paths && st == SAGERUN_OK; i++) {
        sr_isolate_child_loading(plugin_paths[i]);
        size_t variants = sagerun_registry_variant_count(reg);
        size_t rejected = sagerun_registry_rejection_count(reg);
        if ((st = sagerun_registry_add_path(reg, plugin_paths[i], err)) != SAGERUN_OK)
            sr_cli_error_prefix(err, "--plugin");
        else if (!(policy && policy->show_rejected))
            st = explicit_file_loaded(reg, plugin_paths[i], variants, rejected, err);
    }
    if (st == SAGERUN_OK) {
        char where[2048];
        const char *env = getenv("SAGERUN_PLUGIN_PATH");
        snprintf(where, sizeof where, "%s%s%sthe library's plugins folder",
                 env && *env ? "the folders of SAGERUN_PLUGIN_PATH (" : "", env && *env ? env : "",
                 env && *env ? ") or " : "");
        sr_isolate_child_loading(where);
        st = sagerun_registry_add_default_paths(reg, err);
    }
    sr_isolate_child_loaded(reg);
    /* a file on the search path whose variant another file (--plugin, an earlier folder) already
     * gave is left out: said, since it may be the one the user meant (list shows all rejections) */
    for (size_t i = 0; st == SAGERUN_OK && !(policy && policy->show_rejected) &&
                       i < sagerun_registry_rejection_count(reg);
         i++) {
        sagerun_rejection r = {.struct_size = sizeof r};
        if (sagerun_registry_rejection(reg, i, &r, NULL) == SAGERUN_OK && r.reason &&
            strncmp(r.reason, "duplicate variant name", 22) == 0)
            fprintf(stderr, "sagerun: warning: %s left out: %s\n", sr_cli_text(r.path),
                    sr_cli_text(r.reason));
    }
    for (int i = 0; policy && i < policy->n_pins && st == SAGERUN_OK; i++) {
        char name[256];
        const char *eq = strchr(policy->pins[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - policy->pins[i]), policy->pins[i]);
        st = sagerun_registry_expect_sha256(reg, name, eq + 1, err);
        if (st != SAGERUN_OK)
            sr_cli_error_prefix(err, "--expect-plugin-sha256");
    }
    if (st != SAGERUN_OK) {
        sagerun_registry_destroy(reg);
        return st;
    }
    *out = reg;
    return SAGERUN_OK;
}

FILE *sr_cli_table_out(const char *const *outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (outs[i] && (strcmp(outs[i], "-") == 0 || sr_cli_same_file(outs[i], "/dev/stdout")))
            return stderr;
    return stdout;
}

int sr_cli_check_outputs(const char *cmd, const char *const *opts, const char *const *outs,
                         size_t n_out, const char *const *inputs, size_t n_in)
{
    sagerun_error err = {0};
    for (size_t i = 0; i < n_out; i++) {
        if (!outs[i])
            continue;
        if (!*outs[i]) {
            sr_cli_error("%s: %s: an empty path", cmd, opts[i]);
            return SR_EXIT_USAGE;
        }
        if (strncmp(outs[i], "--", 2) == 0) { /* --json --quiet: the next option taken as the file */
            sr_cli_error("%s: %s '%s': an option where a file is needed (for a file of that name, "
                         "./%s)", cmd, opts[i], outs[i], outs[i]);
            return SR_EXIT_USAGE;
        }
        if (sagerun_output_check(outs[i], &err) != SAGERUN_OK) {
            sr_cli_error("%s: %s: %s", cmd, opts[i], err.message);
            return SR_EXIT_ERROR;
        }
        for (size_t k = 0; k < n_in; k++)
            if (inputs[k] && strcmp(outs[i], "-") != 0 &&
                (strcmp(inputs[k], outs[i]) == 0 || sr_cli_same_file(inputs[k], outs[i]))) {
                sr_cli_error("%s: %s %s is the input %s: refusing to overwrite it", cmd, opts[i],
                             outs[i], inputs[k]);
                return SR_EXIT_ERROR;
            }
        for (size_t k = 0; k < i; k++)
            if (outs[k] && (strcmp(outs[k], outs[i]) == 0 || sr_cli_same_file(outs[k], outs[i]))) {
                sr_cli_error("%s: %s and %s name the same file %s", cmd, opts[k], opts[i],
                             outs[i]);
                return SR_EXIT_ERROR;
            }
    }
    return SR_EXIT_OK;
}

/* The data file a --workload file names (its "input" path), or NULL: synthetic inputs, no
 * workload file, or one that does not load (its error comes when it is used). Caller frees. */
static char *workload_data_path(const sr_cli_workload_options *wo)
{
    sagerun_workload *w = NULL;
    sagerun_error err = {0};
    char *path = NULL;
    if (wo->workload_file && sagerun_workload_load(wo->workload_file, &w, &err) == SAGERUN_OK &&
        sagerun_workload_input_path(w))
        path = strdup(sagerun_workload_input_path(w));
    sagerun_workload_destroy(w);
    return path;
}

int sr_cli_check_run_outputs(const char *cmd, const char *const *opts, const char *const *outs,
                             size_t n_out, const sr_cli_workload_options *wo, char *const *plugins,
                             int n_plugins)
{
    size_t n = 3 + (size_t)n_plugins;
    const char **ins = calloc(n, sizeof(*ins));
    if (!ins) {
        sr_cli_error("%s: out of memory", cmd);
        return SR_EXIT_ERROR;
    }
    char *data = workload_data_path(wo);
    ins[0] = wo->workload_file;
    ins[1] = wo->inputs_file;
    ins[2] = data;
    for (int i = 0; i < n_plugins; i++)
        ins[3 + i] = plugins[i];
    int rc = sr_cli_check_outputs(cmd, opts, outs, n_out, ins, n);
    free(data);
    free(ins);
    return rc;
}

/* Whether path is out i of outs (and says so). */
static bool names_an_output(const char *cmd, const char *const *opts, const char *const *outs,
                            size_t n_out, const char *path, const char *what)
{
    for (size_t i = 0; path && i < n_out; i++)
        if (outs[i] && strcmp(outs[i], "-") != 0 && sr_cli_same_file(outs[i], path)) {
            sr_cli_error("%s: %s %s is %s %s: refusing to overwrite it", cmd, opts[i], outs[i],
                         what, path);
            return true;
        }
    return false;
}

bool sr_cli_check_outputs_spare_plugins(const char *cmd, const char *const *opts,
                                        const char *const *outs, size_t n_out,
                                        const sagerun_registry *reg)
{
    for (size_t i = 0; i < sagerun_registry_variant_count(reg); i++) {
        sagerun_variant_info vi = {.struct_size = sizeof vi};
        if (sagerun_registry_variant_info(reg, i, &vi, NULL) != SAGERUN_OK)
            continue;
        char what[160];
        snprintf(what, sizeof what, "the plugin file of variant %s,", vi.name);
        if (names_an_output(cmd, opts, outs, n_out, vi.path, what))
            return false;
        snprintf(what, sizeof what, "the extension module of variant %s,", vi.name);
        if (names_an_output(cmd, opts, outs, n_out, vi.extension_path, what))
            return false;
    }
    for (size_t i = 0; i < sagerun_registry_rejection_count(reg); i++) {
        sagerun_rejection r = {.struct_size = sizeof r};
        if (sagerun_registry_rejection(reg, i, &r, NULL) == SAGERUN_OK &&
            names_an_output(cmd, opts, outs, n_out, r.path, "the plugin file (rejected)"))
            return false;
    }
    return true;
}

bool sr_cli_parse_u32(const char *cmd, const char *opt, const char *text, unsigned long min,
                      uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v < min || v > 100000000ul) {
        sr_cli_error("%s: %s '%s': expected an integer from %lu to 100000000", cmd, opt, text, min);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool sr_cli_parse_decimal(const char *cmd, const char *opt, const char *text, double min,
                          bool min_inclusive, double max, double *out)
{
    /* Decimal digits, a point, an exponent (".5", "2.", "1e3"): strtod alone would also take
     * " 5", "+5", "0x10", "inf" and "nan". */
    size_t digits = strspn(text, "0123456789");
    const char *rest = text + digits;
    if (*rest == '.') {
        size_t part = strspn(rest + 1, "0123456789");
        digits += part;
        rest += 1 + part;
    }
    if (digits && (*rest == 'e' || *rest == 'E')) {
        const char *exp = rest + 1 + (rest[1] == '+' || rest[1] == '-');
        size_t n = strspn(exp, "0123456789");
        rest = n ? exp + n : rest;
    }
    double v = digits && !*rest ? strtod(text, NULL) : NAN;
    if (!(v >= min) || (!min_inclusive && v == min) || v > max) {
        sr_cli_error("%s: %s '%s': expected a decimal number %s %.15g and <= %.15g", cmd, opt,
                     text, min_inclusive ? ">=" : ">", min, max);
        return false;
    }
    *out = v;
    return true;
}

bool sr_cli_parse_shape(const char *text, sagerun_problem *problem)
{
    unsigned long v[5];
    int n = 0;
    const char *s = text;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return false;
        v[n++] = strtoul(s, &end, 10);
        if (v[n - 1] == 0 || v[n - 1] > UINT32_MAX)
            return false;
        if (*end == '\0')
            break;
        if (*end != ',' || n == 5) /* a sixth number, or anything after the fifth */
            return false;
        s = end + 1;
    }
    if (n == 4)
        *problem = sagerun_problem_make((uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2],
                                        (uint32_t)v[2], (uint32_t)v[3]);
    else if (n == 5)
        *problem = sagerun_problem_make((uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2],
                                        (uint32_t)v[3], (uint32_t)v[4]);
    else
        return false;
    return true;
}

static bool parse_seed(const char *cmd, const char *text, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno) {
        sr_cli_error("%s: --seed '%s': expected a non-negative integer", cmd, text);
        return false;
    }
    return true;
}

/* "L,R": two integers >= -1 (the window's sides). */
static bool parse_window(const char *text, int32_t *left, int32_t *right)
{
    long v[2];
    const char *s = text;
    for (int i = 0; i < 2; i++) {
        char *end;
        size_t digits = strspn(s + (*s == '-'), "0123456789");
        if (digits == 0 || digits > 9)
            return false;
        v[i] = strtol(s, &end, 10);
        if (v[i] < -1 || *end != (i == 0 ? ',' : '\0'))
            return false;
        s = end + 1;
    }
    *left = (int32_t)v[0];
    *right = (int32_t)v[1];
    return true;
}

/* The varlen SPEC checked where it is given: the library's parser (sagerun_workload_set_varlen)
 * on a probe workload, its message without the "varlen: " it starts with. */
static bool check_varlen(const char *cmd, const char *spec)
{
    sagerun_problem p = sagerun_problem_make(1, 1, 1, 1, 8);
    sagerun_workload *w = NULL;
    sagerun_error err = {0};
    bool ok = sagerun_workload_synthetic(&p, 0, "probe", &w, &err) == SAGERUN_OK &&
              sagerun_workload_set_varlen(w, spec, &err) == SAGERUN_OK;
    sagerun_workload_destroy(w);
    if (!ok)
        sr_cli_error("%s: --varlen '%s': %s", cmd, spec,
                     strncmp(err.message, "varlen: ", 8) ? err.message : err.message + 8);
    return ok;
}

/* The options of ABI 0.2's problem (sr_cli_workload_option's). */
static int problem_option(const char *cmd, sr_cli_workload_options *o, int opt, const char *arg)
{
    int32_t l, r;
    double cap;
    switch (opt) {
    case SR_OPT_CAUSAL:
    case SR_OPT_ALIGN: {
        const char *name = opt == SR_OPT_ALIGN ? "--align" : "--causal";
        if (arg && strcmp(arg, "top-left") && strcmp(arg, "bottom-right")) {
            sr_cli_error("%s: %s%s'%s': expected top-left or bottom-right%s", cmd, name,
                         opt == SR_OPT_CAUSAL ? "=" : " ", arg,
                         opt == SR_OPT_CAUSAL ? " (plain --causal: top-left)" : "");
            return -1;
        }
        int align = arg && !strcmp(arg, "bottom-right") ? SAGERUN_ALIGN_BOTTOM_RIGHT
                                                        : SAGERUN_ALIGN_TOP_LEFT;
        if (arg && o->align_given && align != o->align) {
            sr_cli_error("%s: --causal and --align name two alignments", cmd);
            return -1;
        }
        o->causal = o->causal || opt == SR_OPT_CAUSAL;
        if (arg || !o->align_given)
            o->align = align;
        o->align_given = o->align_given || arg;
        return 1;
    }
    case SR_OPT_KV_LEN: return sr_cli_parse_u32(cmd, "--kv-len", arg, 1, &o->kv_len) ? 1 : -1;
    case SR_OPT_PAGE_SIZE:
        return sr_cli_parse_u32(cmd, "--page-size", arg, 1, &o->page_size) ? 1 : -1;
    case SR_OPT_SOFTCAP:
        o->softcap = arg;
        return sr_cli_parse_decimal(cmd, "--softcap", arg, 0, true, 1e6, &cap) ? 1 : -1;
    case SR_OPT_VARLEN:
        o->varlen = arg;
        return check_varlen(cmd, arg) ? 1 : -1;
    case SR_OPT_WINDOW:
        o->window = arg;
        if (parse_window(arg, &l, &r))
            return 1;
        sr_cli_error("%s: --window '%s': expected L,R: the keys before and after the diagonal, "
                     "each an integer >= 0 or -1 (unbounded)", cmd, arg);
        return -1;
    }
    return 0;
}

int sr_cli_workload_option(const char *cmd, sr_cli_workload_options *o, int opt, const char *arg)
{
    sagerun_problem probe;
    if ((opt == SR_OPT_WORKLOAD || opt == SR_OPT_INPUTS) && !*arg) {
        sr_cli_error("%s: %s: an empty path", cmd,
                     opt == SR_OPT_WORKLOAD ? "--workload" : "--inputs");
        return -1;
    }
    switch (opt) {
    case SR_OPT_WORKLOAD: o->workload_file = arg; return 1;
    case SR_OPT_INPUTS: o->inputs_file = arg; return 1;
    case SR_OPT_SEED:
        o->seed_given = true;
        return parse_seed(cmd, arg, &o->seed) ? 1 : -1;
    case SR_OPT_SHAPE: {
        o->shape = arg;
        sagerun_error perr = {0};
        if (!sr_cli_parse_shape(arg, &probe)) {
            sr_cli_error("%s: --shape '%s': expected B,N,H,D or B,N,Hq,Hkv,D, every size from 1 to "
                         "4294967295",
                         cmd, arg);
            return -1;
        }
        if (sagerun_problem_check(&probe, &perr) != SAGERUN_OK) { /* GQA (Hq % Hkv), the size */
            sr_cli_error("%s: --shape '%s': %s", cmd, arg, perr.message);
            return -1;
        }
        return 1;
    }
    case SR_OPT_LAYOUT:
        o->layout = arg;
        if (strcasecmp(arg, "nhd") == 0 || strcasecmp(arg, "hnd") == 0) /* NHD, as reports show it */
            return 1;
        sr_cli_error("%s: --layout '%s': expected nhd or hnd", cmd, arg);
        return -1;
    case SR_OPT_DTYPE:
        o->dtype = arg;
        if (sagerun_dtype_parse(arg) >= 0)
            return 1;
        sr_cli_error("%s: --dtype '%s': expected " SAGERUN_DTYPE_WORDS, cmd, arg);
        return -1;
    }
    return problem_option(cmd, o, opt, arg);
}

/* What the workload options say together: errors name the options. */
static sagerun_status check_workload_options(const sr_cli_workload_options *o, sagerun_error *err)
{
    if (o->layout && strcasecmp(o->layout, "hnd") != 0 && strcasecmp(o->layout, "nhd") != 0)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "--layout '%s': expected nhd or hnd", o->layout);
    if (o->dtype && sagerun_dtype_parse(o->dtype) < 0)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "--dtype '%s': expected " SAGERUN_DTYPE_WORDS, o->dtype);
    if ((o->workload_file != NULL) + (o->inputs_file != NULL) + (o->shape != NULL) > 1)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "--workload, --inputs and --shape exclude each other");
    const char *file_opt = o->workload_file ? "--workload" : o->inputs_file ? "--inputs" : NULL;
    /* the data's options: the file holds its own tensors */
    const char *ignored = o->dtype ? "--dtype" : o->seed_given ? "--seed"
                          : o->kv_len ? "--kv-len" : o->varlen ? "--varlen"
                          : o->page_size ? "--page-size" : NULL;
    /* --causal, --window and --softcap are the computation's, not the data's: they apply to
     * --inputs too (a file saved from a causal run says so itself), not to a workload file,
     * which states its computation */
    const char *mask = o->causal ? "--causal" : o->window ? "--window"
                       : o->softcap ? "--softcap" : o->align_given ? "--align" : NULL;
    if (file_opt && (ignored || (mask && o->workload_file)))
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "%s applies to --shape%s and the default workload, not to %s (the "
                                "file says what it holds)",
                                ignored ? ignored : mask, ignored ? "" : ", --inputs", file_opt);
    if (o->kv_len && o->varlen)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "--kv-len and --varlen exclude each other (--varlen Q:K gives "
                                "each sequence its keys)");
    if ((o->varlen || o->page_size) && o->layout && strcasecmp(o->layout, "hnd") == 0)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "%s: %s tensors are NHD only, not --layout %s",
                                o->varlen ? "--varlen" : "--page-size",
                                o->varlen ? "varlen" : "paged", o->layout);
    if (o->workload_file && o->layout)
        return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "--layout applies to --shape and --inputs, not to --workload (a "
                                "workload file names its layout)");
    if (o->shape) {
        sagerun_problem p;
        if (!sr_cli_parse_shape(o->shape, &p))
            return sr_cli_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                    "--shape '%s': expected B,N,H,D or B,N,Hq,Hkv,D with every "
                                    "size >= 1",
                                    o->shape);
    }
    return SAGERUN_OK;
}

/* The problem with one option applied; an error names the option and its value. */
static sagerun_status set_problem(sagerun_workload *w, const sagerun_problem *p, const char *opt,
                                  const char *value, sagerun_error *err)
{
    sagerun_status st = sagerun_workload_set_problem(w, p, err);
    return st == SAGERUN_OK ? st : sr_cli_error_prefix(err, "%s '%s'", opt, value);
}

/* --kv-len, --window, --softcap, then --varlen (its lengths replace B and N), then --page-size
 * (its pages come from the lengths), over the workload's problem: each one's error names it. */
static sagerun_status apply_problem_options(const sr_cli_workload_options *o, sagerun_workload *w,
                                            sagerun_error *err)
{
    sagerun_problem p = *sagerun_workload_problem(w);
    sagerun_status st = SAGERUN_OK;
    char text[16];
    snprintf(text, sizeof text, "%u", o->kv_len);
    if (o->kv_len) {
        p.kv_len = o->kv_len;
        if ((st = set_problem(w, &p, "--kv-len", text, err)) != SAGERUN_OK)
            return st;
    }
    if (o->window && parse_window(o->window, &p.window_left, &p.window_right)) {
        p.window = 1;
        if ((st = set_problem(w, &p, "--window", o->window, err)) != SAGERUN_OK)
            return st;
    }
    if (o->softcap) {
        p.softcap = (float)strtod(o->softcap, NULL); /* checked when given */
        if ((st = set_problem(w, &p, "--softcap", o->softcap, err)) != SAGERUN_OK)
            return st;
    }
    if (o->varlen && (st = sagerun_workload_set_varlen(w, o->varlen, err)) != SAGERUN_OK) {
        if (strncmp(err->message, "varlen: ", 8) == 0)
            memmove(err->message, err->message + 8, strlen(err->message + 8) + 1);
        return sr_cli_error_prefix(err, "--varlen '%s'", o->varlen);
    }
    snprintf(text, sizeof text, "%u", o->page_size);
    if (o->page_size && (st = sagerun_workload_set_paged(w, o->page_size, err)) != SAGERUN_OK)
        return sr_cli_error_prefix(err, "--page-size '%s'", text);
    return SAGERUN_OK;
}

/* The synthetic workload: --shape, else on the host a small one (the seed's call would take
 * hours in double precision on a CPU), else the seed's call; then --layout, --dtype, --causal,
 * --seed. */
static sagerun_status synthetic_workload(const sr_cli_workload_options *o, sagerun_workload **out,
                                         sagerun_error *err)
{
    uint64_t seed = o->seed_given ? o->seed : SAGERUN_WORKLOAD_DEFAULT_SEED;
    sagerun_problem p = sagerun_problem_make(1, 256, 2, 2, 128);
    sagerun_status st;
    if (o->shape) {
        sr_cli_parse_shape(o->shape, &p); /* checked before */
        st = sagerun_workload_synthetic(&p, seed, "synthetic", out, err);
    } else if (o->on_host) {
        st = sagerun_workload_synthetic(&p, seed, "host-small", out, err);
        if (st == SAGERUN_OK && !o->quiet)
            fprintf(stderr, "sagerun: host backend: using the small synthetic workload "
                            "[1, 256, 2, 128] instead of the seed's [1, 37810, 56, 128]\n");
    } else if ((st = sagerun_workload_default(out, err)) == SAGERUN_OK) {
        st = sagerun_workload_set_seed(*out, seed, err);
    }
    if (st != SAGERUN_OK)
        return st;
    p = *sagerun_workload_problem(*out);
    p.layout = o->layout && strcasecmp(o->layout, "hnd") == 0 ? SAGERUN_LAYOUT_HND : SAGERUN_LAYOUT_NHD;
    if (o->dtype)
        p.dtype = (uint32_t)sagerun_dtype_parse(o->dtype);
    p.causal = o->causal;
    p.align = (uint32_t)o->align; /* the window's alignment too */
    if ((st = sagerun_workload_set_problem(*out, &p, err)) != SAGERUN_OK ||
        (st = apply_problem_options(o, *out, err)) != SAGERUN_OK) {
        sagerun_workload_destroy(*out); /* the caller owns the workload only on success */
        *out = NULL;
    }
    return st;
}

/* The workload of an --inputs file: read in --layout or the file's own, causal where the file or
 * --causal says so, --window and --softcap applied. */
static sagerun_status inputs_workload(const sr_cli_workload_options *o, sagerun_workload **out,
                                      sagerun_error *err)
{
    int layout = !o->layout                            ? -1
                 : strcasecmp(o->layout, "hnd") == 0 ? SAGERUN_LAYOUT_HND
                                                     : SAGERUN_LAYOUT_NHD;
    sagerun_status st = sagerun_workload_from_safetensors(o->inputs_file, layout, out, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_problem p = *sagerun_workload_problem(*out);
    p.causal = p.causal || o->causal;
    if (o->causal || o->align_given) /* named here; without it the file's (its __metadata__) */
        p.align = (uint32_t)o->align;
    if ((st = sagerun_workload_set_problem(*out, &p, err)) != SAGERUN_OK ||
        (st = apply_problem_options(o, *out, err)) != SAGERUN_OK) {
        sagerun_workload_destroy(*out); /* the caller owns the workload only on success */
        *out = NULL;
    }
    return st;
}

bool sr_cli_workload_options_check(const char *cmd, const sr_cli_workload_options *o)
{
    sagerun_error err = {0};
    if (check_workload_options(o, &err) == SAGERUN_OK)
        return true;
    sr_cli_error("%s: %s", cmd, err.message);
    return false;
}

sagerun_status sr_cli_workload(const sr_cli_workload_options *o, sagerun_workload **out,
                               sagerun_error *err)
{
    *out = NULL;
    sagerun_status st = check_workload_options(o, err);
    if (st != SAGERUN_OK)
        return st;
    if (o->workload_file)
        return sagerun_workload_load(o->workload_file, out, err);
    if (o->inputs_file)
        return inputs_workload(o, out, err);
    return synthetic_workload(o, out, err);
}

sagerun_status sr_cli_bind_specs(sagerun_registry *reg, const char *const *names, size_t n,
                                 sagerun_error *err)
{
    for (size_t i = 0; i < n; i++) {
        long index;
        if (names[i] && strchr(names[i], '[') &&
            sagerun_registry_bind(reg, names[i], &index, err) != SAGERUN_OK)
            return sr_cli_error_prefix(err, "--variant %s", names[i]);
    }
    return SAGERUN_OK;
}

void sr_cli_speedup_times(double percent, char *buf, size_t len)
{
    double ratio = 1.0 + percent / 100.0, factor = ratio >= 1 ? ratio : 1 / ratio;
    if (!isfinite(ratio) || !(ratio > 0))
        snprintf(buf, len, "-");
    else /* two decimals, as hyperfine's "10.06 x slower"; whole numbers past a thousand */
        snprintf(buf, len, factor < 1000 ? "%.2f\u00d7%s" : "%.0f\u00d7%s", factor,
                 ratio > 1 ? " faster" : ratio < 1 ? " slower" : "");
}
