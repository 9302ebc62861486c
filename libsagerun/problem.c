/* Problems: the shape of one attention call, its checks and its sizes. Dtypes. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
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
    X(SAGERUN_DTYPE_F64, "F64", 8)                                                                 \
    X(SAGERUN_DTYPE_I32, "I32", 4)

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

/* The fields of ABI 0.1's sagerun_problem: a caller built against it has a struct this large,
 * and sagerun_problem_make@SAGERUN_0 returns one. */
typedef struct sr_problem_0_1 {
    uint32_t struct_size, batch, seq_len, heads_q, heads_kv, head_dim, layout, dtype, causal;
    float sm_scale;
} sr_problem_0_1;
_Static_assert(sizeof(sr_problem_0_1) == SR_PROBLEM_0_1_SIZE, "ABI 0.1's problem");
_Static_assert(offsetof(sagerun_problem, kv_len) == SR_PROBLEM_0_1_SIZE, "0.2 fields follow 0.1's");

SAGERUN_API sagerun_problem sr_problem_make_0_2(uint32_t batch, uint32_t seq_len,
                                                uint32_t heads_q, uint32_t heads_kv,
                                                uint32_t head_dim);
SAGERUN_API sagerun_problem sr_problem_make_0_2(uint32_t batch, uint32_t seq_len, uint32_t heads_q,
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
    p.window_left = p.window_right = -1;
    return p;
}

/* Callers linked against 0.1 (sagerun_problem_make@SAGERUN_0) keep getting the 0.1 struct:
 * returning the larger one would write past the caller's. */
SAGERUN_API sr_problem_0_1 sr_problem_make_0_1(uint32_t batch, uint32_t seq_len,
                                               uint32_t heads_q, uint32_t heads_kv,
                                               uint32_t head_dim);
SAGERUN_API sr_problem_0_1 sr_problem_make_0_1(uint32_t batch, uint32_t seq_len, uint32_t heads_q,
                                   uint32_t heads_kv, uint32_t head_dim)
{
    sagerun_problem p = sr_problem_make_0_2(batch, seq_len, heads_q, heads_kv, head_dim);
    sr_problem_0_1 old;
    memcpy(&old, &p, sizeof old);
    old.struct_size = sizeof old;
    return old;
}
__asm__(".symver sr_problem_make_0_1, sagerun_problem_make@SAGERUN_0");
__asm__(".symver sr_problem_make_0_2, sagerun_problem_make@@SAGERUN_0.2");

void sr_problem_load(const sagerun_problem *in, sagerun_problem *out)
{
    memset(out, 0, sizeof *out);
    size_t n = in->struct_size < sizeof *out ? in->struct_size : sizeof *out;
    memcpy(out, in, n);
    out->struct_size = sizeof *out;
    if (!out->window)
        out->window_left = out->window_right = -1;
}

uint32_t sagerun_problem_kv_len(const sagerun_problem *p)
{
    if (!p)
        return 0;
    return SR_PROBLEM_COVERS(p, kv_len) && p->kv_len ? p->kv_len : p->seq_len;
}

/* Limits that keep every kernel's index arithmetic in range: element offsets are 64-bit, grid
 * dimensions y and z are at most 65535, and per-(b,h) row indices are 32-bit signed. */
#define SR_MAX_GRID_YZ 65535u
#define SR_MAX_SEQ_LEN (1u << 30)
#define SR_MAX_HEAD_DIM 1024u
#define SR_MAX_TENSOR_BYTES (1ull << 46) /* 64 TiB: far above any device, far below overflow */
#define SR_MAX_TOKENS 0x7fffffffu       /* cu_seqlens and block tables are int32 */

static sagerun_status check_shape(const sagerun_problem *p, sagerun_error *err)
{
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
    if (p->seq_len > SR_MAX_SEQ_LEN || sagerun_problem_kv_len(p) > SR_MAX_SEQ_LEN)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "N=%u or kv_len=%u exceeds the limit %u",
                            p->seq_len, sagerun_problem_kv_len(p), SR_MAX_SEQ_LEN);
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
    return SAGERUN_OK;
}

