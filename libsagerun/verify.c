/* Verification (engine.h): checked calls with poisoned outputs and their hashes (determinism,
 * byte-exactness), how an output's bytes differ from the baseline's, and accuracy against exact
 * attention over sampled rows. Nothing here runs while a sample is timed. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "kernels/compare_params.h"
#include "kernels/compare_rows.h"
#include "kernels/quantize_math.h"
#include "nvtx.h"

/* 0xFF bytes: a NaN in fp16 and bf16, so an element the variant does not write shows up both in
 * the hash and as a non-finite value in the accuracy check. */
#define SR_POISON_BYTE 0xFF
/* Rows sampled for accuracy when the caller does not say (all rows up to the first number). */
#define SR_ACCURACY_ALL_ROWS_UP_TO 4096u
#define SR_ACCURACY_ROWS_CUDA 1024u
#define SR_ACCURACY_ROWS_HOST 256u

/* ---- rows sampled for accuracy ---------------------------------------------------------------- */

/* The comparison kernels' view of the inputs (compare_params.h): on the host backend the same
 * struct, its addresses host pointers. */
static sr_compare_problem kernel_problem(const sagerun_inputs *in)
{
    const sagerun_problem *p = &in->problem;
    sr_compare_problem k = {
        .q = in->q, .k = in->k, .v = in->v,
        .cu_q = in->seq.d_cu_q, .cu_kv = in->seq.d_cu_kv, .table = in->seq.d_table,
        .batch = p->batch, .seq_len = p->seq_len, .heads_q = p->heads_q,
        .heads_kv = p->heads_kv, .head_dim = p->head_dim, .layout = p->layout,
        .dtype = p->dtype, .causal = p->causal, .sm_scale = sagerun_problem_sm_scale(p),
        .kv_len = sagerun_problem_kv_len(p), .align = p->align, .window = p->window,
        .window_left = p->window_left, .window_right = p->window_right, .softcap = p->softcap,
        .varlen = p->varlen, .total_q = p->total_q, .page_size = p->page_size,
        .pages_per_seq = p->pages_per_seq,
    };
    return k;
}

/* Every head of every query row: dense rows of B x N queries, varlen the packed total_q. */
static uint64_t row_total(const sagerun_problem *p)
{
    return p->varlen ? (uint64_t)p->heads_q * p->total_q
                     : (uint64_t)p->batch * p->heads_q * p->seq_len;
}

/* Evenly spaced logical rows (compare_params.h) over all heads and positions, the last
 * included. */
static uint64_t *sample_rows(const sagerun_problem *p, uint32_t wanted, uint32_t *count)
{
    uint64_t total = row_total(p);
    uint64_t n = wanted == 0 || wanted >= total ? total : wanted;
    uint64_t *rows = malloc((size_t)n * sizeof(*rows));
    if (!rows)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        rows[i] = n == total ? i : (uint64_t)((long double)i * (total - 1) / (n - 1 ? n - 1 : 1));
    *count = (uint32_t)n;
    return rows;
}

uint32_t sr_verify_accuracy_rows(const sagerun_problem *in, uint32_t wanted, int backend)
{
    if (wanted)
        return wanted;
    sagerun_problem p;
    sr_problem_load(in, &p);
    uint64_t total = row_total(&p);
    if (total <= SR_ACCURACY_ALL_ROWS_UP_TO)
        return (uint32_t)total;
    return backend == SAGERUN_BACKEND_CUDA ? SR_ACCURACY_ROWS_CUDA : SR_ACCURACY_ROWS_HOST;
}

/* ---- host backend: the same computations on host memory -------------------------------------- */

static double host_load(uint64_t base, uint64_t index, uint32_t dtype)
{
    uint16_t bits = ((const uint16_t *)(uintptr_t)base)[index];
    return dtype == SAGERUN_DTYPE_BF16 ? sr_bf16_to_float(bits) : sr_half_to_float(bits);
}

/* The scores of row r's keys [first, end), masked and capped, into scores[j - first]; returns
 * their maximum. */
