/* The sagerun command-line tool: shared pieces of its commands. The CLI is a client of
 * libsagerun.so like any other program: it includes the public headers only (the Makefile does
 * not put libsagerun/ on its include path) and links nothing of the library but the .so. */
#ifndef SAGERUN_CLI_H
#define SAGERUN_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sagerun/compare.h"
#include "sagerun/plugin.h"
#include "sagerun/sagerun.h"
#include "sagerun/workload.h"

#define SR_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Exit codes of every command (documented in `sagerun --help` and README). */
enum {
    SR_EXIT_OK = 0,
    SR_EXIT_ERROR = 1,          /* something failed: input, plugin, device, I/O */
    SR_EXIT_USAGE = 2,          /* bad command line */
    SR_EXIT_NOT_BYTE_EXACT = 3, /* compare: ran, but a variant's output differs from the reference;
                                 * profile: the profiled call's differs from the checked call's */
    SR_EXIT_REGRESSION = 4,     /* diff: a regression beyond the threshold or lost byte-exactness */
    SR_EXIT_GATE = 5,           /* compare: --fail-if-slower / --require-faster not met */
    /* compare, run, sweep: interrupted by a signal, 128 + its number as shells report it; the
     * reports written hold the rounds finished ("complete": false) */
    SR_EXIT_SIGHUP = 129,
    SR_EXIT_SIGINT = 130,
    SR_EXIT_SIGTERM = 143
};

/* Between a watched child and its parent only (compare's and run's): the child found its pipe to
 * the parent closed under it (a variant closing descriptors it did not open), and ends so that
 * the parent can name that, not an exit of the plugin's. Never a command's exit code. */
#define SR_CHILD_EXIT_PIPE_CLOSED 119

/* Commands: argv[0] is the command name; each returns an exit code. */
int sr_cmd_list(int argc, char **argv);
int sr_cmd_run(int argc, char **argv);
int sr_cmd_workload(int argc, char **argv);
int sr_cmd_compare(int argc, char **argv);
int sr_cmd_show(int argc, char **argv);
int sr_cmd_diff(int argc, char **argv);
int sr_cmd_plot(int argc, char **argv);
int sr_cmd_sweep(int argc, char **argv);
int sr_cmd_merge(int argc, char **argv);
int sr_cmd_profile(int argc, char **argv);

