/* Problems of every ABI 1.2 feature and a small exact-attention oracle written apart from the
 * library's (its own indexing, mask and row numbering, from sagerun.h and compare_params.h), for
 * the accuracy check's tests: test_accuracy (host) and test/gpu/test_accuracy_gpu (device). The
 * oracle reads inputs in host memory: the host backend's, or a download of them. */
#ifndef SAGERUN_TEST_ACCURACY_CASES_H
#define SAGERUN_TEST_ACCURACY_CASES_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernels/quantize_math.h"
#include "report.h"

/* What a deliberately wrong output gets wrong. */
enum acc_flaw {
    ACC_FLAW_MASK,    /* attends every key of the sequence */
    ACC_FLAW_ALIGN,   /* the other alignment of causal and the window */
    ACC_FLAW_KEYS,    /* only the first min(q_len, kv_len) keys, as if kv_len were q_len */
    ACC_FLAW_SOFTCAP, /* no softcap */
    ACC_FLAW_PAGES,   /* the pages in order, the block table ignored */
    ACC_FLAW_NONE
};

typedef struct acc_case {
    const char *name;
    uint32_t batch, seq_len, kv_len, heads_q, heads_kv, head_dim;
    uint32_t layout, dtype, causal, align, window;
    int32_t left, right;
    float softcap, sm_scale;
    bool varlen;
    uint32_t q_lens[4], kv_lens[4]; /* varlen: per sequence */
    uint32_t page_size;
    int flaw;
} acc_case;

#define ACC_NHD SAGERUN_LAYOUT_NHD
#define ACC_HND SAGERUN_LAYOUT_HND
#define ACC_F16 SAGERUN_DTYPE_F16
#define ACC_BF16 SAGERUN_DTYPE_BF16
#define ACC_TL SAGERUN_ALIGN_TOP_LEFT
#define ACC_BR SAGERUN_ALIGN_BOTTOM_RIGHT

/* name, B, N, kv_len, Hq, Hkv, D, layout, dtype, causal, align, window, left, right, softcap,
 * sm_scale, varlen, q_lens, kv_lens, page_size, flaw */
static const acc_case acc_cases[] = {
    {"dense causal (GQA)", 2, 24, 24, 4, 2, 32, ACC_NHD, ACC_F16, 1, ACC_TL, 0, -1, -1, 0, 0,
     false, {0}, {0}, 0, ACC_FLAW_MASK},
    {"kv_len > q_len (HND)", 2, 16, 40, 2, 1, 32, ACC_HND, ACC_F16, 0, ACC_TL, 0, -1, -1, 0, 0,
     false, {0}, {0}, 0, ACC_FLAW_KEYS},
    {"causal top-left, kv_len > q_len", 1, 20, 33, 2, 2, 32, ACC_NHD, ACC_F16, 1, ACC_TL, 0, -1,
     -1, 0, 0, false, {0}, {0}, 0, ACC_FLAW_ALIGN},
    {"causal bottom-right, q_len > kv_len (bf16)", 2, 30, 18, 2, 1, 32, ACC_NHD, ACC_BF16, 1,
     ACC_BR, 0, -1, -1, 0, 0, false, {0}, {0}, 0, ACC_FLAW_ALIGN},
    {"window top-left", 1, 40, 40, 2, 1, 32, ACC_NHD, ACC_F16, 0, ACC_TL, 1, 5, 3, 0, 0, false,
     {0}, {0}, 0, ACC_FLAW_MASK},
    {"causal window bottom-right", 1, 24, 50, 2, 2, 64, ACC_HND, ACC_F16, 1, ACC_BR, 1, 6, 0, 0,
     0, false, {0}, {0}, 0, ACC_FLAW_ALIGN},
    {"softcap", 1, 32, 32, 2, 1, 64, ACC_NHD, ACC_F16, 0, ACC_TL, 0, -1, -1, 2.0f, 0.5f, false,
     {0}, {0}, 0, ACC_FLAW_SOFTCAP},
    {"varlen causal bottom-right", 4, 0, 0, 4, 2, 32, ACC_NHD, ACC_F16, 1, ACC_BR, 0, -1, -1, 0,
     0, true, {7, 0, 19, 4}, {9, 5, 30, 0}, 0, ACC_FLAW_MASK},
    {"paged causal bottom-right", 3, 20, 37, 2, 1, 32, ACC_NHD, ACC_F16, 1, ACC_BR, 0, -1, -1, 0,
     0, false, {0}, {0}, 8, ACC_FLAW_PAGES},
    {"varlen paged window softcap", 3, 0, 0, 2, 2, 32, ACC_NHD, ACC_F16, 0, ACC_BR, 1, 6, 2, 5.0f,
     0, true, {5, 16, 9}, {21, 3, 17}, 4, ACC_FLAW_PAGES},
};
#define ACC_CASES (sizeof acc_cases / sizeof acc_cases[0])

