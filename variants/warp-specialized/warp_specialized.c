/* The `warp-specialized` variant: baseline's numerics (byte-identical, SAGE2.md §3) with
 * FlashAttention-3's data movement on Hopper: bulk tensor copies into an mbarrier ring, wgmma,
 * and V made f16 once per call by a pre-pass kernel (warp_specialized_kernel.cu). Its code is
 * sm_90a only; other parts are refused at geometry.
 *
 * Host side beyond the shared sage2 glue: the three tensor maps of its bulk copies, encoded with
 * the driver's cuTensorMapEncodeTiled, and the f16 V tensor (scratch device memory: twice V8's
 * bytes) with the pre-pass launched before the kernel in each run. The host has the driver
 * loaded already (this plugin only runs on the CUDA backend), so the entry point is looked up in
 * the loaded libcuda. */
#include <dlfcn.h>

#include "ws_params.h"

#ifndef WS_NAME /* experiments build other configurations under other names */
#define WS_NAME "warp-specialized"
#endif
#define SAGE2_VARIANT_NAME WS_NAME
#define SAGE2_VARIANT_DESCRIPTION                                                                  \
    "sage2 byte-identical with baseline; Hopper only: TMA ring, wgmma, V made f16 once per call"
#define SAGE2_KERNEL_NAME "sage2_attn_warp_specialized"
#define SAGE2_THREADS WS_THREADS /* the consumer warpgroups (and a producer, where configured) */
#define SAGE2_WARP_Q (16 * WS_SLICES)
#define SAGE2_CTA_ROWS WS_CTA_ROWS
#define SAGE2_MIN_CC 90
#define SAGE2_SMEM_BYTES WS_SMEM_BYTES

/* WS_V_F16: the f16 V tensor (scratch of the instance) and the pre-pass kernel that fills it */
#define SAGE2_STATE_EXTRA                                                                          \
    ws_attn_params ws;                                                                             \
    sagerun_function *v_to_f16;                                                                    \
    uint32_t v_grid[3];
#define SAGE2_PREPARE_EXTRA(st, err, errlen) ws_prepare(st, err, errlen)
#define SAGE2_KERNEL_ARG(st) (&(st)->ws)
#define SAGE2_CHECK_DEVICE(cc, err, errlen) ws_check_device(cc, err, errlen)
#if WS_V_F16
#define SAGE2_RUN_BEFORE(st, err, errlen) ws_run_v_to_f16(st, err, errlen)
#endif
#define SAGE2_DESTROY_EXTRA(st) ws_free_scratch(st)

struct sage2_state;
static int ws_prepare(struct sage2_state *st, char *err, size_t errlen);
static int ws_check_device(int cc, char *err, size_t errlen);
#if WS_V_F16
static int ws_run_v_to_f16(struct sage2_state *st, char *err, size_t errlen);
#endif
static void ws_free_scratch(struct sage2_state *st);

#include "../common/sage2_plugin.h"

static int ws_check_device(int cc, char *err, size_t errlen)
{
    if (cc == 90)
        return 0;
    snprintf(err, errlen,
             "needs an sm_90a part (Hopper: H100, H200); this device is sm_%d (its TMA and wgmma code "
             "runs nowhere else)",
             cc);
    return SAGERUN_UNSUPPORTED;
}

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                    const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static encode_tiled_fn ws_encoder(char *err, size_t errlen)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    encode_tiled_fn fn = cuda ? (encode_tiled_fn)dlsym(cuda, "cuTensorMapEncodeTiled") : NULL;
    if (!fn)
        snprintf(err, errlen, "cuTensorMapEncodeTiled not found in the loaded libcuda.so.1 (%s)",
                 cuda ? "driver too old for tensor maps" : "the driver is not loaded");
    if (cuda)
        dlclose(cuda); /* RTLD_NOLOAD took a reference; the host's keeps the library */
    return fn;
}

/* One 4-D byte tensor: innermost axis contiguous (inner elements, box_inner of them per copy),
 * then rows and heads in stride order (heads_inner: heads first), then batches. */
typedef struct ws_tensor {
    const char *name;
    uint64_t addr;
    uint64_t inner, rows, heads, batch;
    int64_t row_stride, head_stride, batch_stride; /* bytes */
    uint32_t box_inner, box_rows;
} ws_tensor;

