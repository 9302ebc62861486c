/* Parsing one declaration line of a Python variant (declare.h). Nothing here runs Python. */
#include "declare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKEN_MAX 1024

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

const char *py_declaration_text(const char *line)
{
    while (is_blank(*line))
        line++;
    if (*line++ != '#')
        return NULL;
    while (is_blank(*line))
        line++;
    size_t n = strlen(PY_DECLARE_TAG);
    return strncmp(line, PY_DECLARE_TAG, n) == 0 ? line + n : NULL;
}

/* The next token: a bare word, or key="quoted value" with \" and \\ (quotes removed). Returns 1
 * with the token, 0 at the end of the text, -1 on an error (in err). */
static int next_token(const char **p, char *tok, size_t len, char *err, size_t errlen)
{
    const char *s = *p;
    while (is_blank(*s))
        s++;
    if (!*s)
        return 0;
    size_t n = 0;
    bool quoted = false;
    for (; *s && (quoted || !is_blank(*s)); s++) {
        char c = *s;
        if (c == '"') {
            quoted = !quoted;
            continue;
        }
        if (quoted && c == '\\' && (s[1] == '"' || s[1] == '\\'))
            c = *++s;
        if (n + 1 >= len) {
            snprintf(err, errlen, "a word longer than %zu characters", len - 1);
            return -1;
        }
        tok[n++] = c;
    }
    if (quoted) {
        snprintf(err, errlen, "unterminated quote");
        return -1;
    }
    tok[n] = '\0';
    *p = s;
    return 1;
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= PY_NAME_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
              *s == '-'))
            return false;
    return true;
}

static bool valid_identifier(const char *s)
{
    if (!*s || strlen(s) >= PY_NAME_MAX || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static bool parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* A function name for key (run, create, ...). */
static int set_function(char *dst, const char *key, const char *value, char *err, size_t errlen)
{
    if (!valid_identifier(value)) {
        snprintf(err, errlen, "%s=%.80s: not a Python function name", key, value);
        return -1;
    }
    snprintf(dst, PY_NAME_MAX, "%s", value);
    return 0;
}

/* Splits "a:b:c" in place into at most max fields (the last keeps any further colons). */
static size_t split_fields(char *s, char **fields, size_t max)
{
    size_t n = 0;
    fields[n++] = s;
    for (char *c = s; *c && n < max; c++)
        if (*c == ':') {
            *c = '\0';
            fields[n++] = c + 1;
        }
    return n;
}

/* param=KEY:TYPE:DEFAULT[:MIN:MAX][:DESCRIPTION] */
static int add_param(py_declared *d, const char *value, char *err, size_t errlen)
{
    char buf[TOKEN_MAX], *f[6];
    snprintf(buf, sizeof buf, "%s", value);
    size_t n = split_fields(buf, f, 6);
    if (d->n_params >= SAGERUN_PLUGIN_MAX_PARAMS) {
        snprintf(err, errlen, "more than %d parameters", SAGERUN_PLUGIN_MAX_PARAMS);
        return -1;
    }
    uint32_t k = d->n_params;
    sagerun_param_decl *p = &d->params[k];
    int type = n < 2 ? -1 : !strcmp(f[1], "int") ? SAGERUN_PARAM_INT
             : !strcmp(f[1], "float") ? SAGERUN_PARAM_FLOAT
             : !strcmp(f[1], "bool") ? SAGERUN_PARAM_BOOL : -1;
    size_t need = type == SAGERUN_PARAM_BOOL ? 3 : 5;
    if (type < 0 || n < need || strlen(f[0]) > SAGERUN_PLUGIN_MAX_KEY) {
        snprintf(err, errlen, "param=%.80s: expected KEY:int|float:DEFAULT:MIN:MAX[:DESCRIPTION] "
                 "or KEY:bool:DEFAULT[:DESCRIPTION] (KEY of at most %d characters)", value,
                 SAGERUN_PLUGIN_MAX_KEY);
        return -1;
    }
    *p = (sagerun_param_decl){.struct_size = sizeof *p, .type = type, .max_value = 1};
    bool ok = parse_number(f[2], &p->default_value);
    if (type != SAGERUN_PARAM_BOOL)
        ok = ok && parse_number(f[3], &p->min_value) && parse_number(f[4], &p->max_value);
    if (!ok) {
        snprintf(err, errlen, "param=%.80s: DEFAULT, MIN and MAX must be numbers", value);
        return -1;
    }
    snprintf(d->keys[k], sizeof d->keys[k], "%s", f[0]);
    snprintf(d->param_text[k], sizeof d->param_text[k], "%s", n > need ? f[need] : f[0]);
    p->key = d->keys[k];
    p->description = d->param_text[k];
    d->n_params++;
    return 0;
}

/* extension=PATH, $VAR or ${VAR}: an existing file, relative to the script's folder. */
/* extension=PATH: a leading $VAR or ${VAR} (a shell name: letters, digits, '_') is taken from
 * the environment and the rest of PATH follows it ($EXTD/x.so; the whole rest was taken for the
 * name, and ${EXTD}/x.so lost its /x.so); a relative result is the .py file's folder's. */
static int set_extension(py_declared *d, const char *value, char *err, size_t errlen)
{
    char var[128] = "", path[PATH_MAX], expanded[PATH_MAX];
    const char *v = value;
    if (value[0] == '$') {
        bool braced = value[1] == '{';
        const char *name = value + 1 + braced;
        size_t n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (n == 0 || n >= sizeof var || (name[0] >= '0' && name[0] <= '9') ||
            (braced && name[n] != '}')) {
            snprintf(err, errlen, "extension=%.80s: %s", value,
                     braced && name[n] != '}' && n ? "unterminated ${"
                                                   : "$ is not followed by a variable name");
            return -1;
        }
        snprintf(var, sizeof var, "%.*s", (int)n, name);
        const char *set = getenv(var);
        if (!set || !*set) {
            snprintf(err, errlen, "extension=%.80s: %s is not set (the path of the extension "
                     "module this variant loads)", value, var);
            return -1;
        }
        snprintf(expanded, sizeof expanded, "%s%s", set, name + n + braced);
        v = expanded;
    }
    const char *slash = strrchr(d->script, '/');
    if (v[0] == '/' || !slash)
        snprintf(path, sizeof path, "%s", v);
    else
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - d->script), d->script, v);
    if (access(path, R_OK) != 0) {
        snprintf(err, errlen, "extension=%.80s: %s: %s", value, path, strerror(errno));
        return -1;
    }
    snprintf(d->extension, sizeof d->extension, "%s", path);
    return 0;
}

