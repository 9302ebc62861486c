/* k_mean in torch.mean's order: the plan (PyTorch's setReduceConfig for this reduction), the
 * host computation and the CUDA launches. See torch_mean.h and kernels/torch_mean_math.h. */
#include "torch_mean.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "kernels/torch_mean_math.h"

/* ReduceConfig's limits for 16-bit inputs (mnt_wrapper: 512 threads), the warp, and
 * setReduceConfig's bounds on the values one thread sums. */
#define TORCH_MAX_THREADS 512u
#define TORCH_WARP 32u
#define TORCH_MIN_VALUES_PER_THREAD 16u
#define TORCH_MAX_VALUES_PER_THREAD 256u
/* Beyond this many bytes an operand does not fit 32-bit indexing and TensorIterator splits it. */
#define TORCH_MAX_32BIT_OFFSET 2147483647ull

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* floor to a power of two, at least 1 (Reduce.cuh's last_pow2) */
static uint32_t last_pow2(uint32_t n)
{
    n |= n >> 1;
    n |= n >> 2;
    n |= n >> 4;
    n |= n >> 8;
    n |= n >> 16;
    return n - (n >> 1) > 1 ? n - (n >> 1) : 1;
}

sagerun_status sr_torch_mean_plan_make(uint64_t outputs, uint64_t n, uint32_t vec,
                                       const sr_torch_device *dev, sr_torch_mean_plan *plan,
                                       sagerun_error *err)
{
    memset(plan, 0, sizeof *plan);
    if (vec != 1 && vec != 2 && vec != 4)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "torch mean plan: vec %u", vec);
    if (outputs == 0 || n == 0 || outputs % vec != 0 || outputs > INT32_MAX || n > INT32_MAX)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "torch mean plan: %llu outputs of %llu inputs (vec %u) is outside "
                            "torch's int32 reduction configuration",
                            (unsigned long long)outputs, (unsigned long long)n, vec);
    if (!dev || dev->sm_count == 0 || dev->max_threads_per_sm == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "torch mean plan: no device properties");
    /* "vectorize along output": block.x over the outputs (vec per thread), block.y over inputs */
    const uint32_t mnt = TORCH_MAX_THREADS / vec;
    const uint64_t dim0 = outputs / vec, dim1 = n;
    const uint32_t d0 = dim0 < mnt ? last_pow2((uint32_t)dim0) : mnt;
    const uint32_t d1 = dim1 < mnt ? last_pow2((uint32_t)dim1) : mnt;
    uint32_t bw = min_u32(d0, TORCH_WARP);
    const uint32_t bh = min_u32(d1, mnt / bw);
    bw = min_u32(d0, mnt / bh);
    uint64_t step_output = bw, step_input = 1;
    /* split the inputs across the warps of a block when each thread keeps enough of them */
    const bool split = n >= min_u32(bh * 16, TORCH_MAX_VALUES_PER_THREAD);
    if (split)
        step_input = bh;
    else
        step_output *= bh;
    const uint64_t blocks_per_sm = dev->max_threads_per_sm / (bw * bh);
    const uint64_t target_grid = (uint64_t)dev->sm_count * blocks_per_sm;
    const uint64_t grid = div_up(outputs / vec, step_output);
    const uint64_t per_thread = div_up(n, step_input);
    uint64_t ctas = 1;
    /* and across blocks (a global reduction) when that still leaves a lot per thread */
    if (split && per_thread >= TORCH_MAX_VALUES_PER_THREAD && grid <= target_grid) {
        uint64_t c1 = div_up(target_grid, grid);
        uint64_t c2 = div_up(per_thread, TORCH_MIN_VALUES_PER_THREAD);
        uint64_t c3 = div_up(per_thread, TORCH_MAX_VALUES_PER_THREAD);
        ctas = c1 < c2 ? c1 : c2;
        if (ctas < c3)
            ctas = c3;
    }
    plan->outputs = outputs;
    plan->n = (uint32_t)n;
    plan->vec = vec;
    plan->block_x = bw;
    plan->block_y = bh;
    plan->grid_x = (uint32_t)grid;
    plan->rows = split ? bh : 1;
    plan->ctas = (uint32_t)ctas;
    /* MeanOps' factor: float(num_output_elements) / numel, the int64 converted to float */
    plan->factor = (float)outputs / (float)(outputs * n);
    return SAGERUN_OK;
}

