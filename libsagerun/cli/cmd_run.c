/* sagerun run: one variant on one workload; prints prepare time, run time, output SHA-256. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "one_variant.h"
#include "supervise.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun run --variant NAME [workload] [options]\n\n"
            "Runs one variant: create, prepare (timed apart), warm-up, then the timed runs;\n"
            "prints the median run time and the SHA-256 of the output.\n\n"
            "  --variant NAME         the variant to run (see 'sagerun list')\n"
            SR_CLI_WORKLOAD_HELP
            "options:\n"
            "  --save-inputs F        write q, k, v to the safetensors file F\n"
            "  --save-output F        write the output o to the safetensors file F (for both:\n"
            "                         - is stdout, and what run prints then goes to stderr)\n"
            "  --warmup N             untimed runs first (default 1)\n"
            "  --iterations N         timed runs (default 5)\n"
            "  --timeout SECONDS      kill the run when it has not finished by then, saying\n"
            "                         in which phase (default: no limit)\n"
            "  --in-process           run the variant in this process, not in a watched child:\n"
            "                         for debuggers (gdb follows the parent of a fork) and for\n"
            "                         tools that should see one process; a variant that ends\n"
            "                         the process is then not named (no --timeout)\n"
            SR_CLI_ONE_VARIANT_HELP
            "The variant runs in a child process that sagerun watches (unless --in-process): if\n"
            "it ends the process (exit(), _exit(), a crash), run says so, with the phase, and\n"
            "exits 1.\n\n"
            "exit status: 0 success, 1 error, 2 usage, 129/130/143 interrupted (SIGHUP/SIGINT/\n"
            "SIGTERM)\n");
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The command line of `run`. */
typedef struct run_options {
    char **plugins; /* --plugin paths (argc entries) */
    int n_plugins;
    uint32_t device, warmup, iterations;
    double timeout_s; /* 0: none */
    bool in_process;  /* --in-process: no watched child */
    const char *variant, *backend, *save_inputs, *save_output;
    sr_cli_workload_options wo;
    sr_cli_plugin_policy policy;
} run_options;

/* Returns -1 to go on, else the exit code (--help, a usage error, an output that is an input). */
static int parse_options(int argc, char **argv, run_options *o)
{
    static const struct option opts[] = {
        {"variant", required_argument, 0, 'v'},
        SR_CLI_WORKLOAD_OPTIONS,
        {"warmup", required_argument, 0, 'w'},  {"iterations", required_argument, 0, 'i'},
        {"plugin", required_argument, 0, 'p'},  {"backend", required_argument, 0, 'b'},
        SR_CLI_PLUGIN_POLICY_OPTIONS,
        {"device", required_argument, 0, 'd'},  {"help", no_argument, 0, 'h'},
        {"save-inputs", required_argument, 0, 'X'}, {"save-output", required_argument, 0, 'Y'},
        {"timeout", required_argument, 0, 'T'}, {"in-process", no_argument, 0, 'P'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'v': o->variant = optarg; break;
        case 'X': o->save_inputs = optarg; break;
        case 'Y': o->save_output = optarg; break;
        case 'w': if (!sr_cli_parse_u32("run", "--warmup", optarg, 0, &o->warmup)) return SR_EXIT_USAGE; break;
        case 'i': if (!sr_cli_parse_u32("run", "--iterations", optarg, 1, &o->iterations)) return SR_EXIT_USAGE; break;
        case 'T':
            if (!sr_cli_parse_decimal("run", "--timeout", optarg, 0, false, 1e6, &o->timeout_s))
                return SR_EXIT_USAGE;
            break;
        case 'P': o->in_process = true; break;
        case 'p':
            if (!sr_cli_plugin_path_option("run", o->plugins, &o->n_plugins, optarg))
                return SR_EXIT_USAGE;
            break;
        case SR_OPT_ALLOW_UNSAFE:
        case SR_OPT_PLUGIN_PIN:
            if (!sr_cli_plugin_policy_option(&o->policy, c, optarg))
                return SR_EXIT_USAGE;
            break;
        case 'b': if (!sr_cli_backend_option("run", optarg)) return SR_EXIT_USAGE; o->backend = optarg; break;
        case 'd': if (!sr_cli_parse_u32("run", "--device", optarg, 0, &o->device)) return SR_EXIT_USAGE; break;
        case 'h': run_usage(stdout); return SR_EXIT_OK;
        default: {
            int taken = sr_cli_workload_option("run", &o->wo, c, optarg);
            if (taken < 0)
                return SR_EXIT_USAGE;
            if (!taken)
                return sr_cli_bad_option("run", c, argv, opts);
        }
        }
    }
    if (optind < argc) {
        sr_cli_error("run: unexpected argument '%s'", argv[optind]);
        return SR_EXIT_USAGE;
    }
    if (!o->variant) {
        sr_cli_error("run: --variant NAME is required (see 'sagerun list')");
        return SR_EXIT_USAGE;
    }
    if (o->in_process && o->timeout_s > 0) {
        sr_cli_error("run: --timeout needs the watched child, which --in-process leaves out");
        return SR_EXIT_USAGE;
    }
    if (!sr_cli_workload_options_check("run", &o->wo))
        return SR_EXIT_USAGE;
    const char *const out_opts[] = {"--save-inputs", "--save-output"};
    const char *const outs[] = {o->save_inputs, o->save_output};
    int rc = sr_cli_check_run_outputs("run", out_opts, outs, 2, &o->wo, o->plugins, o->n_plugins);
    return rc != SR_EXIT_OK ? rc : -1;
}

