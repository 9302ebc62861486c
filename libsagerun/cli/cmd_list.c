/* sagerun list: the variants found and the files rejected. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void list_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun list [--plugin FILE|DIR]... [--backend auto|host|cuda] [--device K]\n"
            "                    [--allow-unsafe-plugins] [--expect-plugin-sha256 NAME=HEX]\n\n"
            "Lists every variant found (name, version, backend, minimum compute capability,\n"
            "plugin file and its SHA-256; for a Python variant its .py file and the extension\n"
            "module it declares; what it does: the problem features, dtypes and head dims it\n"
            "declares), then every plugin file that was rejected and why.\n"
            "With a CUDA device, variants that need a newer GPU are rejected.\n\n"
            "  --plugin PATH   also load this plugin file (.so), Python variant file (.py)\n"
            "                  or folder (first; may repeat)\n"
            "  --backend B     auto (default: CUDA if present), host or cuda\n"
            "  --device K      CUDA device ordinal (default 0)\n" SR_CLI_PLUGIN_POLICY_HELP
            "\nexit status: 0 listed (rejected files are listed too), 1 error (no device, a\n"
            "--plugin that cannot be read), 2 usage\n");
}

/* "params tile int 64 [16, 128]: rows per CTA", one line per declared parameter. */
static void print_params(const sagerun_registry *reg, size_t index, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        sagerun_variant_param p = {.struct_size = sizeof p};
        if (sagerun_registry_variant_param(reg, index, k, &p, NULL) != SAGERUN_OK)
            continue;
        char def[64], lo[64], hi[64];
        sagerun_param_format(p.type, p.default_value, def, sizeof def);
        sagerun_param_format(p.type, p.min_value, lo, sizeof lo);
        sagerun_param_format(p.type, p.max_value, hi, sizeof hi);
        printf("  %-20s param %s %s = %s [%s, %s]: %s\n", "", sr_cli_text(p.key),
               sagerun_param_type_name(p.type), def, lo, hi, sr_cli_text(p.description));
    }
}

/* "does: kv_len != q_len, sliding window, dtypes fp16 bf16, head_dim 64 128": the problem
 * features, dtypes and head dims the variant declares (plugin ABI 1.2). */
static void print_capabilities(const sagerun_variant_info *vi)
{
    printf("  %-20s does: ", "");
    if (!vi->features)
        printf("the 1.1 problem only (q_len = kv_len, dense)");
    const char *sep = "";
    for (uint32_t bit = 1; bit; bit <<= 1)
        if (vi->features & bit) {
            printf("%s%s", sep, sagerun_feature_name(bit));
            sep = ", ";
        }
    printf(", dtypes");
    for (int d = 0; d < 32; d++)
        if (vi->dtypes & (1u << d)) {
            const char *word = sagerun_dtype_word(d);
            word = word ? word : sagerun_dtype_name(d);
            printf(" %s", word ? word : "?");
        }
    printf(", head_dim");
    for (uint32_t k = 0; k < vi->n_head_dims && vi->head_dims; k++)
        printf(" %u", vi->head_dims[k]);
    printf("%s\n", vi->n_head_dims ? "" : " any");
}

/* One variant: name, version, backend, minimum sm, description, files, flags, parameters (the
 * plugin's texts and the file names shown escaped: they are not sagerun's). */
static void print_variant(sagerun_registry *reg, size_t i)
{
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    sagerun_registry_variant_info(reg, i, &vi, NULL);
    char cc[16] = "-";
    if (vi.backend == SAGERUN_BACKEND_CUDA)
        snprintf(cc, sizeof cc, "sm_%d", vi.min_compute_capability);
    printf("  %-20s %-8s %-5s %-6s %s\n", sr_cli_text(vi.name), sr_cli_text(vi.version),
           sagerun_backend_name(vi.backend), cc, sr_cli_text(vi.description));
    printf("  %-20s path %s\n  %-20s sha256 %s\n", "", sr_cli_text(vi.path), "", vi.sha256);
    if (vi.extension_path)
        printf("  %-20s extension %s\n  %-20s sha256 %s\n", "", sr_cli_text(vi.extension_path), "",
               vi.extension_sha256);
    print_capabilities(&vi);
    if (vi.flags & SAGERUN_VARIANT_GRAPH_CAPTURABLE)
        printf("  %-20s flags graph-capturable\n", "");
    print_params(reg, i, vi.n_params);
}

