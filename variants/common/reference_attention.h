/* Exact attention softmax(Q·Kᵀ·scale)·V in double precision on the CPU, shared by the host
 * variants `reference` (one thread: the oracle) and `reference-mt` (the rows split across all
 * cores; each row's arithmetic is the same, so the output bytes are too). Any B, N, Hq, Hkv (GQA),
 * D; layouts NHD and HND; fp16 or bf16 in and out; causal. Built with the plugin ABI 1.2 header,
 * every problem of sagerun.h: kv_len != seq_len, causal and sliding window with either alignment
 * (the mask is sagerun_problem_key_range's rule, reference_mask.h), softcap, varlen (packed
 * [total, H, D]), a paged K/V cache; a row attending no key writes 0. Built with an older header
 * (the ABI fixtures in test/plugins) it does the 1.1 problem, which is all such a host gives it.
 *
 * A variant's .c defines REFERENCE_NAME, REFERENCE_DESCRIPTION and REFERENCE_THREADS (0 = one per
 * online core), then includes this file, which defines the whole plugin. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>

#include "reference_convert.h"
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
#include "reference_mask.h"
#endif

#include <unistd.h>

#define REFERENCE_MAX_THREADS 256

struct reference_state;

/* Scratch of one worker thread. */
typedef struct reference_worker {
    const struct reference_state *s;
    double *scores; /* the scores of one query row, one per key */
    double *acc;    /* D accumulators of one query row */
    uint64_t first_row, end_row; /* rows in reference_row_at's order */
} reference_worker;

typedef struct reference_state {
    const sagerun_plugin_inputs *in;
    sagerun_problem problem; /* every field present (reference_problem_load) */
    unsigned threads;
    reference_worker workers[REFERENCE_MAX_THREADS];
} reference_state;

/* Every 16-bit pattern decoded once (the decode dominated the inner loops). */
static double f16_table[65536], bf16_table[65536];

static void build_tables(void)
{
    for (uint32_t i = 0; i < 65536; i++) {
        f16_table[i] = half_to_double((uint16_t)i);
        bf16_table[i] = bf16_to_double((uint16_t)i);
    }
}

static double load(const uint16_t *p, uint64_t i, int dtype)
{
    return dtype == SAGERUN_DTYPE_BF16 ? bf16_table[p[i]] : f16_table[p[i]];
}

/* The problem with every field this header knows: a caller's struct may be smaller (struct_size,
 * plugin.h section 2); the fields it lacks mean what they meant before they existed. */
static void reference_problem_load(const sagerun_problem *in, sagerun_problem *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    out->struct_size = sizeof *out;
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (!out->window)
        out->window_left = out->window_right = -1;
#endif
}

/* Keys per sequence (varlen: the longest). */
static uint32_t reference_keys(const sagerun_problem *p)
{
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->kv_len)
        return p->kv_len;
#endif
    return p->seq_len;
}

/* Query rows of O: (b, h, n) dense, (token, h) varlen. */
static uint64_t reference_rows(const sagerun_problem *p)
{
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->varlen)
        return (uint64_t)p->total_q * p->heads_q;
#endif
    return (uint64_t)p->batch * p->heads_q * p->seq_len;
}

/* Query row r's sequence b, head h and row n within its sequence. Dense rows go (b, h, n) in
 * that order; varlen rows (token, h), the token's sequence found in cu_seqlens_q. */
static void reference_row_at(const reference_state *s, uint64_t r, uint32_t *b, uint32_t *h,
                             uint32_t *n)
{
    const sagerun_problem *p = &s->problem;
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->varlen) {
        const int32_t *cu = s->in->host_cu_seqlens_q;
        uint64_t token = r / p->heads_q;
        uint32_t lo = 0, hi = p->batch; /* the last b with cu[b] <= token: empty ones skipped */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if ((uint64_t)cu[mid] <= token)
                lo = mid;
            else
                hi = mid;
        }
        *b = lo;
        *h = (uint32_t)(r % p->heads_q);
        *n = (uint32_t)(token - (uint64_t)cu[lo]);
        return;
    }
#endif
    *n = (uint32_t)(r % p->seq_len);
    *h = (uint32_t)(r / p->seq_len % p->heads_q);
    *b = (uint32_t)(r / p->seq_len / p->heads_q);
}

/* Queries and keys of sequence b. */
static void reference_lengths(const reference_state *s, uint32_t b, uint32_t *q_len,
                              uint32_t *kv_len)
{
    const sagerun_problem *p = &s->problem;
    *q_len = p->seq_len;
    *kv_len = reference_keys(p);
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->varlen) {
        *q_len = (uint32_t)(s->in->host_cu_seqlens_q[b + 1] - s->in->host_cu_seqlens_q[b]);
        *kv_len = (uint32_t)(s->in->host_cu_seqlens_kv[b + 1] - s->in->host_cu_seqlens_kv[b]);
    }
