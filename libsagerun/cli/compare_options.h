/* The options of one comparison, the same in `compare` and `sweep` (which passes them on to the
 * compare of each workload): one option table, one help text, one parser (compare_options.c).
 * What only compare takes (the workload, the report files, --expect-sha256, --in-process) and
 * what only sweep takes (--shard, --out-dir) stay in the command's own table. */
#ifndef SAGERUN_CLI_COMPARE_OPTIONS_H
#define SAGERUN_CLI_COMPARE_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "sagerun/compare.h"

/* Tolerance mode (compare.h's sagerun_tolerance): a variant that is not byte-exact passes or
 * fails by limits (part of the table: sweep passes them on too). */
enum { SR_OPT_MAX_ULP = 940, SR_OPT_MIN_COS, SR_OPT_MAX_REL_L1 };
#define SR_CLI_TOLERANCE_OPTIONS                                                                   \
    {"max-ulp", required_argument, 0, SR_OPT_MAX_ULP},                                             \
        {"min-cos", required_argument, 0, SR_OPT_MIN_COS},                                         \
        {"max-rel-l1", required_argument, 0, SR_OPT_MAX_REL_L1}
#define SR_CLI_TOLERANCE_HELP                                                                      \
    "tolerance (a variant that is not byte-exact then passes or fails by these; each\n"           \
    "option is [LABEL=]VALUE, for one variant's label or name or, without LABEL, for all;\n"      \
    "repeatable):\n"                                                                              \
    "  --max-ulp N            at most N ulp (of the output dtype) from the baseline's output\n"   \
    "  --min-cos X            cosine similarity with exact attention at least X\n"               \
    "  --max-rel-l1 X         relative L1 error against exact attention at most X\n"             \
    "                         (both over the accuracy rows; --no-accuracy excludes them)\n"

enum { SR_OPT_BASELINE = 960, SR_OPT_VARIANT, SR_OPT_PLUGIN, SR_OPT_SCHEDULE, SR_OPT_TARGET,
       SR_OPT_MAX_TIME, SR_OPT_MIN_ROUNDS, SR_OPT_MAX_ROUNDS, SR_OPT_WARMUP_TIME, SR_OPT_WARMUP,
       SR_OPT_ROUNDS, SR_OPT_ITERATIONS, SR_OPT_ORDER, SR_OPT_THRESHOLD, SR_OPT_TIMER,
       SR_OPT_BATCH, SR_OPT_CACHE, SR_OPT_ACC_ROWS, SR_OPT_NO_ACC, SR_OPT_NO_CLOCKS,
       SR_OPT_BACKEND, SR_OPT_DEVICE, SR_OPT_TIMEOUT, SR_OPT_INSTANCES, SR_OPT_COMPARE_END };

#define SR_CLI_COMPARE_OPTIONS                                                                     \
    {"baseline", required_argument, 0, SR_OPT_BASELINE},                                           \
        {"variant", required_argument, 0, SR_OPT_VARIANT},                                         \
        {"plugin", required_argument, 0, SR_OPT_PLUGIN}, SR_CLI_PLUGIN_POLICY_OPTIONS,             \
        {"schedule", required_argument, 0, SR_OPT_SCHEDULE},                                       \
        {"target-precision", required_argument, 0, SR_OPT_TARGET},                                 \
        {"max-time", required_argument, 0, SR_OPT_MAX_TIME},                                       \
        {"min-rounds", required_argument, 0, SR_OPT_MIN_ROUNDS},                                   \
        {"max-rounds", required_argument, 0, SR_OPT_MAX_ROUNDS},                                   \
        {"instances", required_argument, 0, SR_OPT_INSTANCES},                                     \
        {"warmup-time", required_argument, 0, SR_OPT_WARMUP_TIME},                                 \
        {"warmup", required_argument, 0, SR_OPT_WARMUP},                                           \
        {"rounds", required_argument, 0, SR_OPT_ROUNDS},                                           \
        {"iterations", required_argument, 0, SR_OPT_ITERATIONS},                                   \
        {"order", required_argument, 0, SR_OPT_ORDER},                                             \
        {"noise-threshold", required_argument, 0, SR_OPT_THRESHOLD},                               \
        {"timer", required_argument, 0, SR_OPT_TIMER},                                             \
        {"batch", required_argument, 0, SR_OPT_BATCH},                                             \
        {"cache", required_argument, 0, SR_OPT_CACHE},                                             \
        {"accuracy-rows", required_argument, 0, SR_OPT_ACC_ROWS},                                  \
        {"no-accuracy", no_argument, 0, SR_OPT_NO_ACC},                                            \
        {"no-clocks", no_argument, 0, SR_OPT_NO_CLOCKS},                                           \
        {"backend", required_argument, 0, SR_OPT_BACKEND},                                         \
        {"device", required_argument, 0, SR_OPT_DEVICE},                                           \
        {"timeout", required_argument, 0, SR_OPT_TIMEOUT}, SR_CLI_TOLERANCE_OPTIONS

