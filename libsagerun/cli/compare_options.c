/* The options of one comparison, shared by compare and sweep (compare_options.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_options.h"
#include "schedule.h"
#include "timer.h"

static const struct option table[] = {SR_CLI_COMPARE_OPTIONS, {0, 0, 0, 0}};

bool sr_cli_compare_settings_init(sr_cli_compare_settings *s, const char *cmd, int argc)
{
    memset(s, 0, sizeof(*s));
    sagerun_compare_options_init(&s->opts);
    s->backend = "auto";
    size_t n = (size_t)(argc > 0 ? argc : 0) + 1;
    s->variants = calloc(n, sizeof(*s->variants));
    s->plugins = calloc(n, sizeof(*s->plugins));
    s->given_opts = calloc(n, sizeof(*s->given_opts));
    s->given_args = calloc(n, sizeof(*s->given_args));
    if (s->variants && s->plugins && s->given_opts && s->given_args)
        return true;
    sr_cli_error("%s: out of memory", cmd);
    sr_cli_compare_settings_free(s);
    return false;
}

void sr_cli_compare_settings_free(sr_cli_compare_settings *s)
{
    free(s->variants);
    free(s->plugins);
    free(s->given_opts);
    free(s->given_args);
    memset(s, 0, sizeof(*s));
}

bool sr_cli_compare_given(const sr_cli_compare_settings *s, int opt)
{
    return opt >= SR_OPT_BASELINE && opt < SR_OPT_COMPARE_END &&
           (s->given >> (opt - SR_OPT_BASELINE) & 1u);
}

static bool parse_seconds(const char *cmd, const char *opt, const char *text, bool zero_ok,
                          double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end || !isfinite(v) || v < 0 || (!zero_ok && v == 0)) {
        sr_cli_error("%s: %s '%s': expected a number of seconds %s 0", cmd, opt, text,
                     zero_ok ? ">=" : ">");
        return false;
    }
    *out = v;
    return true;
}

static int schedule_parse(const char *name)
{
    return !strcmp(name, "timed") ? (int)SAGERUN_SCHEDULE_TIMED
         : !strcmp(name, "fixed") ? (int)SAGERUN_SCHEDULE_FIXED
         : !strcmp(name, "seed")  ? (int)SAGERUN_SCHEDULE_SEED
                                  : -1;
}

/* --schedule, --order, --timer, --cache: one word of a short list each (the library's names). */
static bool parse_word_option(const char *cmd, int opt, const char *text,
                              sagerun_compare_options *o)
{
    int v;
    const char *name, *words;
    uint32_t *field;
    switch (opt) {
    case SR_OPT_SCHEDULE:
        v = schedule_parse(text), name = "schedule", words = "timed, fixed or seed";
        field = &o->schedule;
        break;
    case SR_OPT_ORDER:
        v = sr_order_parse(text), name = "order", words = "interleave or rotate";
        field = &o->order;
        break;
    case SR_OPT_TIMER:
        v = sr_timer_mode_parse(text), name = "timer", words = "auto, event, batch or graph";
        field = &o->timer;
        break;
    default:
        v = sr_cache_mode_parse(text), name = "cache", words = "hot or cold";
        field = &o->cache;
        break;
    }
    if (v < 0) {
        sr_cli_error("%s: --%s '%s': expected %s", cmd, name, text, words);
        return false;
    }
    *field = (uint32_t)v;
    return true;
}

