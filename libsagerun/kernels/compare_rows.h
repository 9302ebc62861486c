/* Where a sampled row of the accuracy check lies and which keys it attends, for every storage of
 * a problem (dense NHD/HND, varlen packed, paged K/V): compiled by the host C compiler (verify.c,
 * the host backend's fp64 reference) and by nvcc (compare.cu, the device's fp32 one), so that
 * both read the same elements. The addresses in sr_compare_problem are the context's memory:
 * host pointers on the host backend, device pointers in the kernels. */
#ifndef SAGERUN_KERNELS_COMPARE_ROWS_H
#define SAGERUN_KERNELS_COMPARE_ROWS_H

#include <stdint.h>

#include "compare_params.h"
#include "mask_math.h"
#include "sr_hostdev.h"

/* One sampled row, decoded. */
typedef struct sr_compare_row {
    uint32_t b, n, h, hk;   /* sequence, query position in it, query head, its K/V head */
    uint32_t q_len, kv_len; /* the sequence's queries and keys */
    uint32_t first, end;    /* the keys it attends, [first, end) (none: first == end) */
    uint64_t q_base;        /* element offset of its D values in Q and O */
} sr_compare_row;

/* The sequence holding packed query row t: the last b < count with cu[b] <= t (empty sequences,
 * cu[b] == cu[b + 1], hold none; t < cu[count]). */
SR_HD uint32_t sr_compare_sequence_of(const int32_t *cu, uint32_t count, uint32_t t)
{
    uint32_t lo = 0, hi = count - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if ((uint32_t)cu[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Row numbers (compare_params.h) of a problem: every head of every query row. */
SR_HD uint64_t sr_compare_row_count(const sr_compare_problem *p)
{
    if (p->varlen)
        return (uint64_t)p->heads_q * p->total_q;
    return (uint64_t)p->batch * p->heads_q * p->seq_len;
}

SR_HD sr_compare_row sr_compare_decode_row(const sr_compare_problem *p, uint64_t row)
{
    sr_compare_row r;
    if (p->varlen) {
        const int32_t *cu_q = (const int32_t *)(uintptr_t)p->cu_q;
        const int32_t *cu_kv = (const int32_t *)(uintptr_t)p->cu_kv;
        uint32_t t = (uint32_t)(row % p->total_q);
        r.h = (uint32_t)(row / p->total_q);
        r.b = sr_compare_sequence_of(cu_q, p->batch, t);
        r.n = t - (uint32_t)cu_q[r.b];
        r.q_len = (uint32_t)(cu_q[r.b + 1] - cu_q[r.b]);
        r.kv_len = (uint32_t)(cu_kv[r.b + 1] - cu_kv[r.b]);
        r.q_base = ((uint64_t)t * p->heads_q + r.h) * p->head_dim;
    } else {
        r.n = (uint32_t)(row % p->seq_len);
        uint64_t bh = row / p->seq_len;
        r.h = (uint32_t)(bh % p->heads_q);
        r.b = (uint32_t)(bh / p->heads_q);
        r.q_len = p->seq_len;
        r.kv_len = p->kv_len;
        if (p->layout == 1)
            r.q_base = (((uint64_t)r.b * p->heads_q + r.h) * p->seq_len + r.n) * p->head_dim;
        else
            r.q_base = (((uint64_t)r.b * p->seq_len + r.n) * p->heads_q + r.h) * p->head_dim;
    }
    r.hk = r.h / (p->heads_q / p->heads_kv); /* grouped-query attention: Hq/Hkv heads per kv head */
    sr_mask_key_range(p->causal, p->align, p->window, p->window_left, p->window_right, r.q_len,
                      r.kv_len, r.n, &r.first, &r.end);
    return r;
}

/* Element offset of key j's D values (of r's sequence and K/V head) in K and in V. */
SR_HD uint64_t sr_compare_kv_base(const sr_compare_problem *p, const sr_compare_row *r,
                                  uint32_t j)
{
    uint64_t kv_row;
    if (p->page_size) {
        const int32_t *table = (const int32_t *)(uintptr_t)p->table;
        uint32_t page = (uint32_t)table[(uint64_t)r->b * p->pages_per_seq + j / p->page_size];
        kv_row = (uint64_t)page * p->page_size + j % p->page_size;
    } else if (p->varlen) {
        kv_row = (uint64_t)((const int32_t *)(uintptr_t)p->cu_kv)[r->b] + j;
    } else if (p->layout == 1) {
        return (((uint64_t)r->b * p->heads_kv + r->hk) * p->kv_len + j) * p->head_dim;
    } else {
        kv_row = (uint64_t)r->b * p->kv_len + j;
    }
    return (kv_row * p->heads_kv + r->hk) * p->head_dim;
}

#endif
