/* The sage2 quantizer: sizes, allocation, the host implementation and the CUDA launches. */
#include "quantize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/quantize_math.h"
#include "torch_mean.h"

#define SR_QUANT_COL_THREADS 128u   /* kColThreads in kernels/quantize.cu: columns of 8 channels
                                       per block, one V-max thread each */
#define SR_QUANT_FINAL_THREADS 1024u /* kFinalThreads */
#define SR_QUANT_FINAL_COLUMNS 32u   /* kFinalCols: columns per finalize block */
#define SR_QUANT_V_THREADS 256u     /* kVThreads */

sagerun_sage2_quant_params sr_sage2_params_sm89(float v_range)
{
    sagerun_sage2_quant_params p = {sizeof p, 32, 128, 64, 64, v_range};
    return p;
}

sagerun_sage2_quant_params sr_sage2_params_sm90(void)
{
    sagerun_sage2_quant_params p = {sizeof p, 16, 64, 128, 128, 448.0f};
    return p;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

sagerun_status sr_sage2_quant_check(const sagerun_sage2_quant_params *qp, sagerun_error *err)
{
    if (qp->q_group_rows == 0 || qp->q_block_rows == 0 ||
        qp->q_block_rows % qp->q_group_rows != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: q_block_rows %u is not a multiple of q_group_rows %u",
                            qp->q_block_rows, qp->q_group_rows);
    if (qp->k_block_rows == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "sage2 quantizer: k_block_rows is 0");
    if (qp->v_pad_rows == 0 || qp->v_pad_rows % SR_QUANT_PERM_GROUP != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: v_pad_rows %u is not a multiple of %u",
                            qp->v_pad_rows, SR_QUANT_PERM_GROUP);
    if (!(qp->v_range > 0.0f && qp->v_range <= 448.0f))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: v_range %g is outside (0, 448]", qp->v_range);
    return SAGERUN_OK;
}

/* The quantizer takes dense tensors of one length per side: packed (varlen) or paged K/V are
 * another layout, which it does not read. */
static sagerun_status dense_only(const sagerun_problem *in, sagerun_error *err)
{
    sagerun_problem p;
    sr_problem_load(in, &p);
    if (p.varlen || p.page_size)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "sage2 quantizer: %s inputs are not supported (dense Q, K, V only)",
                            p.varlen ? "varlen" : "paged K/V");
    return SAGERUN_OK;
}

sagerun_status sr_sage2_sizes_of(const sagerun_problem *p, const sagerun_sage2_quant_params *qp,
                                 sr_sage2_sizes *s, sagerun_error *err)
{
    memset(s, 0, sizeof *s);
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "sage2 quantizer: input dtype must be F16 or BF16");
    const uint32_t kv_len = sagerun_problem_kv_len(p);
    if (p->batch == 0 || p->seq_len == 0 || kv_len == 0 || p->head_dim == 0 ||
        p->heads_kv == 0 || p->heads_q % p->heads_kv != 0 || p->layout > SAGERUN_LAYOUT_HND)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: inconsistent problem [%u, %u, %u, %u] Hkv %u "
                            "kv_len %u",
                            p->batch, p->seq_len, p->heads_q, p->head_dim, p->heads_kv, kv_len);
    sagerun_status st = dense_only(p, err);
    if (st == SAGERUN_OK)
        st = sr_sage2_quant_check(qp, err);
    if (st != SAGERUN_OK)
        return st;
    /* Q has seq_len rows, K and V kv_len rows (SageAttention's qo_len and kv_len) */
    uint64_t n = p->seq_len, n_kv = kv_len, d = p->head_dim;
    uint64_t qsph = ceil_div(n, qp->q_block_rows) * (qp->q_block_rows / qp->q_group_rows);
    uint64_t ksph = ceil_div(n_kv, qp->k_block_rows);
    uint64_t vlen = ceil_div(n_kv, qp->v_pad_rows) * qp->v_pad_rows;
    uint64_t bh_q = (uint64_t)p->batch * p->heads_q, bh_kv = (uint64_t)p->batch * p->heads_kv;
    uint64_t bhd_kv;
    if (qsph > UINT32_MAX || vlen > UINT32_MAX || !sr_mul_u64(bh_q, n * d, &s->q_elements) ||
        !sr_mul_u64(bh_kv, n_kv * d, &s->kv_elements) ||
        !sr_mul_u64(bh_q, qsph, &s->q_scale_count) ||
        !sr_mul_u64(bh_kv, ksph, &s->k_scale_count) || !sr_mul_u64(bh_kv, d, &bhd_kv) ||
        !sr_mul_u64(bhd_kv, vlen, &s->v_fp8_bytes) || s->q_elements > (UINT64_MAX >> 2) ||
        s->q_scale_count > (UINT64_MAX >> 2) || bhd_kv > (UINT64_MAX >> 2))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: problem too large (sizes overflow)");
    s->q_scale_per_head = (uint32_t)qsph;
    s->k_scale_per_head = (uint32_t)ksph;
    s->v_len = (uint32_t)vlen;
    s->v_scale_count = s->k_mean_count = bhd_kv;
    s->mean_slices = (uint32_t)ceil_div(n_kv, SR_QUANT_MEAN_SLICE);
    return SAGERUN_OK;
}

