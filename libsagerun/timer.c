/* Timing one sample (timer.h): the hold kernel, batches, graphs, cold caches and the clock probe. */
#include "timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "kernel_clock.h"
#include "kernels/timer_params.h"
#include "nvtx.h"
#include "stats.h"

#define SR_HOLD_TIMEOUT_NS 200000000ull /* 0.2 s: a hold that waits longer gives up and says so */
#define SR_CLOCK_SPIN_NS 100000ull      /* the clock probe's span: 100 us */

static const char *const timer_names[] = {"auto", "event", "batch", "graph"};
static const char *const cache_names[] = {"hot", "cold"};

/* One word of a short list, and back. */
static const char *word_of(const char *const *words, int n, int i)
{
    return i >= 0 && i < n ? words[i] : NULL;
}

static int index_of(const char *const *words, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(name, words[i]) == 0)
            return i;
    return -1;
}

const char *sr_timer_mode_name(int mode)
{
    return word_of(timer_names, (int)SR_ARRAY_LEN(timer_names), mode);
}

int sr_timer_mode_parse(const char *name)
{
    return index_of(timer_names, (int)SR_ARRAY_LEN(timer_names), name);
}

const char *sr_cache_mode_name(int mode)
{
    return word_of(cache_names, (int)SR_ARRAY_LEN(cache_names), mode);
}

int sr_cache_mode_parse(const char *name)
{
    return index_of(cache_names, (int)SR_ARRAY_LEN(cache_names), name);
}

uint32_t sr_timer_batch_for(double per_call_s, double min_sample_s)
{
    if (!(per_call_s > 0) || per_call_s >= min_sample_s)
        return 1;
    double k = ceil(min_sample_s / per_call_s);
    return k >= SR_TIMER_MAX_BATCH ? SR_TIMER_MAX_BATCH : (uint32_t)k;
}

void sr_timer_resolve(int mode, int cache, double per_call_s, int *mode_out, uint32_t *k_out)
{
    uint32_t k = sr_timer_batch_for(per_call_s, SR_TIMER_MIN_SAMPLE_S);
    if (mode == SR_TIMER_AUTO)
        mode = k > 1 && cache == SR_CACHE_HOT ? SR_TIMER_BATCH : SR_TIMER_EVENT;
    if (mode == SR_TIMER_EVENT || cache == SR_CACHE_COLD)
        k = 1; /* a cold sample is one call: the flush cannot sit between calls of a batch */
    *mode_out = mode;
    *k_out = k;
}

/* ---- the sample timer ------------------------------------------------------------------------ */

/* Host-mapped words the device reads and writes. */
typedef struct mapped {
    uint32_t flag, timed_out;
    uint64_t clock[2];
} mapped;

struct sr_sample_timer {
    sagerun_context *ctx;
    CUevent start, stop;
    mapped *host;         /* pinned, mapped */
    CUdeviceptr dev;      /* the same memory as the device sees it */
    CUdeviceptr flush;    /* cold: 2 x L2 bytes */
    uint64_t flush_bytes;
    int sms;              /* the flush kernel's grid: two CTAs per SM */
    bool kernel_clock;    /* cold: samples timed by the kernels' own timestamps (CUPTI) */
    uint64_t out_ptr, out_bytes; /* cold: the output whose translations the flush warms */
};

