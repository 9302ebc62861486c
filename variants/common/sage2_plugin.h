/* Host glue shared by the sage2 variants (baseline, interleave-softmax, warp-specialized,
 * baseline-fp16acc): geometry, parameter setup and launch. They take kv_len != seq_len (dense,
 * non-causal: SageAttention's qo_len and kv_len; the descriptor declares SAGERUN_FEATURE_KV_LEN
 * and nothing else, so the host refuses causal with kv_len != seq_len, varlen, paged K/V, a
 * window and a soft-cap by name before create). Their inputs are the sage2 extension's
 * (sagerun/sage2.h): the descriptor names the input kind SAGERUN_SAGE2_EXTENSION_ID with the
 * sm89 granularities, and create asks services->get_extension for the extension, through which
 * it reaches the tensors the host quantized for the instance (before prepare).
 * A variant's .c file defines SAGE2_VARIANT_NAME,
 * SAGE2_VARIANT_DESCRIPTION and SAGE2_KERNEL_NAME, then includes this file, which defines the
 * whole plugin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>
#include <sagerun/sage2.h>

#include "sage2_params.h"

/* Dynamic shared memory per CTA; a variant may define its own before including this file.
 * A variant whose sm_90a code needs more than its code for other targets defines
 * SAGE2_SMEM_BYTES for sm_90 (what the geometry reports) and SAGE2_SMEM_BYTES_NOT_SM90 for the
 * rest, so that Ada keeps two CTAs per SM. */
#ifndef SAGE2_SMEM_BYTES
#define SAGE2_SMEM_BYTES 32768 /* Q 16 KiB int8 + K 8 KiB int8 + V 8 KiB fp8 */
#endif

/* V's FP8 range R (SAGE2.md §1.4): 448 for the fp32+fp32 path; a variant with another
 * accumulation (baseline-fp16acc: 2.25) defines its own before including this file. */
#ifndef SAGE2_V_RANGE
#define SAGE2_V_RANGE 448.0f
#endif

/* Threads per CTA and query rows per warp; a variant that splits the CTA's 128 rows over more
 * warps defines its own before including this file (the defaults are SAGE2.md section 2's). */
#ifndef SAGE2_THREADS
#define SAGE2_THREADS 128 /* 4 warps */
#endif
#ifndef SAGE2_WARP_Q
#define SAGE2_WARP_Q 32 /* two 16-row slices per warp */
#endif
/* Query rows per CTA: SAGE2.md section 2's 128 (the numerics' block); a CTA may hold several. */
#ifndef SAGE2_CTA_ROWS
#define SAGE2_CTA_ROWS SAGE2_CTA_Q
#endif

/* The oldest part a variant runs on; one that needs more defines its own (and, where newer
 * parts cannot run its code either, refuses them in SAGE2_CHECK_DEVICE). */
#ifndef SAGE2_MIN_CC
#define SAGE2_MIN_CC 89 /* FP8 mma.sync needs sm_89 */
#endif

/* Hooks of a variant whose kernel takes more than sage2_attn_params (define all or none):
 *   SAGE2_STATE_EXTRA            members added to sage2_state
 *   SAGE2_PREPARE_EXTRA(st, err, errlen)   int: completes them after the parameters are set
 *   SAGE2_KERNEL_ARG(st)         the address of the kernel's one parameter
 * and SAGE2_CHECK_DEVICE(cc, err, errlen): int, SAGERUN_UNSUPPORTED for a part it cannot run on.
 * A variant that launches more than its kernel, or owns device memory, also defines
 *   SAGE2_RUN_BEFORE(st, err, errlen)     int: launches queued before the kernel in each run
 *   SAGE2_DESTROY_EXTRA(st)               frees what its prepare made (st is never NULL) */
#ifndef SAGE2_KERNEL_ARG
#define SAGE2_STATE_EXTRA
#define SAGE2_PREPARE_EXTRA(st, err, errlen) 0
#define SAGE2_KERNEL_ARG(st) (&(st)->params)
#endif
#ifndef SAGE2_CHECK_DEVICE
#define SAGE2_CHECK_DEVICE(cc, err, errlen) 0
#endif
#ifndef SAGE2_RUN_BEFORE
#define SAGE2_RUN_BEFORE(st, err, errlen) 0
#endif
#ifndef SAGE2_DESTROY_EXTRA
#define SAGE2_DESTROY_EXTRA(st) ((void)(st))
#endif