/* Run times of a prepared instance: warmup runs untimed, then iterations timed ones, sorted. */
static bool time_runs(sagerun_instance *inst, uint32_t warmup, uint32_t iterations,
                      double *times)
{
    sagerun_error err = {0};
    for (uint32_t i = 0; i < warmup + iterations; i++)
        if (sagerun_instance_run(inst, i < warmup ? NULL : &times[i - warmup], &err) !=
            SAGERUN_OK) {
            sr_cli_error("%s", err.message);
            return false;
        }
    qsort(times, (size_t)iterations, sizeof *times, compare_doubles);
    return true;
}

/* The inputs' tensors a variant reads and must not write (plugin.h), hashed before its first
 * call and after its last: `run` printed the hash of an output computed on inputs the variant
 * had changed, exit 0 (compare's input guard catches it; run had none). */
static const char *const input_tensors[] = {"q", "k", "v", "cu_seqlens_q", "cu_seqlens_kv",
                                            "block_table", "k_mean"};
typedef struct input_hashes {
    char hex[SR_ARRAY_LEN(input_tensors)][65]; /* "" where the inputs have no such tensor */
} input_hashes;

static bool hash_inputs(const sagerun_inputs *in, input_hashes *h)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(input_tensors); i++) {
        sagerun_error err = {0};
        sagerun_status st = sagerun_inputs_sha256(in, input_tensors[i], h->hex[i], &err);
        if (st == SAGERUN_NOT_FOUND)
            h->hex[i][0] = '\0';
        else if (st != SAGERUN_OK) {
            sr_cli_error("run: hashing the inputs: %s", err.message);
            return false;
        }
    }
    return true;
}

/* Whether the inputs are as before holds; else says which tensor the variant wrote. */
static bool inputs_unchanged(const sagerun_inputs *in, const input_hashes *before,
                             const char *variant)
{
    input_hashes after;
    if (!hash_inputs(in, &after))
        return false;
    for (size_t i = 0; i < SR_ARRAY_LEN(input_tensors); i++)
        if (strcmp(before->hex[i], after.hex[i]) != 0) {
            sr_cli_error("run: variant '%s' wrote into its inputs (%s), which are read-only "
                         "(plugin.h): its output was computed on changed inputs", variant,
                         input_tensors[i]);
            return false;
        }
    return true;
}