void sr_sage2_tensors_free(sagerun_context *ctx, sagerun_sage2_tensors *t)
{
    if (!t)
        return;
    uint64_t *addrs[] = {&t->q_int8, &t->q_scale, &t->k_int8, &t->k_scale,
                         &t->v_fp8,  &t->v_scale, &t->k_mean};
    for (size_t i = 0; i < SR_ARRAY_LEN(addrs); i++) {
        if (*addrs[i])
            sagerun_mem_free(ctx, *addrs[i]);
        *addrs[i] = 0;
    }
}

sagerun_status sr_sage2_tensors_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                                      const sagerun_sage2_quant_params *params,
                                      sagerun_sage2_tensors *out, sagerun_error *err)
{
    sr_sage2_sizes s;
    sagerun_status st = sr_sage2_sizes_of(problem, params, &s, err);
    if (st != SAGERUN_OK)
        return st;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->params = *params;
    out->params.struct_size = sizeof out->params;
    out->q_scale_per_head = s.q_scale_per_head;
    out->k_scale_per_head = s.k_scale_per_head;
    out->v_len = s.v_len;
    struct {
        uint64_t *addr, bytes;
    } want[] = {{&out->q_int8, s.q_elements},          {&out->q_scale, s.q_scale_count * 4},
                {&out->k_int8, s.kv_elements},         {&out->k_scale, s.k_scale_count * 4},
                {&out->v_fp8, s.v_fp8_bytes},          {&out->v_scale, s.v_scale_count * 4},
                {&out->k_mean, s.k_mean_count * 2}};
    for (size_t i = 0; i < SR_ARRAY_LEN(want); i++) {
        if ((st = sagerun_mem_alloc(ctx, want[i].bytes, want[i].addr, err)) != SAGERUN_OK) {
            sr_sage2_tensors_free(ctx, out);
            return sr_error_prefix(st, err, "sage2 quantizer: allocating outputs");
        }
    }
    return SAGERUN_OK;
}

