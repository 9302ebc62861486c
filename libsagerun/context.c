/* Contexts: the host backend and CUDA devices (primary context, one stream), their memory, the
 * host-services table handed to plugins. (Timing is timer.c, hashing hash.c.) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cuda_driver.h"
#include "library_images.h"

struct sr_module_entry {
    CUmodule module;
    uint64_t image_bytes, image_hash; /* a fatbin's size and FNV-1a hash; 0: not shareable */
    sr_module_entry *next;
};

/* A fatbin's identity, from its header (magic, version, header size, payload size) and bytes;
 * false for other images (cubin, PTX), which are never shared. */
static bool fatbin_identity(const void *image, uint64_t *bytes, uint64_t *hash)
{
    const unsigned char *p = image;
    uint32_t magic;
    uint16_t header;
    uint64_t payload;
    memcpy(&magic, p, 4);
    memcpy(&header, p + 6, 2);
    memcpy(&payload, p + 8, 8);
    if (magic != 0xBA55ED50u || header < 16 || payload > (1ull << 32))
        return false;
    *bytes = header + payload;
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < *bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    *hash = h;
    return true;
}

/* ---- time ---- */
double sr_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- host services (the vtable of plugin.h), bound to one context ---- */
_Thread_local const char *sr_plugin_calling;

/* One line on stderr naming the variant that logs; its text shown, not obeyed (escaped as
 * sagerun_text_escape does: a line break or a terminal control cannot forge sagerun's lines). */
static void service_log(void *host, int level, const char *fmt, ...)
{
    (void)host;
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *verbose = getenv("SAGERUN_DEBUG");
    if (level >= SAGERUN_LOG_INFO && !(verbose && *verbose))
        return;
    char *text = NULL, *shown = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    shown = text ? sagerun_text_escape(text, 0) : NULL;
    char name[96];
    sr_text_copy(name, sizeof name, sr_plugin_calling ? sr_plugin_calling : "(another thread)");
    fprintf(stderr, "sagerun: plugin %s: %s: %s\n", name,
            level >= 0 && level <= SAGERUN_LOG_DEBUG ? names[level] : "log",
            shown ? shown : "(out of memory)");
    free(shown);
    free(text);
}

static int service_backend(void *host) { return ((sagerun_context *)host)->backend; }

static int service_compute_capability(void *host)
{
    return ((sagerun_context *)host)->compute_capability;
}

static int copy_error(const sagerun_error *e, char *err, size_t errlen)
{
    return sr_errbuf_set(err, errlen, e->status, "%s", e->message);
}

