/* Sequences of a varlen or paged problem (lengths as cu_seqlens, the block table) and the problem
 * features a variant declares (plugin.h section 11). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One table: feature bit, the name refusals and `list` show. */
static const struct {
    uint32_t bit;
    const char *name;
} sr_features[] = {
    {SAGERUN_FEATURE_KV_LEN, "kv_len != q_len"},
    {SAGERUN_FEATURE_CAUSAL_TOP_LEFT, "causal/window top-left with kv_len != q_len"},
    {SAGERUN_FEATURE_CAUSAL_BOTTOM_RIGHT, "causal/window bottom-right with kv_len != q_len"},
    {SAGERUN_FEATURE_WINDOW, "sliding window"},
    {SAGERUN_FEATURE_SOFTCAP, "softcap"},
    {SAGERUN_FEATURE_VARLEN, "varlen"},
    {SAGERUN_FEATURE_PAGED, "paged K/V"},
};

const char *sr_feature_name(uint32_t feature)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(sr_features); i++)
        if (sr_features[i].bit == feature)
            return sr_features[i].name;
    return "unknown feature";
}

uint32_t sr_problem_features(const sagerun_problem *in)
{
    sagerun_problem p;
    sr_problem_load(in, &p);
    bool lengths_differ = p.varlen || sagerun_problem_kv_len(&p) != p.seq_len;
    uint32_t f = 0;
    if (!p.varlen && sagerun_problem_kv_len(&p) != p.seq_len)
        f |= SAGERUN_FEATURE_KV_LEN;
    if ((p.causal || p.window) && lengths_differ)
        f |= p.align == SAGERUN_ALIGN_BOTTOM_RIGHT ? SAGERUN_FEATURE_CAUSAL_BOTTOM_RIGHT
                                                   : SAGERUN_FEATURE_CAUSAL_TOP_LEFT;
    if (p.window)
        f |= SAGERUN_FEATURE_WINDOW;
    if (p.softcap > 0)
        f |= SAGERUN_FEATURE_SOFTCAP;
    if (p.varlen)
        f |= SAGERUN_FEATURE_VARLEN;
    if (p.page_size)
        f |= SAGERUN_FEATURE_PAGED;
    return f;
}

#define SR_DESC_COVERS(d, field)                                                                   \
    ((d)->struct_size >= offsetof(sagerun_variant_descriptor, field) + sizeof((d)->field))

sagerun_status sr_features_check(const sagerun_variant_descriptor *d, const sagerun_problem *p,
                                 sagerun_error *err)
{
    bool v12 = SR_DESC_COVERS(d, head_dims);
    uint32_t have = v12 ? d->features : 0, need = sr_problem_features(p);
    for (size_t i = 0; i < SR_ARRAY_LEN(sr_features); i++)
        if ((need & sr_features[i].bit) && !(have & sr_features[i].bit))
            return sr_error_set(err, SAGERUN_UNSUPPORTED,
                                "variant %s does not declare %s, which the problem needs%s",
                                d->name, sr_features[i].name,
                                v12 ? "" : " (a plugin of ABI 1.0/1.1 declares none)");
    if (v12 && d->dtypes && !(d->dtypes & (1u << p->dtype)))
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "variant %s does not declare dtype %s, which the problem has",
                            d->name, sagerun_dtype_word((int)p->dtype));
    if (!v12 || !d->n_head_dims)
        return SAGERUN_OK;
    for (uint32_t i = 0; i < d->n_head_dims; i++)
        if (d->head_dims && d->head_dims[i] == p->head_dim)
            return SAGERUN_OK;
    return sr_error_set(err, SAGERUN_UNSUPPORTED,
                        "variant %s does not declare head_dim %u, which the problem has",
                        d->name, p->head_dim);
}