static double host_scores(const sr_compare_problem *p, const sr_compare_row *r, const double *q,
                          double *scores)
{
    double m = -INFINITY;
    for (uint32_t j = r->first; j < r->end; j++) {
        uint64_t base = sr_compare_kv_base(p, r, j);
        double s = 0;
        for (uint32_t d = 0; d < p->head_dim; d++)
            s += q[d] * host_load(p->k, base + d, p->dtype);
        s *= (double)p->sm_scale;
        if (p->softcap > 0)
            s = (double)p->softcap * tanh(s / (double)p->softcap);
        scores[j - r->first] = s;
        m = fmax(m, s);
    }
    return m;
}

/* Exact attention of one row in double precision into o (D values); 0 where it attends no key. */
static void host_reference_row(const sr_compare_problem *p, uint64_t row, double *q,
                               double *scores, double *o)
{
    sr_compare_row r = sr_compare_decode_row(p, row);
    for (uint32_t d = 0; d < p->head_dim; d++)
        q[d] = host_load(p->q, r.q_base + d, p->dtype);
    double m = host_scores(p, &r, q, scores);
    double l = 0;
    memset(o, 0, p->head_dim * sizeof(double));
    for (uint32_t j = r.first; j < r.end; j++) {
        double pj = exp(scores[j - r.first] - m);
        l += pj;
        uint64_t base = sr_compare_kv_base(p, &r, j);
        for (uint32_t d = 0; d < p->head_dim; d++)
            o[d] += pj * host_load(p->v, base + d, p->dtype);
    }
    for (uint32_t d = 0; l > 0 && d < p->head_dim; d++)
        o[d] /= l;
}

/* Exact attention in double precision for the sampled rows; out is rows x D doubles. */
static sagerun_status host_reference_rows(const sr_compare_problem *p, const uint64_t *rows,
                                          uint32_t nrows, double *out, sagerun_error *err)
{
    double *scores = malloc((size_t)p->kv_len * sizeof(double));
    double *q = malloc((size_t)p->head_dim * sizeof(double));
    if (!scores || !q) {
        free(scores);
        free(q);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (reference rows)");
    }
    for (uint32_t i = 0; i < nrows; i++)
        host_reference_row(p, rows[i], q, scores, out + (size_t)i * p->head_dim);
    free(scores);
    free(q);
    return SAGERUN_OK;
}

static void host_accuracy_partials(const sr_compare_problem *p, uint64_t output,
                                   const uint64_t *rows, uint32_t nrows, const double *ref,
                                   double *partials)
{
    for (uint32_t i = 0; i < nrows; i++) {
        sr_compare_row r = sr_compare_decode_row(p, rows[i]);
        double *s = partials + (size_t)i * SR_COMPARE_ACC_SLOTS;
        memset(s, 0, SR_COMPARE_ACC_SLOTS * sizeof(double));
        for (uint32_t d = 0; d < p->head_dim; d++) {
            double o = host_load(output, r.q_base + d, p->dtype);
            double x = ref[(size_t)i * p->head_dim + d];
            if (!isfinite(o)) {
                s[SR_ACC_NONFINITE] += 1;
                continue;
            }
            double diff = o - x;
            s[SR_ACC_DOT] += o * x;
            s[SR_ACC_OO] += o * o;
            s[SR_ACC_RR] += x * x;
            s[SR_ACC_ABS_DIFF] += fabs(diff);
            s[SR_ACC_ABS_REF] += fabs(x);
            s[SR_ACC_SQ_DIFF] += diff * diff;
            s[SR_ACC_MAX_ABS] = fmax(s[SR_ACC_MAX_ABS], fabs(diff));
        }
    }
}

static int ordered16(uint16_t x)
{
    return (x & 0x8000) ? -(int)(x & 0x7fff) : (int)x;
}

static bool is_nan16(uint16_t x, uint32_t dtype)
{
    return dtype == SAGERUN_DTYPE_BF16 ? ((x & 0x7f80) == 0x7f80 && (x & 0x7f))
                                       : ((x & 0x7c00) == 0x7c00 && (x & 0x3ff));
}