static int service_module_load(void *host, const void *image, sagerun_module **module, char *err,
                               size_t errlen)
{
    sagerun_context *ctx = host;
    sagerun_error e = {0};
    if (ctx->backend != SAGERUN_BACKEND_CUDA)
        return sr_errbuf_set(err, errlen, SAGERUN_UNSUPPORTED,
                             "module_load: the context is on the host backend, not CUDA");
    if (!image || !module)
        return sr_errbuf_set(err, errlen, SAGERUN_INVALID_ARGUMENT, "module_load: NULL argument");
    if (sr_context_bind(ctx, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    /* Instances of one variant share its module (modules live as long as the context): two
     * instances then run the same code at the same addresses, so an A/A compares like with like. */
    uint64_t bytes = 0, hash = 0;
    bool shareable = fatbin_identity(image, &bytes, &hash);
    for (sr_module_entry *m = ctx->modules; shareable && m; m = m->next)
        if (m->image_bytes == bytes && m->image_hash == hash) {
            *module = (sagerun_module *)m->module;
            return SAGERUN_OK;
        }
    sr_module_entry *entry = calloc(1, sizeof *entry);
    if (!entry)
        return sr_errbuf_set(err, errlen, SAGERUN_OUT_OF_MEMORY, "module_load: out of memory");
    CUresult r = sr_cu.cuModuleLoadData(&entry->module, image);
    if (r != CUDA_SUCCESS) {
        free(entry);
        sr_cuda_fail(&e, (int)r, "cuModuleLoadData (plugin GPU image)");
        return copy_error(&e, err, errlen);
    }
    entry->image_bytes = shareable ? bytes : 0;
    entry->image_hash = shareable ? hash : 0;
    entry->next = ctx->modules;
    ctx->modules = entry;
    *module = (sagerun_module *)entry->module;
    return SAGERUN_OK;
}

static int service_module_get_function(void *host, sagerun_module *module, const char *name,
                                       sagerun_function **fn, char *err, size_t errlen)
{
    sagerun_context *ctx = host;
    sagerun_error e = {0};
    if (!module || !name || !fn)
        return sr_errbuf_set(err, errlen, SAGERUN_INVALID_ARGUMENT,
                             "module_get_function: NULL argument");
    if (sr_context_bind(ctx, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    CUfunction f;
    CUresult r = sr_cu.cuModuleGetFunction(&f, (CUmodule)module, name);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuModuleGetFunction [%s]", name);
        sr_cuda_fail(&e, (int)r, what);
        return copy_error(&e, err, errlen);
    }
    *fn = (sagerun_function *)f;
    return SAGERUN_OK;
}

static int service_function_set_max_dynamic_smem(void *host, sagerun_function *fn, uint32_t bytes,
                                                 char *err, size_t errlen)
{
    sagerun_context *ctx = host;
    sagerun_error e = {0};
    if (sr_context_bind(ctx, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    CUresult r = sr_cu.cuFuncSetAttribute((CUfunction)fn,
                                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)bytes);
    if (r != CUDA_SUCCESS) {
        sr_cuda_fail(&e, (int)r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        return copy_error(&e, err, errlen);
    }
    return SAGERUN_OK;
}

static int service_launch(void *host, sagerun_function *fn, const uint32_t grid[3],
                          const uint32_t block[3], uint32_t smem, void **params, char *err,
                          size_t errlen)
{
    sagerun_context *ctx = host;
    sagerun_error e = {0};
    if (ctx->backend != SAGERUN_BACKEND_CUDA)
        return sr_errbuf_set(err, errlen, SAGERUN_UNSUPPORTED,
                             "launch: the context is on the host backend, not CUDA");
    if (sr_context_bind(ctx, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    CUresult r = sr_cu.cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0],
                                      block[1], block[2], smem, (CUstream)ctx->cu_stream, params,
                                      NULL);
    if (r != CUDA_SUCCESS) {
        sr_cuda_fail(&e, (int)r, "cuLaunchKernel");
        return copy_error(&e, err, errlen);
    }
    return SAGERUN_OK;
}

static int service_mem_alloc(void *host, uint64_t bytes, uint64_t *addr, char *err, size_t errlen)
{
    sagerun_context *ctx = host;
    sagerun_error e = {0};
    if (sagerun_mem_alloc(ctx, bytes, addr, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    if (!sr_plugin_memory_add(ctx->plugin_memory, *addr, bytes)) {
        sagerun_mem_free(ctx, *addr);
        *addr = 0;
        return sr_errbuf_set(err, errlen, SAGERUN_OUT_OF_MEMORY, "mem_alloc: out of host memory");
    }
    return SAGERUN_OK;
}

/* A variant frees only what it allocated: anything else (Q, K, V, the shared sage2 tensors) is
 * left alone, and said. */
static void service_mem_free(void *host, uint64_t addr)
{
    sagerun_context *ctx = host;
    if (!addr)
        return;
    if (sr_plugin_memory_remove(ctx->plugin_memory, addr)) {
        sagerun_mem_free(ctx, addr);
        return;
    }
    service_log(host, SAGERUN_LOG_ERROR,
                "mem_free(0x%llx): not a block this variant allocated with mem_alloc; left alone "
                "(plugin.h section 3: the inputs and outputs are the host's)",
                (unsigned long long)addr);
}

static int service_mem_fill(void *host, uint64_t addr, uint8_t byte, uint64_t bytes, char *err,
                            size_t errlen)
{
    sagerun_context *ctx = host;
    if (bytes && !sr_plugin_memory_holds(ctx->plugin_memory, addr, bytes))
        return sr_errbuf_set(err, errlen, SAGERUN_INVALID_ARGUMENT,
                             "mem_fill(0x%llx, %llu bytes): not within a block of the variant's "
                             "(its mem_alloc blocks, its output): the inputs are the host's",
                             (unsigned long long)addr, (unsigned long long)bytes);
    sagerun_error e = {0};
    if (sagerun_mem_fill(ctx, addr, byte, bytes, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    return SAGERUN_OK;
}

static void *service_cuda_stream(void *host)
{
    return ((sagerun_context *)host)->cu_stream;
}

static void *service_cuda_context(void *host)
{
    return ((sagerun_context *)host)->cu_context;
}

static void init_services(sagerun_context *ctx)
{
    ctx->plugin_memory = sr_plugin_memory_create();
    sagerun_host_services *s = &ctx->services;
    s->struct_size = sizeof *s;
    s->abi_minor = SAGERUN_PLUGIN_ABI_MINOR;
    s->host = ctx;
    s->log = service_log;
    s->backend = service_backend;
    s->compute_capability = service_compute_capability;
    s->module_load = service_module_load;
    s->module_get_function = service_module_get_function;
    s->function_set_max_dynamic_smem = service_function_set_max_dynamic_smem;
    s->launch = service_launch;
    s->mem_alloc = service_mem_alloc;
    s->mem_free = service_mem_free;
    s->mem_fill = service_mem_fill;
    s->sage2_quantize = sr_sage2_service_quantize;
    s->sage2_tensors_free = sr_sage2_service_tensors_free;
    s->cuda_stream = service_cuda_stream;
    s->cuda_context = service_cuda_context;
    s->get_extension = sr_extension_get;
}

/* What plugins learn about the device (plugin.h sagerun_plugin_device), read once. */
static sagerun_status read_device_info(sagerun_context *ctx, CUdevice dev, sagerun_error *err)
{
    static const struct { CUdevice_attribute attr; size_t offset; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(sagerun_plugin_device, sm_count)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
         offsetof(sagerun_plugin_device, shared_memory_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         offsetof(sagerun_plugin_device, shared_memory_per_block_optin)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
         offsetof(sagerun_plugin_device, shared_memory_per_sm)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(sagerun_plugin_device, l2_bytes)}};
    sagerun_plugin_device *d = &ctx->plugin_device;
    for (size_t i = 0; i < SR_ARRAY_LEN(attrs); i++) {
        int v = 0;
        SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(&v, attrs[i].attr, dev));
        uint32_t u = v > 0 ? (uint32_t)v : 0;
        memcpy((char *)d + attrs[i].offset, &u, sizeof u);
    }
    SR_CU_CHECK(err, sr_cu.cuDeviceGetName(d->name, (int)sizeof d->name, dev));
    d->name[sizeof d->name - 1] = '\0';
    d->compute_capability = ctx->compute_capability;
    return SAGERUN_OK;
}

/* ---- contexts ---- */
bool sr_context_pci_bus_id(const sagerun_context *ctx, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    CUdevice dev;
    int domain = 0, bus = 0, device = 0;
    if (!ctx || ctx->backend != SAGERUN_BACKEND_CUDA || len == 0 ||
        sr_cu.cuDeviceGet(&dev, ctx->device) != CUDA_SUCCESS ||
        sr_cu.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) != CUDA_SUCCESS ||
        sr_cu.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) != CUDA_SUCCESS ||
        sr_cu.cuDeviceGetAttribute(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) != CUDA_SUCCESS)
        return false;
    snprintf(buf, len, "%08X:%02X:%02X.0", (unsigned)domain, (unsigned)bus, (unsigned)device);
    return true;
}

const char *sagerun_backend_name(int backend)
{
    switch (backend) {
    case SAGERUN_BACKEND_HOST:
        return "host";
    case SAGERUN_BACKEND_CUDA:
        return "cuda";
    }
    return NULL;
}

static sagerun_status open_cuda_device(sagerun_context *ctx, int device, sagerun_error *err)
{
    sagerun_status st = sr_cuda_load(err);
    if (st != SAGERUN_OK)
        return st;
    int count = 0;
    SR_CU_CHECK(err, sr_cu.cuDeviceGetCount(&count));
    if (count == 0)
        return sr_error_set(err, SAGERUN_NO_DEVICE, "no CUDA device (the driver reports none)");
    if (device < 0 || device >= count)
        return sr_error_set(err, SAGERUN_NO_DEVICE,
                            "no CUDA device %d (the driver reports %d device%s: 0..%d)", device,
                            count, count == 1 ? "" : "s", count - 1);
    CUdevice dev;
    SR_CU_CHECK(err, sr_cu.cuDeviceGet(&dev, device));
    int major = 0, minor = 0;
    SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(
                         &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(
                         &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CUcontext cu_ctx;
    SR_CU_CHECK(err, sr_cu.cuDevicePrimaryCtxRetain(&cu_ctx, dev));
    ctx->cu_context = cu_ctx;
    ctx->device = device;
    ctx->compute_capability = major * 10 + minor;
    st = read_device_info(ctx, dev, err);
    if (st != SAGERUN_OK)
        return st;
    SR_CU_CHECK(err, sr_cu.cuCtxSetCurrent(cu_ctx));
    CUstream stream;
    SR_CU_CHECK(err, sr_cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    ctx->cu_stream = stream;
    return SAGERUN_OK;
}

sagerun_status sagerun_context_create(int backend, int device, sagerun_context **out,
                                      sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "sagerun_context_create: out is NULL");
    *out = NULL;
    if (backend != SAGERUN_BACKEND_HOST && backend != SAGERUN_BACKEND_CUDA)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "unknown backend %d", backend);
    if (sodium_init() < 0)
        return sr_error_set(err, SAGERUN_INTERNAL, "libsodium failed to initialise");
    sagerun_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory creating a context");
    ctx->backend = backend;
    ctx->plugin_device.struct_size = sizeof ctx->plugin_device;
    ctx->plugin_device.backend = backend;
    init_services(ctx);
    if (backend == SAGERUN_BACKEND_CUDA) {
        sagerun_status st = open_cuda_device(ctx, device, err);
        if (st != SAGERUN_OK) {
            sagerun_context_destroy(ctx);
            return st;
        }
    }
    *out = ctx;
    return SAGERUN_OK;
}

void sagerun_context_destroy(sagerun_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->backend == SAGERUN_BACKEND_CUDA && ctx->cu_context) {
        sr_cu.cuCtxSetCurrent((CUcontext)ctx->cu_context);
        if (ctx->cu_stream) {
            sr_cu.cuStreamSynchronize((CUstream)ctx->cu_stream);
            sr_cu.cuStreamDestroy((CUstream)ctx->cu_stream);
        }
        for (size_t i = 0; i < SR_ARRAY_LEN(ctx->library_modules); i++)
            if (ctx->library_modules[i])
                sr_cu.cuModuleUnload((CUmodule)ctx->library_modules[i]);
        for (sr_module_entry *m = ctx->modules, *next; m; m = next) {
            next = m->next;
            sr_cu.cuModuleUnload(m->module);
            free(m);
        }
        CUdevice dev;
        if (sr_cu.cuDeviceGet(&dev, ctx->device) == CUDA_SUCCESS)
            sr_cu.cuDevicePrimaryCtxRelease(dev);
    }
    sr_plugin_memory_destroy(ctx->plugin_memory);
    free(ctx);
}

int sagerun_context_backend(const sagerun_context *ctx)
{
    return ctx ? ctx->backend : -1;
}

sagerun_status sr_context_bind(sagerun_context *ctx, sagerun_error *err)
{
    if (ctx->backend != SAGERUN_BACKEND_CUDA)
        return SAGERUN_OK;
    SR_CU_CHECK(err, sr_cu.cuCtxSetCurrent((CUcontext)ctx->cu_context));
    return SAGERUN_OK;
}

sagerun_status sagerun_context_device_info(sagerun_context *ctx, sagerun_device_info *info,
                                           sagerun_error *err)
{
    if (!ctx || !info)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "device_info: NULL argument");
    sagerun_device_info d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        snprintf(d.name, sizeof d.name, "host");
        long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
        long page = sysconf(_SC_PAGESIZE);
        d.total_memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
        d.free_memory = avail > 0 && page > 0 ? (uint64_t)avail * (uint64_t)page : 0;
        d.multiprocessors = (int)sysconf(_SC_NPROCESSORS_ONLN);
    } else {
        if (sr_context_bind(ctx, err) != SAGERUN_OK)
            return err ? err->status : SAGERUN_CUDA;
        CUdevice dev;
        SR_CU_CHECK(err, sr_cu.cuDeviceGet(&dev, ctx->device));
        SR_CU_CHECK(err, sr_cu.cuDeviceGetName(d.name, (int)sizeof d.name, dev));
        SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(
                             &d.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
        SR_CU_CHECK(err, sr_cu.cuDriverGetVersion(&d.driver_version));
        size_t free_b = 0, total_b = 0;
        SR_CU_CHECK(err, sr_cu.cuMemGetInfo(&free_b, &total_b));
        d.free_memory = free_b;
        d.total_memory = total_b;
        d.compute_capability = ctx->compute_capability;
    }
    /* Copy only what the caller's struct covers. */
    uint32_t size = info->struct_size ? info->struct_size : (uint32_t)sizeof d;
    memcpy(info, &d, size < sizeof d ? size : sizeof d);
    info->struct_size = size < sizeof d ? size : (uint32_t)sizeof d;
    return SAGERUN_OK;
}

/* ---- memory ---- */
sagerun_status sagerun_mem_alloc(sagerun_context *ctx, uint64_t bytes, uint64_t *addr,
                                 sagerun_error *err)
{
    if (!ctx || !addr)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_alloc: NULL argument");
    *addr = 0;
    uint64_t size = bytes ? bytes : 1;
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        if (size > SIZE_MAX)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                                (unsigned long long)bytes);
        void *p = sr_host_block_alloc((size_t)size); /* page-aligned, between guard pages */
        if (!p)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY,
                                "out of host memory allocating %llu bytes",
                                (unsigned long long)bytes);
        *addr = (uint64_t)(uintptr_t)p;
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    CUdeviceptr p;
    CUresult r = sr_cu.cuMemAlloc(&p, (size_t)size);
    if (r != CUDA_SUCCESS) {
        size_t free_b = 0, total_b = 0;
        sr_cu.cuMemGetInfo(&free_b, &total_b);
        char what[160];
        snprintf(what, sizeof what, "cuMemAlloc(%llu bytes; %llu of %llu bytes free)",
                 (unsigned long long)bytes, (unsigned long long)free_b,
                 (unsigned long long)total_b);
        return sr_cuda_fail(err, (int)r, what);
    }
    *addr = (uint64_t)p;
    return SAGERUN_OK;
}

/* A host span that is no block's (host_memory.c): an error, not a fault in the caller. */
static sagerun_status outside_blocks(sagerun_error *err, const char *what, uint64_t addr,
                                     uint64_t bytes)
{
    return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                        "%s: %llu bytes at 0x%llx are not within a block of sagerun_mem_alloc "
                        "(freed, made up, or past its end)",
                        what, (unsigned long long)bytes, (unsigned long long)addr);
}

void sr_mem_seal(sagerun_context *ctx, uint64_t addr, uint64_t bytes)
{
    if (ctx && ctx->backend == SAGERUN_BACKEND_HOST && bytes <= SIZE_MAX)
        sr_host_block_seal((void *)(uintptr_t)addr, (size_t)bytes);
}

void sagerun_mem_free(sagerun_context *ctx, uint64_t addr)
{
    if (!ctx || !addr)
        return;
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        sr_host_block_free((void *)(uintptr_t)addr);
        return;
    }
    sr_cu.cuCtxSetCurrent((CUcontext)ctx->cu_context);
    sr_cu.cuMemFree((CUdeviceptr)addr);
}

sagerun_status sagerun_mem_upload(sagerun_context *ctx, uint64_t dst, const void *src,
                                  uint64_t bytes, sagerun_error *err)
{
    if (!ctx || (!src && bytes))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_upload: NULL argument");
    if (!bytes)
        return SAGERUN_OK;
    if (!dst) /* never an allocation's (sagerun_mem_alloc): it crashed the host backend */
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_upload: address 0");
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        if (!sr_host_block_holds(dst, bytes))
            return outside_blocks(err, "mem_upload", dst, bytes);
        memcpy((void *)(uintptr_t)dst, src, (size_t)bytes);
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuMemcpyHtoDAsync((CUdeviceptr)dst, src, (size_t)bytes,
                                             (CUstream)ctx->cu_stream));
    SR_CU_CHECK(err, sr_cu.cuStreamSynchronize((CUstream)ctx->cu_stream));
    return SAGERUN_OK;
}

