/* Shared by the GPU tests: a CUDA context, or a skip with the reason when there is none. */
#ifndef SAGERUN_GPU_TEST_H
#define SAGERUN_GPU_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Build-tree paths are compiled in; the environment overrides them for a tree copied to another
 * machine (the GPU machine): SAGERUN_TEST_PLUGINS, SAGERUN_TEST_FAKES. */
static inline const char *gpu_test_path(const char *env, const char *compiled, const char *file,
                                        char *buf, size_t len)
{
    const char *dir = getenv(env);
    snprintf(buf, len, "%s/%s", dir && *dir ? dir : compiled, file);
    return buf;
}

/* Returns a CUDA context on device 0, or NULL after printing "SKIP: <why>". */
static inline sagerun_context *gpu_test_context(void)
{
    sagerun_context *ctx = NULL;
    sagerun_error e = {0};
    sagerun_status st = sagerun_context_create(SAGERUN_BACKEND_CUDA, 0, &ctx, &e);
    if (st == SAGERUN_NO_DRIVER || st == SAGERUN_NO_DEVICE) {
        printf("SKIP: %s\n", e.message);
        return NULL;
    }
    if (st != SAGERUN_OK) {
        fprintf(stderr, "CUDA context failed: %s\n", e.message);
        return NULL;
    }
    return ctx;
}

#endif