static void host_byte_diff(uint64_t a_addr, uint64_t b_addr, uint64_t elements, uint32_t dtype,
                           sr_byte_diff *d)
{
    const uint16_t *a = (const uint16_t *)(uintptr_t)a_addr, *b = (const uint16_t *)(uintptr_t)b_addr;
    for (uint64_t i = 0; i < elements; i++) {
        if (a[i] == b[i])
            continue;
        if (d->differing++ == 0)
            d->first_index = i;
        uint64_t ulp = (uint64_t)abs(ordered16(a[i]) - ordered16(b[i]));
        if (ulp > d->max_ulp)
            d->max_ulp = ulp;
        double diff = is_nan16(a[i], dtype) || is_nan16(b[i], dtype)
                          ? INFINITY
                          : fabs(host_load(a_addr, i, dtype) - host_load(b_addr, i, dtype));
        if (isnan(diff))
            diff = INFINITY;
        if ((float)diff > d->max_abs)
            d->max_abs = (float)diff; /* fp32, as the device computes it */
    }
}

/* ---- the same on the device ------------------------------------------------------------------- */

static const uint32_t one_block[3] = {SR_COMPARE_THREADS, 1, 1};

static sagerun_status device_byte_diff(sagerun_context *ctx, uint64_t a, uint64_t b,
                                       uint64_t elements, uint32_t dtype, sr_byte_diff *d,
                                       sagerun_error *err)
{
    uint64_t result;
    sagerun_status st = sagerun_mem_alloc(ctx, sizeof(sr_compare_diff_result), &result, err);
    if (st != SAGERUN_OK)
        return st;
    sr_compare_diff_result r = {.differing = 0, .first_index = ~0ull};
    sr_compare_diff_params prm = {.a = a, .b = b, .elements = elements, .result = result,
                                  .dtype = dtype};
    void *params[] = {&prm};
    uint64_t blocks = (elements + SR_COMPARE_THREADS - 1) / SR_COMPARE_THREADS;
    uint32_t grid[3] = {(uint32_t)(blocks < 4096 ? (blocks ? blocks : 1) : 4096), 1, 1};
    if ((st = sagerun_mem_upload(ctx, result, &r, sizeof(r), err)) == SAGERUN_OK &&
        (st = sr_launch_library_kernel(ctx, "sr_compare_byte_diff", grid, one_block, 0, params,
                                       err)) == SAGERUN_OK)
        st = sagerun_mem_download(ctx, &r, result, sizeof(r), err);
    sagerun_mem_free(ctx, result);
    if (st != SAGERUN_OK)
        return st;
    d->differing = r.differing;
    d->first_index = r.differing ? r.first_index : 0;
    d->max_ulp = r.max_ulp;
    float max_abs;
    memcpy(&max_abs, &r.max_abs_bits, sizeof(max_abs));
    d->max_abs = max_abs;
    return SAGERUN_OK;
}

sagerun_status sr_buffers_equal(sagerun_context *ctx, uint64_t a, uint64_t b, uint64_t bytes,
                                bool *equal, sagerun_error *err)
{
    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) {
        *equal = memcmp((const void *)(uintptr_t)a, (const void *)(uintptr_t)b, (size_t)bytes) == 0;
        return SAGERUN_OK;
    }
    sr_byte_diff d = {0};
    sagerun_status st = device_byte_diff(ctx, a, b, bytes / 2, SAGERUN_DTYPE_F16, &d, err);
    *equal = st == SAGERUN_OK && d.differing == 0;
    return st;
}

/* The accuracy reference, computed once per comparison and compared with every output. */
typedef struct reference {
    bool ready;
    uint32_t nrows;
    uint64_t *rows;          /* host copy of the sampled rows */
    double *host_ref;        /* host backend: rows x D doubles */
    uint64_t dev_rows;       /* CUDA: the rows on the device */
    uint64_t dev_ref;        /* CUDA: rows x D floats */
    uint64_t dev_partials;   /* CUDA: rows x SR_COMPARE_ACC_SLOTS doubles */
    double *partials;        /* host copy of the partial sums */
} reference;

static void reference_free(sagerun_context *ctx, reference *r)
{
    free(r->rows);
    free(r->host_ref);
    free(r->partials);
    if (r->dev_rows)
        sagerun_mem_free(ctx, r->dev_rows);
    if (r->dev_ref)
        sagerun_mem_free(ctx, r->dev_ref);
    if (r->dev_partials)
        sagerun_mem_free(ctx, r->dev_partials);
    memset(r, 0, sizeof(*r));
}