sagerun_status sagerun_mem_download(sagerun_context *ctx, void *dst, uint64_t src, uint64_t bytes,
                                    sagerun_error *err)
{
    if (!ctx || (!dst && bytes))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_download: NULL argument");
    if (!bytes)
        return SAGERUN_OK;
    if (!src)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_download: address 0");
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        if (!sr_host_block_holds(src, bytes))
            return outside_blocks(err, "mem_download", src, bytes);
        memcpy(dst, (const void *)(uintptr_t)src, (size_t)bytes);
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, (size_t)bytes,
                                             (CUstream)ctx->cu_stream));
    SR_CU_CHECK(err, sr_cu.cuStreamSynchronize((CUstream)ctx->cu_stream));
    return SAGERUN_OK;
}

sagerun_status sagerun_mem_fill(sagerun_context *ctx, uint64_t dst, uint8_t byte, uint64_t bytes,
                                sagerun_error *err)
{
    if (!ctx)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_fill: NULL context");
    if (!bytes)
        return SAGERUN_OK;
    if (!dst)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "mem_fill: address 0");
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        if (!sr_host_block_holds(dst, bytes))
            return outside_blocks(err, "mem_fill", dst, bytes);
        memset((void *)(uintptr_t)dst, byte, (size_t)bytes);
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuMemsetD8Async((CUdeviceptr)dst, byte, (size_t)bytes,
                                           (CUstream)ctx->cu_stream));
    return SAGERUN_OK;
}