/* A case's problem and its sequences (cu_q, cu_kv: [batch + 1], the caller's; the block table is
 * left to the seed). */
static inline sagerun_problem acc_problem(const acc_case *c, int32_t *cu_q, int32_t *cu_kv,
                                          sagerun_sequences *seq)
{
    sagerun_problem p = sagerun_problem_make(c->batch, c->seq_len, c->heads_q, c->heads_kv,
                                             c->head_dim);
    p.kv_len = c->kv_len;
    p.layout = c->layout;
    p.dtype = c->dtype;
    p.causal = c->causal;
    p.align = c->align;
    p.window = c->window;
    p.window_left = c->window ? c->left : -1;
    p.window_right = c->window ? c->right : -1;
    p.softcap = c->softcap;
    p.sm_scale = c->sm_scale;
    memset(seq, 0, sizeof *seq);
    seq->struct_size = sizeof *seq;
    seq->count = c->batch;
    uint32_t pages = 0;
    if (c->varlen) {
        cu_q[0] = cu_kv[0] = 0;
        p.seq_len = p.kv_len = 1;
        for (uint32_t b = 0; b < c->batch; b++) {
            cu_q[b + 1] = cu_q[b] + (int32_t)c->q_lens[b];
            cu_kv[b + 1] = cu_kv[b] + (int32_t)c->kv_lens[b];
            p.seq_len = c->q_lens[b] > p.seq_len ? c->q_lens[b] : p.seq_len;
            p.kv_len = c->kv_lens[b] > p.kv_len ? c->kv_lens[b] : p.kv_len;
            if (c->page_size)
                pages += (c->kv_lens[b] + c->page_size - 1) / c->page_size;
        }
        p.varlen = 1;
        p.total_q = (uint32_t)cu_q[c->batch];
        p.total_kv = (uint32_t)cu_kv[c->batch];
        seq->cu_seqlens_q = cu_q;
        seq->cu_seqlens_kv = cu_kv;
    } else if (c->page_size) {
        pages = c->batch * ((c->kv_len + c->page_size - 1) / c->page_size);
    }
    if (c->page_size) {
        p.page_size = c->page_size;
        p.pages = pages + 3; /* spare pages: the table's entries are not 0..pages-1 in order */
        p.pages_per_seq = (p.kv_len + c->page_size - 1) / c->page_size;
    }
    return p;
}

/* The oracle's view of inputs in host memory. */
typedef struct acc_view {
    sagerun_problem p;
    const uint16_t *q, *k, *v;
    const int32_t *cu_q, *cu_kv, *table; /* NULL where the problem has none */
} acc_view;

static inline double acc_load(const acc_view *w, const uint16_t *t, uint64_t i)
{
    return w->p.dtype == SAGERUN_DTYPE_BF16 ? sr_bf16_to_float(t[i]) : sr_half_to_float(t[i]);
}

/* A query row, from the row numbering of compare_params.h. */
typedef struct acc_row {
    uint32_t b, n, h, q_len, kv_len;
    uint64_t q_at; /* element offset of its D values in Q and O */
} acc_row;