static int set_word(int *dst, const char *key, const char *value, const char *a, int va,
                    const char *b, int vb, char *err, size_t errlen)
{
    if (strcmp(value, a) && strcmp(value, b)) {
        snprintf(err, errlen, "%s=%.80s: expected %s or %s", key, value, a, b);
        return -1;
    }
    *dst = strcmp(value, a) ? vb : va;
    return 0;
}

/* The words of features= (the agreed spelling; libsagerun/sequences.c names them in messages). */
static const struct {
    const char *word;
    uint32_t bit;
} feature_words[] = {
    {"kv_len", SAGERUN_FEATURE_KV_LEN},
    {"causal-top-left", SAGERUN_FEATURE_CAUSAL_TOP_LEFT},
    {"causal-bottom-right", SAGERUN_FEATURE_CAUSAL_BOTTOM_RIGHT},
    {"window", SAGERUN_FEATURE_WINDOW},
    {"softcap", SAGERUN_FEATURE_SOFTCAP},
    {"varlen", SAGERUN_FEATURE_VARLEN},
    {"paged", SAGERUN_FEATURE_PAGED},
};
#define FEATURE_WORDS "kv_len, causal-top-left, causal-bottom-right, window, softcap, varlen, paged"

/* One word of a comma-separated list value (features=, dtypes=, head_dims=) into d. */
static int list_word(py_declared *d, const char *key, const char *word, char *err, size_t errlen)
{
    if (!strcmp(key, "features")) {
        for (size_t i = 0; i < sizeof feature_words / sizeof feature_words[0]; i++)
            if (!strcmp(word, feature_words[i].word))
                return d->features |= feature_words[i].bit, 0;
        snprintf(err, errlen, "features=: unknown feature '%.40s' (known: " FEATURE_WORDS ")",
                 word);
        return -1;
    }
    if (!strcmp(key, "dtypes")) {
        if (strcmp(word, "fp16") && strcmp(word, "bf16")) {
            snprintf(err, errlen, "dtypes=: unknown dtype '%.40s' (known: fp16, bf16)", word);
            return -1;
        }
        d->dtypes |= 1u << (strcmp(word, "fp16") ? SAGERUN_DTYPE_BF16 : SAGERUN_DTYPE_F16);
        return 0;
    }
    double dim;
    if (!parse_number(word, &dim) || dim < 1 || dim > 1024 || dim != floor(dim)) {
        snprintf(err, errlen, "head_dims=: '%.40s' is not a head dim (an integer, 1 to 1024)",
                 word);
        return -1;
    }
    for (uint32_t i = 0; i < d->n_head_dims; i++)
        if (d->head_dims[i] == (uint32_t)dim)
            return 0;
    if (d->n_head_dims >= PY_MAX_HEAD_DIMS) {
        snprintf(err, errlen, "head_dims=: more than %d head dims", PY_MAX_HEAD_DIMS);
        return -1;
    }
    d->head_dims[d->n_head_dims++] = (uint32_t)dim;
    return 0;
}

/* features=a,b / dtypes=fp16,bf16 / head_dims=64,128: words separated by commas, none empty. */
static int set_list(py_declared *d, const char *key, const char *value, char *err, size_t errlen)
{
    char buf[TOKEN_MAX];
    snprintf(buf, sizeof buf, "%s", value);
    char *word = buf;
    for (;;) {
        char *comma = strchr(word, ',');
        if (comma)
            *comma = '\0';
        if (!*word) {
            snprintf(err, errlen, "%s=%.80s: an empty entry (comma-separated words)", key, value);
            return -1;
        }
        if (list_word(d, key, word, err, errlen) != 0)
            return -1;
        if (!comma)
            return 0;
        word = comma + 1;
    }
}