static sagerun_status reference_compute(sagerun_context *ctx, const sagerun_inputs *in,
                                        uint32_t wanted, reference *r, sagerun_error *err)
{
    const sagerun_problem *p = &in->problem;
    sr_compare_problem kp = kernel_problem(in);
    int backend = sagerun_context_backend(ctx);
    r->rows = sample_rows(p, sr_verify_accuracy_rows(p, wanted, backend), &r->nrows);
    r->partials = malloc((size_t)r->nrows * SR_COMPARE_ACC_SLOTS * sizeof(double));
    if (!r->rows || !r->partials)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (accuracy rows)");
    if (backend == SAGERUN_BACKEND_HOST) {
        r->host_ref = malloc((size_t)r->nrows * p->head_dim * sizeof(double));
        if (!r->host_ref)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (reference rows)");
        sagerun_status st = host_reference_rows(&kp, r->rows, r->nrows, r->host_ref, err);
        r->ready = st == SAGERUN_OK;
        return st;
    }
    if (p->head_dim > SR_COMPARE_MAX_HEAD_DIM)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "the accuracy reference handles head_dim up to %d, not %u",
                            SR_COMPARE_MAX_HEAD_DIM, p->head_dim);
    sagerun_status st;
    if ((st = sagerun_mem_alloc(ctx, (uint64_t)r->nrows * sizeof(uint64_t), &r->dev_rows, err)) ||
        (st = sagerun_mem_alloc(ctx, (uint64_t)r->nrows * p->head_dim * sizeof(float),
                                &r->dev_ref, err)) ||
        (st = sagerun_mem_alloc(ctx, (uint64_t)r->nrows * SR_COMPARE_ACC_SLOTS * sizeof(double),
                                &r->dev_partials, err)) ||
        (st = sagerun_mem_upload(ctx, r->dev_rows, r->rows, (uint64_t)r->nrows * sizeof(uint64_t),
                                 err)))
        return st;
    sr_compare_reference_params prm = {.p = kp, .rows = r->dev_rows, .out = r->dev_ref,
                                       .nrows = r->nrows};
    void *params[] = {&prm};
    uint32_t grid[3] = {r->nrows, 1, 1};
    uint32_t smem = (uint32_t)((p->head_dim + SR_COMPARE_THREADS + SR_COMPARE_THREADS / 32) *
                               sizeof(float));
    if ((st = sr_launch_library_kernel(ctx, "sr_compare_reference_rows", grid, one_block, smem,
                                       params, err)) != SAGERUN_OK ||
        (st = sagerun_context_synchronize(ctx, err)) != SAGERUN_OK)
        return st;
    r->ready = true;
    return SAGERUN_OK;
}

static sagerun_status accuracy_of(sagerun_context *ctx, const sagerun_inputs *in, reference *r,
                                  uint64_t output, sr_accuracy *a, sagerun_error *err)
{
    sr_compare_problem kp = kernel_problem(in);
    const uint32_t D = in->problem.head_dim;
    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) {
        host_accuracy_partials(&kp, output, r->rows, r->nrows, r->host_ref, r->partials);
        snprintf(a->reference, sizeof(a->reference), "fp64-host");
    } else {
        sr_compare_accuracy_params prm = {.p = kp, .output = output, .rows = r->dev_rows,
                                          .reference = r->dev_ref, .partials = r->dev_partials,
                                          .nrows = r->nrows};
        void *params[] = {&prm};
        uint32_t grid[3] = {r->nrows, 1, 1};
        sagerun_status st = sr_launch_library_kernel(ctx, "sr_compare_accuracy_rows", grid,
                                                     one_block, 0, params, err);
        if (st == SAGERUN_OK)
            st = sagerun_mem_download(ctx, r->partials, r->dev_partials,
                                      (uint64_t)r->nrows * SR_COMPARE_ACC_SLOTS * sizeof(double),
                                      err);
        if (st != SAGERUN_OK)
            return st;
        snprintf(a->reference, sizeof(a->reference), "fp32-device");
    }
    /* Rows summed in order on the host: the same result every time. */
    double s[SR_COMPARE_ACC_SLOTS] = {0};
    for (uint32_t i = 0; i < r->nrows; i++) {
        const double *ps = r->partials + (size_t)i * SR_COMPARE_ACC_SLOTS;
        for (int k = 0; k < SR_COMPARE_ACC_SLOTS; k++)
            s[k] = k == SR_ACC_MAX_ABS ? fmax(s[k], ps[k]) : s[k] + ps[k];
    }
    a->present = true;
    a->rows = r->nrows;
    a->elements = (uint64_t)r->nrows * D;
    a->nonfinite = (uint64_t)s[SR_ACC_NONFINITE];
    uint64_t finite = a->elements - a->nonfinite;
    a->cosine = s[SR_ACC_DOT] / sqrt(s[SR_ACC_OO] * s[SR_ACC_RR]);
    a->rel_l1 = s[SR_ACC_ABS_DIFF] / s[SR_ACC_ABS_REF];
    a->rmse = finite ? sqrt(s[SR_ACC_SQ_DIFF] / (double)finite) : NAN;
    a->max_abs = finite ? s[SR_ACC_MAX_ABS] : NAN;
    return SAGERUN_OK;
}