/* The options with a number: which field, and what it takes. */
static bool parse_number(const char *cmd, sagerun_compare_options *o, int opt, const char *arg)
{
    switch (opt) {
    case SR_OPT_WARMUP: return sr_cli_parse_u32(cmd, "--warmup", arg, 0, &o->warmup);
    case SR_OPT_ROUNDS: return sr_cli_parse_u32(cmd, "--rounds", arg, 1, &o->rounds);
    case SR_OPT_ITERATIONS: return sr_cli_parse_u32(cmd, "--iterations", arg, 1, &o->iterations);
    case SR_OPT_BATCH: return sr_cli_parse_u32(cmd, "--batch", arg, 1, &o->batch);
    case SR_OPT_MIN_ROUNDS: return sr_cli_parse_u32(cmd, "--min-rounds", arg, 2, &o->min_rounds);
    case SR_OPT_MAX_ROUNDS: return sr_cli_parse_u32(cmd, "--max-rounds", arg, 2, &o->max_rounds);
    case SR_OPT_ACC_ROWS:
        return sr_cli_parse_u32(cmd, "--accuracy-rows", arg, 1, &o->accuracy_rows);
    case SR_OPT_MAX_TIME: return parse_seconds(cmd, "--max-time", arg, false, &o->max_time_s);
    case SR_OPT_WARMUP_TIME: return parse_seconds(cmd, "--warmup-time", arg, true, &o->warmup_s);
    case SR_OPT_TARGET:
        return sr_cli_parse_decimal(cmd, "--target-precision", arg, 0, true, 1e6,
                                    &o->target_precision_percent);
    default: /* SR_OPT_THRESHOLD */
        return sr_cli_parse_decimal(cmd, "--noise-threshold", arg, 0, true, 1e6,
                                    &o->noise_threshold_percent);
    }
}

static bool take(const char *cmd, sr_cli_compare_settings *s, int opt, const char *arg)
{
    switch (opt) {
    case SR_OPT_BASELINE: s->opts.baseline = arg; return true;
    case SR_OPT_VARIANT: s->variants[s->n_variants++] = arg; return true;
    case SR_OPT_PLUGIN: s->plugins[s->n_plugins++] = (char *)arg; return true;
    case SR_OPT_ALLOW_UNSAFE:
    case SR_OPT_PLUGIN_PIN: return sr_cli_plugin_policy_option(&s->policy, opt, arg);
    case SR_OPT_SCHEDULE:
    case SR_OPT_ORDER:
    case SR_OPT_TIMER:
    case SR_OPT_CACHE: return parse_word_option(cmd, opt, arg, &s->opts);
    case SR_OPT_NO_ACC: s->opts.flags |= SAGERUN_COMPARE_SKIP_ACCURACY; return true;
    case SR_OPT_NO_CLOCKS: s->opts.flags |= SAGERUN_COMPARE_NO_CLOCKS; return true;
    case SR_OPT_BACKEND: s->backend = arg; return true;
    case SR_OPT_DEVICE: return sr_cli_parse_u32(cmd, "--device", arg, 0, &s->device);
    case SR_OPT_TIMEOUT:
        return sr_cli_parse_decimal(cmd, "--timeout", arg, 0, false, 86400, &s->timeout_s);
    default: return parse_number(cmd, &s->opts, opt, arg);
    }
}

int sr_cli_compare_option(const char *cmd, sr_cli_compare_settings *s, int opt, const char *arg)
{
    const struct option *o = table;
    while (o->name && o->val != opt)
        o++;
    if (!o->name)
        return 0;
    if (!take(cmd, s, opt, arg))
        return -1;
    if (opt >= SR_OPT_BASELINE && opt < SR_OPT_COMPARE_END)
        s->given |= 1ull << (opt - SR_OPT_BASELINE);
    s->given_opts[s->n_given] = o;
    s->given_args[s->n_given++] = o->has_arg == no_argument ? NULL : arg;
    return 1;
}

bool sr_cli_compare_settings_finish(const char *cmd, sr_cli_compare_settings *s)
{
    sagerun_compare_options *o = &s->opts;
    bool counts = sr_cli_compare_given(s, SR_OPT_WARMUP) || sr_cli_compare_given(s, SR_OPT_ROUNDS) ||
                  sr_cli_compare_given(s, SR_OPT_ITERATIONS);
    if (counts && !sr_cli_compare_given(s, SR_OPT_SCHEDULE))
        o->schedule = SAGERUN_SCHEDULE_FIXED; /* --rounds and friends ask for a fixed schedule */
    if (o->min_rounds > o->max_rounds) {
        sr_cli_error("%s: --min-rounds %u is above --max-rounds %u", cmd, o->min_rounds,
                     o->max_rounds);
        return false;
    }
    if (strcmp(s->backend, "auto") != 0 && strcmp(s->backend, "host") != 0 &&
        strcmp(s->backend, "cuda") != 0) {
        sr_cli_error("%s: --backend '%s': expected auto, host or cuda", cmd, s->backend);
        return false;
    }
    if (s->n_variants) {
        o->variants = s->variants;
        o->variant_count = s->n_variants;
    }
    return true;
}