static sagerun_status check_prefix(const char *name, const int32_t *cu, uint32_t count,
                                   uint32_t total, uint32_t longest, sagerun_error *err)
{
    if (cu[0] != 0)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "%s[0] = %d: must be 0", name, cu[0]);
    for (uint32_t b = 0; b < count; b++) {
        if (cu[b + 1] < cu[b])
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "%s[%u] = %d is less than %s[%u] = %d (prefix sums never fall)",
                                name, b + 1, cu[b + 1], name, b, cu[b]);
        if ((uint32_t)(cu[b + 1] - cu[b]) > longest)
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "%s: sequence %u has %d tokens, more than the problem's longest, "
                                "%u",
                                name, b, cu[b + 1] - cu[b], longest);
    }
    if ((uint32_t)cu[count] != total)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s[%u] = %d: the lengths sum to %d, the problem's total is %u", name,
                            count, cu[count], cu[count], total);
    return SAGERUN_OK;
}

static uint32_t seq_keys(const sagerun_problem *p, const int32_t *cu_kv, uint32_t b)
{
    return cu_kv ? (uint32_t)(cu_kv[b + 1] - cu_kv[b]) : sagerun_problem_kv_len(p);
}

static sagerun_status check_table(const sagerun_problem *p, const int32_t *cu_kv,
                                  const int32_t *table, sagerun_error *err)
{
    for (uint32_t b = 0; b < p->batch; b++) {
        uint32_t used = (seq_keys(p, cu_kv, b) + p->page_size - 1) / p->page_size;
        for (uint32_t c = 0; c < used; c++) {
            int32_t page = table[(uint64_t)b * p->pages_per_seq + c];
            if (page < 0 || (uint32_t)page >= p->pages)
                return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                    "block_table[%u][%u] = %d points past the %u pages of the "
                                    "cache",
                                    b, c, page, p->pages);
        }
    }
    return SAGERUN_OK;
}

sagerun_status sagerun_sequences_check(const sagerun_problem *in, const sagerun_sequences *s,
                                       sagerun_error *err)
{
    sagerun_status st = sagerun_problem_check(in, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_problem p;
    sr_problem_load(in, &p);
    if (!p.varlen && !p.page_size)
        return s && (s->cu_seqlens_q || s->cu_seqlens_kv || s->block_table)
                   ? sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                  "sequences given for a dense problem (neither varlen nor paged)")
                   : SAGERUN_OK;
    if (!s || s->struct_size < sizeof *s)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "a %s problem needs its sequences (struct_size %u, needs %zu)",
                            p.varlen ? "varlen" : "paged", s ? s->struct_size : 0, sizeof *s);
    if (s->count != p.batch)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "sequences: count %u, the problem has batch %u", s->count, p.batch);
    if (p.varlen && (!s->cu_seqlens_q || !s->cu_seqlens_kv))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "varlen: cu_seqlens_q and cu_seqlens_kv are both needed");
    if (!p.varlen && (s->cu_seqlens_q || s->cu_seqlens_kv))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "cu_seqlens given for a problem that is not varlen");
    if (p.varlen &&
        ((st = check_prefix("cu_seqlens_q", s->cu_seqlens_q, p.batch, p.total_q, p.seq_len,
                            err)) != SAGERUN_OK ||
         (st = check_prefix("cu_seqlens_kv", s->cu_seqlens_kv, p.batch, p.total_kv,
                            sagerun_problem_kv_len(&p), err)) != SAGERUN_OK))
        return st;
    if (!p.page_size)
        return s->block_table ? sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                             "block_table given for a problem that is not paged")
                              : SAGERUN_OK;
    return s->block_table ? check_table(&p, s->cu_seqlens_kv, s->block_table, err) : SAGERUN_OK;
}