sagerun_status sr_sage2_workspace_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                                        sr_sage2_workspace *ws, sagerun_error *err)
{
    memset(ws, 0, sizeof *ws);
    uint64_t columns = (uint64_t)problem->batch * problem->heads_kv * problem->head_dim;
    uint64_t slices = ceil_div(sagerun_problem_kv_len(problem), SR_QUANT_MEAN_SLICE);
    sr_torch_device dev;
    sagerun_status st = sr_torch_device_of(ctx, &dev, err);
    if (st == SAGERUN_OK)
        st = sr_torch_kmean_plan(problem, &dev, &ws->kmean_plan, err);
    if (st != SAGERUN_OK)
        return sr_error_prefix(st, err, "sage2 quantizer");
    uint64_t kmean_floats = sr_torch_kmean_scratch_floats(problem, &ws->kmean_plan);
    if ((st = sagerun_mem_alloc(ctx, kmean_floats * sizeof(float), &ws->kmean_scratch, err)) ||
        (st = sagerun_mem_alloc(ctx, columns * slices * sizeof(float), &ws->partial_max, err)) ||
        (st = sagerun_mem_alloc(ctx, columns * sizeof(float), &ws->v_inv, err))) {
        sr_sage2_workspace_free(ctx, ws);
        return sr_error_prefix(st, err, "sage2 quantizer: allocating scratch");
    }
    return SAGERUN_OK;
}

void sr_sage2_workspace_free(sagerun_context *ctx, sr_sage2_workspace *ws)
{
    if (!ws)
        return;
    if (ws->kmean_scratch)
        sagerun_mem_free(ctx, ws->kmean_scratch);
    if (ws->partial_max)
        sagerun_mem_free(ctx, ws->partial_max);
    if (ws->v_inv)
        sagerun_mem_free(ctx, ws->v_inv);
    memset(ws, 0, sizeof *ws);
}

/* Element strides of a [B, N, H, D] (NHD) or [B, H, N, D] (HND) tensor of `rows` rows (N):
 * seq_len for Q, kv_len for K and V. */
static void strides_of(const sagerun_problem *p, uint32_t heads, uint32_t rows, int64_t *sb,
                       int64_t *sn, int64_t *sh)
{
    int64_t n = rows, d = p->head_dim;
    *sb = n * heads * d;
    if (p->layout == SAGERUN_LAYOUT_NHD) {
        *sn = heads * d;
        *sh = d;
    } else {
        *sn = d;
        *sh = n * d;
    }
}

/* V8's byte strides per (b, hk, c): [B, D, Hkv, L] for NHD, [B, Hkv, D, L] for HND. */
static void v8_strides_of(const sagerun_problem *p, uint32_t v_len, int64_t *sb, int64_t *sh,
                          int64_t *sd)
{
    int64_t h = p->heads_kv, d = p->head_dim, l = v_len;
    *sb = d * h * l;
    if (p->layout == SAGERUN_LAYOUT_NHD) {
        *sd = h * l;
        *sh = l;
    } else {
        *sh = d * l;
        *sd = l;
    }
}

/* ---- host ---------------------------------------------------------------------------------- */

int8_t sr_quant_int8_rn_sat(float x)
{
    if (isnan(x))
        return 0;
    float r = rintf(x); /* the default rounding mode: nearest, ties to even */
    if (r > 127.0f)
        return 127;
    if (r < -128.0f)
        return -128;
    return (int8_t)r;
}

/* The host's stand-in for rcp.approx.ftz.f32: the IEEE reciprocal, flushed. */
static float rcp_host(float a)
{
    return sr_ftz(1.0f / sr_ftz(a));
}

static float mul_ftz(float a, float b)
{
    return sr_ftz(sr_ftz(a) * sr_ftz(b));
}

static float load_elem(const uint16_t *base, int64_t i, bool bf16)
{
    return bf16 ? sr_bf16_to_float(base[i]) : sr_half_to_float(base[i]);
}

/* amax of V per channel, [B, Hkv, D]. */
static void host_v_amax(const sagerun_problem *p, const uint16_t *v, float *vmax)
{
    const bool bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    const uint32_t hd = p->heads_kv * p->head_dim, kv_len = sagerun_problem_kv_len(p);
    int64_t sb, sn, sh;
    strides_of(p, p->heads_kv, kv_len, &sb, &sn, &sh);
    for (uint32_t b = 0; b < p->batch; b++) {
        float *mx = vmax + (uint64_t)b * hd;
        for (uint32_t i = 0; i < hd; i++)
            mx[i] = 0.0f;
        for (uint32_t n = 0; n < kv_len; n++)
            for (uint32_t h = 0; h < p->heads_kv; h++) {
                int64_t off = b * sb + n * sn + h * sh;
                for (uint32_t c = 0; c < p->head_dim; c++) {
                    float *m = &mx[h * p->head_dim + c];
                    *m = fmaxf(*m, fabsf(load_elem(v, off + c, bf16)));
                }
            }
    }
}