static uint64_t bytes_of(const sr_entry *e)
{
    uint64_t bytes;
    sagerun_instance_output(e->inst, &bytes);
    return bytes;
}

/* ---- checked calls ------------------------------------------------------------------------- */

/* One untimed call with the output poisoned first; the entry fails on error. false: the context
 * is lost (err says so). */
static bool checked_call(sagerun_context *ctx, const sagerun_compare_hooks *h, sr_entry *e,
                         sagerun_error *err)
{
    sagerun_error e_err = {0};
    uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
    double t0 = sr_hook_begin(h, e, "check", 0, 1);
    if (sagerun_mem_fill(ctx, out, SR_POISON_BYTE, bytes, &e_err) != SAGERUN_OK ||
        sagerun_context_synchronize(ctx, &e_err) != SAGERUN_OK ||
        sr_instance_call(e->inst, &e_err) != SAGERUN_OK ||
        sagerun_context_synchronize(ctx, &e_err) != SAGERUN_OK)
        sr_entry_fail(e, &e_err, "checked run", "check");
    bool lost = sr_entry_lost_context(ctx, e, err);
    sr_hook_end(h, e, "check", 0, 1, t0, lost);
    return !lost;
}

/* After entry e's checked call: the shared inputs as they were, or e fails for writing into them
 * (they are put back). Non-OK when they cannot be checked or put back. */
static sagerun_status inputs_kept(sagerun_context *ctx, sr_input_guard *g, sr_entry *e,
                                  sagerun_error *err)
{
    const char *changed = NULL;
    sagerun_status st = g ? sr_input_guard_check(ctx, g, &changed, err) : SAGERUN_OK;
    if (changed) {
        sagerun_error e_err = {.status = SAGERUN_VARIANT};
        snprintf(e_err.message, sizeof(e_err.message),
                 "%s changed (the inputs are read-only to a variant, plugin.h; put back for the "
                 "others)", changed);
        sr_entry_fail(e, &e_err, "wrote into the inputs the variants share", "check");
        g->caught = true;
    }
    return st;
}

/* After entry e's checked call: nothing written past the end of its output since the instance
 * was made, or e fails (internal.h: the output's guard), as it does when the guard cannot be
 * read. */
static void tail_kept(sr_entry *e)
{
    sagerun_error e_err = {0};
    sagerun_status st = sagerun_instance_check_output_end(e->inst, &e_err);
    if (st == SAGERUN_VARIANT)
        sr_entry_fail(e, &e_err, "wrote past the end of its output", "check");
    else if (st != SAGERUN_OK)
        sr_entry_fail(e, &e_err, "reading the guard after its output", "check");
}

/* Keeps a device copy of the first checked output (hashed after the rounds); without room for
 * it, hashes it now. */
static sagerun_status keep_first(sagerun_context *ctx, sr_entry *e, sagerun_error *err)
{
    uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
    if (sagerun_mem_alloc(ctx, bytes, &e->check.snapshot, NULL) == SAGERUN_OK &&
        sr_mem_copy(ctx, e->check.snapshot, out, bytes, err) == SAGERUN_OK)
        return sagerun_context_synchronize(ctx, err);
    if (e->check.snapshot)
        sagerun_mem_free(ctx, e->check.snapshot);
    e->check.snapshot = 0;
    return sagerun_instance_output_sha256(e->inst, e->check.first_sha, err);
}