static sagerun_status timer_cuda_init(sr_sample_timer *t, int cache, sagerun_error *err)
{
    if (sr_context_bind(t->ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    SR_CU_CHECK(err, sr_cu.cuEventCreate(&t->start, CU_EVENT_DEFAULT));
    SR_CU_CHECK(err, sr_cu.cuEventCreate(&t->stop, CU_EVENT_DEFAULT));
    void *h = NULL;
    SR_CU_CHECK(err, sr_cu.cuMemAllocHost(&h, sizeof(mapped)));
    t->host = h;
    memset(t->host, 0, sizeof(mapped));
    /* pinned memory is mapped under unified addressing: the same address on the device */
    if (sr_cu.cuMemHostGetDevicePointer(&t->dev, h, 0) != CUDA_SUCCESS)
        t->dev = (CUdeviceptr)(uintptr_t)h;
    if (cache == SR_CACHE_COLD) {
        CUdevice dev;
        int l2 = 0;
        SR_CU_CHECK(err, sr_cu.cuDeviceGet(&dev, t->ctx->device));
        SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev));
        t->flush_bytes = 2 * (uint64_t)(l2 > 0 ? l2 : 64 << 20);
        SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(&t->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                    dev));
        /* the buffer, then one word the flush kernel may write */
        SR_CU_CHECK(err, sr_cu.cuMemAlloc(&t->flush, t->flush_bytes + 16));
        SR_CU_CHECK(err, sr_cu.cuMemsetD8Async(t->flush, 0x5a, t->flush_bytes + 16,
                                               (CUstream)t->ctx->cu_stream));
        char why[128];
        t->kernel_clock = !getenv("SAGERUN_NO_CUPTI") && sr_kernel_clock_open(why, sizeof why);
    }
    return SAGERUN_OK;
}

sagerun_status sr_sample_timer_create(sagerun_context *ctx, int cache, sr_sample_timer **out,
                                      sagerun_error *err)
{
    sr_sample_timer *t = calloc(1, sizeof *t);
    if (!t)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    t->ctx = ctx;
    sagerun_status st = SAGERUN_OK;
    if (ctx->backend == SAGERUN_BACKEND_CUDA)
        st = timer_cuda_init(t, cache, err);
    if (st != SAGERUN_OK) {
        sr_sample_timer_destroy(t);
        return st;
    }
    *out = t;
    return SAGERUN_OK;
}

void sr_sample_timer_destroy(sr_sample_timer *t)
{
    if (!t)
        return;
    if (t->ctx->backend == SAGERUN_BACKEND_CUDA) {
        if (t->start)
            sr_cu.cuEventDestroy(t->start);
        if (t->stop)
            sr_cu.cuEventDestroy(t->stop);
        if (t->host)
            sr_cu.cuMemFreeHost(t->host);
        if (t->flush)
            sr_cu.cuMemFree(t->flush);
        if (t->kernel_clock)
            sr_kernel_clock_close();
    }
    free(t);
}

uint64_t sr_sample_timer_flush_bytes(const sr_sample_timer *t)
{
    return t->flush_bytes;
}

const char *sr_sample_timer_clock(const sr_sample_timer *t)
{
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA)
        return "host monotonic clock";
    return t->kernel_clock ? "kernel timestamps (CUPTI)" : "device events";
}

/* ---- graphs ---------------------------------------------------------------------------------- */

struct sr_timer_graph {
    CUgraph graph;
    CUgraphExec exec;
};

void sr_timer_graph_destroy(sr_timer_graph *g)
{
    if (!g)
        return;
    if (g->exec)
        sr_cu.cuGraphExecDestroy(g->exec);
    if (g->graph)
        sr_cu.cuGraphDestroy(g->graph);
    free(g);
}

sagerun_status sr_timer_graph_capture(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                      uint32_t calls, sr_timer_graph **out, sagerun_error *err)
{
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA)
        return sr_error_set(err, SAGERUN_UNSUPPORTED, "the graph timer needs the CUDA backend");
    sr_timer_graph *g = calloc(1, sizeof *g);
    if (!g)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    CUstream s = (CUstream)t->ctx->cu_stream;
    CUresult r = sr_cu.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
    sagerun_status st = r == CUDA_SUCCESS ? SAGERUN_OK : sr_cuda_fail(err, (int)r, "cuStreamBeginCapture");
    for (uint32_t i = 0; i < calls && st == SAGERUN_OK; i++)
        st = (sagerun_status)run(user, err);
    r = sr_cu.cuStreamEndCapture(s, &g->graph); /* ends the capture on every path */
    if (st == SAGERUN_OK && r != CUDA_SUCCESS)
        st = sr_cuda_fail(err, (int)r, "cuStreamEndCapture (does run synchronise or allocate?)");
    if (st == SAGERUN_OK && (r = sr_cu.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0)) !=
                                CUDA_SUCCESS)
        st = sr_cuda_fail(err, (int)r, "cuGraphInstantiateWithFlags");
    if (st != SAGERUN_OK) {
        sr_timer_graph_destroy(g);
        return sr_error_prefix(st, err, "capturing %u calls into a CUDA graph", calls);
    }
    *out = g;
    return SAGERUN_OK;
}