#else
    (void)b; /* the 1.1 problem: every sequence has seq_len of each */
#endif
}

/* Element offset of row n, head h of sequence b in Q or O. */
static uint64_t reference_q_offset(const reference_state *s, uint32_t b, uint32_t n, uint32_t h)
{
    const sagerun_problem *p = &s->problem;
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->varlen)
        return ((uint64_t)(s->in->host_cu_seqlens_q[b] + (int64_t)n) * p->heads_q + h) *
               p->head_dim;
#endif
    if (p->layout == SAGERUN_LAYOUT_HND)
        return (((uint64_t)b * p->heads_q + h) * p->seq_len + n) * p->head_dim;
    return (((uint64_t)b * p->seq_len + n) * p->heads_q + h) * p->head_dim;
}

/* Element offset of key j, KV head hk of sequence b in K or V: its page's row (paged), its
 * packed row (varlen), or its place in [B, kv_len, Hkv, D] / [B, Hkv, kv_len, D]. */
static uint64_t reference_kv_offset(const reference_state *s, uint32_t b, uint32_t j, uint32_t hk)
{
    const sagerun_problem *p = &s->problem;
    uint64_t keys = reference_keys(p);
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->page_size) {
        int32_t page = s->in->host_block_table[(uint64_t)b * p->pages_per_seq + j / p->page_size];
        uint64_t row = (uint64_t)page * p->page_size + j % p->page_size;
        return (row * p->heads_kv + hk) * p->head_dim;
    }
    if (p->varlen)
        return ((uint64_t)(s->in->host_cu_seqlens_kv[b] + (int64_t)j) * p->heads_kv + hk) *
               p->head_dim;
#endif
    if (p->layout == SAGERUN_LAYOUT_HND)
        return (((uint64_t)b * p->heads_kv + hk) * keys + j) * p->head_dim;
    return (((uint64_t)b * keys + j) * p->heads_kv + hk) * p->head_dim;
}

/* The keys [*first, *end) row n of a sequence of q_len queries and kv_len keys attends. */
static void reference_row_keys(const sagerun_problem *p, uint32_t q_len, uint32_t kv_len,
                               uint32_t n, uint32_t *first, uint32_t *end)
{
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    reference_key_range(p, q_len, kv_len, n, first, end);
#else
    (void)q_len; /* the 1.1 problem: q_len = kv_len, causal top-left */
    *first = 0;
    *end = p->causal ? n + 1 : kv_len;
#endif
}

static int reference_geometry(const sagerun_problem *problem, sagerun_launch_geometry *g,
                              char *err, size_t errlen)
{
    sagerun_problem p;
    reference_problem_load(problem, &p);
    if (p.dtype != SAGERUN_DTYPE_F16 && p.dtype != SAGERUN_DTYPE_BF16) {
        snprintf(err, errlen, "dtype must be F16 or BF16");
        return SAGERUN_UNSUPPORTED;
    }
    /* One "CTA" per query row on the CPU: tiles of one row and all keys. */
    g->cta_q = 1;
    g->cta_k = reference_keys(&p);
    g->warp_q = 1;
    g->warp_k = reference_keys(&p);
    g->threads_per_cta = 1;
    g->dynamic_shared_memory_bytes = 0;
    g->grid_ctas = reference_rows(&p);
    return 0;
}

static void reference_destroy(void *state);

static int reference_create(const sagerun_host_services *services,
                            const sagerun_plugin_inputs *inputs, void **state, char *err,
                            size_t errlen)
{
    (void)services;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_tables);
    reference_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return SAGERUN_OUT_OF_MEMORY;
    }
    s->in = inputs;
    reference_problem_load(&inputs->problem, &s->problem);
    const sagerun_problem *p = &s->problem;
    long cores = REFERENCE_THREADS > 0 ? REFERENCE_THREADS : sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t rows = reference_rows(p);
    if (cores < 1)
        cores = 1;
    if (cores > REFERENCE_MAX_THREADS)
        cores = REFERENCE_MAX_THREADS;
    if ((uint64_t)cores > rows)
        cores = (long)rows;
    s->threads = (unsigned)cores;
    for (unsigned t = 0; t < s->threads; t++) {
        reference_worker *w = &s->workers[t];
        w->s = s;
        w->scores = malloc(sizeof *w->scores * reference_keys(p));
        w->acc = malloc(sizeof *w->acc * p->head_dim);
        w->first_row = rows * t / s->threads;
        w->end_row = rows * (t + 1) / s->threads;
        if (!w->scores || !w->acc) {
            reference_destroy(s);
            snprintf(err, errlen, "out of memory");
            return SAGERUN_OUT_OF_MEMORY;
        }
    }
    *state = s;
    return 0;
}

/* The logit of one (query, key) pair: scale * q.k, soft-capped where the problem says so. */
static double reference_logit(const sagerun_problem *p, double dot, double scale)
{
    double x = dot * scale;
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    if (p->softcap > 0)
        x = (double)p->softcap * tanh(x / (double)p->softcap);
#else
    (void)p;
#endif
    return x;
}