/* The help of the table, by group: compare prints the groups among its own options. */
#define SR_CLI_COMPARE_VARIANTS_HELP                                                               \
    "variants:\n"                                                                                  \
    "  --baseline NAME        the reference variant (default: baseline; on the host\n"           \
    "                         backend: reference)\n"                                             \
    "  --variant NAME         a variant to compare (repeatable; default: every other\n"          \
    "                         variant found for the backend). Naming the baseline again\n"       \
    "                         is an A/A run, which must say \"same\".\n"                         \
    "  --plugin PATH          also load this plugin file (.so), Python variant file\n"          \
    "                         (.py, declaring its variants; README: Python variants)\n"          \
    "                         or folder of them (repeatable); a file that does not\n"          \
    "                         load is an error ('sagerun list' shows why)\n"                      \
    SR_CLI_PLUGIN_POLICY_HELP
#define SR_CLI_COMPARE_SCHEDULE_HELP                                                               \
    "schedule (default: timed):\n"                                                                 \
    "  --schedule S           timed: warm-up for --warmup-time and until stable, then\n"         \
    "                         rounds of one sample per variant (A,B then B,A) until the\n"       \
    "                         interval's half-width reaches --target-precision or\n"             \
    "                         --max-time is spent (never because of the verdict);\n"             \
    "                         fixed: --warmup calls, --rounds x --iterations samples;\n"         \
    "                         seed: the seed's 3 warm-up + 5 rounds x 10, rotating.\n"           \
    "                         --warmup/--rounds/--iterations alone imply fixed\n"                \
    "  --target-precision PCT timed: stop at this half-width, percent points (0.05)\n"           \
    "  --max-time SECONDS     timed: budget of the timed rounds (8; warm-up and checks come\n"  \
    "                         on top); the rounds end on a whole period, warned when late\n"   \
    "  --min-rounds N         timed: rounds before the precision target may end the run\n"       \
    "                         (20; the budget may end it sooner, on a whole period)\n"           \
    "  --max-rounds N         timed: rounds at most (2000): whole periods of the order, or\n"  \
    "                         fewer, unbalanced and warned, when below one period\n"           \
    "  --instances N          instances of each variant (6; 1 to 16): the rounds go to each in\n" \
    "                         turn and the spread between them is in the interval (two\n"    \
    "                         instances of one variant can differ by 0.6%% for a process)\n"  \
    "  --warmup-time SECONDS  timed: warm-up this long per variant and until stable\n"         \
    "                         (0.25); 1000 calls end it sooner, 20x this time at most\n"        \
    "  --warmup N             fixed: untimed calls per variant first (3)\n"                      \
    "                         (0: none, warned: no call plans the timer; --warmup-time 0\n"  \
    "                         still makes three, whose median plans it, in 1 s at most)\n"      \
    "  --rounds N             fixed: rounds (5; >= 2 for a verdict)\n"                           \
    "  --iterations N         fixed: samples per variant and round (10)\n"                       \
    "  --order O              interleave (default): A,B,A,B.., the first variant\n"              \
    "                         alternating per round (a balanced Latin square for more);\n"       \
    "                         rotate: each variant's samples back to back (the seed's)\n"        \
    "  --noise-threshold PCT  verdict threshold on the speedup in percent (default 1)\n"         \
    "timing:\n"                                                                                    \
    "  --timer T              auto (default): event for calls >= 1 ms, batch below;\n"           \
    "                         event: one call per sample; batch: K back-to-back calls;\n"        \
    "                         graph: K calls captured once into a CUDA graph (only for\n"        \
    "                         variants whose run may be captured); a host variant's\n"          \
    "                         single call is timed by the host's clock, reported as\n"          \
    "                         timer host\n"                                                    \
    "  --batch K              calls per sample for batch and graph (default: a sample\n"         \
    "                         of >= 1 ms of the fastest variant's calls, the same K for\n"     \
    "                         all, but a variant's sample at most 10x the fastest's; hot\n"   \
    "                         cache only); alone, it asks for --timer batch\n"                 \
    "  --cache C              hot (default), or cold (CUDA only): L2 and instruction caches\n"  \
    "                         flushed before each sample (one call per sample, timed by its\n"  \
    "                         kernels' timestamps plus the launch gap of hot calls)\n"
