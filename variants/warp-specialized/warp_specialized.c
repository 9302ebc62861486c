/* The `warp-specialized` variant: baseline's numerics (byte-identical, SAGE2.md §3) in
 * FlashAttention-3's structure on Hopper: a TMA producer warpgroup and two consumer warpgroups
 * (warp_specialized_kernel.cu). Its code is sm_90a only; other parts are refused at geometry.
 *
 * Host side beyond the shared sage2 glue: the three tensor maps of its bulk copies, encoded with
 * the driver's cuTensorMapEncodeTiled. The host has the driver loaded already (this plugin only
 * runs on the CUDA backend), so the entry point is looked up in the loaded libcuda. */
#include <dlfcn.h>

#include "ws_params.h"

#ifndef WS_NAME /* experiments build other configurations under other names */
#define WS_NAME "warp-specialized"
#endif
#define SAGE2_VARIANT_NAME WS_NAME
#define SAGE2_VARIANT_DESCRIPTION                                                                  \
    "sage2 byte-identical with baseline; Hopper only: TMA producer warpgroup, two consumer warpgroups"
#define SAGE2_KERNEL_NAME "sage2_attn_warp_specialized"
#define SAGE2_THREADS WS_THREADS /* the producer and the consumer warpgroups */
#define SAGE2_WARP_Q (16 * WS_SLICES)
#define SAGE2_CTA_ROWS WS_CTA_ROWS
#define SAGE2_MIN_CC 90
#define SAGE2_SMEM_BYTES WS_SMEM_BYTES

#define SAGE2_STATE_EXTRA ws_attn_params ws;
#define SAGE2_PREPARE_EXTRA(st, err, errlen) ws_prepare(st, err, errlen)
#define SAGE2_KERNEL_ARG(st) (&(st)->ws)
#define SAGE2_CHECK_DEVICE(cc, err, errlen) ws_check_device(cc, err, errlen)

struct sage2_state;
static int ws_prepare(struct sage2_state *st, char *err, size_t errlen);
static int ws_check_device(int cc, char *err, size_t errlen);

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

/* The tensor maps of Q, K and V8 (sizes and strides from the sage2 parameters, all int8/e4m3). */
static int ws_prepare(struct sage2_state *st, char *err, size_t errlen)
{
    const sage2_attn_params *a = &st->params;
    encode_tiled_fn encode = ws_encoder(err, errlen);
    if (!encode)
        return SAGERUN_UNSUPPORTED;
    ws_attn_params *w = &st->ws;
    memset(w, 0, sizeof *w);
    w->p = *a;
    const uint64_t D = (uint64_t)a->head_dim, N = (uint64_t)a->seq_len, B = (uint64_t)a->batch;
    const ws_tensor q = {"Q", a->q, D, N, (uint64_t)a->heads_q, B, a->q_stride_n, a->q_stride_h, a->q_stride_b,
                         (uint32_t)D, 64};
    const ws_tensor k = {"K", a->k, D, N, (uint64_t)a->heads_kv, B, a->k_stride_n, a->k_stride_h, a->k_stride_b,
                         (uint32_t)D, 64};
    /* V8: the sequence (v_len slots) innermost, then channels and heads */
    const ws_tensor v = {"V8", a->v, (uint64_t)a->v_len, D, (uint64_t)a->heads_kv, B, a->v_stride_d,
                         a->v_stride_h, a->v_stride_b, 64, (uint32_t)D};
    int rc = ws_encode(encode, &q, &w->map_q, &w->q_heads_inner, err, errlen);
    if (rc == 0)
        rc = ws_encode(encode, &k, &w->map_k, &w->k_heads_inner, err, errlen);
    if (rc == 0)
        rc = ws_encode(encode, &v, &w->map_v, &w->v_heads_inner, err, errlen);
    return rc;
}
