/* A workload's sequences: the lengths of a varlen workload and the page cache of a paged one. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "workload.h"

const sagerun_sequences *sr_workload_sequences(const sr_workload *w)
{
    if (!w->problem.varlen && !w->problem.page_size)
        return NULL;
    sagerun_sequences *s = (sagerun_sequences *)&w->sequences; /* a view of w's own arrays */
    memset(s, 0, sizeof *s);
    s->struct_size = sizeof *s;
    s->count = w->problem.batch;
    s->cu_seqlens_q = w->cu_seqlens_q;
    s->cu_seqlens_kv = w->cu_seqlens_kv;
    s->block_table = w->block_table;
    return s;
}

static int32_t *prefix_sums(const uint32_t *lens, uint32_t count, uint32_t *total,
                            uint32_t *longest)
{
    int32_t *cu = malloc(sizeof *cu * ((size_t)count + 1));
    uint64_t sum = 0;
    *longest = 0;
    for (uint32_t b = 0; cu && b < count; b++) {
        cu[b] = (int32_t)sum;
        sum += lens[b];
        if (lens[b] > *longest)
            *longest = lens[b];
        if (sum > 0x7fffffffu) {
            free(cu);
            return NULL;
        }
    }
    if (cu)
        cu[count] = (int32_t)sum;
    *total = (uint32_t)sum;
    return cu;
}

sagerun_status sr_workload_set_lengths(sr_workload *w, const uint32_t *q_lens,
                                       const uint32_t *kv_lens, uint32_t count,
                                       sagerun_error *err)
{
    if (count == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "varlen: no sequence lengths");
    for (uint32_t b = 0; b < count; b++)
        if (q_lens[b] == 0 || (kv_lens && kv_lens[b] == 0))
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "varlen: sequence %u has length 0 (every length >= 1)", b);
    uint32_t tq, tk, lq, lk;
    int32_t *cq = prefix_sums(q_lens, count, &tq, &lq);
    int32_t *ck = prefix_sums(kv_lens ? kv_lens : q_lens, count, &tk, &lk);
    if (!cq || !ck) {
        free(cq);
        free(ck);
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "varlen: the lengths sum past 2^31 - 1 tokens (cu_seqlens are int32)");
    }
    sagerun_problem p = w->problem;
    p.batch = count;
    p.seq_len = lq;
    p.kv_len = lk == lq ? 0 : lk;
    p.varlen = 1;
    p.total_q = tq;
    p.total_kv = tk;
    free(w->cu_seqlens_q);
    free(w->cu_seqlens_kv);
    w->cu_seqlens_q = cq;
    w->cu_seqlens_kv = ck;
    w->problem = p;
    if (p.page_size)
        return sr_workload_set_paged(w, p.page_size, err);
    return SAGERUN_OK;
}

sagerun_status sr_workload_set_paged(sr_workload *w, uint32_t page_size, sagerun_error *err)
{
    if (page_size == 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "page_size must be >= 1");
    sagerun_problem *p = &w->problem;
    uint64_t pages = 0;
    for (uint32_t b = 0; b < p->batch; b++) {
        uint32_t keys = w->cu_seqlens_kv
                            ? (uint32_t)(w->cu_seqlens_kv[b + 1] - w->cu_seqlens_kv[b])
                            : sagerun_problem_kv_len(p);
        pages += (keys + (uint64_t)page_size - 1) / page_size;
    }
    if (pages * page_size > 0x7fffffffu)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "paged: %llu pages of %u keys exceed 2^31 - 1 rows",
                            (unsigned long long)pages, page_size);
    p->page_size = page_size;
    p->pages = (uint32_t)pages;
    p->pages_per_seq = (sagerun_problem_kv_len(p) + page_size - 1) / page_size;
    free(w->block_table);
    w->block_table = NULL;
    return SAGERUN_OK;
}
