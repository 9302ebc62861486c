/* sagerun profile: exactly one warmed call of one variant inside a named NVTX range, for ncu and
 * nsys (the library's profiler ranges, sagerun_range_push); prints its time and the SHA-256 of its
 * output. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "one_variant.h"

#define SR_PROFILE_DEFAULT_WARMUP 3
/* 0xFF bytes: NaN in fp16 and bf16, as the engine's checked calls poison (verify.c) */
#define SR_PROFILE_POISON 0xFF

static void profile_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun profile --variant NAME [workload] [options]\n\n"
            "Runs exactly one warmed call of a variant inside an NVTX range named \"profile NAME\",\n"
            "for Nsight Compute (ncu) or Nsight Systems (nsys): create, prepare, --warmup calls,\n"
            "one checked call (the output poisoned with 0xFF first, then hashed), then the\n"
            "profiled call (the output poisoned again, outside the range); prints the profiled\n"
            "call's time and the SHA-256 of its output. NAME is the variant's name without its\n"
            "[parameters]. Each phase is a range too (create, prepare, warm-up, checked call,\n"
            "hashing), and each call of the variant's run a range \"run NAME\" inside it.\n\n"
            "  ncu --nvtx --nvtx-include \"profile NAME/\" -o prof sagerun profile --variant NAME\n"
            "      the kernels of the profiled call only (the trailing / names a push/pop range)\n"
            "  nsys profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture=\"profile NAME\"\n"
            "      --capture-range-end=stop -o prof sagerun profile --variant NAME\n"
            "      a timeline of the profiled call only (its name is a registered string, which\n"
            "      nsys needs to start a capture on)\n\n"
            "Without a tool (NVTX_INJECTION64_PATH, which ncu and nsys set, unset) no NVTX call\n"
            "is made at all; a sagerun built without CUDA has no ranges. On the host backend the\n"
            "call runs and is timed all the same. Under ncu the time includes its replays.\n\n"
            "  --variant NAME         the variant (NAME or NAME[key=value,...]; 'sagerun list')\n"
            SR_CLI_WORKLOAD_HELP
            "options:\n"
            "  --warmup N             calls before the checked call (default %d)\n"
            SR_CLI_ONE_VARIANT_HELP
            "exit status: 0 success, 1 error, 2 usage, 3 the profiled call's output differs\n"
            "from the checked call's (the variant is not deterministic)\n",
            SR_PROFILE_DEFAULT_WARMUP);
}

typedef struct profile_options {
    const char *variant, *backend;
    uint32_t device, warmup;
    char **plugins;
    int n_plugins;
    sr_cli_plugin_policy policy;
    sr_cli_workload_options wo;
} profile_options;

/* SR_EXIT_OK to go on, SR_EXIT_USAGE after printing why, -1 after --help. */
static int parse_options(int argc, char **argv, profile_options *o)
{
    static const struct option opts[] = {
        {"variant", required_argument, 0, 'v'}, SR_CLI_WORKLOAD_OPTIONS,
        {"warmup", required_argument, 0, 'w'},  {"plugin", required_argument, 0, 'p'},
        {"backend", required_argument, 0, 'b'}, SR_CLI_PLUGIN_POLICY_OPTIONS,
        {"device", required_argument, 0, 'd'},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'v': o->variant = optarg; break;
        case 'w': ok = sr_cli_parse_u32("profile", "--warmup", optarg, 0, &o->warmup); break;
        case 'p':
            ok = sr_cli_plugin_path_option("profile", o->plugins, &o->n_plugins, optarg);
            break;
        case 'b': if (!sr_cli_backend_option("profile", optarg)) return SR_EXIT_USAGE; o->backend = optarg; break;
        case 'd': ok = sr_cli_parse_u32("profile", "--device", optarg, 0, &o->device); break;
        case SR_OPT_ALLOW_UNSAFE:
        case SR_OPT_PLUGIN_PIN: ok = sr_cli_plugin_policy_option(&o->policy, c, optarg); break;
        case 'h': profile_usage(stdout); return -1;
        default: {
            int taken = sr_cli_workload_option("profile", &o->wo, c, optarg);
            if (taken == 0)
                return sr_cli_bad_option("profile", c, argv, opts);
            ok = taken > 0;
        }
        }
        if (!ok)
            return SR_EXIT_USAGE;
    }
    if (optind < argc) {
        sr_cli_error("profile: unexpected argument '%s'", argv[optind]);
        return SR_EXIT_USAGE;
    }
    if (!o->variant) {
        sr_cli_error("profile: --variant NAME is required (see 'sagerun list')");
        return SR_EXIT_USAGE;
    }
    if (!sr_cli_workload_options_check("profile", &o->wo))
        return SR_EXIT_USAGE;
    return SR_EXIT_OK;
}