sagerun_status sr_verify_first(sagerun_context *ctx, const sagerun_compare_hooks *h, sr_entry *es,
                               size_t n, sr_input_guard *g, bool *stop, sagerun_error *err)
{
    for (size_t i = 0; i < n; i++) {
        sr_entry *e = &es[i];
        if (e->failed)
            continue;
        if ((*stop = sr_hook_interrupted(h)))
            return SAGERUN_OK;
        if (!checked_call(ctx, h, e, err))
            return SAGERUN_CUDA;
        if (!e->failed && inputs_kept(ctx, g, e, err) != SAGERUN_OK)
            return err ? err->status : SAGERUN_VARIANT;
        if (!e->failed)
            tail_kept(e);
        sagerun_error e_err = {0};
        if (!e->failed && keep_first(ctx, e, &e_err) != SAGERUN_OK)
            sr_entry_fail(e, &e_err, "hashing the output", "check");
        if (e->failed && i == 0)
            return sr_error_set(err, SAGERUN_VARIANT, "baseline %s", e->failure);
    }
    return SAGERUN_OK;
}

/* true when the output equals the first checked one, compared on the device. */
static bool same_as_first(sagerun_context *ctx, const sagerun_inputs *in, sr_entry *e)
{
    uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
    if (!e->check.snapshot)
        return false;
    sr_byte_diff d = {0};
    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) {
        host_byte_diff(e->check.snapshot, out, bytes / 2, in->problem.dtype, &d);
        return d.differing == 0;
    }
    return device_byte_diff(ctx, e->check.snapshot, out, bytes / 2, in->problem.dtype, &d,
                            NULL) == SAGERUN_OK &&
           d.differing == 0;
}

/* Both hashes of every entry: the first copies hashed on threads of their own (all at once, after
 * the rounds: nothing is timed now), the last outputs compared with them on the device and hashed
 * only where they differ. */
static void resolve_hashes(sagerun_context *ctx, const sagerun_inputs *in, sr_entry *es, size_t n)
{
    sr_nvtx_push("hashing");
    for (size_t i = 0; i < n; i++) {
        sr_entry *e = &es[i];
        if (!e->failed && e->check.snapshot &&
            sr_hash_job_start(ctx, e->check.snapshot, bytes_of(e), &e->check.first_hash, NULL) !=
                SAGERUN_OK)
            e->check.first_hash = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        sr_entry *e = &es[i];
        sagerun_error e_err = {0};
        if (e->failed)
            continue;
        bool same = same_as_first(ctx, in, e);
        sagerun_status st = SAGERUN_OK;
        if (e->check.first_hash)
            st = sr_hash_job_finish(e->check.first_hash, e->check.first_sha, &e_err);
        else if (e->check.snapshot)
            st = sr_sha256_memory(ctx, e->check.snapshot, bytes_of(e), e->check.first_sha, &e_err);
        e->check.first_hash = NULL;
        if (st == SAGERUN_OK && same)
            memcpy(e->check.last_sha, e->check.first_sha, sizeof(e->check.last_sha));
        else if (st == SAGERUN_OK)
            st = sagerun_instance_output_sha256(e->inst, e->check.last_sha, &e_err);
        if (st != SAGERUN_OK)
            sr_entry_fail(e, &e_err, "hashing the output", "check");
    }
    sr_nvtx_pop();
}

sagerun_status sr_verify_last(sagerun_context *ctx, const sagerun_inputs *in,
                              const sagerun_compare_hooks *h, sr_entry *es, size_t n,
                              sr_input_guard *g, bool stopped, sagerun_error *err)
{
    /* Interrupted: no new call; the output each entry holds now (its latest call, not poisoned
     * before) stands in for the last checked one. */
    for (size_t i = 0; i < n && !stopped; i++) {
        if (es[i].failed)
            continue;
        if (!checked_call(ctx, h, &es[i], err))
            return SAGERUN_CUDA;
        if (!es[i].failed && inputs_kept(ctx, g, &es[i], err) != SAGERUN_OK)
            return err ? err->status : SAGERUN_VARIANT;
        if (!es[i].failed)
            tail_kept(&es[i]);
        if (es[i].failed && i == 0)
            return sr_error_set(err, SAGERUN_VARIANT, "baseline %s", es[i].failure);
    }
    resolve_hashes(ctx, in, es, n);
    return SAGERUN_OK;
}

