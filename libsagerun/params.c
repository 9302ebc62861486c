/* Variant parameters (plugin.h 1.1): checking a value against its declaration, parsing the
 * "key=value,..." of a variant spec NAME[key=value,...], and the canonical label naming them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *sagerun_param_type_name(int type)
{
    switch (type) {
    case SAGERUN_PARAM_INT:
        return "int";
    case SAGERUN_PARAM_FLOAT:
        return "float";
    case SAGERUN_PARAM_BOOL:
        return "bool";
    }
    return "unknown";
}

int sr_param_check(const sagerun_param_decl *p, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        return sr_errbuf_set(buf, len, SAGERUN_INVALID_ARGUMENT, "%s: %g is not a number", p->key,
                             v);
    if (p->type == SAGERUN_PARAM_INT && v != floor(v))
        return sr_errbuf_set(buf, len, SAGERUN_INVALID_ARGUMENT, "%s=%g is not an integer", p->key,
                             v);
    if (p->type == SAGERUN_PARAM_INT && fabs(v) > SR_PARAM_INT_MAX) /* a double holds it exactly */
        return sr_errbuf_set(buf, len, SAGERUN_INVALID_ARGUMENT,
                             "%s=%.17g is beyond the integers a parameter holds exactly (2^53)",
                             p->key, v);
    if (p->type == SAGERUN_PARAM_BOOL && v != 0 && v != 1)
        return sr_errbuf_set(buf, len, SAGERUN_INVALID_ARGUMENT, "%s=%g is not a bool (0 or 1)",
                             p->key, v);
    if (v < p->min_value || v > p->max_value)
        return sr_errbuf_set(buf, len, SAGERUN_INVALID_ARGUMENT, "%s=%g is outside [%g, %g]",
                             p->key, v, p->min_value, p->max_value);
    return 0;
}

void sagerun_param_format(int type, double v, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    if (type == SAGERUN_PARAM_BOOL)
        snprintf(buf, len, "%s", v != 0 ? "true" : "false");
    else if (type == SAGERUN_PARAM_INT)
        snprintf(buf, len, "%.0f", v);
    else if (v == floor(v) && fabs(v) < 1e15) /* a whole number as such: 2000, not 2e+03 */
        snprintf(buf, len, "%.0f", v);
    else /* the shortest text that reads back as v: two values never share a label */
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(buf, len, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
}

/* Plain decimal text: -?digits[.digits], and for a float an exponent; no space, sign '+', hex
 * or inf (strtod takes all of those, and " 3" or "0x4" would bind 3 and 4). */
static bool plain_number(const char *t, bool exponent)
{
    t += *t == '-';
    size_t whole = strspn(t, "0123456789"), part = 0;
    t += whole;
    if (*t == '.') /* an int's fraction is read, then refused as "not an integer" */
        t++, part = strspn(t, "0123456789"), t += part;
    if (whole + part == 0)
        return false;
    if (exponent && (*t == 'e' || *t == 'E')) {
        t++;
        t += *t == '-' || *t == '+';
        size_t exp = strspn(t, "0123456789");
        if (!exp)
            return false;
        t += exp;
    }
    return *t == '\0';
}

/* Text of a spec quoted in a message, at most 48 characters ("..." after them): a long value
 * must not push the message's reason past the end of its buffer. */
#define QUOTE_MAX 48
#define QUOTED(t) QUOTE_MAX, (t), strlen(t) > QUOTE_MAX ? "..." : ""

/* The value text of one parameter as a double; false when it is not of the type. */
static bool parse_value(const sagerun_param_decl *p, const char *text, double *v)
{
    if (p->type == SAGERUN_PARAM_BOOL) {
        static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false",
                                                                                     "no", "off"};
        for (size_t i = 0; i < SR_ARRAY_LEN(yes); i++) {
            if (strcmp(text, yes[i]) == 0)
                return *v = 1, true;
            if (strcmp(text, no[i]) == 0)
                return *v = 0, true;
        }
        return false;
    }
    if (!plain_number(text, p->type == SAGERUN_PARAM_FLOAT))
        return false;
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    return *text && !*end && errno == 0;
}

static long param_index(const sagerun_variant_descriptor *d, const char *key)
{
    for (uint32_t k = 0; k < sr_descriptor_param_count(d); k++)
        if (strcmp(d->params[k].key, key) == 0)
            return (long)k;
    return -1;
}