/* k_mean on the host: the given one, or torch.mean's (for the device torch would run on). */
static sagerun_status host_k_mean(sagerun_context *ctx, const sagerun_problem *p,
                                  const uint16_t *k, uint64_t given_k_mean, uint64_t count,
                                  uint16_t *k_mean, sagerun_error *err)
{
    if (given_k_mean) {
        memmove(k_mean, (const void *)(uintptr_t)given_k_mean, count * 2);
        return SAGERUN_OK;
    }
    sr_torch_device dev;
    sr_torch_mean_plan plan;
    sagerun_status st = sr_torch_device_of(ctx, &dev, err);
    if (st == SAGERUN_OK)
        st = sr_torch_kmean_plan(p, &dev, &plan, err);
    if (st == SAGERUN_OK)
        st = sr_torch_kmean_host(p, &plan, k, k_mean, err);
    return st == SAGERUN_OK ? st : sr_error_prefix(st, err, "sage2 quantizer");
}

/* INT8 by row groups of one tensor of `rows` rows (Q: seq_len, mean NULL; K: kv_len, mean
 * [B, Hkv, D]). */
static void host_quant_rows(const sagerun_problem *p, uint32_t heads, uint32_t rows,
                            const uint16_t *src, const uint16_t *mean, uint32_t group_rows,
                            uint32_t groups_per_head, int8_t *dst, float *scale)
{
    const bool bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    const uint32_t d = p->head_dim;
    int64_t sb, sn, sh;
    strides_of(p, heads, rows, &sb, &sn, &sh);
    const float inv_max = 1.0f / SR_QUANT_INT8_MAX;
    float *m = calloc(d, sizeof *m);
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++) {
            for (uint32_t c = 0; c < d; c++)
                m[c] = mean ? load_elem(mean, ((int64_t)b * heads + h) * d + c, bf16) : 0.0f;
            for (uint32_t g = 0; g < groups_per_head; g++) {
                uint64_t n0 = (uint64_t)g * group_rows;
                uint64_t n1 = n0 + group_rows < rows ? n0 + group_rows : rows;
                float amax = 0.0f;
                for (uint64_t n = n0; n < n1; n++)
                    for (uint32_t c = 0; c < d; c++) {
                        float x = load_elem(src, b * sb + n * sn + h * sh + c, bf16);
                        if (mean)
                            x = sr_ftz(x - m[c]);
                        amax = fmaxf(amax, fabsf(x));
                    }
                float a = fmaxf(amax, SR_QUANT_INT8_EPS);
                float inv = mul_ftz(SR_QUANT_INT8_MAX, rcp_host(a));
                scale[((uint64_t)b * heads + h) * groups_per_head + g] = mul_ftz(a, inv_max);
                for (uint64_t n = n0; n < n1; n++)
                    for (uint32_t c = 0; c < d; c++) {
                        int64_t off = b * sb + n * sn + h * sh + c;
                        float x = load_elem(src, off, bf16);
                        if (mean)
                            x = sr_ftz(x - m[c]);
                        dst[off] = sr_quant_int8_rn_sat(mul_ftz(x, inv));
                    }
            }
        }
    free(m);
}