/* The 0.2 fields of a loaded problem (every field present). */
static sagerun_status check_mask(const sagerun_problem *p, sagerun_error *err)
{
    if (p->align > SAGERUN_ALIGN_BOTTOM_RIGHT)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "align must be 0 (top-left) or 1 (bottom-right), not %u", p->align);
    if (p->window > 1)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "window must be 0 or 1, not %u",
                            p->window);
    if (p->window && (p->window_left < -1 || p->window_right < -1))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "window (%d, %d): each side is a number of keys >= 0, or -1 for all",
                            p->window_left, p->window_right);
    if (p->window && p->causal && p->window_right > 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "window right %d with causal: causal sees no key after the diagonal "
                            "(use 0 or -1)",
                            p->window_right);
    if (!(p->softcap >= 0.0f) || isinf(p->softcap))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "softcap %g must be a finite number >= 0 (0: none)",
                            (double)p->softcap);
    return SAGERUN_OK;
}

static sagerun_status check_storage(const sagerun_problem *p, sagerun_error *err)
{
    if (p->varlen > 1)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "varlen must be 0 or 1, not %u",
                            p->varlen);
    if ((p->varlen || p->page_size) && p->layout != SAGERUN_LAYOUT_NHD)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s tensors are NHD only ([tokens, H, D]), not HND",
                            p->varlen ? "varlen" : "paged");
    if (p->varlen) {
        if (p->total_q == 0 || p->total_kv == 0 || p->total_q > SR_MAX_TOKENS ||
            p->total_kv > SR_MAX_TOKENS)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "varlen: total_q = %u and total_kv = %u must be 1 to %u",
                                p->total_q, p->total_kv, SR_MAX_TOKENS);
        if ((uint64_t)p->total_q > (uint64_t)p->batch * p->seq_len ||
            (uint64_t)p->total_kv > (uint64_t)p->batch * sagerun_problem_kv_len(p))
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "varlen: total_q = %u or total_kv = %u is more than %u sequences "
                                "of at most %u queries and %u keys hold",
                                p->total_q, p->total_kv, p->batch, p->seq_len,
                                sagerun_problem_kv_len(p));
    } else if (p->total_q || p->total_kv)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "total_q = %u, total_kv = %u: set only for a varlen problem",
                            p->total_q, p->total_kv);
    if (!p->page_size) {
        if (p->pages || p->pages_per_seq)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "pages = %u, pages_per_seq = %u without a page_size", p->pages,
                                p->pages_per_seq);
        return SAGERUN_OK;
    }
    uint64_t need = (sagerun_problem_kv_len(p) + (uint64_t)p->page_size - 1) / p->page_size;
    if (p->pages_per_seq < need)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "paged: pages_per_seq = %u cannot hold kv_len %u in pages of %u "
                            "(needs %llu)",
                            p->pages_per_seq, sagerun_problem_kv_len(p), p->page_size,
                            (unsigned long long)need);
    if (p->pages == 0 || (uint64_t)p->pages * p->page_size > SR_MAX_TOKENS)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "paged: %u pages of %u rows: must be 1 to %u rows in all", p->pages,
                            p->page_size, SR_MAX_TOKENS);
    return SAGERUN_OK;
}

/* Bytes of a tensor of batch x rows x heads x D elements, false past SR_MAX_TENSOR_BYTES: every
 * product checked (B 65535 x N 2^30 x H 65535 x D 1024 is 2^72). */
static bool tensor_bytes(uint32_t batch, uint64_t rows, uint32_t heads, const sagerun_problem *p,
                         uint64_t *bytes)
{
    uint64_t n;
    return sr_mul_u64(batch, rows, &n) && sr_mul_u64(n, heads, &n) &&
           sr_mul_u64(n, p->head_dim, &n) &&
           sr_mul_u64(n, sagerun_dtype_size((int)p->dtype), bytes) &&
           *bytes <= SR_MAX_TENSOR_BYTES;
}

sagerun_status sagerun_problem_check(const sagerun_problem *in, sagerun_error *err)
{
    if (!in)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "problem is NULL");
    if (in->struct_size < SR_PROBLEM_0_1_SIZE)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "problem struct_size %u is smaller than %zu (uninitialised?)",
                            in->struct_size, (size_t)SR_PROBLEM_0_1_SIZE);
    sagerun_problem pb, *p = &pb;
    sr_problem_load(in, p);
    sagerun_status st = check_shape(p, err);
    if (st == SAGERUN_OK)
        st = check_mask(p, err);
    if (st == SAGERUN_OK)
        st = check_storage(p, err);
    if (st != SAGERUN_OK)
        return st;
    uint32_t qbatch, kbatch;
    uint64_t qrows, krows, qb, kb;
    sr_problem_rows(p, &qbatch, &qrows, &kbatch, &krows);
    if (!tensor_bytes(qbatch, qrows, p->heads_q, p, &qb) ||
        !tensor_bytes(kbatch, krows, p->heads_kv, p, &kb))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "shape [%u, %u, %u, %u] (kv_len %u) is too large: Q or K would exceed "
                            "%llu bytes",
                            p->batch, p->seq_len, p->heads_q, p->head_dim,
                            sagerun_problem_kv_len(p), (unsigned long long)SR_MAX_TENSOR_BYTES);
    return SAGERUN_OK;
}

