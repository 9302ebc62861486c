/* One variant on one workload, set up the way `run` and `profile` need it: the context its
 * backend needs (a host variant runs on the host whatever --backend says; a CUDA variant needs a
 * device), the registry under the plugin policy, the workload, the inputs and the instance. */
#ifndef SAGERUN_CLI_ONE_VARIANT_H
#define SAGERUN_CLI_ONE_VARIANT_H

#include "cli.h"

/* The help of the options sr_cli_one_variant_options carries (run and profile print it). */
#define SR_CLI_ONE_VARIANT_HELP                                                                    \
    "  --plugin PATH          also load this plugin file (.so), Python variant file\n"          \
    "                         (.py) or folder (may repeat); a file that does not load\n"       \
    "                         is an error ('sagerun list' shows why)\n"                          \
    SR_CLI_PLUGIN_POLICY_HELP                                                                      \
    "  --backend B            auto (default), host or cuda; host variants always run\n"         \
    "                         on the host\n"                                                    \
    "  --device K             CUDA device ordinal (default 0)\n"

typedef struct sr_cli_one_variant_options {
    const char *cmd;     /* for messages: "run", "profile" */
    const char *variant; /* NAME or NAME[key=value,...] */
    const char *backend; /* auto, host, cuda */
    int device;
    char **plugins; /* --plugin paths */
    int n_plugins;
    const sr_cli_plugin_policy *policy;
    sr_cli_workload_options *workload; /* on_host is set here */
} sr_cli_one_variant_options;

typedef struct sr_cli_one_variant {
    sagerun_context *ctx, *host_ctx;
    sagerun_context *run_ctx; /* the one the variant runs on: ctx or host_ctx */
    sagerun_registry *reg;
    sagerun_variant_info info;
    sagerun_workload *w;
    sagerun_inputs *in;
    sagerun_instance *inst;
    const sagerun_problem *problem; /* the inputs' */
} sr_cli_one_variant;

/* Sets v up to a created instance (not prepared). The variant's prints during create go to
 * stderr. false after printing why; sr_cli_one_variant_close(v) either way. */
bool sr_cli_one_variant_open(const sr_cli_one_variant_options *o, sr_cli_one_variant *v);
void sr_cli_one_variant_close(sr_cli_one_variant *v);

/* Whether every run so far left the memory after the output alone (sagerun_instance_check_
 * output_end); when not, err's message names the variant and what it did. */
sagerun_status sr_cli_one_variant_output_end(const sr_cli_one_variant *v, sagerun_error *err);

/* The "variant" and "workload" lines that run and profile print first, on out. */
void sr_cli_one_variant_print(const sr_cli_one_variant *v, const char *variant, FILE *out);

#endif