static inline acc_row acc_decode(const acc_view *w, uint64_t row)
{
    const sagerun_problem *p = &w->p;
    acc_row r = {0};
    if (p->varlen) {
        uint32_t t = (uint32_t)(row % p->total_q);
        r.h = (uint32_t)(row / p->total_q);
        while (!((uint32_t)w->cu_q[r.b] <= t && t < (uint32_t)w->cu_q[r.b + 1]))
            r.b++;
        r.n = t - (uint32_t)w->cu_q[r.b];
        r.q_len = (uint32_t)(w->cu_q[r.b + 1] - w->cu_q[r.b]);
        r.kv_len = (uint32_t)(w->cu_kv[r.b + 1] - w->cu_kv[r.b]);
        r.q_at = ((uint64_t)t * p->heads_q + r.h) * p->head_dim;
        return r;
    }
    r.n = (uint32_t)(row % p->seq_len);
    r.h = (uint32_t)(row / p->seq_len % p->heads_q);
    r.b = (uint32_t)(row / p->seq_len / p->heads_q);
    r.q_len = p->seq_len;
    r.kv_len = p->kv_len ? p->kv_len : p->seq_len;
    r.q_at = p->layout == SAGERUN_LAYOUT_HND
                 ? (((uint64_t)r.b * p->heads_q + r.h) * p->seq_len + r.n) * p->head_dim
                 : (((uint64_t)r.b * p->seq_len + r.n) * p->heads_q + r.h) * p->head_dim;
    return r;
}

/* Element offset of key j of row r in K and V. */
static inline uint64_t acc_key_at(const acc_view *w, const acc_row *r, uint32_t j, int flaw)
{
    const sagerun_problem *p = &w->p;
    uint32_t hk = r->h / (p->heads_q / p->heads_kv), kv_len = p->kv_len ? p->kv_len : p->seq_len;
    uint64_t row;
    if (p->page_size) {
        uint32_t col = j / p->page_size, page = 0;
        if (flaw == ACC_FLAW_PAGES) /* the pages in the order the sequences use them */
            for (uint32_t b = 0; b < r->b; b++)
                page += ((w->cu_kv ? (uint32_t)(w->cu_kv[b + 1] - w->cu_kv[b]) : kv_len) +
                         p->page_size - 1) / p->page_size;
        page = flaw == ACC_FLAW_PAGES ? page + col
                                      : (uint32_t)w->table[r->b * p->pages_per_seq + col];
        row = (uint64_t)page * p->page_size + j % p->page_size;
    } else if (p->varlen) {
        row = (uint64_t)w->cu_kv[r->b] + j;
    } else if (p->layout == SAGERUN_LAYOUT_HND) {
        return (((uint64_t)r->b * p->heads_kv + hk) * kv_len + j) * p->head_dim;
    } else {
        row = (uint64_t)r->b * kv_len + j;
    }
    return (row * p->heads_kv + hk) * p->head_dim;
}

/* Whether row r attends key j, as sagerun.h states the mask (diagonal d(i), causal j <= d, window
 * d - left <= j <= d + right). */
static inline bool acc_attends(const sagerun_problem *p, const acc_row *r, uint32_t j, int flaw)
{
    if (flaw == ACC_FLAW_MASK)
        return true;
    if (flaw == ACC_FLAW_KEYS && j >= r->q_len)
        return false;
    bool bottom_right = (p->align == SAGERUN_ALIGN_BOTTOM_RIGHT) != (flaw == ACC_FLAW_ALIGN);
    int64_t d = (int64_t)r->n + (bottom_right ? (int64_t)r->kv_len - r->q_len : 0);
    if (p->causal && (int64_t)j > d)
        return false;
    if (p->window && p->window_left >= 0 && (int64_t)j < d - p->window_left)
        return false;
    if (p->window && p->window_right >= 0 && (int64_t)j > d + p->window_right)
        return false;
    return true;
}