/* splitmix64: the page permutation's generator (host only, so every backend has the same). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Pages handed out in a shuffled order; a column past a sequence's last page is -1. */
static sagerun_status shuffled_table(const sagerun_problem *p, const int32_t *cu_kv,
                                     uint64_t seed, int32_t *table, sagerun_error *err)
{
    uint64_t need = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        need += (seq_keys(p, cu_kv, b) + p->page_size - 1) / p->page_size;
    if (need > p->pages)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "paged: the sequences need %llu pages of %u keys, the cache has %u",
                            (unsigned long long)need, p->page_size, p->pages);
    int32_t *perm = malloc(sizeof *perm * p->pages);
    if (!perm)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (block table)");
    uint64_t state = seed ^ 0x70616765ull; /* "page" */
    for (uint32_t i = 0; i < p->pages; i++)
        perm[i] = (int32_t)i;
    for (uint32_t i = p->pages - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(splitmix64(&state) % (i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    uint64_t next = 0;
    for (uint32_t b = 0; b < p->batch; b++) {
        uint32_t used = (seq_keys(p, cu_kv, b) + p->page_size - 1) / p->page_size;
        for (uint32_t c = 0; c < p->pages_per_seq; c++)
            table[(uint64_t)b * p->pages_per_seq + c] = c < used ? perm[next++] : -1;
    }
    free(perm);
    return SAGERUN_OK;
}

static sagerun_status copy_array(const int32_t *src, uint64_t n, int32_t **host,
                                 sagerun_error *err)
{
    *host = malloc(sizeof **host * n);
    if (!*host)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (sequences)");
    if (src)
        memcpy(*host, src, sizeof **host * n);
    return SAGERUN_OK;
}

static sagerun_status upload(sagerun_context *ctx, const int32_t *host, uint64_t n, uint64_t *dev,
                             sagerun_error *err)
{
    sagerun_status st = sagerun_mem_alloc(ctx, sizeof *host * n, dev, err);
    if (st == SAGERUN_OK)
        st = sagerun_mem_upload(ctx, *dev, host, sizeof *host * n, err);
    return st;
}

sagerun_status sr_sequences_make(sagerun_context *ctx, const sagerun_problem *p,
                                 const sagerun_sequences *given, uint64_t seed, sr_sequences *seq,
                                 sagerun_error *err)
{
    memset(seq, 0, sizeof *seq);
    sagerun_status st = sagerun_sequences_check(p, given, err);
    if (st != SAGERUN_OK || (!p->varlen && !p->page_size))
        return st;
    uint64_t table_n = (uint64_t)p->batch * p->pages_per_seq;
    if (p->varlen &&
        ((st = copy_array(given->cu_seqlens_q, p->batch + 1, &seq->cu_q, err)) ||
         (st = copy_array(given->cu_seqlens_kv, p->batch + 1, &seq->cu_kv, err))))
        goto fail;
    if (p->page_size) {
        if ((st = copy_array(given->block_table, table_n, &seq->table, err)))
            goto fail;
        if (!given->block_table &&
            (st = shuffled_table(p, seq->cu_kv, seed, seq->table, err)) != SAGERUN_OK)
            goto fail;
    }
    if ((seq->cu_q && (st = upload(ctx, seq->cu_q, p->batch + 1, &seq->d_cu_q, err))) ||
        (seq->cu_kv && (st = upload(ctx, seq->cu_kv, p->batch + 1, &seq->d_cu_kv, err))) ||
        (seq->table && (st = upload(ctx, seq->table, table_n, &seq->d_table, err))))
        goto fail;
    return SAGERUN_OK;
fail:
    sr_sequences_free(ctx, seq);
    return st;
}

void sr_sequences_free(sagerun_context *ctx, sr_sequences *seq)
{
    free(seq->cu_q);
    free(seq->cu_kv);
    free(seq->table);
    if (seq->d_cu_q)
        sagerun_mem_free(ctx, seq->d_cu_q);
    if (seq->d_cu_kv)
        sagerun_mem_free(ctx, seq->d_cu_kv);
    if (seq->d_table)
        sagerun_mem_free(ctx, seq->d_table);
    memset(seq, 0, sizeof *seq);
}

void sr_sequences_view(const sr_sequences *seq, const sagerun_problem *p, sagerun_sequences *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->count = p->batch;
    out->cu_seqlens_q = seq->cu_q;
    out->cu_seqlens_kv = seq->cu_kv;
    out->block_table = seq->table;
}
