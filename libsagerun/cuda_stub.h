/* The part of cuda.h that libsagerun's driver code names, for a build without the CUDA toolkit
 * (SAGERUN_NO_CUDA: no nvcc, so no GPU code and no cuda.h). Such a build never loads the driver
 * (sr_cuda_load says it was built without CUDA), so these declarations only let the code compile;
 * they follow cuda.h (CUDA 13.0) all the same. */
#ifndef SAGERUN_CUDA_STUB_H
#define SAGERUN_CUDA_STUB_H

#include <stddef.h>
#include <stdint.h>

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NO_DEVICE = 100
} CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef enum CUdriverProcAddressQueryResult_enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1
} CUdriverProcAddressQueryResult;
enum { CU_GET_PROC_ADDRESS_DEFAULT = 0 };
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };
enum { CU_STREAM_NON_BLOCKING = 1 };
typedef enum CUstreamCaptureMode_enum { CU_STREAM_CAPTURE_MODE_RELAXED = 2 } CUstreamCaptureMode;
typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
} CUfunction_attribute;
typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
} CUdevice_attribute;

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuGetErrorName(CUresult error, const char **name);
CUresult cuGetErrorString(CUresult error, const char **text);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuStreamCreate(CUstream *stream, unsigned int flags);
CUresult cuStreamDestroy(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemGetInfo(size_t *free_bytes, size_t *total_bytes);
CUresult cuMemAllocHost(void **p, size_t bytes);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostGetDevicePointer(CUdeviceptr *dptr, void *p, unsigned int flags);
CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuGraphDestroy(CUgraph graph);
CUresult cuGraphExecDestroy(CUgraphExec exec);
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name);
CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attrib, int value);
CUresult cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        CUstream stream, void **params, void **extra);
CUresult cuEventCreate(CUevent *event, unsigned int flags);
CUresult cuEventDestroy(CUevent event);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);

#endif
