/* Synthetic inputs: parameter set-up shared by both backends, the host loop, the CUDA launch. */
#include "generate.h"

#include <math.h>
#include <string.h>

#include "kernels/generate_math.h"

#define SR_GEN_THREADS 256u         /* kThreads in kernels/generate.cu */
#define SR_GEN_MAX_BLOCKS (1u << 20) /* grid-stride beyond this */

static const char *const tensor_names[3] = {"q", "k", "v"};

void sr_synthetic_default(sr_synthetic *syn, uint64_t seed)
{
    memset(syn, 0, sizeof *syn);
    syn->seed = seed;
    syn->q_std = syn->k_std = syn->v_std = 1.0;
    syn->k_bias = 2.0;
    syn->outlier_channels = 0;
    syn->outlier_scale = 8.0;
}

static int32_t knob_q8(double x)
{
    return (int32_t)lround(x * 256.0);
}

static sagerun_status check_knob(const char *name, double x, double lo, sagerun_error *err)
{
    if (!(x >= lo && x <= SR_SYNTHETIC_KNOB_MAX))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "synthetic input: %s = %g is outside [%g, %g]", name, x, lo,
                            SR_SYNTHETIC_KNOB_MAX);
    return SAGERUN_OK;
}

sagerun_status sr_synthetic_check(const sr_synthetic *syn, const sagerun_problem *problem,
                                  sagerun_error *err)
{
    sagerun_status st;
    if ((st = check_knob("q_std", syn->q_std, 0.0, err)) ||
        (st = check_knob("k_std", syn->k_std, 0.0, err)) ||
        (st = check_knob("v_std", syn->v_std, 0.0, err)) ||
        (st = check_knob("k_bias", syn->k_bias, 0.0, err)) ||
        (st = check_knob("outlier_scale", syn->outlier_scale, 1.0, err)))
        return st;
    if (problem && syn->outlier_channels > problem->head_dim)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "synthetic input: outlier_channels = %u exceeds head_dim %u",
                            syn->outlier_channels, problem->head_dim);
    return SAGERUN_OK;
}

static void tensor_params(const sagerun_problem *p, const sr_synthetic *syn, int tensor,
                          uint64_t out, sr_gen_tensor_params *t)
{
    memset(t, 0, sizeof *t);
    t->out = out;
    t->key = sr_gen_key(syn->seed, (uint32_t)tensor);
    t->key_bias = sr_gen_key(syn->seed, SR_GEN_STREAM_K_BIAS);
    t->key_outliers = sr_gen_key(syn->seed, SR_GEN_STREAM_OUTLIERS);
    uint32_t qb, kb;
    uint64_t qr, kr; /* as stored: packed (varlen), a page cache (paged), or [B, N] */
    sr_problem_rows(p, &qb, &qr, &kb, &kr);
    t->batch = tensor == SR_GEN_STREAM_Q ? qb : kb;
    t->seq_len = (uint32_t)(tensor == SR_GEN_STREAM_Q ? qr : kr);
    t->heads = tensor == SR_GEN_STREAM_Q ? p->heads_q : p->heads_kv;
    t->head_dim = p->head_dim;
    t->group = tensor == SR_GEN_STREAM_Q ? p->heads_q / p->heads_kv : 1;
    t->elements = (uint64_t)t->batch * t->seq_len * t->heads * p->head_dim;
    t->layout = p->layout;
    t->bf16 = p->dtype == SAGERUN_DTYPE_BF16;
    double std = tensor == SR_GEN_STREAM_Q ? syn->q_std
                 : tensor == SR_GEN_STREAM_K ? syn->k_std
                                             : syn->v_std;
    t->std_q8 = knob_q8(std);
    t->bias_q8 = tensor == SR_GEN_STREAM_K ? knob_q8(syn->k_bias) : 0;
    t->outlier_channels = tensor == SR_GEN_STREAM_V ? 0 : (int32_t)syn->outlier_channels;
    t->outlier_scale_q8 = knob_q8(syn->outlier_scale);
}