sagerun_status sr_torch_kmean_plan(const sagerun_problem *p, const sr_torch_device *dev,
                                   sr_torch_mean_plan *plan, sagerun_error *err)
{
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16)
        return sr_error_set(err, SAGERUN_UNSUPPORTED, "k_mean: dtype must be F16 or BF16");
    /* TensorIterator moves the reduced axis first and coalesces the rest: its first output axis
     * is Hkv*D (NHD) or D (HND); every other stride is a multiple of it. */
    const uint64_t inner = p->layout == SAGERUN_LAYOUT_NHD ? (uint64_t)p->heads_kv * p->head_dim
                                                           : p->head_dim;
    if (inner < 2 && sagerun_problem_kv_len(p) > 1)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "k_mean in torch's order: K's sequence axis is its fastest-moving "
                            "axis (D = 1), a reduction layout sagerun does not model");
    uint32_t vec = 4;
    while (inner % vec != 0)
        vec /= 2;
    const uint64_t outputs = (uint64_t)p->batch * p->heads_kv * p->head_dim;
    return sr_torch_mean_plan_make(outputs, sagerun_problem_kv_len(p), vec, dev, plan, err);
}

/* Whether TensorIterator would split K (2 bytes per element) for 32-bit indexing. */
static bool beyond_32bit_indexing(const sagerun_problem *p)
{
    uint64_t elements = (uint64_t)p->batch * sagerun_problem_kv_len(p) * p->heads_kv * p->head_dim;
    return 1 + (elements - 1) * 2 > TORCH_MAX_32BIT_OFFSET;
}

static sagerun_status check_indexing(const sagerun_problem *p, sagerun_error *err)
{
    if (!beyond_32bit_indexing(p))
        return SAGERUN_OK;
    return sr_error_set(err, SAGERUN_UNSUPPORTED,
                        "k_mean in torch's order: K [%u, %u, %u, %u] is over 2 GiB, which "
                        "torch reduces in 32-bit-indexed pieces (an order sagerun does not model); "
                        "give the inputs file a k_mean tensor",
                        p->batch, sagerun_problem_kv_len(p), p->heads_kv, p->head_dim);
}

sagerun_status sr_torch_device_of(sagerun_context *ctx, sr_torch_device *dev, sagerun_error *err)
{
    const sr_torch_device fallback = SR_TORCH_DEVICE_DEFAULT;
    *dev = fallback;
    if (ctx->backend != SAGERUN_BACKEND_CUDA) {
        const char *env = secure_getenv("SAGERUN_TORCH_DEVICE");
        if (!env || !*env)
            return SAGERUN_OK;
        unsigned sms = 0, threads = 0;
        char end = 0;
        if (sscanf(env, "%ux%u%c", &sms, &threads, &end) != 2 || sms == 0 || threads == 0)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "SAGERUN_TORCH_DEVICE is \"%s\", expected SMSxTHREADS (the SM "
                                "count and the maximum threads per SM, e.g. 132x2048)",
                                env);
        dev->sm_count = sms;
        dev->max_threads_per_sm = threads;
        return SAGERUN_OK;
    }
    sagerun_status st = sr_context_bind(ctx, err);
    if (st != SAGERUN_OK)
        return st;
    CUdevice d;
    int sms = 0, threads = 0;
    SR_CU_CHECK(err, sr_cu.cuDeviceGet(&d, ctx->device));
    SR_CU_CHECK(err,
                sr_cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
    SR_CU_CHECK(err, sr_cu.cuDeviceGetAttribute(
                         &threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d));
    dev->sm_count = (uint32_t)sms;
    dev->max_threads_per_sm = (uint32_t)threads;
    return SAGERUN_OK;
}

uint64_t sr_torch_kmean_scratch_floats(const sagerun_problem *p, const sr_torch_mean_plan *plan)
{
    uint64_t columns = (uint64_t)p->batch * p->heads_kv * p->head_dim;
    return ((uint64_t)plan->rows * plan->ctas + plan->rows) * columns;
}

/* Element strides of K ([B, kv_len, Hkv, D] or [B, Hkv, kv_len, D]). */
static void k_strides(const sagerun_problem *p, int64_t *sb, int64_t *sn, int64_t *sh)
{
    const int64_t n = sagerun_problem_kv_len(p), h = p->heads_kv, d = p->head_dim;
    *sb = n * h * d;
    *sn = p->layout == SAGERUN_LAYOUT_NHD ? h * d : d;
    *sh = p->layout == SAGERUN_LAYOUT_NHD ? d : n * d;
}

/* acc[h * D + c] += K[b, row, h, c] for every head and channel. */
static void add_row(const sagerun_problem *p, const uint16_t *row, int64_t sh, float *acc)
{
    const bool bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    for (uint32_t h = 0; h < p->heads_kv; h++)
        for (uint32_t c = 0; c < p->head_dim; c++) {
            uint16_t x = row[h * sh + c];
            float *a = &acc[(uint64_t)h * p->head_dim + c];
            *a = sr_add_rn_noftz(*a, bf16 ? sr_bf16_to_float(x) : sr_half_to_float(x));
        }
}

/* Step 1 for partial `part` of batch b, every column of it at once (rows of K in the order each
 * column's terms take): out[col] for the Hkv*D columns. acc: 4 * Hkv*D floats of scratch. */
