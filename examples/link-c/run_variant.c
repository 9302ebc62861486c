/* Links libsagerun through pkg-config and runs one variant on a small synthetic workload:
 *
 *     cc run_variant.c $(pkg-config --cflags --libs sagerun) -o run_variant
 *     ./run_variant [VARIANT [B,N,H,D]]
 *
 * Prints the variant, its run time and the SHA-256 of its output. Uses the CUDA device when there
 * is one, otherwise the host backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>
#include <sagerun/sagerun.h>

static int fail(const char *what, const sagerun_error *e)
{
    fprintf(stderr, "run_variant: %s: %s (%s)\n", what, e->message,
            sagerun_status_name(e->status));
    return 1;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "reference";
    unsigned b = 1, n = 128, h = 2, d = 64;
    if (argc > 2 && sscanf(argv[2], "%u,%u,%u,%u", &b, &n, &h, &d) != 4) {
        fprintf(stderr, "run_variant: shape '%s' is not B,N,H,D\n", argv[2]);
        return 2;
    }
    printf("libsagerun %s (built against %s)\n", sagerun_version_string(), SAGERUN_VERSION_STRING);

    sagerun_error e = {0};
    sagerun_context *ctx = NULL;
    if (sagerun_context_create(SAGERUN_BACKEND_CUDA, 0, &ctx, &e) != SAGERUN_OK) {
        printf("no GPU (%s): host backend\n", e.message);
        if (sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &e) != SAGERUN_OK)
            return fail("context", &e);
    }
    sagerun_registry *reg = NULL;
    if (sagerun_registry_create(ctx, &reg, &e) || sagerun_registry_add_default_paths(reg, &e))
        return fail("plugins", &e);
    long index = sagerun_registry_find(reg, name);
    if (index < 0) {
        fprintf(stderr, "run_variant: no variant '%s' (%zu found)\n", name,
                sagerun_registry_variant_count(reg));
        return 1;
    }
    sagerun_variant_info info = {.struct_size = sizeof info};
    sagerun_registry_variant_info(reg, (size_t)index, &info, &e);
    sagerun_context *run_ctx = ctx, *host = NULL;
    if (info.backend != sagerun_context_backend(ctx)) {
        if (info.backend == SAGERUN_BACKEND_CUDA) {
            fprintf(stderr, "run_variant: %s needs a GPU\n", name);
            return 1;
        }
        if (sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &host, &e))
            return fail("host context", &e);
        run_ctx = host;
    }
    sagerun_problem problem = sagerun_problem_make(b, n, h, h, d);
    sagerun_inputs *in = NULL;
    sagerun_instance *inst = NULL;
    if (sagerun_inputs_create_synthetic(run_ctx, &problem, 440420, &in, &e))
        return fail("inputs", &e);
    if (sagerun_instance_create(reg, (size_t)index, run_ctx, in, &inst, &e))
        return fail("instance", &e);
    double prepare_s = 0, run_s = 0;
    if (sagerun_instance_prepare(inst, &prepare_s, &e) || sagerun_instance_run(inst, &run_s, &e))
        return fail("run", &e);
    char hex[65];
    if (sagerun_instance_output_sha256(inst, hex, &e))
        return fail("hash", &e);
    printf("variant %s from %s\nshape [%u, %u, %u, %u]\nprepare %.6f s, run %.6f s\n"
           "output sha256 %s\n",
           name, info.path, b, n, h, d, prepare_s, run_s, hex);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(host);
    sagerun_context_destroy(ctx);
    return 0;
}