static sagerun_status check_problem(const sagerun_problem *p, sagerun_error *err)
{
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "synthetic input: dtype %s not supported (only F16 and BF16)",
                            sagerun_dtype_name((int)p->dtype) ? sagerun_dtype_name((int)p->dtype)
                                                              : "?");
    if (p->heads_kv == 0 || p->heads_q % p->heads_kv != 0 || p->head_dim == 0 ||
        p->seq_len == 0 || p->batch == 0 || p->layout > SAGERUN_LAYOUT_HND)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "synthetic input: inconsistent problem [%u, %u, %u, %u] Hkv %u",
                            p->batch, p->seq_len, p->heads_q, p->head_dim, p->heads_kv);
    return SAGERUN_OK;
}

sagerun_status sr_generate_tensor_host(const sagerun_problem *problem, const sr_synthetic *syn,
                                       int tensor, void *out, sagerun_error *err)
{
    sagerun_status st;
    if ((st = check_problem(problem, err)) || (st = sr_synthetic_check(syn, problem, err)))
        return st;
    if (tensor < 0 || tensor > 2)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "synthetic input: bad tensor %d",
                            tensor);
    sr_gen_tensor_params t;
    tensor_params(problem, syn, tensor, (uint64_t)(uintptr_t)out, &t);
    uint16_t *dst = out;
    uint64_t rows = t.elements / t.head_dim;
    for (uint64_t row = 0; row < rows; row++) {
        uint32_t h;
        uint64_t base = sr_gen_row_coords(&t, row, &h);
        uint16_t *r = dst + row * t.head_dim;
        for (uint32_t c = 0; c < t.head_dim; c++)
            r[c] = sr_gen_element(&t, base + c, h, c);
    }
    return SAGERUN_OK;
}

sagerun_status sr_generate_inputs(sagerun_context *ctx, const sagerun_problem *problem,
                                  const sr_synthetic *syn, uint64_t q, uint64_t k, uint64_t v,
                                  sagerun_error *err)
{
    sagerun_status st;
    if ((st = check_problem(problem, err)) || (st = sr_synthetic_check(syn, problem, err)))
        return st;
    uint64_t addr[3] = {q, k, v};
    if (ctx->backend != SAGERUN_BACKEND_CUDA) {
        for (int t = 0; t < 3; t++)
            if (addr[t] && (st = sr_generate_tensor_host(problem, syn, t,
                                                         (void *)(uintptr_t)addr[t], err)))
                return st;
        return SAGERUN_OK;
    }

    if (problem->head_dim % SR_GEN_VECTOR != 0)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "synthetic input on CUDA: head_dim %u is not a multiple of %d",
                            problem->head_dim, SR_GEN_VECTOR);
    sr_gen_launch_params lp;
    uint64_t max_chunks = 0;
    for (int t = 0; t < 3; t++) {
        tensor_params(problem, syn, t, addr[t], &lp.t[t]);
        if (addr[t] % 16 != 0)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "synthetic input on CUDA: tensor %s is not 16-byte aligned",
                                tensor_names[t]);
        if (lp.t[t].elements / lp.t[t].head_dim > UINT32_MAX)
            return sr_error_set(err, SAGERUN_UNSUPPORTED,
                                "synthetic input on CUDA: tensor %s has more than 2^32 rows",
                                tensor_names[t]);
        uint64_t chunks = lp.t[t].elements / SR_GEN_VECTOR;
        if (addr[t] && chunks > max_chunks)
            max_chunks = chunks;
    }
    if (max_chunks == 0)
        return SAGERUN_OK;
    uint64_t blocks = (max_chunks + SR_GEN_THREADS - 1) / SR_GEN_THREADS;
    uint32_t grid[3] = {blocks > SR_GEN_MAX_BLOCKS ? SR_GEN_MAX_BLOCKS : (uint32_t)blocks, 3, 1};
    uint32_t block[3] = {SR_GEN_THREADS, 1, 1};
    void *params[] = {&lp};
    return sr_launch_library_kernel(ctx, "sr_generate_qkv_kernel", grid, block, 0, params, err);
}
