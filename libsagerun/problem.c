/* Problems: the shape of one attention call, its checks and its sizes. Dtypes. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* One table of dtypes: value, safetensors name, bytes per element. */
#define SR_DTYPE_MAP(X)                                                                            \
    X(SAGERUN_DTYPE_F16, "F16", 2)                                                                 \
    X(SAGERUN_DTYPE_BF16, "BF16", 2)                                                               \
    X(SAGERUN_DTYPE_F32, "F32", 4)                                                                 \
    X(SAGERUN_DTYPE_I8, "I8", 1)                                                                   \
    X(SAGERUN_DTYPE_F8_E4M3, "F8_E4M3", 1)                                                         \
    X(SAGERUN_DTYPE_F64, "F64", 8)

size_t sagerun_dtype_size(int dtype)
{
    switch (dtype) {
#define SR_DTYPE_SIZE_(value, name, size)                                                          \
    case value:                                                                                    \
        return size;
        SR_DTYPE_MAP(SR_DTYPE_SIZE_)
#undef SR_DTYPE_SIZE_
    }
    return 0;
}

const char *sagerun_dtype_name(int dtype)
{
    switch (dtype) {
#define SR_DTYPE_NAME_(value, name, size)                                                          \
    case value:                                                                                    \
        return name;
        SR_DTYPE_MAP(SR_DTYPE_NAME_)
#undef SR_DTYPE_NAME_
    }
    return NULL;
}

/* The words for a Q/K/V dtype on the command line, in workload files and in reports: the first is
 * the one written, the others (any case, so the safetensors names too) are read as well. */
static const struct {
    int dtype;
    const char *words[5];
} sr_dtype_words[] = {
    {SAGERUN_DTYPE_F16, {"fp16", "f16", "float16", "half", NULL}},
    {SAGERUN_DTYPE_BF16, {"bf16", "bfloat16", NULL}},
};

int sagerun_dtype_parse(const char *word)
{
    for (size_t i = 0; word && i < SR_ARRAY_LEN(sr_dtype_words); i++)
        for (const char *const *w = sr_dtype_words[i].words; *w; w++)
            if (strcasecmp(word, *w) == 0)
                return sr_dtype_words[i].dtype;
    return -1;
}

const char *sagerun_dtype_word(int dtype)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(sr_dtype_words); i++)
        if (sr_dtype_words[i].dtype == dtype)
            return sr_dtype_words[i].words[0];
    return NULL;
}

sagerun_problem sagerun_problem_make(uint32_t batch, uint32_t seq_len, uint32_t heads_q,
                                     uint32_t heads_kv, uint32_t head_dim)
{
    sagerun_problem p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.batch = batch;
    p.seq_len = seq_len;
    p.heads_q = heads_q;
    p.heads_kv = heads_kv;
    p.head_dim = head_dim;
    p.layout = SAGERUN_LAYOUT_NHD;
    p.dtype = SAGERUN_DTYPE_F16;
    p.causal = 0;
    p.sm_scale = 0.0f;
    return p;
}

/* Limits that keep every kernel's index arithmetic in range: element offsets are 64-bit, grid
 * dimensions y and z are at most 65535, and per-(b,h) row indices are 32-bit signed. */
#define SR_MAX_GRID_YZ 65535u
#define SR_MAX_SEQ_LEN (1u << 30)
#define SR_MAX_HEAD_DIM 1024u
#define SR_MAX_TENSOR_BYTES (1ull << 46) /* 64 TiB: far above any device, far below overflow */

sagerun_status sagerun_problem_check(const sagerun_problem *p, sagerun_error *err)
{
    if (!p)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "problem is NULL");
    if (p->struct_size < sizeof(sagerun_problem))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "problem struct_size %u is smaller than %zu (uninitialised?)",
                            p->struct_size, sizeof(sagerun_problem));
    if (p->batch == 0 || p->seq_len == 0 || p->heads_q == 0 || p->heads_kv == 0 ||
        p->head_dim == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "shape [B=%u, N=%u, Hq=%u, D=%u] Hkv=%u: every size must be >= 1",
                            p->batch, p->seq_len, p->heads_q, p->head_dim, p->heads_kv);
    if (p->heads_q % p->heads_kv != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "Hq=%u is not a multiple of Hkv=%u (grouped-query attention needs "
                            "Hq = g*Hkv)",
                            p->heads_q, p->heads_kv);
    if (p->batch > SR_MAX_GRID_YZ || p->heads_q > SR_MAX_GRID_YZ)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "B=%u or Hq=%u exceeds %u (CUDA grid limit)", p->batch, p->heads_q,
                            SR_MAX_GRID_YZ);
    if (p->seq_len > SR_MAX_SEQ_LEN)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "N=%u exceeds the limit %u",
                            p->seq_len, SR_MAX_SEQ_LEN);
    if (p->head_dim > SR_MAX_HEAD_DIM)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "D=%u exceeds the limit %u",
                            p->head_dim, SR_MAX_HEAD_DIM);
    if (p->layout != SAGERUN_LAYOUT_NHD && p->layout != SAGERUN_LAYOUT_HND)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "unknown layout %u", p->layout);
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "dtype %s is not supported for Q/K/V (F16 or BF16)",
                            sagerun_dtype_name((int)p->dtype) ? sagerun_dtype_name((int)p->dtype)
                                                              : "(unknown)");
    if (p->causal > 1)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "causal must be 0 or 1, not %u",
                            p->causal);
    if (!(p->sm_scale >= 0.0f) || isinf(p->sm_scale))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sm_scale %g must be a finite number >= 0 (0 means D^-0.5)",
                            (double)p->sm_scale);
    uint64_t elems, bytes;
    if (!sr_mul_u64(p->batch, p->seq_len, &elems) || !sr_mul_u64(elems, p->heads_q, &elems) ||
        !sr_mul_u64(elems, p->head_dim, &elems) ||
        !sr_mul_u64(elems, sagerun_dtype_size((int)p->dtype), &bytes) ||
        bytes > SR_MAX_TENSOR_BYTES)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "shape [%u, %u, %u, %u] is too large: Q would exceed %llu bytes",
                            p->batch, p->seq_len, p->heads_q, p->head_dim,
                            (unsigned long long)SR_MAX_TENSOR_BYTES);
    return SAGERUN_OK;
}

uint64_t sagerun_problem_q_elements(const sagerun_problem *p)
{
    if (!p)
        return 0;
    return (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim;
}

uint64_t sagerun_problem_kv_elements(const sagerun_problem *p)
{
    if (!p)
        return 0;
    return (uint64_t)p->batch * p->seq_len * p->heads_kv * p->head_dim;
}

double sagerun_problem_operations(const sagerun_problem *p)
{
    if (!p)
        return 0;
    /* causal: row n attends to keys 0..n, N(N+1)/2 (query, key) pairs instead of N^2 */
    const double pairs = p->causal ? (double)p->seq_len * ((double)p->seq_len + 1) / 2
                                   : (double)p->seq_len * (double)p->seq_len;
    return 4.0 * p->batch * p->heads_q * pairs * p->head_dim;
}

float sagerun_problem_sm_scale(const sagerun_problem *p)
{
    if (!p)
        return 0.0f;
    if (p->sm_scale > 0.0f)
        return p->sm_scale;
    return (float)(1.0 / sqrt((double)p->head_dim));
}