/* Prepares and times the opened variant, prints what `run` prints and saves what was asked. */
static int run_variant(const run_options *o, sr_cli_one_variant *v)
{
    sagerun_error err = {0};
    sagerun_instance *inst = v->inst;
    if (o->save_inputs &&
        sagerun_inputs_write_safetensors(v->in, o->save_inputs, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-inputs: %s", err.message);
        return SR_EXIT_ERROR;
    }
    double *times = calloc((size_t)o->iterations, sizeof *times);
    if (!times) {
        sr_cli_error("run: out of memory");
        return SR_EXIT_ERROR;
    }
    int stdout_saved = sr_cli_stdout_to_stderr(); /* what the plugin prints is not our output */
    double prepare_s = 0;
    char hex[65];
    input_hashes inputs;
    bool ok = hash_inputs(v->in, &inputs);
    sr_cli_supervise_phase("prepare");
    if (ok && sagerun_instance_prepare(inst, &prepare_s, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        ok = false;
    }
    sr_cli_supervise_phase("runs");
    ok = ok && time_runs(inst, o->warmup, o->iterations, times); /* says its own error */
    sr_cli_supervise_phase("output");
    ok = ok && inputs_unchanged(v->in, &inputs, o->variant);
    if (ok && sr_cli_one_variant_output_end(v, &err) != SAGERUN_OK) {
        sr_cli_error("run: %s", err.message);
        ok = false;
    }
    if (ok && sagerun_instance_output_sha256(inst, hex, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        ok = false;
    }
    sr_cli_stdout_back(stdout_saved);
    if (ok) { /* on stderr where a file written is stdout (--save-output -) */
        const char *const outs[] = {o->save_inputs, o->save_output};
        FILE *out = sr_cli_table_out(outs, 2);
        uint32_t n = o->iterations;
        double median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
        sr_cli_one_variant_print(v, o->variant, out);
        fprintf(out, "prepare_s     %.9f\n", prepare_s);
        fprintf(out, "run_p50_s     %.9f (min %.9f, max %.9f, %u runs)\n", median, times[0],
                times[n - 1], n);
        fprintf(out, "output_sha256 %s\n", hex);
        fflush(out);
    }
    free(times);
    if (ok && o->save_output &&
        sagerun_instance_write_output(inst, o->save_output, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-output: %s", err.message);
        ok = false;
    }
    return ok ? SR_EXIT_OK : SR_EXIT_ERROR;
}

/* The variant opened, run and closed: what the supervised child does (supervise.h). */
static int open_and_run(void *arg)
{
    run_options *o = arg;
    sr_cli_one_variant v;
    const sr_cli_one_variant_options vo = {
        .cmd = "run", .variant = o->variant, .backend = o->backend, .device = (int)o->device,
        .plugins = o->plugins, .n_plugins = o->n_plugins, .policy = &o->policy,
        .workload = &o->wo};
    sr_cli_supervise_phase("loading");
    const char *const out_opts[] = {"--save-inputs", "--save-output"};
    const char *const outs[] = {o->save_inputs, o->save_output};
    int rc = sr_cli_one_variant_open(&vo, &v) &&
                     sr_cli_check_outputs_spare_plugins("run", out_opts, outs, 2, v.reg)
                 ? run_variant(o, &v)
                 : SR_EXIT_ERROR;
    sr_cli_supervise_phase("destroy");
    sr_cli_one_variant_close(&v);
    return rc;
}

/* A variant that ends the process (exit, _exit, a crash) is named, not taken for success: the
 * work runs in a child that this process watches (supervise.c). */
int sr_cmd_run(int argc, char **argv)
{
    run_options o = {.plugins = calloc((size_t)argc, sizeof(char *)),
                     .warmup = 1,
                     .iterations = 5,
                     .backend = "auto",
                     .wo = {.seed = SAGERUN_WORKLOAD_DEFAULT_SEED}};
    if (!o.plugins) {
        sr_cli_error("run: out of memory");
        return SR_EXIT_ERROR;
    }
    int rc = parse_options(argc, argv, &o);
    if (rc < 0)
        rc = o.in_process ? open_and_run(&o)
                          : sr_cli_supervised("run", o.variant, o.timeout_s, open_and_run, &o);
    free(o.plugins);
    return rc;
}