#define SR_CLI_COMPARE_CHECKS_HELP                                                                 \
    "  --accuracy-rows N      query rows checked against exact attention (default: all\n"        \
    "                         up to 4096, else 1024 on a GPU, 256 on the host)\n"                \
    "  --no-accuracy          skip the accuracy check\n"                                         \
    "  --no-clocks            do not read clocks and temperature through NVML\n"
#define SR_CLI_COMPARE_DEVICE_HELP                                                                 \
    "device:\n"                                                                                    \
    "  --backend B            auto (default), host or cuda\n"                                    \
    "  --device K             CUDA device ordinal (default 0)\n"
#define SR_CLI_COMPARE_TIMEOUT_HELP                                                                \
    "  --timeout SECONDS      watchdog per call into a variant (create, prepare, each\n"         \
    "                         warm-up call, each timed sample of K calls): one still\n"          \
    "                         running after it is a hang. Default: 120 s until a\n"             \
    "                         variant's second warm-up call returned, then max(10 s,\n"         \
    "                         20 x K x its slowest call since its first)\n"

/* What the table's options say, with the compare options in the engine's own struct. */
typedef struct sr_cli_compare_settings {
    sagerun_compare_options opts; /* opts.variants points into variants once finished */
    const char **variants;        /* --variant, in order */
    size_t n_variants;
    char **plugins;               /* --plugin, in order */
    int n_plugins;
    sr_cli_plugin_policy policy;
    const char *backend;          /* "auto" (default), "host" or "cuda" */
    uint32_t device;
    double timeout_s;             /* 0: isolate.c's default */
    sagerun_tolerance *tolerance; /* --max-ulp, --min-cos, --max-rel-l1 */
    uint64_t given;               /* bit (opt - SR_OPT_BASELINE) for each option of the table given */
    /* the options as given, in order, for a command that passes them on (sweep) */
    const struct option **given_opts;
    const char **given_args;      /* the value, NULL for a flag */
    size_t n_given;
} sr_cli_compare_settings;

/* Defaults (sagerun_compare_options_init's, backend "auto") and room for argc options; false
 * (after printing why) when out of memory. */
bool sr_cli_compare_settings_init(sr_cli_compare_settings *s, const char *cmd, int argc);
void sr_cli_compare_settings_free(sr_cli_compare_settings *s);

/* Takes one option of the table into s, checking its value: 1 when opt is one of them, 0 when it
 * is not, -1 after printing "sagerun: CMD: OPT 'VALUE': expected ..." */
int sr_cli_compare_option(const char *cmd, sr_cli_compare_settings *s, int opt, const char *arg);

/* Whether option opt of the table was given. */
bool sr_cli_compare_given(const sr_cli_compare_settings *s, int opt);

/* After the options: what they say together. --warmup/--rounds/--iterations without --schedule
 * ask for the fixed schedule; --min-rounds above --max-rounds, an unknown --backend and
 * --min-cos/--max-rel-l1 with --no-accuracy are errors (false after printing why); opts.variants
 * gets the --variant names. */
bool sr_cli_compare_settings_finish(const char *cmd, sr_cli_compare_settings *s);

#endif
