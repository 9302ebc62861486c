/* An instance's output memory (output.h): whole 2 MiB pages mapped at an address that never
 * changes, and the pages behind it exchanged for another output's in cold rounds. */
#include "output.h"

#include <stdlib.h>

#include "cuda_driver.h"

struct sr_output {
    sagerun_context *ctx;
    uint64_t address;
    uint64_t span;                 /* mapped: the bytes reserved and mapped (whole pages); else 0 */
    CUmemGenericAllocationHandle own; /* mapped: this output's pages */
    CUmemGenericAllocationHandle now; /* mapped: the pages at address now (own, or another's) */
    bool shared;                   /* now is another output's pages */
};

static CUmemAllocationProp device_pages(int device)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
}

/* Maps pages at o's address and makes them readable and writable by the device. */
static CUresult map_pages(const sr_output *o, CUmemGenericAllocationHandle pages)
{
    CUresult r = sr_cu.cuMemMap((CUdeviceptr)o->address, (size_t)o->span, 0, pages, 0);
    if (r != CUDA_SUCCESS)
        return r;
    CUmemAccessDesc access = {0};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = o->ctx->device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = sr_cu.cuMemSetAccess((CUdeviceptr)o->address, (size_t)o->span, &access, 1);
    if (r != CUDA_SUCCESS)
        sr_cu.cuMemUnmap((CUdeviceptr)o->address, (size_t)o->span);
    return r;
}

/* Reserves, creates and maps whole pages for o; false (nothing left behind) where the device or
 * the driver cannot, and the caller falls back to a plain allocation. */
static bool map_own(sr_output *o, uint64_t bytes)
{
    CUdevice dev;
    int vmm = 0;
    size_t granularity = 0;
    CUmemAllocationProp prop = device_pages(o->ctx->device);
    if (sr_cu.cuDeviceGet(&dev, o->ctx->device) != CUDA_SUCCESS ||
        sr_cu.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                   dev) != CUDA_SUCCESS ||
        !vmm ||
        sr_cu.cuMemGetAllocationGranularity(&granularity, &prop,
                                            CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
        granularity == 0 || SR_OUTPUT_PAGE_BYTES % granularity != 0)
        return false;
    o->span = (bytes + SR_OUTPUT_PAGE_BYTES - 1) / SR_OUTPUT_PAGE_BYTES * SR_OUTPUT_PAGE_BYTES;
    CUdeviceptr va = 0;
    if (sr_cu.cuMemCreate(&o->own, (size_t)o->span, &prop, 0) != CUDA_SUCCESS) {
        o->span = 0;
        return false;
    }
    if (sr_cu.cuMemAddressReserve(&va, (size_t)o->span, SR_OUTPUT_PAGE_BYTES, 0, 0) ==
        CUDA_SUCCESS) {
        o->address = (uint64_t)va;
        if (map_pages(o, o->own) == CUDA_SUCCESS) {
            o->now = o->own;
            return true;
        }
        sr_cu.cuMemAddressFree(va, (size_t)o->span);
    }
    sr_cu.cuMemRelease(o->own);
    o->address = o->span = 0;
    return false;
}

sagerun_status sr_output_alloc(sagerun_context *ctx, uint64_t bytes, sr_output **out,
                               sagerun_error *err)
{
    *out = NULL;
    sr_output *o = calloc(1, sizeof *o);
    if (!o)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    o->ctx = ctx;
    uint64_t size = bytes ? bytes : 1;
    bool cuda = sagerun_context_backend(ctx) == SAGERUN_BACKEND_CUDA;
    if (cuda && sr_context_bind(ctx, err) != SAGERUN_OK) {
        free(o);
        return err ? err->status : SAGERUN_CUDA;
    }
    /* SAGERUN_EXP_PLAIN_OUTPUTS: an experiment switch for one H200 run (removed after it) */
    if (!(cuda && !getenv("SAGERUN_EXP_PLAIN_OUTPUTS") && map_own(o, size))) {
        /* whole pages on CUDA still: two instances of one variant write alike-aligned memory */
        uint64_t plain = cuda ? (size + SR_OUTPUT_PAGE_BYTES - 1) / SR_OUTPUT_PAGE_BYTES *
                                    SR_OUTPUT_PAGE_BYTES
                              : size;
        sagerun_status st = sagerun_mem_alloc(ctx, plain, &o->address, err);
        if (st != SAGERUN_OK) {
            free(o);
            return st;
        }
    }
    *out = o;
    return SAGERUN_OK;
}

uint64_t sr_output_address(const sr_output *o)
{
    return o ? o->address : 0;
}

void sr_output_free(sr_output *o)
{
    if (!o)
        return;
    if (!o->span) {
        sagerun_mem_free(o->ctx, o->address);
        free(o);
        return;
    }
    sr_cu.cuCtxSetCurrent((CUcontext)o->ctx->cu_context);
    sagerun_context_synchronize(o->ctx, NULL);
    sr_cu.cuMemUnmap((CUdeviceptr)o->address, (size_t)o->span);
    sr_cu.cuMemAddressFree((CUdeviceptr)o->address, (size_t)o->span);
    sr_cu.cuMemRelease(o->own); /* the pages go once no address maps them any more */
    free(o);
}

bool sr_output_can_share(const sr_output *o, const sr_output *with)
{
    return o && with && o != with && o->span && with->span && o->span == with->span &&
           o->ctx == with->ctx;
}

bool sr_output_is_shared(const sr_output *o)
{
    return o && o->shared;
}

/* Maps pages at o's address in place of what is there now; on failure the old pages go back. A
 * handle another output released stays valid while this mapping holds it (cuMemRelease). */
static sagerun_status remap(sr_output *o, CUmemGenericAllocationHandle next, sagerun_error *err)
{
    sagerun_status st = sagerun_context_synchronize(o->ctx, err);
    if (st != SAGERUN_OK)
        return st;
    CUresult r = sr_cu.cuMemUnmap((CUdeviceptr)o->address, (size_t)o->span);
    if (r != CUDA_SUCCESS)
        return sr_cuda_fail(err, (int)r, "cuMemUnmap (an output's pages)");
    r = map_pages(o, next);
    if (r == CUDA_SUCCESS) {
        o->now = next;
        o->shared = next != o->own;
        return SAGERUN_OK;
    }
    st = sr_cuda_fail(err, (int)r, "cuMemMap (an output's pages)");
    if (map_pages(o, o->now) != CUDA_SUCCESS)
        return sr_error_prefix(err, "an output lost its pages");
    return st;
}

sagerun_status sr_output_share(sr_output *o, const sr_output *with, sagerun_error *err)
{
    if (!sr_output_can_share(o, with))
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "outputs cannot share pages (not mapped, or of different sizes)");
    if (with->shared)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "an output shares the pages of an output that is itself shared");
    return o->now == with->own ? SAGERUN_OK : remap(o, with->own, err);
}

sagerun_status sr_output_unshare(sr_output *o, sagerun_error *err)
{
    if (!o || !o->shared)
        return SAGERUN_OK;
    return remap(o, o->own, err);
}