/* The launch contract of SAGE2.md section 2 (the seed's "scheduler"). */
enum {
    SAGE2_CTA_Q = 128,
    SAGE2_CTA_K = 64,
    SAGE2_WARP_K = 64
};

/* The GPU image of this plugin, embedded by the Makefile. */
extern const unsigned char sagerun_variant_image[];

typedef struct sage2_state {
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *inputs;
    const sagerun_sage2_tensors *tensors; /* the extension's, filled before prepare */
    sagerun_function *kernel;
    sage2_attn_params params;
    uint32_t grid[3];
    uint32_t smem_bytes; /* dynamic shared memory per CTA on this device */
    SAGE2_STATE_EXTRA
} sage2_state;

/* Keys of the problem (the library's sagerun_problem_kv_len; a plugin links no library): the
 * host gives a 1.2 plugin the whole 1.2 problem, kv_len 0 meaning seq_len. */
static uint32_t sage2_kv_len(const sagerun_problem *p)
{
    return p->kv_len ? p->kv_len : p->seq_len;
}

static int sage2_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                          size_t errlen)
{
    if (p->head_dim != 128 && p->head_dim != 64) {
        snprintf(err, errlen, "head_dim %u is not supported, only 64 and 128", p->head_dim);
        return SAGERUN_UNSUPPORTED;
    }
    /* causal: SageAttention's is_causal = 1, only where q_len = kv_len (the host refuses the
     * rest: no CAUSAL_* feature is declared) */
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16) {
        snprintf(err, errlen, "dtype is not supported, only F16 or BF16 in and out");
        return SAGERUN_UNSUPPORTED;
    }
    g->cta_q = SAGE2_CTA_ROWS;
    g->cta_k = SAGE2_CTA_K;
    g->warp_q = SAGE2_WARP_Q;
    g->warp_k = SAGE2_WARP_K;
    g->threads_per_cta = SAGE2_THREADS;
    g->dynamic_shared_memory_bytes = SAGE2_SMEM_BYTES;
    g->grid_ctas = (uint64_t)((p->seq_len + SAGE2_CTA_ROWS - 1) / SAGE2_CTA_ROWS) * p->heads_q *
                   p->batch;
    return 0;
}

/* The dynamic shared memory a launch on a device of compute capability cc really uses. */
static uint32_t sage2_smem_for(int cc)
{
#ifdef SAGE2_SMEM_BYTES_NOT_SM90
    if (cc != 90)
        return SAGE2_SMEM_BYTES_NOT_SM90;
#endif
    (void)cc;
    return SAGE2_SMEM_BYTES;
}

/* The geometry on this device (plugin ABI 1.1): the shared memory of the code it runs there. */
static int sage2_geometry_with(const sagerun_geometry_args *args, const sagerun_problem *p,
                               sagerun_launch_geometry *g, char *err, size_t errlen)
{
    int rc = sage2_geometry(p, g, err, errlen);
    if (rc == 0 && args->device->backend == SAGERUN_BACKEND_CUDA)
        rc = SAGE2_CHECK_DEVICE(args->device->compute_capability, err, errlen);
    if (rc == 0)
        g->dynamic_shared_memory_bytes = sage2_smem_for(args->device->compute_capability);
    return rc;
}

/* Element strides of a [B, rows, H, D] tensor in either layout (rows: seq_len for Q and O,
 * kv_len for K). */
static void sage2_strides(const sagerun_problem *p, uint32_t heads, uint32_t rows, int64_t *b,
                          int64_t *n, int64_t *h)
{
    int64_t N = rows, H = heads, D = p->head_dim;
    if (p->layout == SAGERUN_LAYOUT_HND) {
        *b = H * N * D;
        *h = N * D;
        *n = D;
    } else {
        *b = N * H * D;
        *n = H * D;
        *h = D;
    }
}

/* The tensors the host quantized for this instance, through the sage2 extension; NULL (with
 * the reason in err) from a host without it. */
