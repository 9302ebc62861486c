/* sagerun workload: show the default workload, or check and show a workload file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void workload_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun workload show [FILE | workload options]\n\n"
            "Prints a workload as JSON with every default made explicit: the built-in default\n"
            "(the seed's call: [1, 37810, 56, 128], NHD, fp16, seed 440420, with the seed's\n"
            "metadata), FILE, a workload JSON file or a .safetensors file of q, k, v, or the\n"
            "workload that run's and compare's workload options make (--shape 8,4096,32,128\n"
            "--varlen random:100-4000:1 shows the lengths drawn; without --shape, over the\n"
            "seed's call; 'sagerun run --help' lists them).\n"
            "A file with an error is reported with the file and key; exit status 1. A\n"
            "workload's safetensors input is read too: it must exist and fit the shape.\n\n"
            "Workload file keys: name, shape [B,N,Hq,D] (required), heads_kv,\n"
            "layout (NHD|HND; default NHD, or a safetensors input's own layout),\n"
            "dtype (" SAGERUN_DTYPE_WORDS "),\n"
            "causal (false; true or \"top-left\": the diagonal at the top left, \"bottom-right\":\n"
            "at the bottom right, FlashAttention's), sm_scale,\n"
            "kv_len (keys per sequence; default N), window [L, R] (keys before and after the\n"
            "diagonal, each >= 0 or -1: unbounded), softcap (logits x -> softcap*tanh(x/softcap);\n"
            "0: none), varlen (sequences of their own lengths: [100, 2000, \"1:4096\"], a length\n"
            "where queries = keys, \"Q:K\" otherwise, or \"random:MIN-MAX:SEED\": B lengths drawn\n"
            "from SEED; B and N become the count and the longest; shown as the lengths),\n"
            "page_size (K/V as a paged cache of pages of that many keys); varlen and page_size are\n"
            "NHD only, and kv_len, varlen and page_size need synthetic inputs; each is shown only\n"
            "where it is not the default,\n"
            "input {source: synthetic, seed, q_std, k_std, v_std, k_bias, outlier_channels,\n"
            "outlier_scale | source: safetensors, path}; the synthetic knobs are rounded to\n"
            "multiples of 1/256 (q_std 0.001 is 0),\n"
            "metadata (any object, copied into reports).\n"
            "exit status: 0 success, 1 error, 2 usage\n");
}

/* A workload file's data file (input.source safetensors), read as a run would: it exists and
 * holds the q, k, v the workload's shape and dtype say. false after printing why. */
static bool data_file_fits(const char *file, const sagerun_workload *w)
{
    const char *path = sagerun_workload_input_path(w);
    const sagerun_problem *want = sagerun_workload_problem(w);
    sagerun_workload *in = NULL;
    sagerun_error err = {0};
    if (!path)
        return true;
    if (sagerun_workload_from_safetensors(path, (int)want->layout, &in, &err) != SAGERUN_OK) {
        sr_cli_error("%s: input.path: %s", file, err.message);
        return false;
    }
    const sagerun_problem *got = sagerun_workload_problem(in);
    bool same = got->batch == want->batch && got->seq_len == want->seq_len &&
                got->heads_q == want->heads_q && got->heads_kv == want->heads_kv &&
                got->head_dim == want->head_dim && got->dtype == want->dtype;
    if (!same)
        sr_cli_error("%s: input.path %s holds [%u, %u, %u, %u] (Hkv %u, %s) where the workload says "
                     "[%u, %u, %u, %u] (Hkv %u, %s)", file, path, got->batch, got->seq_len,
                     got->heads_q, got->head_dim, got->heads_kv, sagerun_dtype_name((int)got->dtype),
                     want->batch, want->seq_len, want->heads_q, want->head_dim, want->heads_kv,
                     sagerun_dtype_name((int)want->dtype));
    sagerun_workload_destroy(in);
    return same;
}

/* `workload show`'s arguments: FILE, or the workload options of run and compare (without any,
 * the default). *file and *wo set; false after saying why (a usage error). */
static bool show_arguments(int argc, char **argv, const char **file, sr_cli_workload_options *wo,
                           bool *given)
{
    static const struct option opts[] = {SR_CLI_WORKLOAD_OPTIONS, {0, 0, 0, 0}};
    int c;
    optind = 1;
    *given = false;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        int taken = sr_cli_workload_option("workload show", wo, c, optarg);
        if (taken <= 0) {
            if (!taken)
                sr_cli_bad_option("workload", c, argv, opts);
            return false;
        }
        *given = true;
    }
    *file = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc || (*file && *given)) {
        sr_cli_error("workload: expected 'workload show [FILE]' or 'workload show [workload "
                     "options]' (see 'sagerun help workload')");
        return false;
    }
    return sr_cli_workload_options_check("workload show", wo);
}

int sr_cmd_workload(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* workload --help, workload show --help */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            workload_usage(stdout);
            return SR_EXIT_OK;
        }
    const char *file = NULL;
    sr_cli_workload_options wo = {.seed = SAGERUN_WORKLOAD_DEFAULT_SEED, .quiet = true};
    bool options = false;
    if (argc < 2 || strcmp(argv[1], "show") != 0) {
        sr_cli_error("workload: expected 'workload show [FILE]' (see 'sagerun help workload')");
        return SR_EXIT_USAGE;
    }
    if (!show_arguments(argc - 1, argv + 1, &file, &wo, &options))
        return SR_EXIT_USAGE;
    sagerun_workload *w = NULL;
    sagerun_error err = {0};
    sagerun_status st = file      ? sagerun_workload_load(file, &w, &err)
                        : options ? sr_cli_workload(&wo, &w, &err)
                                  : sagerun_workload_default(&w, &err);
    if (st != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        return SR_EXIT_ERROR;
    }
    if (file && !data_file_fits(file, w)) {
        sagerun_workload_destroy(w);
        return SR_EXIT_ERROR;
    }
    char *text = sagerun_workload_to_json(w, 2);
    int rc = SR_EXIT_OK;
    if (text)
        printf("%s\n", text);
    else {
        sr_cli_error("workload show: the workload cannot be written as JSON (out of memory?)");
        rc = SR_EXIT_ERROR;
    }
    free(text);
    sagerun_workload_destroy(w);
    return rc;
}