static void print_registry(const sagerun_context *ctx, sagerun_registry *reg)
{
    printf("variants (%zu):\n", sagerun_registry_variant_count(reg));
    for (size_t i = 0; i < sagerun_registry_variant_count(reg); i++)
        print_variant(reg, i);
    size_t nr = sagerun_registry_rejection_count(reg);
    printf("rejected (%zu):\n", nr);
    for (size_t i = 0; i < nr; i++) {
        sagerun_rejection r = {.struct_size = sizeof r};
        sagerun_registry_rejection(reg, i, &r, NULL);
        printf("  %s\n    %s\n", sr_cli_text(r.path), r.reason); /* the reason is escaped */
    }
    const char *cache = sagerun_registry_cache_path(reg);
    printf("plugin scan cache: %s\n", cache ? cache : "none (SAGERUN_CACHE_DIR is empty, or the folder is unsafe)");
    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST)
        printf("(no CUDA device: CUDA variants are listed but can only run on a GPU machine)\n");
}

typedef struct list_options {
    char **plugins; /* --plugin paths (argc entries) */
    int n_plugins, device;
    const char *backend;
    sr_cli_plugin_policy policy;
} list_options;

/* Returns -1 to go on, else the exit code (--help, a usage error). */
static int parse_options(int argc, char **argv, list_options *o)
{
    static const struct option opts[] = {{"plugin", required_argument, 0, 'p'},
                                         SR_CLI_PLUGIN_POLICY_OPTIONS,
                                         {"backend", required_argument, 0, 'b'},
                                         {"device", required_argument, 0, 'd'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!sr_cli_plugin_path_option("list", o->plugins, &o->n_plugins, optarg))
                return SR_EXIT_USAGE;
            break;
        case SR_OPT_ALLOW_UNSAFE:
        case SR_OPT_PLUGIN_PIN:
            if (!sr_cli_plugin_policy_option(&o->policy, c, optarg))
                return SR_EXIT_USAGE;
            break;
        case 'b': if (!sr_cli_backend_option("list", optarg)) return SR_EXIT_USAGE; o->backend = optarg; break;
        case 'd': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v > 1024) {
                sr_cli_error("list: --device '%s': expected a device ordinal (0, 1, ...)", optarg);
                return SR_EXIT_USAGE;
            }
            o->device = (int)v;
            break;
        }
        case 'h': list_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("list", c, argv, opts);
        }
    }
    if (optind < argc) {
        sr_cli_error("list: unexpected argument '%s'", argv[optind]);
        return SR_EXIT_USAGE;
    }
    return -1;
}

int sr_cmd_list(int argc, char **argv)
{
    list_options o = {.plugins = calloc((size_t)argc, sizeof(char *)), .backend = "auto",
                      .policy = {.show_rejected = true}};
    if (!o.plugins) {
        sr_cli_error("list: out of memory");
        return SR_EXIT_ERROR;
    }
    int rc = parse_options(argc, argv, &o);
    if (rc < 0) {
        sagerun_error err = {0};
        sagerun_context *ctx = NULL;
        sagerun_registry *reg = NULL;
        rc = SR_EXIT_OK;
        if (sr_cli_context(o.backend, o.device, true, &ctx, &err) != SAGERUN_OK ||
            sr_cli_registry(ctx, o.plugins, o.n_plugins, &o.policy, &reg, &err) != SAGERUN_OK) {
            sr_cli_error("%s", err.message);
            rc = SR_EXIT_ERROR;
        } else {
            print_registry(ctx, reg);
        }
        sagerun_registry_destroy(reg);
        sagerun_context_destroy(ctx);
    }
    free(o.plugins);
    return rc;
}