static const sagerun_sage2_tensors *sage2_instance_tensors(const sagerun_host_services *s,
                                                           char *err, size_t errlen)
{
    const sagerun_sage2_extension *x =
        s->struct_size >= offsetof(sagerun_host_services, get_extension) + sizeof s->get_extension
            ? s->get_extension(s->host, SAGERUN_SAGE2_EXTENSION_ID)
            : NULL;
    const sagerun_sage2_tensors *t =
        x && x->struct_size >= offsetof(sagerun_sage2_extension, instance_tensors) +
                                   sizeof x->instance_tensors
            ? x->instance_tensors(s->host)
            : NULL;
    if (!t)
        snprintf(err, errlen, "the host gave no sage2-quantized inputs (extension %s)",
                 SAGERUN_SAGE2_EXTENSION_ID);
    return t;
}

static int sage2_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    const sagerun_sage2_tensors *tensors = sage2_instance_tensors(s, err, errlen);
    if (!tensors)
        return SAGERUN_UNSUPPORTED;
    int dev_rc = s->backend(s->host) == SAGERUN_BACKEND_CUDA
                     ? SAGE2_CHECK_DEVICE(s->compute_capability(s->host), err, errlen)
                     : 0;
    if (dev_rc != 0)
        return dev_rc;
    sage2_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return SAGERUN_OUT_OF_MEMORY;
    }
    st->smem_bytes = sage2_smem_for(s->compute_capability(s->host));
    sagerun_module *module;
    /* one kernel per (dtype, causal): SAGE2_KERNEL_NAME is fp16 non-causal (sage2_device.cuh) */
    const sagerun_problem *pr = &in->problem;
    const int bf16 = pr->dtype == SAGERUN_DTYPE_BF16;
    const char *kernel_name = bf16 ? (pr->causal ? SAGE2_KERNEL_NAME "_bf16_causal" : SAGE2_KERNEL_NAME "_bf16")
                                   : (pr->causal ? SAGE2_KERNEL_NAME "_causal" : SAGE2_KERNEL_NAME);
    int rc = s->module_load(s->host, sagerun_variant_image, &module, err, errlen);
    if (rc == 0)
        rc = s->module_get_function(s->host, module, kernel_name, &st->kernel, err, errlen);
    if (rc == 0)
        rc = s->function_set_max_dynamic_smem(s->host, st->kernel, st->smem_bytes, err, errlen);
    if (rc != 0) {
        free(st);
        return rc;
    }
    st->services = s;
    st->inputs = in;
    st->tensors = tensors;
    const sagerun_problem *p = &in->problem;
    st->grid[0] = (p->seq_len + SAGE2_CTA_ROWS - 1) / SAGE2_CTA_ROWS;
    st->grid[1] = p->heads_q;
    st->grid[2] = p->batch;
    *state = st;
    return 0;
}