/* One key=value of the declaration. */
static int set_key(py_declared *d, const char *key, const char *value, char *err, size_t errlen)
{
    int graph = 0;
    double num;
    if (!strcmp(key, "run"))
        return set_function(d->run, key, value, err, errlen);
    if (!strcmp(key, "create"))
        return set_function(d->create, key, value, err, errlen);
    if (!strcmp(key, "prepare"))
        return set_function(d->prepare, key, value, err, errlen);
    if (!strcmp(key, "destroy"))
        return set_function(d->destroy, key, value, err, errlen);
    if (!strcmp(key, "backend"))
        return set_word(&d->backend, key, value, "host", SAGERUN_BACKEND_HOST, "cuda",
                        SAGERUN_BACKEND_CUDA, err, errlen);
    if (!strcmp(key, "input"))
        return set_word(&d->input_kind, key, value, "fp16", SAGERUN_INPUT_FP16, "sage2",
                        SAGERUN_INPUT_SAGE2, err, errlen);
    if (!strcmp(key, "graph")) {
        int rc = set_word(&graph, key, value, "yes", 1, "no", 0, err, errlen);
        d->graph = graph;
        return rc;
    }
    if (!strcmp(key, "min_cc") || !strcmp(key, "v_range")) {
        bool cc = key[0] == 'm';
        if (!parse_number(value, &num) || (cc ? num < 0 || num > 1000 || num != floor(num)
                                              : !(num > 0 && num <= 448))) {
            snprintf(err, errlen, "%s=%.80s: expected %s", key, value,
                     cc ? "major*10+minor, e.g. 89" : "a number in (0, 448]");
            return -1;
        }
        if (cc)
            d->min_cc = (int)num;
        else
            d->v_range = (float)num;
        return 0;
    }
    if (!strcmp(key, "version"))
        return snprintf(d->version, sizeof d->version, "%s", value), 0;
    if (!strcmp(key, "description"))
        return snprintf(d->description, sizeof d->description, "%s", value), 0;
    if (!strcmp(key, "param"))
        return add_param(d, value, err, errlen);
    if (!strcmp(key, "extension"))
        return set_extension(d, value, err, errlen);
    if (!strcmp(key, "features") || !strcmp(key, "dtypes") || !strcmp(key, "head_dims"))
        return set_list(d, key, value, err, errlen);
    snprintf(err, errlen, "unknown key '%.40s' (known: run, create, prepare, destroy, backend, "
             "input, v_range, min_cc, graph, version, description, param, extension, features, "
             "dtypes, head_dims)", key);
    return -1;
}

/* Keys other than param may be given once. */
static bool repeated(const char *key, const char *seen)
{
    char pat[72];
    snprintf(pat, sizeof pat, " %s ", key);
    return strcmp(key, "param") != 0 && strstr(seen, pat) != NULL;
}

static int parse_keys(const char *p, py_declared *d, char *err, size_t errlen)
{
    char tok[TOKEN_MAX], seen[512] = " ";
    int got;
    while ((got = next_token(&p, tok, sizeof tok, err, errlen)) == 1) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(err, errlen, "'%.80s': expected key=value", tok);
            return -1;
        }
        *eq = '\0';
        if (repeated(tok, seen)) {
            snprintf(err, errlen, "%s= given twice", tok);
            return -1;
        }
        if (strlen(seen) + strlen(tok) + 2 < sizeof seen)
            strcat(strcat(seen, tok), " ");
        if (set_key(d, tok, eq + 1, err, errlen) != 0)
            return -1;
    }
    if (got < 0)
        return -1;
    if (!d->run[0] || d->backend < 0) {
        snprintf(err, errlen, "missing %s", !d->run[0] ? "run=FUNCTION" : "backend=host|cuda");
        return -1;
    }
    return 0;
}

int py_declare_parse(const char *text, const char *script, int line, py_declared *out, char *err,
                     size_t errlen)
{
    char name[TOKEN_MAX];
    memset(out, 0, sizeof *out);
    out->backend = -1;
    out->input_kind = SAGERUN_INPUT_FP16;
    out->v_range = 448.0f;
    out->line = line;
    snprintf(out->script, sizeof out->script, "%s", script);
    const char *p = text;
    int got = next_token(&p, name, sizeof name, err, errlen);
    if (got <= 0 || strchr(name, '=') || !valid_name(name)) {
        if (got >= 0)
            snprintf(err, errlen, "'%.80s' is not a variant name (want [a-z0-9._-], 1 to %d "
                     "characters, first on the line)", got ? name : "", PY_NAME_MAX - 1);
        return -1;
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    if (parse_keys(p, out, err, errlen) != 0)
        return -1;
    if (!out->version[0])
        snprintf(out->version, sizeof out->version, "py");
    if (!out->description[0])
        snprintf(out->description, sizeof out->description, "Python: %s() of %s", out->run,
                 strrchr(script, '/') ? strrchr(script, '/') + 1 : script);
    return 0;
}