static int ws_encode(encode_tiled_fn encode, const ws_tensor *t, CUtensorMap *map, int32_t *heads_inner,
                     char *err, size_t errlen)
{
    *heads_inner = t->heads == 1 || t->head_stride < t->row_stride;
    const cuuint64_t dim[4] = {t->inner, *heads_inner ? t->heads : t->rows,
                               *heads_inner ? t->rows : t->heads, t->batch};
    const cuuint64_t stride[3] = {(cuuint64_t)(*heads_inner ? t->head_stride : t->row_stride),
                                  (cuuint64_t)(*heads_inner ? t->row_stride : t->head_stride),
                                  (cuuint64_t)t->batch_stride};
    const cuuint32_t box[4] = {t->box_inner, *heads_inner ? 1 : t->box_rows, *heads_inner ? t->box_rows : 1, 1};
    const cuuint32_t estride[4] = {1, 1, 1, 1};
    const CUtensorMapSwizzle swizzle = t->box_inner == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    if (t->addr % 16 != 0) {
        snprintf(err, errlen, "%s is at 0x%llx, not 16-byte aligned as bulk tensor copies need", t->name,
                 (unsigned long long)t->addr);
        return SAGERUN_INVALID_ARGUMENT;
    }
    CUresult rc = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, (void *)(uintptr_t)t->addr, dim, stride, box,
                         estride, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS) {
        snprintf(err, errlen,
                 "cuTensorMapEncodeTiled refused the map of %s (error %d; dims %llu x %llu x %llu x %llu, "
                 "strides %lld/%lld/%lld bytes)",
                 t->name, (int)rc, (unsigned long long)dim[0], (unsigned long long)dim[1],
                 (unsigned long long)dim[2], (unsigned long long)dim[3], (long long)stride[0],
                 (long long)stride[1], (long long)stride[2]);
        return SAGERUN_INVALID_ARGUMENT;
    }
    return 0;
}

#if WS_TRACE
/* experiment: the phase cycles of the last run, per warp of the CTAs of head 0 (stderr) */
static void ws_trace_dump(struct sage2_state *st)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    CUresult (*sync)(void) = cuda ? (CUresult(*)(void))dlsym(cuda, "cuCtxSynchronize") : NULL;
    CUresult (*dtoh)(void *, CUdeviceptr, size_t) =
        cuda ? (CUresult(*)(void *, CUdeviceptr, size_t))dlsym(cuda, "cuMemcpyDtoH_v2") : NULL;
    const size_t bytes = WS_TRACE_BYTES(st->params.seq_len);
    const int n = (int)(bytes / 16), warps = WS_THREADS / 32;
    uint32_t *t = calloc(bytes, 1);
    if (sync && dtoh && t && sync() == CUDA_SUCCESS && dtoh(t, st->ws.trace, bytes) == CUDA_SUCCESS) {
        double sum[4] = {0, 0, 0, 0};
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < 4; ++k) sum[k] += t[4 * i + k];
        fprintf(stderr, "trace %s: %d warps, %.0f tiles, per tile: qk %.1f sm %.1f pv %.1f cycles\n", WS_NAME, n,
                sum[0], sum[1] / sum[0], sum[2] / sum[0], sum[3] / sum[0]);
        for (int i = 0; i < n; i += n / 8 + 1)
            if (t[4 * i])
                fprintf(stderr, "trace %s: cta %d warp %d: %u tiles, qk %u sm %u pv %u\n", WS_NAME, i / warps, i % warps,
                        t[4 * i], t[4 * i + 1] / t[4 * i], t[4 * i + 2] / t[4 * i], t[4 * i + 3] / t[4 * i]);
    } else {
        fprintf(stderr, "trace %s: no trace read back\n", WS_NAME);
    }
    free(t);
    if (cuda)
        dlclose(cuda);
}
#endif

/* What ws_prepare allocated (the f16 V tensor; with WS_TRACE the trace, printed first): at
 * destroy, and before a prepare remakes them. */
static void ws_free_scratch(struct sage2_state *st)
{
#if WS_TRACE
    if (st->ws.trace) {
        ws_trace_dump(st);
        st->services->mem_free(st->services->host, st->ws.trace);
    }
    st->ws.trace = 0;
#endif
    if (st->ws.v_f16)
        st->services->mem_free(st->services->host, st->ws.v_f16);
    st->ws.v_f16 = 0;
}