static void host_quant_v(const sagerun_problem *p, const uint16_t *v, const float *inv,
                         uint32_t v_len, uint8_t *dst)
{
    static const uint8_t perm[SR_QUANT_PERM_GROUP] = SR_QUANT_PERM_INIT;
    const bool bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    const uint32_t kv_len = sagerun_problem_kv_len(p);
    int64_t sb, sn, sh, ob, oh, od;
    strides_of(p, p->heads_kv, kv_len, &sb, &sn, &sh);
    v8_strides_of(p, v_len, &ob, &oh, &od);
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < p->heads_kv; h++)
            for (uint32_t c = 0; c < p->head_dim; c++) {
                float m = inv[((uint64_t)b * p->heads_kv + h) * p->head_dim + c];
                uint8_t *row = dst + b * ob + h * oh + c * od;
                for (uint32_t slot = 0; slot < v_len; slot++) {
                    uint32_t n = slot - slot % SR_QUANT_PERM_GROUP + perm[slot % SR_QUANT_PERM_GROUP];
                    row[slot] = n < kv_len
                                    ? sr_float_to_e4m3(
                                          mul_ftz(load_elem(v, b * sb + n * sn + h * sh + c, bf16), m))
                                    : 0;
                }
            }
}

static sagerun_status quantize_host(sagerun_context *ctx, const sagerun_problem *p,
                                    const sr_sage2_sizes *s,
                                    uint64_t q, uint64_t k, uint64_t v, uint64_t given_k_mean,
                                    sagerun_sage2_tensors *out, sagerun_error *err)
{
    const sagerun_sage2_quant_params *qp = &out->params;
    float *vmax = malloc(s->v_scale_count * sizeof *vmax);
    float *vinv = malloc(s->v_scale_count * sizeof *vinv);
    if (!vmax || !vinv) {
        free(vmax);
        free(vinv);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "sage2 quantizer: out of host memory");
    }
    uint16_t *k_mean = (uint16_t *)(uintptr_t)out->k_mean;
    sagerun_status st = host_k_mean(ctx, p, (const uint16_t *)(uintptr_t)k, given_k_mean,
                                    s->k_mean_count, k_mean, err);
    if (st != SAGERUN_OK) {
        free(vmax);
        free(vinv);
        return st;
    }
    host_v_amax(p, (const uint16_t *)(uintptr_t)v, vmax);

    const float r = qp->v_range, r_inv = 1.0f / qp->v_range;
    float *v_scale = (float *)(uintptr_t)out->v_scale;
    for (uint64_t i = 0; i < s->v_scale_count; i++) {
        v_scale[i] = mul_ftz(vmax[i], r_inv);
        vinv[i] = mul_ftz(r, rcp_host(vmax[i])); /* amax 0: inf, and V8 NaN as on the GPU */
    }
    host_quant_rows(p, p->heads_q, p->seq_len, (const uint16_t *)(uintptr_t)q, NULL,
                    qp->q_group_rows, s->q_scale_per_head, (int8_t *)(uintptr_t)out->q_int8,
                    (float *)(uintptr_t)out->q_scale);
    host_quant_rows(p, p->heads_kv, sagerun_problem_kv_len(p), (const uint16_t *)(uintptr_t)k,
                    k_mean, qp->k_block_rows, s->k_scale_per_head,
                    (int8_t *)(uintptr_t)out->k_int8, (float *)(uintptr_t)out->k_scale);
    host_quant_v(p, (const uint16_t *)(uintptr_t)v, vinv, s->v_len, (uint8_t *)(uintptr_t)out->v_fp8);
    free(vmax);
    free(vinv);
    return SAGERUN_OK;
}

/* ---- CUDA ---------------------------------------------------------------------------------- */

static sagerun_status launch(sagerun_context *ctx, const char *name, uint64_t gx, uint32_t gy,
                             uint32_t gz, uint32_t threads, void *param, sagerun_error *err)
{
    if (gx == 0 || gy == 0 || gz == 0)
        return SAGERUN_OK;
    if (gx > INT32_MAX || gy > 65535 || gz > 65535)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "sage2 quantizer: grid (%llu, %u, %u) of %s exceeds CUDA's limits",
                            (unsigned long long)gx, gy, gz, name);
    uint32_t grid[3] = {(uint32_t)gx, gy, gz}, block[3] = {threads, 1, 1};
    void *params[] = {param};
    return sr_launch_library_kernel(ctx, name, grid, block, 0, params, err);
}