void sr_problem_rows(const sagerun_problem *in, uint32_t *q_batch, uint64_t *q_rows,
                     uint32_t *kv_batch, uint64_t *kv_rows)
{
    sagerun_problem p;
    sr_problem_load(in, &p);
    *q_batch = p.varlen ? 1 : p.batch;
    *q_rows = p.varlen ? p.total_q : p.seq_len;
    *kv_batch = p.varlen || p.page_size ? 1 : p.batch;
    *kv_rows = p.page_size ? (uint64_t)p.pages * p.page_size
               : p.varlen  ? p.total_kv
                           : sagerun_problem_kv_len(&p);
}

uint64_t sagerun_problem_q_elements(const sagerun_problem *p)
{
    if (!p)
        return 0;
    uint32_t qb, kb;
    uint64_t qr, kr;
    sr_problem_rows(p, &qb, &qr, &kb, &kr);
    return (uint64_t)qb * qr * p->heads_q * p->head_dim;
}

uint64_t sagerun_problem_kv_elements(const sagerun_problem *p)
{
    if (!p)
        return 0;
    uint32_t qb, kb;
    uint64_t qr, kr;
    sr_problem_rows(p, &qb, &qr, &kb, &kr);
    return (uint64_t)kb * kr * p->heads_kv * p->head_dim;
}

void sagerun_problem_key_range(const sagerun_problem *in, uint32_t q_len, uint32_t kv_len,
                               uint32_t i, uint32_t *first, uint32_t *end)
{
    sagerun_problem p;
    sr_problem_load(in, &p);
    int64_t diag = (int64_t)i + (p.align == SAGERUN_ALIGN_BOTTOM_RIGHT
                                     ? (int64_t)kv_len - (int64_t)q_len
                                     : 0);
    int64_t lo = 0, hi = kv_len; /* [lo, hi) */
    if (p.causal && diag + 1 < hi)
        hi = diag + 1;
    if (p.window && p.window_right >= 0 && diag + p.window_right + 1 < hi)
        hi = diag + p.window_right + 1;
    if (p.window && p.window_left >= 0 && diag - p.window_left > lo)
        lo = diag - p.window_left;
    if (hi < 0)
        hi = 0;
    if (lo > hi)
        lo = hi;
    *first = (uint32_t)lo;
    *end = (uint32_t)hi;
}

/* (query, key) pairs of one sequence: the sum over its rows, in closed form per run of rows
 * whose range grows by one key per row would be faster; sequences are at most 2^30 rows and
 * this is called once per report. */
static double sequence_pairs(const sagerun_problem *p, uint32_t q_len, uint32_t kv_len)
{
    if (!p->causal && !p->window)
        return (double)q_len * kv_len;
    double pairs = 0;
    for (uint32_t i = 0; i < q_len; i++) {
        uint32_t a, b;
        sagerun_problem_key_range(p, q_len, kv_len, i, &a, &b);
        pairs += b - a;
    }
    return pairs;
}

double sagerun_problem_operations_seq(const sagerun_problem *in, const sagerun_sequences *seq)
{
    if (!in)
        return 0;
    sagerun_problem p;
    sr_problem_load(in, &p);
    bool own = p.varlen && seq && seq->cu_seqlens_q && seq->cu_seqlens_kv;
    double pairs = 0;
    if (!own)
        pairs = p.batch * sequence_pairs(&p, p.seq_len, sagerun_problem_kv_len(&p));
    for (uint32_t b = 0; own && b < p.batch; b++)
        pairs += sequence_pairs(&p, (uint32_t)(seq->cu_seqlens_q[b + 1] - seq->cu_seqlens_q[b]),
                                (uint32_t)(seq->cu_seqlens_kv[b + 1] - seq->cu_seqlens_kv[b]));
    return 4.0 * p.heads_q * pairs * p.head_dim;
}

double sagerun_problem_operations(const sagerun_problem *p)
{
    return sagerun_problem_operations_seq(p, NULL);
}

float sagerun_problem_sm_scale(const sagerun_problem *p)
{
    if (!p)
        return 0.0f;
    if (p->sm_scale > 0.0f)
        return p->sm_scale;
    return (float)(1.0 / sqrt((double)p->head_dim));
}
