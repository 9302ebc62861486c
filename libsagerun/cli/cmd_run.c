/* sagerun run: one variant on one workload; prints prepare time, run time, output SHA-256. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "one_variant.h"
#include "safe_io.h"
#include "safetensors.h"

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
            "  --plugin PATH          also load this plugin file (.so), Python variant file\n"
            "                         (.py) or folder (may repeat)\n"
            SR_CLI_PLUGIN_POLICY_HELP
            "  --backend B            auto (default), host or cuda; host variants always run\n"
            "                         on the host\n"
            "  --device K             CUDA device ordinal (default 0)\n"
            "exit status: 0 success, 1 error, 2 usage\n");
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Writes q, k, v (inst NULL) or the output o (inst given) to a safetensors file. */
static sagerun_status save_tensors(const char *path, sagerun_context *ctx,
                                   const sagerun_problem *p, const sagerun_inputs *in,
                                   sagerun_instance *inst, sagerun_error *err)
{
    const bool hnd = p->layout == SAGERUN_LAYOUT_HND;
    sr_st_write_tensor t[3];
    memset(t, 0, sizeof t);
    const char *names[3] = {"q", "k", "v"};
    const uint32_t heads[3] = {p->heads_q, p->heads_kv, p->heads_kv};
    const uint64_t addr[3] = {in->q, in->k, in->v};
    size_t count = inst ? 1 : 3;
    for (size_t i = 0; i < count; i++) {
        t[i].name = inst ? "o" : names[i];
        t[i].dtype = (int)p->dtype;
        t[i].rank = 4;
        t[i].shape[0] = p->batch;
        t[i].shape[1] = hnd ? heads[i] : p->seq_len;
        t[i].shape[2] = hnd ? p->seq_len : heads[i];
        t[i].shape[3] = p->head_dim;
        t[i].ctx = ctx;
        t[i].addr = inst ? sagerun_instance_output(inst, NULL) : addr[i];
    }
    json_t *meta = json_pack("{s:s}", "layout", hnd ? "HND" : "NHD");
    sagerun_status st = sr_safetensors_write(path, t, count, meta, err);
    json_decref(meta);
    return st;
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
    sr_cli_workload_options wo = {.seed = SR_WORKLOAD_DEFAULT_SEED};
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
    sagerun_context *run_ctx = v.run_ctx;
    sagerun_inputs *in = v.in;
    sagerun_instance *inst = v.inst;
    const sagerun_problem *problem = v.problem;
    if (save_inputs && save_tensors(save_inputs, run_ctx, problem, in, NULL, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-inputs: %s", err.message);
        goto done;
    }
    stdout_saved = sr_stdout_divert();
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
    sr_stdout_restore(stdout_saved);
    stdout_saved = -1;
    sr_cli_one_variant_print(&v, variant);
    printf("prepare_s     %.6f\n", prepare_s);
    printf("run_p50_s     %.6f (min %.6f, max %.6f, %u runs)\n", median, times[0],
           times[iterations - 1], iterations);
    printf("output_sha256 %s\n", hex);
    if (save_output && save_tensors(save_output, run_ctx, problem, in, inst, &err) != SAGERUN_OK) {
        sr_cli_error("run: --save-output: %s", err.message);
        goto done;
    }
    rc = SR_EXIT_OK;
done:
    sr_stdout_restore(stdout_saved);
    free(times);
    sr_cli_one_variant_close(&v);
out:
    free(plugins);
    return rc;
}