static sagerun_status quantize_cuda(sagerun_context *ctx, const sagerun_problem *p,
                                    const sr_sage2_sizes *s, uint64_t q, uint64_t k, uint64_t v,
                                    uint64_t given_k_mean, sagerun_sage2_tensors *out,
                                    const sr_sage2_workspace *ws, unsigned stages,
                                    sagerun_error *err)
{
    const sagerun_sage2_quant_params *qp = &out->params;
    const uint32_t bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    if (!ws || !ws->kmean_scratch || !ws->partial_max || !ws->v_inv)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "sage2 quantizer: no workspace");
    if (p->head_dim % 8 != 0)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "sage2 quantizer on CUDA: head_dim %u is not a multiple of 8",
                            p->head_dim);
    if ((q | k | v | given_k_mean) % 16 != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer on CUDA: inputs must be 16-byte aligned");
    if (s->kv_elements / p->head_dim > UINT32_MAX || s->v_scale_count > UINT32_MAX)
        return sr_error_set(err, SAGERUN_UNSUPPORTED, "sage2 quantizer on CUDA: too many rows");
    sagerun_status st;
    const uint32_t kv_len = sagerun_problem_kv_len(p);
    int64_t sb, sn, sh;
    strides_of(p, p->heads_kv, kv_len, &sb, &sn, &sh);

    /* the kernels' seq_len: the rows of the tensor each reads (V and K: kv_len, Q: seq_len) */
    sr_quant_colreduce_params cr = {
        .v = v, .partial_max = ws->partial_max, .stride_b = sb, .stride_n = sn, .stride_h = sh,
        .batch = p->batch, .seq_len = kv_len, .heads = p->heads_kv,
        .head_dim = p->head_dim, .slices = s->mean_slices, .bf16 = bf16};
    uint64_t col_chunks = (uint64_t)p->heads_kv * p->head_dim / 8;
    if ((stages & SR_SAGE2_STAGE_COLUMNS) && !given_k_mean &&
        (st = sr_torch_kmean_cuda(ctx, p, &ws->kmean_plan, k, ws->kmean_scratch, out->k_mean,
                                  err)))
        return sr_error_prefix(st, err, "sage2 quantizer");
    if ((stages & SR_SAGE2_STAGE_COLUMNS) &&
        (st = launch(ctx, "sr_quant_colreduce_kernel", ceil_div(col_chunks, SR_QUANT_COL_THREADS),
                     s->mean_slices, p->batch, SR_QUANT_COL_THREADS, &cr, err)))
        return st;

    sr_quant_finalize_params fp = {
        .partial_max = ws->partial_max, .given_k_mean = given_k_mean, .k_mean = out->k_mean,
        .v_scale = out->v_scale, .v_inv = ws->v_inv, .columns = (uint32_t)s->v_scale_count,
        .slices = s->mean_slices, .v_range = qp->v_range, .v_range_inv = 1.0f / qp->v_range};
    if ((stages & SR_SAGE2_STAGE_FINALIZE) &&
        (st = launch(ctx, "sr_quant_finalize_kernel",
                     ceil_div(s->v_scale_count, SR_QUANT_FINAL_COLUMNS), 1, 1,
                     SR_QUANT_FINAL_THREADS, &fp, err)))
        return st;

    for (int t = 0; t < 2; t++) {
        if (!(stages & (t == 0 ? SR_SAGE2_STAGE_Q : SR_SAGE2_STAGE_K)))
            continue;
        uint32_t heads = t == 0 ? p->heads_q : p->heads_kv;
        uint32_t rows = t == 0 ? qp->q_group_rows : qp->k_block_rows;
        uint32_t len = t == 0 ? p->seq_len : kv_len;
        sr_quant_rows_params rp = {
            .src = t == 0 ? q : k, .dst = t == 0 ? out->q_int8 : out->k_int8,
            .scale = t == 0 ? out->q_scale : out->k_scale, .mean = t == 0 ? 0 : out->k_mean,
            .batch = p->batch, .seq_len = len, .heads = heads, .head_dim = p->head_dim,
            .group_rows = rows,
            .groups_per_head = t == 0 ? s->q_scale_per_head : s->k_scale_per_head,
            .bf16 = bf16};
        strides_of(p, heads, len, &rp.stride_b, &rp.stride_n, &rp.stride_h);
        uint64_t per_thread = ceil_div((uint64_t)rows * p->head_dim / 8, SR_QUANT_ROWS_THREADS);
        /* rowsf*: each thread keeps the same 8 channels (needs 128 % (D/8) == 0) */
        static const char *const names[2][3] = {
            {"sr_quant_rows4_kernel", "sr_quant_rows8_kernel", "sr_quant_rows16_kernel"},
            {"sr_quant_rowsf4_kernel", "sr_quant_rowsf8_kernel", "sr_quant_rowsf16_kernel"}};
        const int fixed = SR_QUANT_ROWS_THREADS % (p->head_dim / 8) == 0;
        const char *name = names[fixed][per_thread <= 4 ? 0 : per_thread <= 8 ? 1 : 2];
        if ((st = launch(ctx, name, rp.groups_per_head, heads, p->batch, SR_QUANT_ROWS_THREADS,
                         &rp, err)))
            return st;
    }

    sr_quant_v_params vp = {.v = v, .dst = out->v_fp8, .v_inv = ws->v_inv, .stride_b = sb,
                            .stride_n = sn, .stride_h = sh, .batch = p->batch,
                            .seq_len = kv_len, .heads = p->heads_kv,
                            .head_dim = p->head_dim, .v_len = s->v_len, .bf16 = bf16};
    v8_strides_of(p, s->v_len, &vp.out_stride_b, &vp.out_stride_h, &vp.out_stride_d);
    uint64_t cblocks = ceil_div(p->head_dim, SR_QUANT_V_TILE_CHANNELS);
    if (!(stages & SR_SAGE2_STAGE_V))
        return SAGERUN_OK;
    return launch(ctx, "sr_quant_v_kernel", ceil_div(s->v_len, SR_QUANT_V_TILE_TOKENS),
                  (uint32_t)(cblocks * p->heads_kv), p->batch, SR_QUANT_V_THREADS, &vp, err);
}