/* ---- one sample ------------------------------------------------------------------------------ */

static sagerun_status launch_own(sr_sample_timer *t, const char *name, void **params,
                                 sagerun_error *err)
{
    static const uint32_t one[3] = {1, 1, 1};
    return sr_launch_library_kernel(t->ctx, name, one, one, 0, params, err);
}

static sagerun_status queue_calls(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                  uint32_t calls, const sr_timer_graph *graph, sagerun_error *err)
{
    if (graph) {
        sr_nvtx_push("graph launch (%u calls)", calls);
        CUresult rc = sr_cu.cuGraphLaunch(graph->exec, (CUstream)t->ctx->cu_stream);
        sr_nvtx_pop();
        return rc == CUDA_SUCCESS ? SAGERUN_OK : sr_cuda_fail(err, (int)rc, "cuGraphLaunch");
    }
    sr_nvtx_push("%u call%s", calls, calls == 1 ? "" : "s");
    int rc = SAGERUN_OK;
    for (uint32_t i = 0; i < calls && rc == SAGERUN_OK; i++)
        rc = run(user, err);
    sr_nvtx_pop();
    return (sagerun_status)rc;
}

void sr_sample_timer_set_output(sr_sample_timer *t, uint64_t ptr, uint64_t bytes)
{
    t->out_ptr = ptr;
    t->out_bytes = ptr ? bytes : 0;
}

/* One read per SR_TOUCH_PAGE_BYTES of the output (sr_timer_touch). */
static sagerun_status touch_output(sr_sample_timer *t, CUdeviceptr sink, sagerun_error *err)
{
    uint64_t pages = (t->out_bytes + SR_TOUCH_PAGE_BYTES - 1) / SR_TOUCH_PAGE_BYTES;
    CUdeviceptr buf = (CUdeviceptr)t->out_ptr;
    void *params[] = {&buf, &pages, &sink};
    const uint32_t grid[3] = {(uint32_t)((pages + 127) / 128), 1, 1}, block[3] = {128, 1, 1};
    return sr_launch_library_kernel(t->ctx, "sr_timer_touch", grid, block, 0, params, err);
}

/* A cold sample's flush: L2 (a read of twice its size), the instruction caches (a long straight
 * line of code on every SM), then the output's address translation warmed (touch_output). */
static sagerun_status queue_flush(sr_sample_timer *t, sagerun_error *err)
{
    sr_nvtx_push("cold flush (L2, instruction caches)");
    uint64_t n16 = t->flush_bytes / 16;
    CUdeviceptr sink = t->flush + t->flush_bytes;
    void *flush_params[] = {&t->flush, &n16, &sink};
    const uint32_t grid[3] = {2u * (uint32_t)(t->sms > 0 ? t->sms : 64), 1, 1};
    const uint32_t block[3] = {256, 1, 1}, warp[3] = {32, 1, 1};
    sagerun_status st = sr_launch_library_kernel(t->ctx, "sr_timer_flush", grid, block, 0,
                                                 flush_params, err);
    uint32_t mul = 1664525u, add = 1013904223u;
    void *code_params[] = {&mul, &add, &sink};
    if (st == SAGERUN_OK)
        st = sr_launch_library_kernel(t->ctx, "sr_timer_flush_code", grid, warp, 0, code_params,
                                      err);
    if (st == SAGERUN_OK && t->out_bytes)
        st = touch_output(t, sink, err);
    sr_nvtx_pop();
    return st;
}

