/* Exact attention softmax(Q·Kᵀ·scale)·V in double precision on the CPU, shared by the host
 * variants `reference` (one thread: the oracle) and `reference-mt` (the rows split across all
 * cores; each row's arithmetic is the same, so the output bytes are too). Any B, N, Hq, Hkv (GQA),
 * D; layouts NHD and HND; fp16 or bf16 in and out; causal (query row n attends to keys 0..n).
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

#include <unistd.h>

#define REFERENCE_MAX_THREADS 256

/* Scratch of one worker thread. */
typedef struct reference_worker {
    const sagerun_plugin_inputs *in;
    double *scores; /* N scores of one query row */
    double *acc;    /* D accumulators of one query row */
    uint64_t first_row, end_row; /* rows (b, h, n) flattened in that order */
} reference_worker;

typedef struct reference_state {
    const sagerun_plugin_inputs *in;
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

static uint64_t offset(const sagerun_problem *p, uint32_t heads, uint32_t b, uint32_t n,
                       uint32_t h)
{
    if (p->layout == SAGERUN_LAYOUT_HND)
        return (((uint64_t)b * heads + h) * p->seq_len + n) * p->head_dim;
    return (((uint64_t)b * p->seq_len + n) * heads + h) * p->head_dim;
}

static int reference_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                              size_t errlen)
{
    if (p->dtype != SAGERUN_DTYPE_F16 && p->dtype != SAGERUN_DTYPE_BF16) {
        snprintf(err, errlen, "dtype must be F16 or BF16");
        return SAGERUN_UNSUPPORTED;
    }
    /* One "CTA" per query row on the CPU: tiles of one row and all keys. */
    g->cta_q = 1;
    g->cta_k = p->seq_len;
    g->warp_q = 1;
    g->warp_k = p->seq_len;
    g->threads_per_cta = 1;
    g->dynamic_shared_memory_bytes = 0;
    g->grid_ctas = (uint64_t)p->batch * p->heads_q * p->seq_len;
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
    const sagerun_problem *p = &inputs->problem;
    long cores = REFERENCE_THREADS > 0 ? REFERENCE_THREADS : sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t rows = (uint64_t)p->batch * p->heads_q * p->seq_len;
    if (cores < 1)
        cores = 1;
    if (cores > REFERENCE_MAX_THREADS)
        cores = REFERENCE_MAX_THREADS;
    if ((uint64_t)cores > rows)
        cores = (long)rows;
    s->in = inputs;
    s->threads = (unsigned)cores;
    for (unsigned t = 0; t < s->threads; t++) {
        reference_worker *w = &s->workers[t];
        w->in = inputs;
        w->scores = malloc(sizeof *w->scores * p->seq_len);
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

/* One query row: scores, max-subtracted exponentials, weighted sum of V, normalised. */
static void attend_row(reference_worker *s, uint32_t b, uint32_t h, uint32_t n, double scale)
{
    const sagerun_problem *p = &s->in->problem;
    const uint16_t *q = (const uint16_t *)(uintptr_t)s->in->q;
    const uint16_t *k = (const uint16_t *)(uintptr_t)s->in->k;
    const uint16_t *v = (const uint16_t *)(uintptr_t)s->in->v;
    uint16_t *o = (uint16_t *)(uintptr_t)s->in->o;
    uint32_t hk = h / (p->heads_q / p->heads_kv), D = p->head_dim;
    uint64_t qo = offset(p, p->heads_q, b, n, h);
    const uint32_t keys = p->causal ? n + 1 : p->seq_len; /* causal: q_len = kv_len */
    double max = -INFINITY;
    for (uint32_t j = 0; j < keys; j++) {
        uint64_t ko = offset(p, p->heads_kv, b, j, hk);
        double dot = 0;
        for (uint32_t c = 0; c < D; c++)
            dot += load(q, qo + c, (int)p->dtype) * load(k, ko + c, (int)p->dtype);
        s->scores[j] = dot * scale;
        if (s->scores[j] > max)
            max = s->scores[j];
    }
    double sum = 0;
    memset(s->acc, 0, sizeof *s->acc * D);
    for (uint32_t j = 0; j < keys; j++) {
        double w = exp(s->scores[j] - max);
        sum += w;
        uint64_t vo = offset(p, p->heads_kv, b, j, hk);
        for (uint32_t c = 0; c < D; c++)
            s->acc[c] += w * load(v, vo + c, (int)p->dtype);
    }
    for (uint32_t c = 0; c < D; c++) {
        double out = s->acc[c] / sum;
        o[qo + c] = p->dtype == SAGERUN_DTYPE_BF16 ? double_to_bf16(out) : double_to_half(out);
    }
}

static void *reference_work(void *arg)
{
    reference_worker *w = arg;
    const sagerun_problem *p = &w->in->problem;
    /* The default scale is D^-0.5 exactly, as in the golden files' o_ref_fp32 (using its fp32
     * rounding instead moves near-zero outputs by up to 0.04 fp16 ulp: test_reference). */
    double scale = p->sm_scale > 0 ? p->sm_scale : 1.0 / sqrt((double)p->head_dim);
    for (uint64_t r = w->first_row; r < w->end_row; r++) {
        uint32_t n = (uint32_t)(r % p->seq_len);
        uint32_t h = (uint32_t)(r / p->seq_len % p->heads_q);
        uint32_t b = (uint32_t)(r / p->seq_len / p->heads_q);
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
};

SAGERUN_PLUGIN_DEFINE_ENTRY(reference_variant)
