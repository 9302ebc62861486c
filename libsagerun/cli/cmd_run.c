/* sagerun run: one variant on one workload; prints prepare time, run time, output SHA-256. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "one_variant.h"

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
            "  --save-output F        write the output o to the safetensors file F\n"
            "  --warmup N             untimed runs first (default 1)\n"
            "  --iterations N         timed runs (default 5)\n"
            SR_CLI_ONE_VARIANT_HELP
            "exit status: 0 success, 1 error, 2 usage\n");
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sr_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"variant", required_argument, 0, 'v'},
        SR_CLI_WORKLOAD_OPTIONS,
        {"warmup", required_argument, 0, 'w'},  {"iterations", required_argument, 0, 'i'},
        {"plugin", required_argument, 0, 'p'},  {"backend", required_argument, 0, 'b'},
        SR_CLI_PLUGIN_POLICY_OPTIONS,
        {"device", required_argument, 0, 'd'},  {"help", no_argument, 0, 'h'},
        {"save-inputs", required_argument, 0, 'X'}, {"save-output", required_argument, 0, 'Y'},
        {0, 0, 0, 0}};
    char **plugins = calloc((size_t)argc, sizeof *plugins);
    int n_plugins = 0, c;
    uint32_t device = 0, warmup = 1, iterations = 5;
    const char *variant = NULL, *backend = "auto", *save_inputs = NULL, *save_output = NULL;
    sr_cli_workload_options wo = {.seed = SAGERUN_WORKLOAD_DEFAULT_SEED};
    sr_cli_plugin_policy policy = {0};
    int rc = SR_EXIT_USAGE;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'v': variant = optarg; break;
        case 'X': save_inputs = optarg; break;
        case 'Y': save_output = optarg; break;
        case 'w': if (!sr_cli_parse_u32("run", "--warmup", optarg, 0, &warmup)) goto out; break;
        case 'i': if (!sr_cli_parse_u32("run", "--iterations", optarg, 1, &iterations)) goto out; break;
        case 'p': plugins[n_plugins++] = optarg; break;
        case SR_OPT_ALLOW_UNSAFE:
        case SR_OPT_PLUGIN_PIN:
            if (!sr_cli_plugin_policy_option(&policy, c, optarg))
                goto out;
            break;
        case 'b': backend = optarg; break;
        case 'd': if (!sr_cli_parse_u32("run", "--device", optarg, 0, &device)) goto out; break;
        case 'h': run_usage(stdout); rc = SR_EXIT_OK; goto out;
        default: {
            int taken = sr_cli_workload_option("run", &wo, c, optarg);
            if (taken < 0)
                goto out;
            if (!taken) {
                rc = sr_cli_bad_option("run", c, argv);
                goto out;
            }
        }
        }
    }
    if (optind < argc) {
        sr_cli_error("run: unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!variant) {
        sr_cli_error("run: --variant NAME is required (see 'sagerun list')");
        goto out;
    }
    const char *const out_opts[] = {"--save-inputs", "--save-output"};
    const char *const outs[] = {save_inputs, save_output};
    const char *const ins[] = {wo.workload_file, wo.inputs_file};
    if (!sr_cli_check_outputs("run", out_opts, outs, 2, ins, 2)) {
        rc = SR_EXIT_ERROR;
        goto out;
    }
    rc = SR_EXIT_ERROR;
    sagerun_error err = {0};
    double *times = NULL;
    int stdout_saved = -1;
    sr_cli_one_variant v;
    const sr_cli_one_variant_options vo = {
        .cmd = "run", .variant = variant, .backend = backend, .device = (int)device,
        .plugins = plugins, .n_plugins = n_plugins, .policy = &policy, .workload = &wo};
    if (!sr_cli_one_variant_open(&vo, &v))
        goto done;
    sagerun_instance *inst = v.inst;
    if (save_inputs && sagerun_inputs_write_safetensors(v.in, save_inputs, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-inputs: %s", err.message);
        goto done;
    }
    stdout_saved = sr_cli_stdout_to_stderr();
    double prepare_s = 0;
    if (sagerun_instance_prepare(inst, &prepare_s, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        goto done;
    }
    for (uint32_t i = 0; i < warmup; i++)
        if (sagerun_instance_run(inst, NULL, &err) != SAGERUN_OK) {
            sr_cli_error("%s", err.message);
            goto done;
        }
    times = calloc((size_t)iterations, sizeof *times);
    if (!times) {
        sr_cli_error("run: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < iterations; i++)
        if (sagerun_instance_run(inst, &times[i], &err) != SAGERUN_OK) {
            sr_cli_error("%s", err.message);
            goto done;
        }
    qsort(times, (size_t)iterations, sizeof *times, compare_doubles);
    double median = iterations % 2 ? times[iterations / 2]
                                   : 0.5 * (times[iterations / 2 - 1] + times[iterations / 2]);
    char hex[65];
    if (sagerun_instance_output_sha256(inst, hex, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        goto done;
    }
    sr_cli_stdout_back(stdout_saved);
    stdout_saved = -1;
    sr_cli_one_variant_print(&v, variant);
    printf("prepare_s     %.6f\n", prepare_s);
    printf("run_p50_s     %.6f (min %.6f, max %.6f, %u runs)\n", median, times[0],
           times[iterations - 1], iterations);
    printf("output_sha256 %s\n", hex);
    if (save_output && sagerun_instance_write_output(inst, save_output, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-output: %s", err.message);
        goto done;
    }
    rc = SR_EXIT_OK;
done:
    sr_cli_stdout_back(stdout_saved);
    free(times);
    sr_cli_one_variant_close(&v);
out:
    free(plugins);
    return rc;
}