/* Queues the flush (cold) and the hold, then the events around the calls; releases the hold. */
static sagerun_status take_cuda(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                uint32_t calls, const sr_timer_graph *graph, bool flush,
                                double *host_s, sagerun_error *err)
{
    CUstream s = (CUstream)t->ctx->cu_stream;
    if (flush && t->flush) {
        sagerun_status fst = queue_flush(t, err);
        if (fst != SAGERUN_OK)
            return fst;
    }
    __atomic_store_n(&t->host->flag, 0u, __ATOMIC_SEQ_CST);
    t->host->timed_out = 0;
    CUdeviceptr flag = t->dev + offsetof(mapped, flag), tout = t->dev + offsetof(mapped, timed_out);
    unsigned long long timeout = SR_HOLD_TIMEOUT_NS;
    void *hold_params[] = {&flag, &timeout, &tout};
    sagerun_status st = launch_own(t, "sr_timer_hold", hold_params, err);
    if (st == SAGERUN_OK && sr_cu.cuEventRecord(t->start, s) != CUDA_SUCCESS)
        st = sr_error_set(err, SAGERUN_CUDA, "cuEventRecord (sample start)");
    double h0 = sr_monotonic_seconds();
    if (st == SAGERUN_OK)
        st = queue_calls(t, run, user, calls, graph, err);
    *host_s = graph ? NAN : sr_monotonic_seconds() - h0;
    if (st == SAGERUN_OK && sr_cu.cuEventRecord(t->stop, s) != CUDA_SUCCESS)
        st = sr_error_set(err, SAGERUN_CUDA, "cuEventRecord (sample stop)");
    __atomic_store_n(&t->host->flag, 1u, __ATOMIC_SEQ_CST); /* release on every path */
    return st;
}

static double probe_clock(sr_sample_timer *t)
{
    CUdeviceptr out = t->dev + offsetof(mapped, clock);
    unsigned long long spin = SR_CLOCK_SPIN_NS;
    void *params[] = {&spin, &out};
    sr_nvtx_push("SM clock probe");
    bool ok = launch_own(t, "sr_timer_clock", params, NULL) == SAGERUN_OK &&
              sr_cu.cuStreamSynchronize((CUstream)t->ctx->cu_stream) == CUDA_SUCCESS;
    sr_nvtx_pop();
    if (!ok)
        return NAN;
    volatile uint64_t *c = t->host->clock;
    return c[1] ? (double)c[0] / (double)c[1] * 1e3 : NAN; /* cycles per ns = GHz */
}

/* One sample on the device: events around the calls, and the kernels' own durations where
 * they time it (kernel_s, *kernels; 0 when not). */
static sagerun_status take_device(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                  uint32_t calls, const sr_timer_graph *graph, bool flush,
                                  sr_timed_sample *out, double *kernel_s, uint32_t *kernels,
                                  sagerun_error *err)
{
    *kernel_s = 0;
    *kernels = 0;
    if (t->kernel_clock)
        sr_kernel_clock_take(NULL); /* what ran before is not this sample */
    sagerun_status st = take_cuda(t, run, user, calls, graph, flush, &out->host_s, err);
    if (st != SAGERUN_OK) {
        sr_cu.cuStreamSynchronize((CUstream)t->ctx->cu_stream);
        return st;
    }
    SR_CU_CHECK(err, sr_cu.cuEventSynchronize(t->stop));
    float ms = 0;
    SR_CU_CHECK(err, sr_cu.cuEventElapsedTime(&ms, t->start, t->stop));
    out->seconds = (double)ms * 1e-3;
    if (t->kernel_clock)
        *kernel_s = sr_kernel_clock_take(kernels);
    out->hold_timed_out = t->host->timed_out != 0;
    return SAGERUN_OK;
}

sagerun_status sr_sample_timer_take(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                    uint32_t calls, const sr_timer_graph *graph,
                                    sr_timed_sample *out, sagerun_error *err)
{
    out->clock_mhz = out->host_s = NAN;
    out->hold_timed_out = out->kernel_timed = false;
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA) {
        double t0 = sr_monotonic_seconds();
        sagerun_status st = queue_calls(t, run, user, calls, NULL, err);
        out->seconds = sr_monotonic_seconds() - t0;
        return st;
    }
    double kernel_s;
    uint32_t kernels;
    sagerun_status st = take_device(t, run, user, calls, graph, true, out, &kernel_s, &kernels,
                                    err);
    if (st != SAGERUN_OK)
        return st;
    if (kernels > 0) {
        out->seconds = kernel_s; /* the variant's kernels only: no launch, no gaps */
        out->kernel_timed = true;
    }
    out->clock_mhz = probe_clock(t);
    return SAGERUN_OK;
}