/* Exact attention of one row (logical number) in double precision into o[D], with a flaw. */
static inline void acc_oracle_row(const acc_view *w, uint64_t row, int flaw, double *o)
{
    const sagerun_problem *p = &w->p;
    acc_row r = acc_decode(w, row);
    double scale = sagerun_problem_sm_scale(p), m = -INFINITY, l = 0;
    double *s = malloc(sizeof *s * (r.kv_len + 1));
    for (uint32_t j = 0; j < r.kv_len; j++) {
        s[j] = -INFINITY;
        if (!acc_attends(p, &r, j, flaw))
            continue;
        uint64_t ka = acc_key_at(w, &r, j, flaw);
        double dot = 0;
        for (uint32_t d = 0; d < p->head_dim; d++)
            dot += acc_load(w, w->q, r.q_at + d) * acc_load(w, w->k, ka + d);
        s[j] = dot * scale;
        if (p->softcap > 0 && flaw != ACC_FLAW_SOFTCAP)
            s[j] = p->softcap * tanh(s[j] / p->softcap);
        m = fmax(m, s[j]);
    }
    memset(o, 0, sizeof *o * p->head_dim);
    for (uint32_t j = 0; j < r.kv_len; j++) {
        if (s[j] == -INFINITY)
            continue;
        double e = exp(s[j] - m);
        l += e;
        uint64_t va = acc_key_at(w, &r, j, flaw);
        for (uint32_t d = 0; d < p->head_dim; d++)
            o[d] += e * acc_load(w, w->v, va + d);
    }
    for (uint32_t d = 0; l > 0 && d < p->head_dim; d++)
        o[d] /= l;
    free(s);
}

static inline uint64_t acc_row_total(const sagerun_problem *p)
{
    return p->varlen ? (uint64_t)p->heads_q * p->total_q
                     : (uint64_t)p->batch * p->heads_q * p->seq_len;
}

/* The whole output of the oracle with a flaw (ACC_FLAW_NONE: exact), rounded to the dtype, laid
 * out as O; malloc'd, sagerun_problem_q_elements values. */
static inline uint16_t *acc_oracle_output(const acc_view *w, int flaw)
{
    const sagerun_problem *p = &w->p;
    uint16_t *out = calloc(sagerun_problem_q_elements(p), sizeof *out);
    double *o = malloc(sizeof *o * p->head_dim);
    for (uint64_t row = 0; row < acc_row_total(p); row++) {
        acc_oracle_row(w, row, flaw, o);
        acc_row r = acc_decode(w, row);
        for (uint32_t d = 0; d < p->head_dim; d++)
            out[r.q_at + d] = p->dtype == SAGERUN_DTYPE_BF16 ? sr_float_to_bf16((float)o[d])
                                                             : sr_float_to_half((float)o[d]);
    }
    free(o);
    return out;
}

/* The accuracy metrics (report.h's sr_accuracy) of out against the exact oracle over rows. */
static inline sr_accuracy acc_expected(const acc_view *w, const uint16_t *out,
                                       const uint64_t *rows, uint64_t nrows)
{
    const sagerun_problem *p = &w->p;
    double dot = 0, oo = 0, rr = 0, ad = 0, ar = 0, sq = 0, mx = 0;
    double *x = malloc(sizeof *x * p->head_dim);
    for (uint64_t i = 0; i < nrows; i++) {
        acc_oracle_row(w, rows[i], ACC_FLAW_NONE, x);
        acc_row r = acc_decode(w, rows[i]);
        for (uint32_t d = 0; d < p->head_dim; d++) {
            double o = acc_load(w, out, r.q_at + d), diff = o - x[d];
            dot += o * x[d];
            oo += o * o;
            rr += x[d] * x[d];
            ad += fabs(diff);
            ar += fabs(x[d]);
            sq += diff * diff;
            mx = fmax(mx, fabs(diff));
        }
    }
    free(x);
    sr_accuracy a = {.present = true, .rows = nrows, .elements = nrows * p->head_dim};
    a.cosine = dot / sqrt(oo * rr);
    a.rel_l1 = ad / ar;
    a.rmse = sqrt(sq / (double)a.elements);
    a.max_abs = mx;
    return a;
}

/* The rows a comparison samples when asked for `wanted` of them (0 or more than all: every row):
 * evenly spaced, the last included. malloc'd; *n their count. */
static inline uint64_t *acc_sampled_rows(const sagerun_problem *p, uint64_t wanted, uint64_t *n)
{
    uint64_t total = acc_row_total(p);
    *n = wanted == 0 || wanted >= total ? total : wanted;
    uint64_t *rows = malloc(sizeof *rows * *n);
    for (uint64_t i = 0; i < *n; i++)
        rows[i] = *n == total ? i
                              : (uint64_t)((long double)i * (total - 1) / (*n > 1 ? *n - 1 : 1));
    return rows;
}

#endif