void sr_verify_release(sagerun_context *ctx, sr_entry *es, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sr_entry_check *c = &es[i].check;
        if (c->first_hash) {
            char ignored[65];
            sr_hash_job_finish(c->first_hash, ignored, NULL);
            c->first_hash = NULL;
        }
        if (c->snapshot)
            sagerun_mem_free(ctx, c->snapshot);
        c->snapshot = 0;
    }
}

/* ---- outputs against the baseline's and against exact attention ----------------------------- */

static void byte_diffs(sagerun_context *ctx, const sagerun_inputs *in, sr_entry *es, size_t n,
                       sr_report *rep)
{
    uint64_t out_bytes = 0;
    uint64_t base_out = sagerun_instance_output(es[0].inst, &out_bytes);
    uint64_t elements = out_bytes / 2;
    for (size_t i = 1; i < n; i++) {
        if (es[i].failed || strcmp(es[i].check.last_sha, es[0].check.last_sha) == 0)
            continue;
        sr_byte_diff *d = &es[i].check.diff;
        uint64_t out_i = sagerun_instance_output(es[i].inst, NULL);
        sagerun_error d_err = {0};
        d->elements = elements;
        if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) {
            host_byte_diff(out_i, base_out, elements, in->problem.dtype, d);
            d->present = true;
        } else if (device_byte_diff(ctx, out_i, base_out, elements, in->problem.dtype, d,
                                    &d_err) == SAGERUN_OK) {
            d->present = true;
        } else {
            sr_report_add_warning(rep, "byte difference of %s not measured: %s", es[i].label,
                                  d_err.message);
        }
    }
}

sagerun_status sr_verify_accuracy(sagerun_context *ctx, const sagerun_inputs *in, uint32_t rows,
                                  uint64_t output, sr_accuracy *a, sagerun_error *err)
{
    reference ref = {0};
    memset(a, 0, sizeof(*a));
    sagerun_status st = reference_compute(ctx, in, rows, &ref, err);
    if (st == SAGERUN_OK)
        st = accuracy_of(ctx, in, &ref, output, a, err);
    reference_free(ctx, &ref);
    return st;
}

static void accuracies(sagerun_context *ctx, const sagerun_inputs *in, uint32_t rows,
                       sr_entry *es, size_t n, sr_report *rep)
{
    reference ref = {0};
    sagerun_error a_err = {0};
    if (reference_compute(ctx, in, rows, &ref, &a_err) != SAGERUN_OK) {
        sr_report_add_warning(rep, "accuracy not measured: %s", a_err.message);
        reference_free(ctx, &ref);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (es[i].failed)
            continue;
        uint64_t out_i = sagerun_instance_output(es[i].inst, NULL);
        if (accuracy_of(ctx, in, &ref, out_i, &es[i].check.accuracy, &a_err) != SAGERUN_OK) {
            sr_report_add_warning(rep, "accuracy of %s not measured: %s", es[i].label,
                                  a_err.message);
            memset(&es[i].check.accuracy, 0, sizeof(sr_accuracy));
        }
    }
    reference_free(ctx, &ref);
}

void sr_verify_outputs(sagerun_context *ctx, const sagerun_inputs *in,
                       const sagerun_compare_options *o, sr_entry *es, size_t n, sr_report *rep)
{
    if (o->progress)
        o->progress(o->progress_user, "check", NULL, 1, 2);
    sr_nvtx_push("byte differences");
    byte_diffs(ctx, in, es, n, rep);
    sr_nvtx_pop();
    if (o->flags & SAGERUN_COMPARE_SKIP_ACCURACY)
        return;
    if (o->progress)
        o->progress(o->progress_user, "check", "reference", 2, 2);
    sr_nvtx_push("accuracy");
    accuracies(ctx, in, o->accuracy_rows, es, n, rep);
    sr_nvtx_pop();
}