/* WS_V_F16: the f16 V tensor ([B][Hkv][KV tile][D + WS_VH_SCALE_ROWS] rows of 128 bytes: V, then
 * the tile's K scale) and the pre-pass; the tensor described as the 4-D byte tensor its copies
 * read, one tile per box. */
static int ws_make_v_f16(struct sage2_state *st, ws_tensor *v, char *err, size_t errlen)
{
    const sage2_attn_params *a = &st->params;
    const uint64_t D = (uint64_t)a->head_dim, Hkv = (uint64_t)a->heads_kv, B = (uint64_t)a->batch;
    const uint64_t tiles = ((uint64_t)a->kv_len + 63) / 64, row = 128, rows = D + WS_VH_SCALE_ROWS;
    const sagerun_host_services *s = st->services;
    sagerun_module *module;
    int rc = s->module_load(s->host, sagerun_variant_image, &module, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, module, "sage2_ws_v_to_f16", &st->v_to_f16, err, errlen);
    if (rc == 0)
        rc = s->mem_alloc(s->host, B * Hkv * tiles * rows * row, &st->ws.v_f16, err, errlen);
    if (rc != 0)
        return rc;
    st->ws.v_tiles = (int32_t)tiles;
    st->v_grid[0] = (uint32_t)tiles;
    st->v_grid[1] = (uint32_t)Hkv;
    st->v_grid[2] = (uint32_t)B;
    const ws_tensor vh = {"V (f16)", st->ws.v_f16, row, tiles * rows, Hkv, B, (int64_t)row,
                          (int64_t)(tiles * rows * row), (int64_t)(Hkv * tiles * rows * row), (uint32_t)row,
                          (uint32_t)rows};
    *v = vh;
    return 0;
}

#if WS_V_F16
static int ws_run_v_to_f16(struct sage2_state *st, char *err, size_t errlen)
{
    const uint32_t block[3] = {128, 1, 1};
    void *args[] = {&st->ws};
    return st->services->launch(st->services->host, st->v_to_f16, st->v_grid, block, 0, args, err,
                                errlen);
}
#endif

/* The tensor maps of Q, K and V8, or with WS_V_F16 of the f16 V tensor (sizes and strides from
 * the sage2 parameters, all bytes). Callable again after a failure (the plugin contract). */
static int ws_prepare(struct sage2_state *st, char *err, size_t errlen)
{
    const sage2_attn_params *a = &st->params;
    encode_tiled_fn encode = ws_encoder(err, errlen);
    if (!encode)
        return SAGERUN_UNSUPPORTED;
    ws_attn_params *w = &st->ws;
    ws_free_scratch(st);
    memset(w, 0, sizeof *w);
    w->p = *a;
    const uint64_t D = (uint64_t)a->head_dim, N = (uint64_t)a->seq_len, B = (uint64_t)a->batch;
    const uint64_t KV = (uint64_t)a->kv_len; /* K's rows: its copies past KV read zeros */
    const ws_tensor q = {"Q", a->q, D, N, (uint64_t)a->heads_q, B, a->q_stride_n, a->q_stride_h, a->q_stride_b,
                         (uint32_t)D, 64};
    const ws_tensor k = {"K", a->k, D, KV, (uint64_t)a->heads_kv, B, a->k_stride_n, a->k_stride_h, a->k_stride_b,
                         (uint32_t)D, 64};
    /* V8: the sequence (v_len slots) innermost, then channels and heads */
    ws_tensor v = {"V8", a->v, (uint64_t)a->v_len, D, (uint64_t)a->heads_kv, B, a->v_stride_d,
                   a->v_stride_h, a->v_stride_b, 64, (uint32_t)D};
    int rc = WS_V_F16 ? ws_make_v_f16(st, &v, err, errlen) : 0;
#if WS_TRACE
    if (rc == 0)
        rc = st->services->mem_alloc(st->services->host, WS_TRACE_BYTES(N), &w->trace, err, errlen);
#endif
    if (rc == 0)
        rc = ws_encode(encode, &q, &w->map_q, &w->q_heads_inner, err, errlen);
    if (rc == 0)
        rc = ws_encode(encode, &k, &w->map_k, &w->k_heads_inner, err, errlen);
    if (rc == 0)
        rc = ws_encode(encode, &v, &w->map_v, &w->v_heads_inner, err, errlen);
    return rc;
}