/* One query row over its keys [first, end): scores, max-subtracted exponentials, weighted sum of
 * V, normalised (the order every existing output's bytes come from). No key: 0. */
static void attend_row(reference_worker *w, uint32_t b, uint32_t h, uint32_t n, double scale)
{
    const reference_state *s = w->s;
    const sagerun_problem *p = &s->problem;
    const uint16_t *q = (const uint16_t *)(uintptr_t)s->in->q;
    const uint16_t *k = (const uint16_t *)(uintptr_t)s->in->k;
    const uint16_t *v = (const uint16_t *)(uintptr_t)s->in->v;
    uint16_t *o = (uint16_t *)(uintptr_t)s->in->o;
    const int dtype = (int)p->dtype;
    uint32_t hk = h / (p->heads_q / p->heads_kv), D = p->head_dim, q_len, kv_len, first, end;
    uint64_t qo = reference_q_offset(s, b, n, h);
    reference_lengths(s, b, &q_len, &kv_len);
    reference_row_keys(p, q_len, kv_len, n, &first, &end);
    if (first >= end) {
        memset(&o[qo], 0, sizeof *o * D);
        return;
    }
    double max = -INFINITY;
    for (uint32_t j = first; j < end; j++) {
        uint64_t ko = reference_kv_offset(s, b, j, hk);
        double dot = 0;
        for (uint32_t c = 0; c < D; c++)
            dot += load(q, qo + c, dtype) * load(k, ko + c, dtype);
        w->scores[j] = reference_logit(p, dot, scale);
        if (w->scores[j] > max)
            max = w->scores[j];
    }
    double sum = 0;
    memset(w->acc, 0, sizeof *w->acc * D);
    for (uint32_t j = first; j < end; j++) {
        double e = exp(w->scores[j] - max);
        sum += e;
        uint64_t vo = reference_kv_offset(s, b, j, hk);
        for (uint32_t c = 0; c < D; c++)
            w->acc[c] += e * load(v, vo + c, dtype);
    }
    for (uint32_t c = 0; c < D; c++) {
        double out = w->acc[c] / sum;
        o[qo + c] = dtype == SAGERUN_DTYPE_BF16 ? double_to_bf16(out) : double_to_half(out);
    }
}

static void *reference_work(void *arg)
{
    reference_worker *w = arg;
    const sagerun_problem *p = &w->s->problem;
    /* The default scale is D^-0.5 exactly, as in the golden files' o_ref_fp32 (using its fp32
     * rounding instead moves near-zero outputs by up to 0.04 fp16 ulp: test_reference). */
    double scale = p->sm_scale > 0 ? p->sm_scale : 1.0 / sqrt((double)p->head_dim);
    for (uint64_t r = w->first_row; r < w->end_row; r++) {
        uint32_t b, h, n;
        reference_row_at(w->s, r, &b, &h, &n);
        attend_row(w, b, h, n, scale);
    }
    return NULL;
}

static int reference_run(void *state, char *err, size_t errlen)
{
    reference_state *s = state;
    pthread_t tid[REFERENCE_MAX_THREADS];
    unsigned started = 0;
    for (unsigned t = 1; t < s->threads; t++, started++)
        if (pthread_create(&tid[t], NULL, reference_work, &s->workers[t]) != 0)
            break;
    reference_work(&s->workers[0]);
    for (unsigned t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    if (started + 1 < s->threads) { /* a thread could not start: do its rows here */
        for (unsigned t = started + 1; t < s->threads; t++)
            reference_work(&s->workers[t]);
        (void)err;
        (void)errlen;
    }
    return 0;
}

static void reference_destroy(void *state)
{
    reference_state *s = state;
    if (!s)
        return;
    for (unsigned t = 0; t < REFERENCE_MAX_THREADS; t++) {
        free(s->workers[t].scores);
        free(s->workers[t].acc);
    }
    free(s);
}

static const sagerun_variant_descriptor reference_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = REFERENCE_NAME,
    .version = "1.0.0",
    .description = REFERENCE_DESCRIPTION,
    .backend = SAGERUN_BACKEND_HOST,
    .min_compute_capability = 0,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = reference_geometry,
    .create = reference_create,
    .prepare = NULL,
    .run = reference_run,
    .destroy = reference_destroy,
#if SAGERUN_PLUGIN_ABI_MINOR >= 2
    /* every problem sagerun.h states, in both dtypes, at any head dim */
    .features = SAGERUN_FEATURE_ALL,
    .dtypes = (1u << SAGERUN_DTYPE_F16) | (1u << SAGERUN_DTYPE_BF16),
    .n_head_dims = 0,
    .head_dims = NULL,
#endif
};

SAGERUN_PLUGIN_DEFINE_ENTRY(reference_variant)