static void host_partial(const sagerun_problem *p, const uint16_t *kb, uint32_t part,
                         uint32_t partials, float *acc, float *out)
{
    int64_t sb, sn, sh;
    k_strides(p, &sb, &sn, &sh);
    const uint64_t hd = (uint64_t)p->heads_kv * p->head_dim, step = partials;
    const uint64_t end = sagerun_problem_kv_len(p);
    memset(acc, 0, SR_TORCH_MEAN_ACCS * hd * sizeof *acc);
    uint64_t idx = part;
    for (; idx + (SR_TORCH_MEAN_ACCS - 1) * step < end; idx += SR_TORCH_MEAN_ACCS * step)
        for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS; i++)
            add_row(p, kb + (int64_t)(idx + i * step) * sn, sh, acc + i * hd);
    for (uint32_t i = 0; i < SR_TORCH_MEAN_ACCS && idx < end; i++, idx += step)
        add_row(p, kb + (int64_t)idx * sn, sh, acc + i * hd);
    for (uint64_t col = 0; col < hd; col++)
        out[col] = sr_add_rn_noftz(
            sr_add_rn_noftz(sr_add_rn_noftz(acc[col], acc[hd + col]), acc[2 * hd + col]),
            acc[3 * hd + col]);
}

sagerun_status sr_torch_kmean_host(const sagerun_problem *p, const sr_torch_mean_plan *plan,
                                   const uint16_t *k, uint16_t *k_mean, sagerun_error *err)
{
    sagerun_status st = check_indexing(p, err);
    if (st != SAGERUN_OK)
        return st;
    int64_t sb, sn, sh;
    k_strides(p, &sb, &sn, &sh);
    const uint64_t hd = (uint64_t)p->heads_kv * p->head_dim;
    const uint32_t partials = plan->rows * plan->ctas;
    /* one batch at a time: [P + rows][Hkv*D] as the device lays out its scratch */
    float *buf = malloc(((uint64_t)partials + plan->rows) * hd * sizeof *buf);
    float *acc = malloc(SR_TORCH_MEAN_ACCS * hd * sizeof *acc);
    if (!buf || !acc) {
        free(buf);
        free(acc);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "k_mean: out of host memory");
    }
    const uint32_t bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    for (uint32_t b = 0; b < p->batch; b++) {
        for (uint32_t part = 0; part < partials; part++)
            host_partial(p, k + (int64_t)b * sb, part, partials, acc, buf + part * hd);
        for (uint64_t col = 0; col < hd; col++)
            k_mean[b * hd + col] =
                sr_torch_mean_finish(buf + col, hd, plan->rows, plan->ctas, plan->factor, bf16);
    }
    free(buf);
    free(acc);
    return SAGERUN_OK;
}

static sagerun_status launch1d(sagerun_context *ctx, const char *name, uint64_t threads,
                               void *param, sagerun_error *err)
{
    const uint64_t blocks = div_up(threads, 256);
    if (blocks > INT32_MAX)
        return sr_error_set(err, SAGERUN_UNSUPPORTED, "k_mean: %s needs %llu blocks", name,
                            (unsigned long long)blocks);
    uint32_t grid[3] = {(uint32_t)blocks, 1, 1}, block[3] = {256, 1, 1};
    void *params[] = {param};
    return sr_launch_library_kernel(ctx, name, grid, block, 0, params, err);
}

sagerun_status sr_torch_kmean_cuda(sagerun_context *ctx, const sagerun_problem *p,
                                   const sr_torch_mean_plan *plan, uint64_t k, uint64_t scratch,
                                   uint64_t k_mean, sagerun_error *err)
{
    sagerun_status st = check_indexing(p, err);
    if (st != SAGERUN_OK)
        return st;
    if (p->head_dim % 8 != 0 || k % 16 != 0)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "k_mean on CUDA: needs D a multiple of 8 (D = %u) and 16-byte "
                            "aligned K",
                            p->head_dim);
    const uint64_t columns = (uint64_t)p->batch * p->heads_kv * p->head_dim;
    if (columns > UINT32_MAX)
        return sr_error_set(err, SAGERUN_UNSUPPORTED, "k_mean on CUDA: too many columns");
    const uint32_t partials = plan->rows * plan->ctas;
    sr_torch_mean_partial_params pp = {
        .k = k, .partial = scratch, .batch = p->batch, .seq_len = sagerun_problem_kv_len(p),
        .heads = p->heads_kv, .head_dim = p->head_dim, .partials = partials,
        .bf16 = p->dtype == SAGERUN_DTYPE_BF16};
    k_strides(p, &pp.stride_b, &pp.stride_n, &pp.stride_h);
    if ((st = launch1d(ctx, "sr_torch_mean_partial_kernel", columns / 8 * partials, &pp, err)))
        return st;
    sr_torch_mean_final_params fp = {.partial = scratch, .k_mean = k_mean,
                                     .columns = (uint32_t)columns, .rows = plan->rows,
                                     .ctas = plan->ctas, .bf16 = pp.bf16, .factor = plan->factor};
    return launch1d(ctx, "sr_torch_mean_final_kernel", columns, &fp, err);
}