sagerun_status sagerun_context_synchronize(sagerun_context *ctx, sagerun_error *err)
{
    if (!ctx)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "synchronize: NULL context");
    if (ctx->backend == SAGERUN_BACKEND_HOST)
        return SAGERUN_OK;
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuStreamSynchronize((CUstream)ctx->cu_stream));
    return SAGERUN_OK;
}

/* ---- libsagerun's own kernels ---- */
/* The image whose file name starts with the kernel name's first word after sr_ (0 if none). */
static size_t library_image_of(const char *name, size_t n)
{
    const char *word = strncmp(name, "sr_", 3) == 0 ? name + 3 : name;
    size_t len = strcspn(word, "_");
    for (size_t i = 0; i < n; i++)
        if (strncmp(sr_library_images[i].name, word, len) == 0)
            return i;
    return 0;
}

static sagerun_status library_module(sagerun_context *ctx, size_t i, sagerun_error *err)
{
    if (ctx->library_modules[i])
        return SAGERUN_OK;
    CUmodule m;
    CUresult r = sr_cu.cuModuleLoadData(&m, sr_library_images[i].image);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuModuleLoadData (libsagerun kernels: %s)",
                 sr_library_images[i].name);
        return sr_cuda_fail(err, (int)r, what);
    }
    ctx->library_modules[i] = m;
    return SAGERUN_OK;
}