/* "bq, stages" for an error message. */
static void key_list(const sagerun_variant_descriptor *d, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < sr_descriptor_param_count(d) && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "", d->params[k].key);
}

static sagerun_status apply_one(const sagerun_variant_descriptor *d, char *item, double *values,
                                bool *given, sagerun_error *err)
{
    char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: '%.*s%s' is not key=value", d->name, QUOTED(item));
    *eq = '\0';
    long k = param_index(d, item);
    if (k < 0) {
        char keys[256];
        key_list(d, keys, sizeof keys);
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: unknown parameter '%.*s%s' (its parameters: %s)",
                            d->name, QUOTED(item), keys);
    }
    const sagerun_param_decl *p = &d->params[k];
    if (given[k])
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant %s: parameter %s given twice",
                            d->name, p->key);
    double v;
    if (!parse_value(p, eq + 1, &v))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: parameter %s: '%.*s%s' is not %s %s", d->name, p->key,
                            QUOTED(eq + 1),
                            p->type == SAGERUN_PARAM_INT ? "an" : "a",
                            sagerun_param_type_name(p->type));
    char why[160];
    if (sr_param_check(p, v, why, sizeof why) != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant %s: parameter %s", d->name,
                            why);
    values[k] = v;
    given[k] = true;
    return SAGERUN_OK;
}

sagerun_status sr_params_parse(const sagerun_variant_descriptor *d, const char *args,
                               double values[SAGERUN_PLUGIN_MAX_PARAMS], sagerun_error *err)
{
    uint32_t n = sr_descriptor_param_count(d);
    bool given[SAGERUN_PLUGIN_MAX_PARAMS] = {false};
    for (uint32_t k = 0; k < n; k++)
        values[k] = d->params[k].default_value;
    if (!args)
        return SAGERUN_OK;
    if (n == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s takes no parameters (given [%s])", d->name, args);
    char *copy = strdup(args);
    if (!copy)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_status st = SAGERUN_OK;
    /* every item a key=value: "[]" and "[a=1,]" were taken as the defaults, under another label */
    for (char *item = copy, *next; item && st == SAGERUN_OK; item = next) {
        if ((next = strchr(item, ',')))
            *next++ = '\0';
        st = *item ? apply_one(d, item, values, given, err)
                   : sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                  "variant %s: an empty binding in [%.*s%s] (want key=value,...)",
                                  d->name, QUOTED(args));
    }
    free(copy);
    return st;
}

bool sr_params_label(const sagerun_variant_descriptor *d, const double *values, char *buf,
                     size_t len)
{
    uint32_t n = sr_descriptor_param_count(d);
    size_t at = (size_t)snprintf(buf, len, "%s", d->name);
    for (uint32_t k = 0; k < n && at < len; k++) {
        char v[64];
        sagerun_param_format(d->params[k].type, values[k], v, sizeof v);
        at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", k ? "," : "[", d->params[k].key, v);
    }
    if (n && at < len)
        at += (size_t)snprintf(buf + at, len - at, "]");
    return at < len;
}

sagerun_status sr_variant_spec_split(const char *spec, char name[64], char **args,
                                     sagerun_error *err)
{
    *args = NULL;
    const char *open = strchr(spec, '[');
    size_t n = open ? (size_t)(open - spec) : strlen(spec);
    if (n == 0 || n > 63)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "'%.*s%s': a variant name is 1 to 63 characters", QUOTED(spec));
    memcpy(name, spec, n);
    name[n] = '\0';
    if (!open)
        return SAGERUN_OK;
    size_t m = strlen(open);
    if (open[m - 1] != ']' || strchr(open + 1, '[') || memchr(open, ']', m - 1))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "'%.*s%s': want NAME[key=value,...] (one pair of brackets, at the end)",
                            QUOTED(spec));
    if (!(*args = strndup(open + 1, m - 2)))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    return SAGERUN_OK;
}

uint32_t sr_descriptor_param_count(const sagerun_variant_descriptor *d)
{
    bool covered = d->struct_size >= offsetof(sagerun_variant_descriptor, params) +
                                         sizeof d->params;
    return covered && d->params ? d->n_params : 0;
}

uint32_t sr_descriptor_flags(const sagerun_variant_descriptor *d)
{
    bool covered = d->struct_size >= offsetof(sagerun_variant_descriptor, flags) + sizeof d->flags;
    return covered ? d->flags : 0;
}
