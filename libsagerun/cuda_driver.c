/* Lazy loading of the CUDA driver: dlopen libcuda.so.1, then resolve every entry point of the
 * table through cuGetProcAddress with an explicit CUDA version. Nothing links libcuda or cudart. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

sr_cuda_api sr_cu;

typedef CUresult (*sr_get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static sagerun_error load_error; /* the outcome of the one load, replayed to every caller */

static const char *driver_library_name(void)
{
    /* Test-only override, so tests can point the loader at a missing library. */
    const char *override = secure_getenv("SAGERUN_TEST_CUDA_LIBRARY");
    return (override && *override) ? override : "libcuda.so.1";
}

static void load_driver(void)
{
#ifdef SAGERUN_NO_CUDA
    /* No GPU code in this build (no kernels of the library's own), so no driver either. */
    sr_error_set(&load_error, SAGERUN_NO_DRIVER,
                 "this sagerun was built without CUDA (no nvcc at build time): the CUDA backend "
                 "is unavailable, only the host backend runs");
    return;
#endif
    const char *lib = driver_library_name();
    void *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        sr_error_set(&load_error, SAGERUN_NO_DRIVER, "no NVIDIA driver found (%s): %s", lib,
                     why ? why : "dlopen failed");
        return;
    }
    sr_get_proc_v2_fn get_proc = (sr_get_proc_v2_fn)dlsym(handle, "cuGetProcAddress_v2");
    if (!get_proc) {
        sr_error_set(&load_error, SAGERUN_NO_DRIVER,
                     "NVIDIA driver %s is too old: no entry point [cuGetProcAddress_v2] "
                     "(a CUDA 12 or newer driver is needed)",
                     lib);
        return;
    }
#define SR_CUDA_RESOLVE_(name, version)                                                            \
    {                                                                                              \
        void *fn = NULL;                                                                           \
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;               \
        CUresult r = get_proc(#name, &fn, (version), CU_GET_PROC_ADDRESS_DEFAULT, &found);         \
        if (r != CUDA_SUCCESS || !fn || found != CU_GET_PROC_ADDRESS_SUCCESS) {                    \
            sr_error_set(&load_error, SAGERUN_NO_DRIVER,                                           \
                         "NVIDIA driver %s lacks entry point [%s] for CUDA %d.%d (error %d, "      \
                         "query result %d): update the driver",                                    \
                         lib, #name, (version) / 1000, (version) % 1000 / 10, (int)r, (int)found); \
            return;                                                                                \
        }                                                                                          \
        memcpy(&sr_cu.name, &fn, sizeof fn);                                                       \
    }
    SR_CUDA_ENTRY_POINTS(SR_CUDA_RESOLVE_)
#undef SR_CUDA_RESOLVE_
    CUresult r = sr_cu.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        sr_error_set(&load_error, SAGERUN_NO_DEVICE, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
        return;
    }
    if (r != CUDA_SUCCESS) {
        sr_cuda_fail(&load_error, (int)r, "cuInit(0)");
        return;
    }
    /* The handle is deliberately never closed: the driver stays loaded for the process. */
    load_error.status = SAGERUN_OK;
    load_error.message[0] = '\0';
}

sagerun_status sr_cuda_load(sagerun_error *err)
{
    pthread_once(&load_once, load_driver);
    if (load_error.status != SAGERUN_OK && err)
        *err = load_error;
    return (sagerun_status)load_error.status;
}

sagerun_status sr_cuda_fail(sagerun_error *err, int cu_result, const char *what)
{
    const char *name = NULL, *text = NULL;
    if (sr_cu.cuGetErrorName)
        sr_cu.cuGetErrorName((CUresult)cu_result, &name);
    if (sr_cu.cuGetErrorString)
        sr_cu.cuGetErrorString((CUresult)cu_result, &text);
    if (cu_result == CUDA_ERROR_NO_DEVICE)
        return sr_error_set(err, SAGERUN_NO_DEVICE, "no CUDA device (%s: CUDA_ERROR_NO_DEVICE)",
                            what);
    if (cu_result == CUDA_ERROR_OUT_OF_MEMORY)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: CUDA_ERROR_OUT_OF_MEMORY (%s)", what,
                            text ? text : "out of memory");
    if (name)
        return sr_error_set(err, SAGERUN_CUDA, "%s: %s (%s)", what, name, text ? text : "");
    return sr_error_set(err, SAGERUN_CUDA, "%s: CUDA error %d", what, cu_result);
}