sagerun_status sr_launch_library_kernel(sagerun_context *ctx, const char *name,
                                        const uint32_t grid[3], const uint32_t block[3],
                                        uint32_t smem, void **params, sagerun_error *err)
{
    if (ctx->backend != SAGERUN_BACKEND_CUDA)
        return sr_error_set(err, SAGERUN_INTERNAL, "kernel %s launched on the host backend", name);
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    /* Each kernel file of libsagerun is its own embedded image; its kernels are named
     * sr_<file's first word>_... (sr_quant_* in quantize.cu, sr_torch_mean_* in torch_mean.cu):
     * that image is asked first, so no lookup fails (compute-sanitizer reports failed lookups as
     * API errors); the others only if it lacks the kernel. */
    CUfunction fn = NULL;
    size_t n = 0;
    while (sr_library_images[n].image)
        n++;
    if (n > SR_ARRAY_LEN(ctx->library_modules))
        return sr_error_set(err, SAGERUN_INTERNAL, "too many libsagerun kernel images");
    size_t first = library_image_of(name, n);
    for (size_t k = 0; k < n && !fn; k++) {
        size_t i = k == 0 ? first : (k <= first ? k - 1 : k);
        sagerun_status st = library_module(ctx, i, err);
        if (st != SAGERUN_OK)
            return st;
        if (sr_cu.cuModuleGetFunction(&fn, (CUmodule)ctx->library_modules[i], name) != CUDA_SUCCESS)
            fn = NULL;
    }
    if (!fn)
        return sr_error_set(err, SAGERUN_INTERNAL, "libsagerun has no kernel [%s]", name);
    char what[160];
    snprintf(what, sizeof what, "cuLaunchKernel [%s]", name);
    CUresult r = sr_cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                      smem, (CUstream)ctx->cu_stream, params, NULL);
    if (r != CUDA_SUCCESS)
        return sr_cuda_fail(err, (int)r, what);
    return SAGERUN_OK;
}

sagerun_status sr_mem_copy(sagerun_context *ctx, uint64_t dst, uint64_t src, uint64_t bytes,
                           sagerun_error *err)
{
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, (size_t)bytes);
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)bytes,
                                             (CUstream)ctx->cu_stream));
    return SAGERUN_OK;
}