/* "sagerun: <message>" on stderr. */
void sr_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "SIGSEGV (Segmentation fault)", or "signal N" for one without a name. */
void sr_cli_describe_signal(int sig, char *buf, size_t len);
/* Sets err (when not NULL) to status and a formatted message; returns status. */
sagerun_status sr_cli_error_set(sagerun_error *err, sagerun_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes err->message with "PREFIX: " (a file, an option); returns err->status. */
sagerun_status sr_cli_error_prefix(sagerun_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What getopt_long returned for a bad option (main sets opterr = 0; every optstring starts with
 * ':'), said in one line: "sagerun: CMD: unknown option '--x' (see 'sagerun help CMD')", or
 * "missing value for option", "option takes no value" ('--causal=false'), "ambiguous option"
 * ('--in': --inputs, --in-process), from the command's table opts. Returns SR_EXIT_USAGE. */
struct option;
int sr_cli_bad_option(const char *cmd, int c, char **argv, const struct option *opts);

/* The context for --backend auto|host|cuda and --device: auto takes the CUDA device when there is
 * one and otherwise the host backend, saying so on stderr. */
sagerun_status sr_cli_context(const char *backend, int device, bool quiet, sagerun_context **out,
                              sagerun_error *err);

/* Plugin loading policy, the same options in every command that loads plugins:
 *   --allow-unsafe-plugins            load plugin files/folders writable by others too
 *   --expect-plugin-sha256 NAME=HEX   refuse to run unless variant NAME's file has this SHA-256 */
enum { SR_OPT_ALLOW_UNSAFE = 900, SR_OPT_PLUGIN_PIN };
#define SR_CLI_PLUGIN_POLICY_OPTIONS                                                               \
    {"allow-unsafe-plugins", no_argument, 0, SR_OPT_ALLOW_UNSAFE},                                 \
        {"expect-plugin-sha256", required_argument, 0, SR_OPT_PLUGIN_PIN}
#define SR_CLI_PLUGIN_POLICY_HELP                                                                  \
    "  --allow-unsafe-plugins  also load plugins that users other than their owner can write\n"   \
    "  --expect-plugin-sha256 NAME=HEX\n"                                                          \
    "                          fail unless variant NAME was loaded from a file with this\n"       \
    "                          SHA-256 (repeatable; see 'sagerun list' for the hashes)\n"
#define SR_CLI_MAX_PINS 64
typedef struct sr_cli_plugin_policy {
    bool allow_unsafe;
    bool show_rejected; /* list: a --plugin file that is rejected is shown, not an error */
    const char *pins[SR_CLI_MAX_PINS]; /* "NAME=HEX" */
    int n_pins;
} sr_cli_plugin_policy;

/* --backend's value: auto, host or cuda; false after printing why (a usage error). */
bool sr_cli_backend_option(const char *cmd, const char *text);

/* Takes one of the policy options; false (after printing why) on a bad argument. */
bool sr_cli_plugin_policy_option(sr_cli_plugin_policy *policy, int opt, const char *arg);
/* Takes a --plugin path into paths[*n] (room for argc entries); false (after printing why) for an
 * empty one, a usage error. */
bool sr_cli_plugin_path_option(const char *cmd, char **paths, int *n, char *arg);

/* A registry with the explicit --plugin files/folders, then the default search path, under the
 * policy (NULL: the defaults); pinned hashes are checked once everything is loaded. */
sagerun_status sr_cli_registry(sagerun_context *ctx, char **plugin_paths, int n_plugin_paths,
                               const sr_cli_plugin_policy *policy, sagerun_registry **out,
                               sagerun_error *err);
/* Binds every spec NAME[key=value,...] among names to its registry entry (bad keys and values are
 * errors naming them), so that sagerun_registry_find finds it. */
sagerun_status sr_cli_bind_specs(sagerun_registry *reg, const char *const *names, size_t n,
                                 sagerun_error *err);

/* Checks every output before any work is done: each can be written now (sagerun_output_check:
 * "-" is stdout, never a device, FIFO or folder, the folder exists), none is one of the inputs,
 * no two are the same file. opts[i] names outs[i] in messages; NULL entries are skipped. Returns
 * SR_EXIT_OK, else after printing why SR_EXIT_USAGE for what is no path (empty, or an option
 * taken as the file: --json --quiet) and SR_EXIT_ERROR for a path that cannot be written. */
int sr_cli_check_outputs(const char *cmd, const char *const *opts, const char *const *outs,
                         size_t n_out, const char *const *inputs, size_t n_in);
/* Checks, once the plugins are found, that no output is a file of the registry: a variant's plugin
 * or extension module, a rejected plugin file (found through SAGERUN_PLUGIN_PATH or the default
 * folder, not only --plugin). false after printing which. */
bool sr_cli_check_outputs_spare_plugins(const char *cmd, const char *const *opts,
                                        const char *const *outs, size_t n_out,
                                        const sagerun_registry *reg);
/* Where a command's table goes: stdout, or stderr when one of its outputs is "-" or the file
 * stdout already is (/dev/stdout, the file stdout was redirected to): stdout is then that file's
 * alone, for a pipe: `--json - | jq`. NULL entries are skipped. */
FILE *sr_cli_table_out(const char *const *outs, size_t n);
/* While a variant's code runs its prints go to stderr: stdout is the results'. Returns the saved
 * stdout for sr_cli_stdout_back, -1 when nothing was diverted (then back does nothing). */
int sr_cli_stdout_to_stderr(void);
void sr_cli_stdout_back(int saved);

/* True when both paths name one existing file or folder (links followed), or, where neither exists
 * yet, the same name in the same folder (./a, a, d/../a). */
bool sr_cli_same_file(const char *a, const char *b);

/* An output written through stdio: write fills f (false on failure), the bytes go to path as
 * sagerun_file_write writes them (- is stdout; otherwise replaced atomically). */
sagerun_status sr_cli_write_file(const char *path, bool (*write)(FILE *f, const void *user),
                                 const void *user, sagerun_error *err);

/* A JSON input file (read as sagerun_file_read reads: never blocking, regular files only, at most
 * 64 MiB), parsed with jansson's flags. NULL when it cannot be read (jerr->line -1, position 0,
 * the reason in jerr->text) or is not JSON (jerr says where). */
json_t *sr_cli_json_load(const char *path, size_t flags, json_error_t *jerr);

/* A stream over out that writes control characters (but newlines) as \xNN: for report text
 * shown on a terminal (escape.c). Close with sr_cli_escaping_close; false on a write error. */
FILE *sr_cli_escaping_stream(FILE *out);
bool sr_cli_escaping_close(FILE *f, FILE *out);
/* A plugin's or a file's string as one line can show it (sagerun_text_escape): valid until
 * eight more calls; "?" when memory runs out (escape.c). */
const char *sr_cli_text(const char *s);
/* s as a JSON string: itself where it is UTF-8 (json_string), else as sagerun_text_escape writes
 * it (a byte of no UTF-8 character as \xNN: a file path of other bytes was lost, or taken for
 * "out of memory"); NULL for NULL or when memory runs out (escape.c). */
json_t *sr_cli_json_text(const char *s);

/* What a speedup in percent (baseline / variant - 1) means as a factor, as the library's reports
 * write it beside the percentage: "1.25× faster", "10.06× slower"; "-" for none (common.c). */
void sr_cli_speedup_times(double percent, char *buf, size_t len);

/* Parses an integer option value in [min, 100000000]; false after printing
 * "sagerun: CMD: OPT 'TEXT': expected an integer from MIN to 100000000". */
bool sr_cli_parse_u32(const char *cmd, const char *opt, const char *text, unsigned long min,
                      uint32_t *out);

/* Parses a plain decimal number ("5", "0.25": no sign, exponent, hex, spaces) in (min, max]
 * or [min, max]; false after printing "sagerun: CMD: OPT 'TEXT': expected ...". */
bool sr_cli_parse_decimal(const char *cmd, const char *opt, const char *text, double min,
                          bool min_inclusive, double max, double *out);

/* Parses "B,N,H,D" or "B,N,Hq,Hkv,D" into problem (defaults for the rest). */
bool sr_cli_parse_shape(const char *text, sagerun_problem *problem);

/* The workload that the options of run and compare name, in one place:
 *   --workload FILE (JSON or .safetensors), --inputs FILE.safetensors, or --shape S (synthetic
 *   with --seed), else the default: the seed's call on a GPU, and on the host backend a small
 *   synthetic workload [1, 256, 2, 128], said on stderr unless quiet.
 * layout ("nhd"/"hnd") applies to --shape and --inputs. seed applies to --shape and the default. */
typedef struct sr_cli_workload_options {
    const char *workload_file;
    const char *inputs_file;
    const char *shape;
    const char *layout;  /* "nhd" / "hnd", or NULL: NHD (files: their own) */
    const char *dtype;   /* a word of sagerun_dtype_parse for --shape and the default, or NULL: fp16 */
    bool causal;         /* for --shape, --inputs and the default */
    int align;           /* --causal=top-left|bottom-right or --align: a sagerun_mask_align */
    bool align_given;    /* --align or --causal=ALIGN named it */
    /* ABI 0.2's problem (as given, checked when taken): --window and --softcap, like --causal,
     * for --shape, --inputs and the default; --kv-len, --varlen, --page-size for --shape and the
     * default only. kv_len and page_size 0: not given. */
    uint32_t kv_len;
    const char *window;  /* "L,R" */
    const char *softcap;
    const char *varlen;  /* the varlen SPEC (sagerun/workload.h) */
    uint32_t page_size;
    unsigned long long seed;
    bool seed_given;
    bool on_host;
    bool quiet;
} sr_cli_workload_options;

/* The workload options together (--workload, --inputs and --shape exclude each other; --dtype,
 * --causal, --seed, --layout where they apply): a usage error, said, when false. */
bool sr_cli_workload_options_check(const char *cmd, const sr_cli_workload_options *o);
/* sr_cli_check_outputs for a command that measures: its inputs are the --workload or --inputs
 * file, the data file a workload file names, and the --plugin files. */
int sr_cli_check_run_outputs(const char *cmd, const char *const *opts, const char *const *outs,
                             size_t n_out, const sr_cli_workload_options *wo,
                             char *const *plugins, int n_plugins);

/* The workload options, the same in run and compare: one option table, one help text, one
 * parser. */
enum { SR_OPT_WORKLOAD = 920, SR_OPT_INPUTS, SR_OPT_SHAPE, SR_OPT_LAYOUT, SR_OPT_DTYPE,
       SR_OPT_CAUSAL, SR_OPT_SEED, SR_OPT_KV_LEN, SR_OPT_WINDOW, SR_OPT_SOFTCAP, SR_OPT_VARLEN,
       SR_OPT_PAGE_SIZE, SR_OPT_ALIGN };
#define SR_CLI_WORKLOAD_OPTIONS                                                                    \
    {"workload", required_argument, 0, SR_OPT_WORKLOAD},                                           \
        {"inputs", required_argument, 0, SR_OPT_INPUTS},                                           \
        {"shape", required_argument, 0, SR_OPT_SHAPE},                                             \
        {"layout", required_argument, 0, SR_OPT_LAYOUT},                                           \
        {"dtype", required_argument, 0, SR_OPT_DTYPE},                                             \
        {"causal", optional_argument, 0, SR_OPT_CAUSAL},                                           \
        {"seed", required_argument, 0, SR_OPT_SEED},                                               \
        {"kv-len", required_argument, 0, SR_OPT_KV_LEN},                                           \
        {"window", required_argument, 0, SR_OPT_WINDOW},                                           \
        {"softcap", required_argument, 0, SR_OPT_SOFTCAP},                                         \
        {"varlen", required_argument, 0, SR_OPT_VARLEN},                                           \
        {"page-size", required_argument, 0, SR_OPT_PAGE_SIZE},                                     \
        {"align", required_argument, 0, SR_OPT_ALIGN}
#define SR_CLI_WORKLOAD_HELP                                                                       \
    "workload (one of; default: the seed's 1,37810,56,128 on a GPU, 1,256,2,128 on the host):\n" \
    "  --workload FILE        a workload JSON file (see 'sagerun workload --help')\n"            \
    "  --inputs FILE          q, k, v from a .safetensors file\n"                                \
    "  --shape S              synthetic inputs of shape B,N,H,D or B,N,Hq,Hkv,D\n"              \
    "  --layout L             nhd (default) or hnd, for --shape, and for --inputs whose\n"       \
    "                         file names none (a file that names the other is refused)\n"      \
    "  --dtype T              fp16 (default; also f16, float16, half) or bf16 (also\n"          \
    "                         bfloat16), for --shape and the default workload\n"                \
    "  --causal[=ALIGN]       causal attention, its diagonal top-left (plain --causal) or\n"   \
    "                         bottom-right (the last query sees every key: FlashAttention's)\n" \
    "                         (for --shape, --inputs and the default; a file saved from a\n"  \
    "                         causal run is causal without it)\n"                             \
    "  --seed S               generator seed (default 440420)\n"                              \
    "  --window L,R           a sliding window: L keys before the diagonal, R after, each\n"  \
    "                         >= 0 or -1 (unbounded; with --causal R is 0 or -1); aligned\n"  \
    "                         as --causal or --align says (for --shape, --inputs and the\n"   \
    "                         default)\n"                                                      \
    "  --align A              top-left (default) or bottom-right: where the diagonal of\n"     \
    "                         --window (and --causal) sits when kv_len != q_len\n"            \
    "  --softcap X            logits x become X*tanh(x/X) before the softmax (0: none; for\n" \
    "                         --shape, --inputs and the default)\n"                           \
    "  --kv-len K             K keys per sequence, N queries (for --shape and the default)\n" \
    "  --varlen SPEC          sequences of their own lengths, packed [tokens, H, D]: 100,2000\n" \
    "                         (queries = keys), Q:K pairs 1:4096,16:8192, or\n"               \
    "                         random:MIN-MAX:SEED (B lengths drawn from SEED); B and N\n"     \
    "                         become the count and the longest (NHD; not with --kv-len)\n"    \
    "  --page-size P          K and V as a paged cache of pages of P keys, the block table\n" \
    "                         shuffled from the seed (NHD)\n"                                 \
    "                         (--varlen and --page-size: for --shape and the default)\n"
/* Takes one of the workload options into o, checking its value: 1 when opt is one of them, 0
 * when it is not, -1 after printing "sagerun: CMD: OPT 'VALUE': expected ..." */
int sr_cli_workload_option(const char *cmd, sr_cli_workload_options *o, int opt, const char *arg);

sagerun_status sr_cli_workload(const sr_cli_workload_options *o, sagerun_workload **out,
                               sagerun_error *err);

#endif