/* The output poisoned, then one call in a range of its own; seconds: the call's (may be NULL). */
static sagerun_status poisoned_call(const sr_cli_one_variant *v, const char *range, bool registered,
                                    double *seconds, sagerun_error *err)
{
    uint64_t bytes, out = sagerun_instance_output(v->inst, &bytes);
    sagerun_status st = sagerun_mem_fill(v->run_ctx, out, SR_PROFILE_POISON, bytes, err);
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(v->run_ctx, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_range_push(range, registered);
    st = sagerun_instance_run(v->inst, seconds, err);
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(v->run_ctx, err); /* the range holds all the call's work */
    sagerun_range_pop();
    return st;
}

static sagerun_status hash_output(const sr_cli_one_variant *v, char hex[65], sagerun_error *err)
{
    sagerun_range_push("hashing", 0);
    sagerun_status st = sr_cli_one_variant_output_end(v, err);
    if (st == SAGERUN_OK)
        st = sagerun_instance_output_sha256(v->inst, hex, err);
    sagerun_range_pop();
    return st;
}

typedef struct profile_result {
    double prepare_s, call_s;
    char checked_sha[65], sha[65];
} profile_result;

/* prepare, warm-up, the checked call, the profiled call: each phase an NVTX range. */
static sagerun_status profile_calls(const sr_cli_one_variant *v, const profile_options *o,
                                    const char *range, profile_result *r, sagerun_error *err)
{
    sagerun_range_push("prepare", 0);
    sagerun_status st = sagerun_instance_prepare(v->inst, &r->prepare_s, err);
    sagerun_range_pop();
    sagerun_range_push("warm-up", 0);
    for (uint32_t i = 0; i < o->warmup && st == SAGERUN_OK; i++)
        st = sagerun_instance_run(v->inst, NULL, err);
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(v->run_ctx, err);
    sagerun_range_pop();
    if (st == SAGERUN_OK)
        st = poisoned_call(v, "checked call", false, NULL, err);
    if (st == SAGERUN_OK)
        st = hash_output(v, r->checked_sha, err);
    if (st == SAGERUN_OK)
        st = poisoned_call(v, range, true, &r->call_s, err);
    if (st == SAGERUN_OK)
        st = hash_output(v, r->sha, err);
    return st;
}

static const char *nvtx_state(void)
{
    switch (sagerun_ranges_state()) {
    case SAGERUN_RANGES_COMPILED_OUT: return "compiled out (built without CUDA)";
    case SAGERUN_RANGES_TOOL: return "a tool is attached";
    default: return "no tool attached, no NVTX calls";
    }
}

static int print_result(const sr_cli_one_variant *v, const profile_options *o, const char *range,
                        const profile_result *r)
{
    sr_cli_one_variant_print(v, o->variant, stdout);
    printf("prepare_s     %.9f\n", r->prepare_s);
    printf("warmup        %u calls, then one checked call\n", o->warmup);
    printf("range         \"%s\" around that one call (NVTX: %s)\n", range, nvtx_state());
    printf("call_s        %.9f\n", r->call_s);
    bool same = strcmp(r->sha, r->checked_sha) == 0;
    printf("output_sha256 %s (%s the checked call's)\n", r->sha, same ? "the same as" : "NOT");
    if (same)
        return SR_EXIT_OK;
    sr_cli_error("profile: the profiled call's output differs from the checked call's (%s): "
                 "variant %s is not deterministic",
                 r->checked_sha, o->variant);
    return SR_EXIT_NOT_BYTE_EXACT;
}

int sr_cmd_profile(int argc, char **argv)
{
    profile_options o = {.backend = "auto", .warmup = SR_PROFILE_DEFAULT_WARMUP,
                         .wo = {.seed = SAGERUN_WORKLOAD_DEFAULT_SEED}};
    o.plugins = calloc((size_t)argc, sizeof *o.plugins);
    int rc = o.plugins ? parse_options(argc, argv, &o) : SR_EXIT_ERROR;
    if (rc != SR_EXIT_OK) {
        free(o.plugins);
        return rc < 0 ? SR_EXIT_OK : rc;
    }
    const sr_cli_one_variant_options vo = {
        .cmd = "profile", .variant = o.variant, .backend = o.backend, .device = (int)o.device,
        .plugins = o.plugins, .n_plugins = o.n_plugins, .policy = &o.policy, .workload = &o.wo};
    char range[160]; /* the longest range name kept (sagerun_range_push) */
    snprintf(range, sizeof range, "profile %.*s", (int)strcspn(o.variant, "["), o.variant);
    sr_cli_one_variant v;
    profile_result r = {0};
    sagerun_error err = {0};
    rc = SR_EXIT_ERROR;
    sagerun_range_push("sagerun profile", 0);
    sagerun_range_push("create (context, plugins, inputs, instance)", 0);
    bool opened = sr_cli_one_variant_open(&vo, &v);
    sagerun_range_pop();
    if (opened) {
        int saved = sr_cli_stdout_to_stderr(); /* the variant's prints go to stderr */
        sagerun_status st = profile_calls(&v, &o, range, &r, &err);
        sr_cli_stdout_back(saved);
        if (st == SAGERUN_OK)
            rc = print_result(&v, &o, range, &r);
        else
            sr_cli_error("%s", err.message);
    }
    sr_cli_one_variant_close(&v);
    sagerun_range_pop();
    free(o.plugins);
    return rc;
}
