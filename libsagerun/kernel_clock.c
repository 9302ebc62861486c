/* Kernel timestamps through CUPTI's activity API (kernel_clock.h). */
#include "kernel_clock.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SAGERUN_NO_CUDA
/* A build without the CUDA toolkit (Makefile: no nvcc) has no CUPTI header and no GPU to time. */
bool sr_kernel_clock_open(char *why, size_t why_len)
{
    snprintf(why, why_len, "sagerun was built without CUDA: no CUPTI");
    return false;
}

double sr_kernel_clock_take(uint32_t *kernels)
{
    if (kernels)
        *kernels = 0;
    return 0.0;
}

void sr_kernel_clock_close(void) {}
#else

#include <cupti_activity.h>

#define SR_CUPTI_BUFFER (1u << 20)

static struct {
    void *lib;
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    pthread_mutex_t lock;
    uint64_t ns;
    uint32_t kernels;
} cupti = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, SR_CUPTI_BUFFER);
    *size = *buffer ? SR_CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *record = NULL;
    pthread_mutex_lock(&cupti.lock);
    while (valid && cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)record;
        if (k->name && strncmp(k->name, "sr_timer_", 9) == 0)
            continue; /* the hold, the flushes, the clock probe */
        cupti.ns += k->end > k->start ? k->end - k->start : 0;
        cupti.kernels++;
    }
    pthread_mutex_unlock(&cupti.lock);
    free(buffer);
}

static void *open_library(void)
{
    const char *env = getenv("SAGERUN_CUPTI_LIBRARY");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    /* the loader's path, then the toolkit: lib64 (targets/<arch>/lib) and the older extras/ */
    const char *home = getenv("CUDA_HOME");
    home = home && *home ? home : "/usr/local/cuda";
    char lib64[512], extras[512];
    snprintf(lib64, sizeof lib64, "%s/lib64/libcupti.so.13", home);
    snprintf(extras, sizeof extras, "%s/extras/CUPTI/lib64/libcupti.so", home);
    const char *names[] = {"libcupti.so.13", "libcupti.so", lib64, extras, NULL};
    for (size_t i = 0; names[i]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
    }
    return NULL;
}

bool sr_kernel_clock_open(char *why, size_t why_len)
{
    if (cupti.lib)
        return true;
    void *lib = open_library();
    if (!lib) {
        snprintf(why, why_len, "CUPTI not loaded (libcupti.so; set SAGERUN_CUPTI_LIBRARY)");
        return false;
    }
    *(void **)&cupti.register_callbacks = dlsym(lib, "cuptiActivityRegisterCallbacks");
    *(void **)&cupti.enable = dlsym(lib, "cuptiActivityEnable");
    *(void **)&cupti.disable = dlsym(lib, "cuptiActivityDisable");
    *(void **)&cupti.flush_all = dlsym(lib, "cuptiActivityFlushAll");
    *(void **)&cupti.next_record = dlsym(lib, "cuptiActivityGetNextRecord");
    if (!cupti.register_callbacks || !cupti.enable || !cupti.disable || !cupti.flush_all ||
        !cupti.next_record ||
        cupti.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        snprintf(why, why_len, "CUPTI's activity API could not be started");
        dlclose(lib);
        return false;
    }
    cupti.lib = lib;
    sr_kernel_clock_take(NULL); /* forget what ran before */
    return true;
}

double sr_kernel_clock_take(uint32_t *kernels)
{
    if (!cupti.lib)
        return 0;
    cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&cupti.lock);
    double s = (double)cupti.ns * 1e-9;
    if (kernels)
        *kernels = cupti.kernels;
    cupti.ns = 0;
    cupti.kernels = 0;
    pthread_mutex_unlock(&cupti.lock);
    return s;
}

void sr_kernel_clock_close(void)
{
    if (!cupti.lib)
        return;
    cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* the library stays loaded: CUPTI may still deliver a buffer */
    cupti.lib = NULL;
}

#endif /* SAGERUN_NO_CUDA */