sagerun_status sr_sage2_quantize_stages(sagerun_context *ctx, const sagerun_problem *problem,
                                        uint64_t q, uint64_t k, uint64_t v, uint64_t given_k_mean,
                                        sagerun_sage2_tensors *out, const sr_sage2_workspace *ws,
                                        unsigned stages, sagerun_error *err)
{
    if (!ctx || !problem || !out || !q || !k || !v)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "sage2 quantizer: NULL argument");
    sr_sage2_sizes s;
    sagerun_status st = sr_sage2_sizes_of(problem, &out->params, &s, err);
    if (st != SAGERUN_OK)
        return st;
    if (out->v_len != s.v_len || out->q_scale_per_head != s.q_scale_per_head ||
        out->k_scale_per_head != s.k_scale_per_head)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2 quantizer: outputs were allocated for another problem");
    if (ctx->backend == SAGERUN_BACKEND_CUDA)
        return quantize_cuda(ctx, problem, &s, q, k, v, given_k_mean, out, ws, stages, err);
    return quantize_host(ctx, problem, &s, q, k, v, given_k_mean, out, err);
}

sagerun_status sr_sage2_quantize_into(sagerun_context *ctx, const sagerun_problem *problem,
                                      uint64_t q, uint64_t k, uint64_t v, uint64_t given_k_mean,
                                      sagerun_sage2_tensors *out, const sr_sage2_workspace *ws,
                                      sagerun_error *err)
{
    return sr_sage2_quantize_stages(ctx, problem, q, k, v, given_k_mean, out, ws,
                                    SR_SAGE2_STAGE_ALL, err);
}