/* The quantized tensors are filled by the host between create and prepare. */
static int sage2_prepare(void *state, char *err, size_t errlen)
{
    sage2_state *st = state;
    const sagerun_plugin_inputs *in = st->inputs;
    const sagerun_sage2_tensors *t = st->tensors;
    const sagerun_problem *p = &in->problem;
    if (t->params.q_group_rows != 32 || t->params.k_block_rows != 64 ||
        t->params.v_pad_rows % 64 != 0) {
        snprintf(err, errlen, "quantized with unexpected granularities (Q %u, K %u, V pad %u)",
                 t->params.q_group_rows, t->params.k_block_rows, t->params.v_pad_rows);
        return SAGERUN_INVALID_ARGUMENT;
    }
    const uint32_t kv_len = sage2_kv_len(p);
    /* tensors short of the problem would be read past their ends (KV padded to 64, scales) */
    if (t->v_len < kv_len || (uint64_t)t->k_scale_per_head * 64 < kv_len ||
        (uint64_t)t->q_scale_per_head * 32 < p->seq_len) {
        snprintf(err, errlen,
                 "quantized tensors do not cover the problem (v_len %u, k_scale_per_head %u, "
                 "q_scale_per_head %u for seq_len %u, kv_len %u)",
                 t->v_len, t->k_scale_per_head, t->q_scale_per_head, p->seq_len, kv_len);
        return SAGERUN_INVALID_ARGUMENT;
    }
    sage2_attn_params *a = &st->params;
    memset(a, 0, sizeof *a);
    a->q = t->q_int8;
    a->q_scale = t->q_scale;
    a->k = t->k_int8;
    a->k_scale = t->k_scale;
    a->v = t->v_fp8;
    a->v_scale = t->v_scale;
    a->o = in->o;
    sage2_strides(p, p->heads_q, p->seq_len, &a->q_stride_b, &a->q_stride_n, &a->q_stride_h);
    sage2_strides(p, p->heads_kv, kv_len, &a->k_stride_b, &a->k_stride_n, &a->k_stride_h);
    sage2_strides(p, p->heads_q, p->seq_len, &a->o_stride_b, &a->o_stride_n, &a->o_stride_h);
    int64_t L = t->v_len, D = p->head_dim, Hkv = p->heads_kv;
    if (p->layout == SAGERUN_LAYOUT_HND) { /* [B, Hkv, D, L] */
        a->v_stride_b = Hkv * D * L;
        a->v_stride_h = D * L;
        a->v_stride_d = L;
    } else { /* [B, D, Hkv, L] */
        a->v_stride_b = D * Hkv * L;
        a->v_stride_d = Hkv * L;
        a->v_stride_h = L;
    }
    a->batch = (int32_t)p->batch;
    a->seq_len = (int32_t)p->seq_len;
    a->kv_len = (int32_t)kv_len;
    a->heads_q = (int32_t)p->heads_q;
    a->heads_kv = (int32_t)p->heads_kv;
    a->head_dim = (int32_t)p->head_dim;
    a->q_scale_per_head = (int32_t)t->q_scale_per_head;
    a->k_scale_per_head = (int32_t)t->k_scale_per_head;
    a->v_len = (int32_t)t->v_len;
    /* D^-0.5 as an fp32 value when the problem leaves it 0 (SAGE2.md 2.2). */
    a->sm_scale = p->sm_scale > 0 ? p->sm_scale : (float)(1.0 / sqrt((double)D));
    return SAGE2_PREPARE_EXTRA(st, err, errlen);
}

static int sage2_run(void *state, char *err, size_t errlen)
{
    sage2_state *st = state;
    const uint32_t block[3] = {SAGE2_THREADS, 1, 1};
    void *args[] = {SAGE2_KERNEL_ARG(st)};
    int rc = SAGE2_RUN_BEFORE(st, err, errlen);
    if (rc != 0)
        return rc;
    return st->services->launch(st->services->host, st->kernel, st->grid, block, st->smem_bytes,
                                args, err, errlen);
}

static void sage2_destroy(void *state)
{
    if (state)
        SAGE2_DESTROY_EXTRA((sage2_state *)state);
    free(state);
}

/* The sm89 kernel's granularities: what the host quantizes this variant's inputs with. */
static const sagerun_sage2_quant_params sage2_quant = {
    .struct_size = sizeof(sagerun_sage2_quant_params),
    .q_group_rows = 32,
    .q_block_rows = 128,
    .k_block_rows = 64,
    .v_pad_rows = 64,
    .v_range = SAGE2_V_RANGE};

/* The D the kernels are instantiated for (run_any_head_dim). */
static const uint32_t sage2_head_dims[] = {64, 128};

static const sagerun_variant_descriptor sage2_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = SAGE2_VARIANT_NAME,
    .version = "1.0.0",
    .description = SAGE2_VARIANT_DESCRIPTION,
    .backend = SAGERUN_BACKEND_CUDA,
    .min_compute_capability = SAGE2_MIN_CC,
    .geometry = sage2_geometry,
    .create = sage2_create,
    .prepare = sage2_prepare,
    .run = sage2_run,
    .destroy = sage2_destroy,
    .flags = SAGERUN_VARIANT_GRAPH_CAPTURABLE, /* run only launches on the host's stream */
    .geometry_with = sage2_geometry_with,
    .features = SAGERUN_FEATURE_KV_LEN,
    .dtypes = (1u << SAGERUN_DTYPE_F16) | (1u << SAGERUN_DTYPE_BF16),
    .n_head_dims = 2,
    .head_dims = sage2_head_dims,
    .input_id = SAGERUN_SAGE2_EXTENSION_ID,
    .input_params = &sage2_quant,
};

SAGERUN_PLUGIN_DEFINE_ENTRY(sage2_variant)
