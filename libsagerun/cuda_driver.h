/* The CUDA driver, loaded lazily: one table of every entry point libsagerun uses. Only files that
 * talk to the driver include this header (it pulls in cuda.h for the types). */
#ifndef SAGERUN_CUDA_DRIVER_H
#define SAGERUN_CUDA_DRIVER_H

#ifdef SAGERUN_NO_CUDA
#include "cuda_stub.h" /* built without the CUDA toolkit: the driver is never loaded */
#else
#include <cuda.h>
#endif

#include "internal.h"

/* X(name, cuda_version): the entry point and the CUDA version whose ABI of it we call. The type of
 * each pointer is cuda.h's prototype of that name (cuda.h maps names to their _v2 forms where the
 * ABI changed, which is the form the requested version returns). */
#define SR_CUDA_ENTRY_POINTS(X)                                                                    \
    X(cuInit, 12000)                                                                               \
    X(cuDriverGetVersion, 12000)                                                                   \
    X(cuGetErrorName, 12000)                                                                       \
    X(cuGetErrorString, 12000)                                                                     \
    X(cuDeviceGetCount, 12000)                                                                     \
    X(cuDeviceGet, 12000)                                                                          \
    X(cuDeviceGetName, 12000)                                                                      \
    X(cuDeviceGetAttribute, 12000)                                                                 \
    X(cuDeviceTotalMem, 12000)                                                                     \
    X(cuDevicePrimaryCtxRetain, 12000)                                                             \
    X(cuDevicePrimaryCtxRelease, 12000)                                                            \
    X(cuCtxSetCurrent, 12000)                                                                      \
    X(cuStreamCreate, 12000)                                                                       \
    X(cuStreamDestroy, 12000)                                                                      \
    X(cuStreamSynchronize, 12000)                                                                  \
    X(cuMemAlloc, 12000)                                                                           \
    X(cuMemFree, 12000)                                                                            \
    X(cuMemGetInfo, 12000)                                                                         \
    X(cuMemAllocHost, 12000)                                                                       \
    X(cuMemFreeHost, 12000)                                                                        \
    X(cuMemHostGetDevicePointer, 12000)                                                            \
    X(cuStreamBeginCapture, 12000)                                                                 \
    X(cuStreamEndCapture, 12000)                                                                   \
    X(cuGraphInstantiateWithFlags, 12000)                                                          \
    X(cuGraphLaunch, 12000)                                                                        \
    X(cuGraphDestroy, 12000)                                                                       \
    X(cuGraphExecDestroy, 12000)                                                                   \
    X(cuMemcpyHtoDAsync, 12000)                                                                    \
    X(cuMemcpyDtoHAsync, 12000)                                                                    \
    X(cuMemcpyDtoDAsync, 12000)                                                                    \
    X(cuMemsetD8Async, 12000)                                                                      \
    X(cuModuleLoadData, 12000)                                                                     \
    X(cuModuleUnload, 12000)                                                                       \
    X(cuModuleGetFunction, 12000)                                                                  \
    X(cuFuncSetAttribute, 12000)                                                                   \
    X(cuLaunchKernel, 12000)                                                                       \
    X(cuEventCreate, 12000)                                                                        \
    X(cuEventDestroy, 12000)                                                                       \
    X(cuEventRecord, 12000)                                                                        \
    X(cuEventSynchronize, 12000)                                                                   \
    X(cuEventElapsedTime, 12080)

typedef struct sr_cuda_api {
#define SR_CUDA_POINTER_(name, version) __typeof__(&name) name;
    SR_CUDA_ENTRY_POINTS(SR_CUDA_POINTER_)
#undef SR_CUDA_POINTER_
} sr_cuda_api;

/* The loaded table; valid after sr_cuda_load() returned SAGERUN_OK. */
extern sr_cuda_api sr_cu;

/* Runs a driver call; on failure fills err with "<call text>: <CUDA_ERROR_NAME> (...)" and makes
 * the enclosing function return SAGERUN_CUDA. */
#define SR_CU_CHECK(err, call)                                                                     \
    do {                                                                                           \
        CUresult sr_cu_result_ = (call);                                                           \
        if (sr_cu_result_ != CUDA_SUCCESS)                                                         \
            return sr_cuda_fail((err), (int)sr_cu_result_, #call);                                 \
    } while (0)

#endif