sagerun_status sr_sage2_count_zero_v_channels(sagerun_context *ctx,
                                              const sagerun_problem *problem,
                                              const sagerun_sage2_tensors *t, uint64_t *count,
                                              sagerun_error *err)
{
    uint64_t n = (uint64_t)problem->batch * problem->heads_kv * problem->head_dim;
    float *scale = malloc(n * sizeof *scale);
    if (!scale)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "sage2 quantizer: out of host memory");
    sagerun_status st = sagerun_mem_download(ctx, scale, t->v_scale, n * sizeof *scale, err);
    if (st == SAGERUN_OK) {
        *count = 0;
        for (uint64_t i = 0; i < n; i++)
            *count += !(scale[i] > 0.0f);
    }
    free(scale);
    return st;
}

sagerun_status sr_sage2_quantize(sagerun_context *ctx, const sagerun_problem *problem, uint64_t q,
                                 uint64_t k, uint64_t v, const sagerun_sage2_quant_params *params,
                                 uint64_t given_k_mean, sagerun_sage2_tensors *out,
                                 uint64_t *zero_v_channels, sagerun_error *err)
{
    sagerun_status st = sr_sage2_tensors_alloc(ctx, problem, params, out, err);
    if (st != SAGERUN_OK)
        return st;
    sr_sage2_workspace ws = {0};
    if (ctx->backend == SAGERUN_BACKEND_CUDA)
        st = sr_sage2_workspace_alloc(ctx, problem, &ws, err);
    if (st == SAGERUN_OK)
        st = sr_sage2_quantize_into(ctx, problem, q, k, v, given_k_mean, out, &ws, err);
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(ctx, err);
    sr_sage2_workspace_free(ctx, &ws);
    if (st == SAGERUN_OK && zero_v_channels)
        st = sr_sage2_count_zero_v_channels(ctx, problem, out, zero_v_channels, err);
    if (st != SAGERUN_OK)
        sr_sage2_tensors_free(ctx, out);
    return st;
}

sagerun_status sr_sage2_quantize_inputs(sagerun_context *ctx, const sagerun_problem *problem,
                                        uint64_t q, uint64_t k, uint64_t v,
                                        const sagerun_sage2_quant_params *params,
                                        sagerun_sage2_tensors *out, sagerun_error *err)
{
    return sr_sage2_quantize(ctx, problem, q, k, v, params, 0, out, NULL, err);
}

sagerun_status sagerun_sage2_quantize(const sagerun_inputs *in,
                                      const sagerun_sage2_quant_params *params,
                                      sagerun_sage2_tensors *out, sagerun_error *err)
{
    if (!in || !params || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "sage2_quantize: NULL argument");
    /* both structs whole (0: this header's size): out receives every tensor, and a shorter one
     * was written past its end */
    if ((params->struct_size && params->struct_size < sizeof *params) ||
        (out->struct_size && out->struct_size < sizeof *out))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sage2_quantize: struct_size %u (params) and %u (out); this sagerun "
                            "needs %zu and %zu (or 0)",
                            params->struct_size, out->struct_size, sizeof *params, sizeof *out);
    return sr_sage2_quantize(in->ctx, &in->problem, in->q, in->k, in->v, params, 0, out, NULL,
                             err);
}

void sagerun_sage2_tensors_free(sagerun_context *ctx, sagerun_sage2_tensors *tensors)
{
    if (ctx && tensors)
        sr_sage2_tensors_free(ctx, tensors);
}

void sr_sage2_warn_zero_v(sagerun_inputs *in, uint64_t count)
{
    if (count == 0 || in->warned_zero_v)
        return;
    in->warned_zero_v = true;
    fprintf(stderr,
            "sagerun: warning: V has %llu all-zero channel%s (of %llu): the sage2 variants' "
            "output is NaN there (v_scale 0), as SageAttention's is\n",
            (unsigned long long)count, count == 1 ? "" : "s",
            (unsigned long long)in->problem.batch * in->problem.heads_kv * in->problem.head_dim);
}
