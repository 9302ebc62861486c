/* The options of one comparison, shared by compare and sweep (compare_options.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_options.h"

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
    if (s->variants && s->plugins && s->given_opts && s->given_args &&
        sagerun_tolerance_create(&s->tolerance, NULL) == SAGERUN_OK)
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
    sagerun_tolerance_destroy(s->tolerance);
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
    /* plain decimal, as the other decimal options (strtod took "0x10", " 5" and "1e3") */
    return sr_cli_parse_decimal(cmd, opt, text, 0.0, zero_ok, 1e9, out);
}

/* --instances N: 1 to SAGERUN's 16 (compare.h) */
static bool parse_instances(const char *cmd, const char *text, uint32_t *out)
{
    if (!sr_cli_parse_u32(cmd, "--instances", text, 1, out))
        return false;
    if (*out <= 16)
        return true;
    sr_cli_error("%s: --instances '%s': at most 16 instances of each variant", cmd, text);
    return false;
}

/* --schedule, --order, --timer, --cache: one of the library's words for that field
 * (sagerun_compare_option_parse); a bad one is told the words there are. */
static bool parse_word_option(const char *cmd, int opt, const char *text,
                              sagerun_compare_options *o)
{
    const char *field = opt == SR_OPT_SCHEDULE ? "schedule"
                      : opt == SR_OPT_ORDER    ? "order"
                      : opt == SR_OPT_TIMER    ? "timer"
                                               : "cache";
    uint32_t *value = opt == SR_OPT_SCHEDULE ? &o->schedule
                    : opt == SR_OPT_ORDER    ? &o->order
                    : opt == SR_OPT_TIMER    ? &o->timer
                                             : &o->cache;
    int v = sagerun_compare_option_parse(field, text);
    if (v >= 0) {
        *value = (uint32_t)v;
        return true;
    }
    char words[128] = "";
    size_t used = 0;
    for (uint32_t k = 0; sagerun_compare_option_word(field, k) && used < sizeof words; k++)
        used += (size_t)snprintf(words + used, sizeof words - used, "%s%s",
                                 !k ? "" : sagerun_compare_option_word(field, k + 1) ? ", " : " or ",
                                 sagerun_compare_option_word(field, k));
    sr_cli_error("%s: --%s '%s': expected %s", cmd, field, text, words);
    return false;
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
    case SR_OPT_INSTANCES: return parse_instances(cmd, arg, &o->instances);
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

/* One tolerance option: 1 taken, 0 not one of them, -1 a bad argument (said). */
static int tolerance_option(const char *cmd, sagerun_tolerance *t, int opt, const char *arg)
{
    int metric = opt == SR_OPT_MAX_ULP     ? SAGERUN_TOLERANCE_MAX_ULP
                 : opt == SR_OPT_MIN_COS   ? SAGERUN_TOLERANCE_MIN_COS
                 : opt == SR_OPT_MAX_REL_L1 ? SAGERUN_TOLERANCE_MAX_REL_L1
                                            : -1;
    sagerun_error err = {0};
    if (metric < 0)
        return 0;
    if (sagerun_tolerance_add(t, metric, arg, &err) != SAGERUN_OK) {
        sr_cli_error("%s: %s", cmd, err.message);
        return -1;
    }
    return 1;
}

static bool take(const char *cmd, sr_cli_compare_settings *s, int opt, const char *arg)
{
    switch (opt) {
    case SR_OPT_BASELINE: s->opts.baseline = arg; return true;
    case SR_OPT_VARIANT: s->variants[s->n_variants++] = arg; return true;
    case SR_OPT_PLUGIN:
        return sr_cli_plugin_path_option(cmd, s->plugins, &s->n_plugins, (char *)arg);
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
    case SR_OPT_MAX_ULP:
    case SR_OPT_MIN_COS:
    case SR_OPT_MAX_REL_L1: return tolerance_option(cmd, s->tolerance, opt, arg) > 0;
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
    if (sr_cli_compare_given(s, SR_OPT_BATCH) && !sr_cli_compare_given(s, SR_OPT_TIMER))
        o->timer = SAGERUN_TIMER_BATCH; /* --batch K asks for K calls per sample (auto took one) */
    /* options of one schedule given to another did nothing, said nowhere */
    static const struct { int opt; const char *name; } timed_only[] = {
        {SR_OPT_TARGET, "--target-precision"}, {SR_OPT_MAX_TIME, "--max-time"},
        {SR_OPT_MIN_ROUNDS, "--min-rounds"}, {SR_OPT_MAX_ROUNDS, "--max-rounds"},
        {SR_OPT_WARMUP_TIME, "--warmup-time"}};
    for (size_t i = 0; i < sizeof timed_only / sizeof timed_only[0]; i++)
        if (o->schedule != SAGERUN_SCHEDULE_TIMED && sr_cli_compare_given(s, timed_only[i].opt)) {
            sr_cli_error("%s: %s applies to --schedule timed, not to %s (%s)", cmd,
                         timed_only[i].name, o->schedule == SAGERUN_SCHEDULE_SEED ? "seed" : "fixed",
                         counts ? "which --warmup, --rounds or --iterations ask for" : "--schedule");
            return false;
        }
    if (o->schedule == SAGERUN_SCHEDULE_SEED && sr_cli_compare_given(s, SR_OPT_INSTANCES) &&
        o->instances != 1) {
        sr_cli_error("%s: --instances applies to --schedule timed and fixed; the seed's schedule "
                     "has one instance of each variant", cmd);
        return false;
    }
    if (o->schedule == SAGERUN_SCHEDULE_TIMED && counts) {
        sr_cli_error("%s: --warmup, --rounds and --iterations apply to --schedule fixed, not timed "
                     "(which warms up by --warmup-time and ends by --max-time or "
                     "--target-precision)", cmd);
        return false;
    }
    /* one bound given, the other's default on the wrong side of it: the default follows */
    if (!sr_cli_compare_given(s, SR_OPT_MIN_ROUNDS) && o->min_rounds > o->max_rounds)
        o->min_rounds = o->max_rounds;
    if (!sr_cli_compare_given(s, SR_OPT_MAX_ROUNDS) && o->max_rounds < o->min_rounds)
        o->max_rounds = o->min_rounds;
    if (o->min_rounds > o->max_rounds) {
        sr_cli_error("%s: --min-rounds %u is above --max-rounds %u", cmd, o->min_rounds,
                     o->max_rounds);
        return false;
    }
    if (o->batch > SAGERUN_MAX_BATCH) {
        sr_cli_error("%s: --batch %u: at most %u calls per sample", cmd, o->batch, SAGERUN_MAX_BATCH);
        return false;
    }
    if (sr_cli_compare_given(s, SR_OPT_BATCH) && o->timer == SAGERUN_TIMER_EVENT) {
        sr_cli_error("%s: --batch %u with --timer event: an event sample is one call (batch and "
                     "graph take --batch calls)", cmd, o->batch);
        return false;
    }
    if (o->schedule == SAGERUN_SCHEDULE_SEED && (counts || sr_cli_compare_given(s, SR_OPT_BATCH))) {
        sr_cli_error("%s: --schedule seed times the seed's way (3 warm-up, 5 rounds x 10, one call "
                     "per sample): --warmup, --rounds, --iterations and --batch do not apply", cmd);
        return false;
    }
    if (o->batch > 1 && o->cache == SAGERUN_CACHE_COLD) {
        sr_cli_error("%s: --batch %u with --cache cold: a cold sample is one call (the flush "
                     "cannot sit between a batch's calls, which would run hot)", cmd, o->batch);
        return false;
    }
    if (!sr_cli_backend_option(cmd, s->backend))
        return false;
    if ((sagerun_tolerance_count(s->tolerance, SAGERUN_TOLERANCE_MIN_COS) ||
         sagerun_tolerance_count(s->tolerance, SAGERUN_TOLERANCE_MAX_REL_L1)) &&
        (o->flags & SAGERUN_COMPARE_SKIP_ACCURACY)) {
        sr_cli_error("%s: --min-cos and --max-rel-l1 judge the accuracy check, which "
                     "--no-accuracy turns off", cmd);
        return false;
    }
    if (s->n_variants) {
        o->variants = s->variants;
        o->variant_count = s->n_variants;
    }
    return true;
}