sagerun_status sr_sample_timer_launch_gap(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                          uint32_t calls, double *gap_s, sagerun_error *err)
{
    *gap_s = NAN;
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA || !t->kernel_clock || calls == 0)
        return SAGERUN_OK;
    double gaps[3];
    for (int i = 0; i < 3; i++) {
        sr_timed_sample s = {0};
        double kernel_s;
        uint32_t kernels;
        sagerun_status st = take_device(t, run, user, calls, NULL, false, &s, &kernel_s,
                                        &kernels, err);
        if (st != SAGERUN_OK)
            return st;
        if (kernels == 0 || s.hold_timed_out)
            return SAGERUN_OK; /* nothing to subtract, or the launch cost is in the events */
        gaps[i] = fmax(0.0, (s.seconds - kernel_s) / calls);
    }
    *gap_s = sr_median3(gaps[0], gaps[1], gaps[2]);
    return SAGERUN_OK;
}

static int run_empty(void *user, sagerun_error *err)
{
    return launch_own(user, "sr_timer_empty", NULL, err);
}

double sr_sample_timer_launch_floor(sr_sample_timer *t, uint32_t calls)
{
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA || calls == 0)
        return NAN;
    sr_timed_sample s;
    if (sr_sample_timer_take(t, run_empty, t, calls, NULL, &s, NULL) != SAGERUN_OK)
        return NAN;
    return s.seconds / calls;
}

/* ---- the single-call timer of sagerun_instance_run (public API): events around one call ---- */
sagerun_status sr_timer_init(sr_timer *t, sagerun_context *ctx, sagerun_error *err)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    if (ctx->backend != SAGERUN_BACKEND_CUDA)
        return SAGERUN_OK;
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    CUevent a, b;
    SR_CU_CHECK(err, sr_cu.cuEventCreate(&a, CU_EVENT_DEFAULT));
    t->start = a;
    SR_CU_CHECK(err, sr_cu.cuEventCreate(&b, CU_EVENT_DEFAULT));
    t->stop = b;
    return SAGERUN_OK;
}

sagerun_status sr_timer_start(sr_timer *t, sagerun_error *err)
{
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA) {
        t->host_start = sr_monotonic_seconds();
        return SAGERUN_OK;
    }
    SR_CU_CHECK(err, sr_cu.cuEventRecord((CUevent)t->start, (CUstream)t->ctx->cu_stream));
    return SAGERUN_OK;
}

sagerun_status sr_timer_stop(sr_timer *t, double *seconds, sagerun_error *err)
{
    if (t->ctx->backend != SAGERUN_BACKEND_CUDA) {
        *seconds = sr_monotonic_seconds() - t->host_start;
        return SAGERUN_OK;
    }
    SR_CU_CHECK(err, sr_cu.cuEventRecord((CUevent)t->stop, (CUstream)t->ctx->cu_stream));
    SR_CU_CHECK(err, sr_cu.cuEventSynchronize((CUevent)t->stop));
    float ms = 0;
    SR_CU_CHECK(err, sr_cu.cuEventElapsedTime(&ms, (CUevent)t->start, (CUevent)t->stop));
    *seconds = (double)ms * 1e-3;
    return SAGERUN_OK;
}

void sr_timer_fini(sr_timer *t)
{
    if (t->ctx && t->ctx->backend == SAGERUN_BACKEND_CUDA) {
        if (t->start)
            sr_cu.cuEventDestroy((CUevent)t->start);
        if (t->stop)
            sr_cu.cuEventDestroy((CUevent)t->stop);
    }
    memset(t, 0, sizeof *t);
}
