/* A workload's sequences: the lengths of a varlen workload and the page cache of a paged one. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "workload.h"

const sagerun_sequences *sr_workload_sequences(const sr_workload *w, sagerun_sequences *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->count = w->problem.batch;
    out->cu_seqlens_q = w->problem.varlen ? w->cu_seqlens_q : NULL;
    out->cu_seqlens_kv = w->problem.varlen ? w->cu_seqlens_kv : NULL;
    out->block_table = w->problem.page_size ? w->block_table : NULL;
    return w->problem.varlen || w->problem.page_size ? out : NULL;
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

/* pages and pages_per_seq of p (its lengths: cu_kv, or kv_len each) in pages of page_size. */
static sagerun_status page_fields(sagerun_problem *p, const int32_t *cu_kv, uint32_t page_size,
                                  sagerun_error *err)
{
    uint64_t pages = 0;
    for (uint32_t b = 0; b < p->batch; b++) {
        uint32_t keys = cu_kv ? (uint32_t)(cu_kv[b + 1] - cu_kv[b]) : sagerun_problem_kv_len(p);
        pages += (keys + (uint64_t)page_size - 1) / page_size;
    }
    if (pages * page_size > 0x7fffffffu)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "paged: %llu pages of %u keys exceed 2^31 - 1 rows",
                            (unsigned long long)pages, page_size);
    p->page_size = page_size;
    p->pages = (uint32_t)pages;
    p->pages_per_seq = (uint32_t)((sagerun_problem_kv_len(p) + (uint64_t)page_size - 1) /
                                  page_size);
    return SAGERUN_OK;
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
    sagerun_status st = SAGERUN_OK;
    if (!cq || !ck)
        st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                          "varlen: the lengths sum past 2^31 - 1 tokens (cu_seqlens are int32)");
    sagerun_problem p = w->problem;
    p.batch = count;
    p.seq_len = lq;
    p.kv_len = lk == lq ? 0 : lk;
    p.varlen = 1;
    p.total_q = tq;
    p.total_kv = tk;
    if (st == SAGERUN_OK && p.page_size)
        st = page_fields(&p, ck, p.page_size, err);
    if (st == SAGERUN_OK)
        st = sagerun_problem_check(&p, err); /* a failed change leaves the workload as it was */
    if (st != SAGERUN_OK) {
        free(cq);
        free(ck);
        return st;
    }
    free(w->cu_seqlens_q);
    free(w->cu_seqlens_kv);
    free(w->block_table);
    w->cu_seqlens_q = cq;
    w->cu_seqlens_kv = ck;
    w->block_table = NULL;
    w->problem = p;
    return SAGERUN_OK;
}

sagerun_status sr_workload_set_paged(sr_workload *w, uint32_t page_size, sagerun_error *err)
{
    sagerun_problem p = w->problem;
    sagerun_status st = SAGERUN_OK;
    if (page_size == 0)
        p.page_size = p.pages = p.pages_per_seq = 0; /* dense again */
    else
        st = page_fields(&p, w->cu_seqlens_kv, page_size, err);
    if (st == SAGERUN_OK)
        st = sagerun_problem_check(&p, err);
    if (st != SAGERUN_OK)
        return st;
    w->problem = p;
    free(w->block_table);
    w->block_table = NULL;
    return SAGERUN_OK;
}

/* ---- the varlen SPEC: the command line's --varlen and a workload file's "varlen" ---- */

#define SR_VARLEN_MAX 0x40000000u /* 2^30: the longest sequence a problem may have */

/* A length: decimal digits only, 1 to 2^30; *end past them. */
static bool parse_length(const char *s, const char **end, uint32_t *out)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 10)
        return false;
    unsigned long long v = strtoull(s, NULL, 10);
    if (v < 1 || v > SR_VARLEN_MAX)
        return false;
    *end = s + n;
    *out = (uint32_t)v;
    return true;
}

sagerun_status sr_varlen_entry(const char *text, size_t len, uint32_t *q, uint32_t *kv,
                               sagerun_error *err)
{
    char item[32];
    const char *end = NULL;
    bool ok = len > 0 && len < sizeof item;
    if (ok) {
        memcpy(item, text, len);
        item[len] = '\0';
        ok = parse_length(item, &end, q);
    }
    if (ok && *end == ':')
        ok = parse_length(end + 1, &end, kv);
    else if (ok)
        *kv = *q;
    if (ok && *end == '\0')
        return SAGERUN_OK;
    return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                        "'%.*s': expected a length or Q:K (queries:keys), each an integer from 1 "
                        "to %u",
                        (int)(len > 40 ? 40 : len), text, SR_VARLEN_MAX);
}

/* splitmix64: the generator of random:MIN-MAX:SEED (sagerun/workload.h states it). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* "random:MIN-MAX:SEED": count lengths (queries = keys) MIN + x mod (MAX - MIN + 1), x the
 * generator's next output from SEED. */
static sagerun_status parse_random(const char *spec, uint32_t count, uint32_t *lens,
                                   sagerun_error *err)
{
    const char *s = spec + 7, *end = s;
    uint32_t lo = 0, hi = 0;
    bool ok = parse_length(s, &end, &lo) && *end == '-' && parse_length(end + 1, &end, &hi) &&
              *end == ':' && end[1] >= '0' && end[1] <= '9' &&
              strspn(end + 1, "0123456789") == strlen(end + 1) && strlen(end + 1) <= 19;
    if (!ok)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "expected random:MIN-MAX:SEED (1 <= MIN <= MAX <= %u, SEED an "
                            "integer >= 0)",
                            SR_VARLEN_MAX);
    if (lo > hi)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "random: MIN %u is more than MAX %u",
                            lo, hi);
    uint64_t state = strtoull(end + 1, NULL, 10);
    for (uint32_t b = 0; b < count; b++)
        lens[b] = lo + (uint32_t)(splitmix64(&state) % ((uint64_t)hi - lo + 1));
    return SAGERUN_OK;
}

sagerun_status sr_varlen_parse(const char *spec, uint32_t batch, uint32_t **q_lens,
                               uint32_t **kv_lens, uint32_t *count, sagerun_error *err)
{
    *q_lens = *kv_lens = NULL;
    if (!spec || !*spec)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "an empty SPEC: expected lengths (100,2000,37), pairs Q:K "
                            "(1:4096,16:8192) or random:MIN-MAX:SEED");
    bool random = strncmp(spec, "random:", 7) == 0;
    uint32_t n = 1;
    for (const char *c = spec; !random && *c; c++)
        n += *c == ',';
    if (random)
        n = batch;
    uint32_t *q = malloc(sizeof *q * (n ? n : 1)), *kv = malloc(sizeof *kv * (n ? n : 1));
    sagerun_status st = q && kv ? SAGERUN_OK
                                : sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    if (st == SAGERUN_OK && random && (st = parse_random(spec, n, q, err)) == SAGERUN_OK)
        memcpy(kv, q, sizeof *q * n);
    const char *item = spec;
    for (uint32_t b = 0; st == SAGERUN_OK && !random && b < n; b++) {
        size_t len = strcspn(item, ",");
        if ((st = sr_varlen_entry(item, len, &q[b], &kv[b], err)) != SAGERUN_OK)
            sr_error_prefix(st, err, "entry %u", b);
        item += len + 1;
    }
    if (st != SAGERUN_OK) {
        free(q);
        free(kv);
        return st;
    }
    *q_lens = q;
    *kv_lens = kv;
    *count = n;
    return SAGERUN_OK;
}

sagerun_status sr_workload_set_varlen_spec(sr_workload *w, const char *spec, sagerun_error *err)
{
    uint32_t *q, *kv, n;
    sagerun_status st = sr_varlen_parse(spec, w->problem.batch, &q, &kv, &n, err);
    if (st != SAGERUN_OK)
        return st;
    st = sr_workload_set_lengths(w, q, kv, n, err);
    free(q);
    free(kv);
    return st;
}
