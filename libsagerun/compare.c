/* The A/B comparison engine (compare.h): schedule, timing, hashes, byte differences, accuracy,
 * statistics and verdicts, gathered into a report (report.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/compare_params.h"
#include "kernels/quantize_math.h"
#include "limits.h"
#include "judge.h"
#include "report.h"

#ifndef SAGERUN_GIT_COMMIT
#define SAGERUN_GIT_COMMIT "unknown"
#endif

/* 0xFF bytes: a NaN in fp16 and bf16, so an element the variant does not write shows up both in
 * the hash and as a non-finite value in the accuracy check. */
#define SR_POISON_BYTE 0xFF
/* Rows sampled for accuracy when the caller does not say (all rows up to the first number). */
#define SR_ACCURACY_ALL_ROWS_UP_TO 4096u
#define SR_ACCURACY_ROWS_CUDA 1024u
#define SR_ACCURACY_ROWS_HOST 256u

struct sagerun_compare_result {
    sr_report report;
    double **samples;    /* per entry: rounds * iterations seconds (NULL when it did not run) */
    size_t sample_count; /* rounds * iterations */
};

/* One entry of the comparison while it runs. */
typedef struct entry {
    size_t index; /* in the registry */
    sagerun_variant_info info;
    char label[80];
    sagerun_instance *inst;
    bool failed;
    char failure[SAGERUN_ERROR_MESSAGE_SIZE];
    char failure_phase[16]; /* sagerun_compare_call's phase names */
    bool prepared;
    double prepare_s;
    double *samples;
    char first_sha[65], last_sha[65];
    uint64_t snapshot;       /* device copy of the first checked output (0: none) */
    sr_hash_job *first_hash; /* hashing that copy in the background during the rounds */
    bool has_geometry;
    sagerun_launch_geometry geometry;
} entry;

const char *sagerun_verdict_name(int verdict)
{
    return sr_verdict_name(verdict);
}

void sagerun_compare_options_init(sagerun_compare_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->struct_size = sizeof(*opts);
    opts->warmup = 3;
    opts->rounds = 5;
    opts->iterations = 10;
    opts->noise_threshold_percent = 1.0;
    opts->baseline = "baseline";
}

static void progress(const sagerun_compare_options *o, const char *phase, const char *variant,
                     uint32_t step, uint32_t steps)
{
    if (o->progress)
        o->progress(o->progress_user, phase, variant, step, steps);
}

static bool is_hex64(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
              (s[n] >= 'A' && s[n] <= 'F')))
            return false;
    return n == 64;
}

static void entry_fail(entry *e, const sagerun_error *err, const char *what, const char *phase)
{
    e->failed = true;
    snprintf(e->failure, sizeof(e->failure), "%s: %s", what,
             err->message[0] ? err->message : sagerun_status_message(err->status));
    snprintf(e->failure_phase, sizeof(e->failure_phase), "%s", phase);
}

/* ---- hooks (compare.h): calls into variants announced, interruption, entries left out -------- */

static double call_begin(const sagerun_compare_hooks *h, const entry *e, const char *phase,
                         uint32_t round)
{
    if (h->call) {
        sagerun_compare_call c = {.struct_size = sizeof c, .label = e->label, .phase = phase,
                                  .round = round};
        h->call(h->call_user, &c);
    }
    return sr_monotonic_seconds();
}

static void call_end(const sagerun_compare_hooks *h, const entry *e, const char *phase,
                     uint32_t round, double t0, bool context_lost)
{
    if (!h->call)
        return;
    sagerun_compare_call c = {.struct_size = sizeof c, .end = 1, .label = e->label,
                              .phase = phase, .round = round,
                              .seconds = sr_monotonic_seconds() - t0,
                              .failure = e->failed ? e->failure : NULL,
                              .failure_phase = e->failed ? e->failure_phase : NULL,
                              .context_lost = context_lost};
    h->call(h->call_user, &c);
}

static bool interrupted(const sagerun_compare_hooks *h)
{
    return h->interrupted && h->interrupted(h->interrupted_user);
}

/* After a variant failed on the GPU: an illegal address, a trap or a launch failure is sticky:
 * every later call in this CUDA context fails alike, so no other variant can be measured in this
 * process. (A supervising process re-runs the comparison without the culprit: sagerun compare.) */
static bool context_lost(sagerun_context *ctx, const entry *e)
{
    if (!e->failed || sagerun_context_backend(ctx) != SAGERUN_BACKEND_CUDA)
        return false;
    return sagerun_context_synchronize(ctx, NULL) != SAGERUN_OK;
}

static sagerun_status context_lost_error(sagerun_error *err, const entry *e)
{
    return sr_error_set(err, SAGERUN_CUDA,
                        "%s (%s) left the CUDA context unusable, so no other variant can run in "
                        "this process: %s",
                        e->label, e->failure_phase, e->failure);
}

/* Device memory: refuse what cannot fit before allocating outputs and quantized tensors. */
static sagerun_status check_memory(sagerun_registry *reg, sagerun_context *ctx,
                                   const sagerun_inputs *in, const entry *es, size_t n,
                                   uint32_t accuracy_rows, sagerun_error *err)
{
    if (sagerun_context_backend(ctx) != SAGERUN_BACKEND_CUDA)
        return SAGERUN_OK; /* host: an allocation failure is reported where it happens */
    sagerun_device_info di = {.struct_size = sizeof di};
    if (sagerun_context_device_info(ctx, &di, NULL) != SAGERUN_OK)
        return SAGERUN_OK;
    const sagerun_variant_descriptor **d = calloc(n ? n : 1, sizeof(*d));
    if (!d)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++)
        d[i] = es[i].failed ? NULL : sr_registry_descriptor(reg, es[i].index);
    sr_memory_estimate est;
    sr_memory_estimate_compare(&in->problem, d, n, false, accuracy_rows, &est);
    free(d);
    return sr_memory_check(&est, di.free_memory, err);
}

/* ---- variants to compare -------------------------------------------------------------------- */

static sagerun_status find_variant(sagerun_registry *reg, const char *name, size_t *index,
                                   sagerun_error *err)
{
    long i = sagerun_registry_find(reg, name);
    if (i >= 0) {
        *index = (size_t)i;
        return SAGERUN_OK;
    }
    char known[256] = "";
    size_t used = 0;
    for (size_t k = 0; k < sagerun_registry_variant_count(reg) && used < sizeof(known); k++) {
        sagerun_variant_info vi = {.struct_size = sizeof(vi)};
        if (sagerun_registry_variant_info(reg, k, &vi, NULL) == SAGERUN_OK)
            used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", k ? ", " : "",
                                     vi.name);
    }
    return sr_error_set(err, SAGERUN_NOT_FOUND,
                        "no variant named '%s' (found: %s; see 'sagerun list' for rejected "
                        "plugin files)",
                        name, known[0] ? known : "none");
}

/* The baseline first, then the named variants (or every other variant of the context's backend),
 * each with a label unique in the report. */
static sagerun_status select_entries(sagerun_registry *reg, sagerun_context *ctx,
                                     const sagerun_compare_options *o, sr_report *rep,
                                     entry **out, size_t *count, sagerun_error *err)
{
    size_t nreg = sagerun_registry_variant_count(reg);
    size_t cap = 1 + (o->variants ? o->variant_count : nreg);
    entry *es = calloc(cap, sizeof(*es));
    if (!es)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    size_t n = 0;
    sagerun_status st = find_variant(reg, o->baseline, &es[n++].index, err);
    if (st != SAGERUN_OK)
        goto fail;
    if (o->variants) {
        for (size_t i = 0; i < o->variant_count; i++) {
            if (!o->variants[i]) {
                st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant name %zu is NULL", i);
                goto fail;
            }
            if ((st = find_variant(reg, o->variants[i], &es[n++].index, err)) != SAGERUN_OK)
                goto fail;
        }
    } else {
        int backend = sagerun_context_backend(ctx);
        for (size_t k = 0; k < nreg; k++) {
            sagerun_variant_info vi = {.struct_size = sizeof(vi)};
            if (k == es[0].index || sagerun_registry_variant_info(reg, k, &vi, NULL) != SAGERUN_OK)
                continue;
            if (vi.backend != backend) {
                sr_report_add_warning(rep, "variant %s skipped: it runs on the %s backend, this "
                                           "comparison on %s",
                                      vi.name, sagerun_backend_name(vi.backend),
                                      sagerun_backend_name(backend));
                continue;
            }
            es[n++].index = k;
        }
        if (n == 1)
            sr_report_add_warning(rep, "no variant besides the baseline was found");
    }
    for (size_t i = 0; i < n; i++) {
        es[i].info.struct_size = sizeof(es[i].info);
        if ((st = sagerun_registry_variant_info(reg, es[i].index, &es[i].info, err)) != SAGERUN_OK)
            goto fail;
        unsigned repeat = 1;
        for (size_t j = 0; j < i; j++)
            repeat += es[j].index == es[i].index;
        if (repeat == 1)
            snprintf(es[i].label, sizeof(es[i].label), "%s", es[i].info.name);
        else
            snprintf(es[i].label, sizeof(es[i].label), "%s#%u", es[i].info.name, repeat);
    }
    *out = es;
    *count = n;
    return SAGERUN_OK;
fail:
    free(es);
    return st;
}

/* ---- rows sampled for accuracy ---------------------------------------------------------------- */

/* Evenly spaced logical rows ((b*Hq + h)*N + n) over all heads and positions, the last included. */
static uint64_t *sample_rows(const sagerun_problem *p, uint32_t wanted, uint32_t *count)
{
    uint64_t total = (uint64_t)p->batch * p->heads_q * p->seq_len;
    uint64_t n = wanted == 0 || wanted >= total ? total : wanted;
    uint64_t *rows = malloc((size_t)n * sizeof(*rows));
    if (!rows)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        rows[i] = n == total ? i : (uint64_t)((long double)i * (total - 1) / (n - 1 ? n - 1 : 1));
    *count = (uint32_t)n;
    return rows;
}

static uint32_t accuracy_row_count(const sagerun_problem *p, uint32_t wanted, int backend)
{
    if (wanted)
        return wanted;
    uint64_t total = (uint64_t)p->batch * p->heads_q * p->seq_len;
    if (total <= SR_ACCURACY_ALL_ROWS_UP_TO)
        return (uint32_t)total;
    return backend == SAGERUN_BACKEND_CUDA ? SR_ACCURACY_ROWS_CUDA : SR_ACCURACY_ROWS_HOST;
}

static sr_compare_problem kernel_problem(const sagerun_inputs *in)
{
    const sagerun_problem *p = &in->problem;
    sr_compare_problem k = {
        .q = in->q, .k = in->k, .v = in->v,
        .batch = p->batch, .seq_len = p->seq_len, .heads_q = p->heads_q,
        .heads_kv = p->heads_kv, .head_dim = p->head_dim, .layout = p->layout,
        .dtype = p->dtype, .causal = p->causal, .sm_scale = sagerun_problem_sm_scale(p),
    };
    return k;
}

/* ---- host backend: the same computations on host memory -------------------------------------- */

static double host_load(uint64_t base, uint64_t index, uint32_t dtype)
{
    uint16_t bits = ((const uint16_t *)(uintptr_t)base)[index];
    return dtype == SAGERUN_DTYPE_BF16 ? sr_bf16_to_float(bits) : sr_half_to_float(bits);
}

static uint64_t host_offset(const sr_compare_problem *p, uint32_t heads, uint32_t b, uint32_t n,
                            uint32_t h, uint32_t d)
{
    if (p->layout == SAGERUN_LAYOUT_HND)
        return (((uint64_t)b * heads + h) * p->seq_len + n) * p->head_dim + d;
    return (((uint64_t)b * p->seq_len + n) * heads + h) * p->head_dim + d;
}

static void host_decode_row(const sr_compare_problem *p, uint64_t row, uint32_t *b, uint32_t *n,
                            uint32_t *h, uint32_t *hk)
{
    *n = (uint32_t)(row % p->seq_len);
    uint64_t bh = row / p->seq_len;
    *h = (uint32_t)(bh % p->heads_q);
    *b = (uint32_t)(bh / p->heads_q);
    *hk = *h / (p->heads_q / p->heads_kv);
}

/* Exact attention in double precision for the sampled rows; out is rows x D doubles. */
static sagerun_status host_reference_rows(const sr_compare_problem *p, const uint64_t *rows,
                                          uint32_t nrows, double *out, sagerun_error *err)
{
    double *scores = malloc((size_t)p->seq_len * sizeof(double));
    double *q = malloc((size_t)p->head_dim * sizeof(double));
    if (!scores || !q) {
        free(scores);
        free(q);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory (reference rows)");
    }
    for (uint32_t i = 0; i < nrows; i++) {
        uint32_t b, n, h, hk;
        host_decode_row(p, rows[i], &b, &n, &h, &hk);
        for (uint32_t d = 0; d < p->head_dim; d++)
            q[d] = host_load(p->q, host_offset(p, p->heads_q, b, n, h, d), p->dtype);
        uint32_t keys = p->causal ? n + 1 : p->seq_len;
        double m = -INFINITY;
        for (uint32_t j = 0; j < keys; j++) {
            uint64_t base = host_offset(p, p->heads_kv, b, j, hk, 0);
            double s = 0;
            for (uint32_t d = 0; d < p->head_dim; d++)
                s += q[d] * host_load(p->k, base + d, p->dtype);
            scores[j] = s * (double)p->sm_scale;
            m = fmax(m, scores[j]);
        }
        double l = 0;
        double *o = out + (size_t)i * p->head_dim;
        memset(o, 0, p->head_dim * sizeof(double));
        for (uint32_t j = 0; j < keys; j++) {
            double pj = exp(scores[j] - m);
            l += pj;
            uint64_t base = host_offset(p, p->heads_kv, b, j, hk, 0);
            for (uint32_t d = 0; d < p->head_dim; d++)
                o[d] += pj * host_load(p->v, base + d, p->dtype);
        }
        for (uint32_t d = 0; d < p->head_dim; d++)
            o[d] /= l;
    }
    free(scores);
    free(q);
    return SAGERUN_OK;
}

static void host_accuracy_partials(const sr_compare_problem *p, uint64_t output,
                                   const uint64_t *rows, uint32_t nrows, const double *ref,
                                   double *partials)
{
    for (uint32_t i = 0; i < nrows; i++) {
        uint32_t b, n, h, hk;
        host_decode_row(p, rows[i], &b, &n, &h, &hk);
        double *s = partials + (size_t)i * SR_COMPARE_ACC_SLOTS;
        memset(s, 0, SR_COMPARE_ACC_SLOTS * sizeof(double));
        for (uint32_t d = 0; d < p->head_dim; d++) {
            double o = host_load(output, host_offset(p, p->heads_q, b, n, h, d), p->dtype);
            double r = ref[(size_t)i * p->head_dim + d];
            if (!isfinite(o)) {
                s[SR_ACC_NONFINITE] += 1;
                continue;
            }
            double diff = o - r;
            s[SR_ACC_DOT] += o * r;
            s[SR_ACC_OO] += o * o;
            s[SR_ACC_RR] += r * r;
            s[SR_ACC_ABS_DIFF] += fabs(diff);
            s[SR_ACC_ABS_REF] += fabs(r);
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
    r->rows = sample_rows(p, accuracy_row_count(p, wanted, backend), &r->nrows);
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

/* ---- the schedule ----------------------------------------------------------------------------- */

/* One timed call, with the output poisoned first when it is a checked call (the first and the
 * last of the schedule). */
static sagerun_status timed_call(sagerun_context *ctx, entry *e, bool poison, double *seconds,
                                 sagerun_error *err)
{
    sagerun_status st;
    if (poison) {
        uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
        if ((st = sagerun_mem_fill(ctx, out, SR_POISON_BYTE, bytes, err)) != SAGERUN_OK ||
            (st = sagerun_context_synchronize(ctx, err)) != SAGERUN_OK)
            return st;
    }
    return sagerun_instance_run(e->inst, seconds, err);
}

/* Hashing 0.5 GB takes about a second on one core, several times a seed call: done in line it
 * would double the command's time. So the first checked output is copied on the device (outside
 * the timed region) and hashed by a background thread while the rounds go on; the last checked
 * output is compared with that copy on the device and hashed only where it differs. Without
 * room for the copy, both are hashed in line. */
static sagerun_status checkpoint_first(sagerun_context *ctx, entry *e, sagerun_error *err)
{
    uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
    sagerun_status st;
    if (e->snapshot &&
        (st = sr_mem_copy(ctx, e->snapshot, out, bytes, err)) == SAGERUN_OK &&
        (st = sagerun_context_synchronize(ctx, err)) == SAGERUN_OK &&
        (st = sr_hash_job_start(ctx, e->snapshot, bytes, &e->first_hash, err)) == SAGERUN_OK)
        return SAGERUN_OK;
    return sagerun_instance_output_sha256(e->inst, e->first_sha, err);
}

static sagerun_status device_byte_diff(sagerun_context *ctx, uint64_t a, uint64_t b,
                                       uint64_t elements, uint32_t dtype, sr_byte_diff *d,
                                       sagerun_error *err);

/* Both hashes of a variant once its last checked call ran (or the comparison stopped). */
static sagerun_status resolve_hashes(sagerun_context *ctx, const sagerun_inputs *in, entry *e,
                                     sagerun_error *err)
{
    sagerun_status st = SAGERUN_OK;
    if (e->first_hash) {
        st = sr_hash_job_finish(e->first_hash, e->first_sha, err);
        e->first_hash = NULL;
        if (st != SAGERUN_OK)
            return st;
    }
    uint64_t bytes, out = sagerun_instance_output(e->inst, &bytes);
    if (e->snapshot) {
        sr_byte_diff d = {0};
        st = sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST
                 ? (host_byte_diff(e->snapshot, out, bytes / 2, in->problem.dtype, &d), SAGERUN_OK)
                 : device_byte_diff(ctx, e->snapshot, out, bytes / 2, in->problem.dtype, &d, err);
        if (st == SAGERUN_OK && d.differing == 0) {
            memcpy(e->last_sha, e->first_sha, sizeof(e->last_sha)); /* the same bytes */
            return SAGERUN_OK;
        }
    }
    return sagerun_instance_output_sha256(e->inst, e->last_sha, err);
}

/* Ends a background hash still running (on failure paths) and frees the copy. */
static void release_snapshot(sagerun_context *ctx, entry *e)
{
    if (e->first_hash) {
        char ignored[65];
        sr_hash_job_finish(e->first_hash, ignored, NULL);
        e->first_hash = NULL;
    }
    sagerun_mem_free(ctx, e->snapshot);
    e->snapshot = 0;
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(buf, len, "unknown");
}

static void fill_header(sr_report *rep, sagerun_context *ctx, const sagerun_inputs *in,
                        const sagerun_compare_options *o)
{
    const sagerun_problem *p = &in->problem;
    rep->has_ext = true;
    rep->schema_version = SAGERUN_REPORT_SCHEMA_VERSION;
    rep->source_commit = strdup(SAGERUN_GIT_COMMIT);
    rep->tool_version = strdup(sagerun_version_string());
    rep->tool_commit = strdup(SAGERUN_GIT_COMMIT);
    char now[32];
    utc_now(now, sizeof(now));
    rep->created_utc = strdup(now);
    /* q's shape as stored: [B, N, H, D] for NHD (the seed's), [B, H, N, D] for HND. */
    rep->q_shape_len = 4;
    rep->q_shape[0] = p->batch;
    rep->q_shape[1] = p->layout == SAGERUN_LAYOUT_HND ? p->heads_q : p->seq_len;
    rep->q_shape[2] = p->layout == SAGERUN_LAYOUT_HND ? p->seq_len : p->heads_q;
    rep->q_shape[3] = p->head_dim;
    rep->rounds = o->rounds;
    rep->warmup = o->warmup;
    rep->iterations = o->iterations;
    rep->has_problem = true;
    rep->problem = *p;
    rep->problem.sm_scale = sagerun_problem_sm_scale(p);
    rep->noise_threshold_percent = o->noise_threshold_percent;
    rep->expect_sha256 = o->expect_sha256 ? strdup(o->expect_sha256) : NULL;
    if (rep->expect_sha256)
        for (char *c = rep->expect_sha256; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    rep->backend = strdup(sagerun_backend_name(sagerun_context_backend(ctx)));
    rep->compute_capability = rep->driver_version = rep->multiprocessors = -1;
    rep->max_sm_clock_mhz = -1;
    sagerun_device_info di = {.struct_size = sizeof(di)};
    if (sagerun_context_device_info(ctx, &di, NULL) == SAGERUN_OK) {
        rep->device_name = strdup(di.name);
        rep->compute_capability = di.compute_capability;
        rep->driver_version = di.driver_version;
        rep->multiprocessors = di.multiprocessors;
    }
}

static void fill_variant(sr_report_variant *v, const entry *e, bool is_baseline,
                         const sagerun_compare_options *o, size_t rounds_done)
{
    v->name = strdup(e->info.name);
    v->label = strdup(e->label);
    v->path = sr_strdup_or_null(e->info.path);
    v->version = sr_strdup_or_null(e->info.version);
    v->backend = sr_strdup_or_null(sagerun_backend_name(e->info.backend));
    v->plugin_sha256 = e->info.sha256[0] ? strdup(e->info.sha256) : NULL;
    v->failure = e->failed ? strdup(e->failure) : NULL;
    v->failure_phase = e->failed && e->failure_phase[0] ? strdup(e->failure_phase) : NULL;
    v->is_baseline = is_baseline;
    v->has_scheduler = e->has_geometry;
    v->scheduler = e->geometry;
    v->prepare_s = e->prepared ? e->prepare_s : NAN;
    v->tops = v->speedup_percent = NAN;
    v->byte_exact = v->deterministic = -1;
    size_t R = rounds_done, I = o->iterations;
    if (e->failed || R == 0) {
        sr_summarize(NULL, 0, NULL, &v->timing);
        return;
    }
    sr_summarize(e->samples, R * I, NULL, &v->timing);
    v->rounds = calloc(R, sizeof(*v->rounds));
    if (v->rounds) {
        v->round_count = R;
        for (size_t r = 0; r < R; r++)
            sr_summarize(e->samples + r * I, I, NULL, &v->rounds[r]);
    }
    if ((v->samples = malloc(R * I * sizeof(double)))) {
        memcpy(v->samples, e->samples, R * I * sizeof(double));
        v->sample_rounds = R;
        v->samples_per_round = I;
    }
    v->output_sha256 = strdup(e->first_sha);
    v->last_output_sha256 = strdup(e->last_sha);
    v->deterministic = strcmp(e->first_sha, e->last_sha) == 0;
}

/* Speedup, interval and verdict of every entry against entry 0. */
static void judge(sr_report *rep, double threshold)
{
    const sr_report_variant *base = &rep->variants[0];
    size_t R = base->round_count;
    double *b = malloc((R ? R : 1) * sizeof(double)), *x = malloc((R ? R : 1) * sizeof(double));
    for (size_t i = 0; i < rep->variant_count; i++) {
        sr_report_variant *v = &rep->variants[i];
        if (v->failure || !v->timing.count)
            continue;
        v->speedup_percent = i == 0 ? 0.0 : sr_speedup_percent(base->timing.p50, v->timing.p50);
        if (rep->has_problem && v->timing.p50 > 0)
            v->tops = sagerun_problem_operations(&rep->problem) / v->timing.p50 / 1e12;
        if (i == 0 || !b || !x || v->round_count != R)
            continue;
        for (size_t r = 0; r < R; r++) {
            b[r] = base->rounds[r].p50;
            x[r] = v->rounds[r].p50;
        }
        v->interval = sr_paired_speedup_interval(b, x, R);
        v->verdict = sr_judge_verdict(&v->interval, threshold);
    }
    free(b);
    free(x);
}

static void clock_warnings(sr_report *rep)
{
    uint64_t seen = 0;
    for (size_t i = 0; i < rep->clock_round_count; i++)
        if (rep->clock_rounds[i].has_throttle)
            seen |= rep->clock_rounds[i].throttle_reasons & sr_nvml_slowdown_mask();
    if (seen) {
        char names[256];
        sr_nvml_reason_names(seen, names, sizeof(names));
        sr_report_add_warning(rep, "the GPU was throttling during the timed rounds (%s): timings "
                                   "may be slower and noisier than the kernel",
                              names);
    }
}

sagerun_status sagerun_compare_run(sagerun_registry *reg, sagerun_context *ctx,
                                   sagerun_inputs *inputs, const sagerun_compare_options *opts,
                                   sagerun_compare_result **out, sagerun_error *err)
{
    if (!reg || !ctx || !inputs || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_run: NULL argument");
    *out = NULL;
    sagerun_compare_options o;
    sagerun_compare_options_init(&o);
    if (opts) {
        if (opts->struct_size < offsetof(sagerun_compare_options, progress))
            return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                                "compare options: struct_size %u is too small",
                                opts->struct_size);
        memcpy(&o, opts, opts->struct_size < sizeof(o) ? opts->struct_size : sizeof(o));
        if (!o.baseline)
            o.baseline = "baseline";
    }
    if (o.rounds < 1 || o.iterations < 1)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: rounds and iterations must be at least 1 (got %u and %u)",
                            o.rounds, o.iterations);
    if (!(o.noise_threshold_percent >= 0) || !isfinite(o.noise_threshold_percent))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: the noise threshold must be a percentage >= 0");
    if (o.expect_sha256 && !is_hex64(o.expect_sha256))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: expected SHA-256 '%s' is not 64 hex digits", o.expect_sha256);
    if (inputs->ctx != ctx)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare: the inputs belong to another context");

    sagerun_compare_result *res = calloc(1, sizeof(*res));
    if (!res)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sr_report *rep = &res->report;
    entry *es = NULL;
    size_t n = 0;
    sr_nvml *nvml = NULL;
    reference ref = {0};
    const size_t R = o.rounds, I = o.iterations;
    sagerun_compare_hooks hk;
    memset(&hk, 0, sizeof(hk));
    if (o.hooks)
        memcpy(&hk, o.hooks, o.hooks->struct_size < sizeof(hk) ? o.hooks->struct_size : sizeof(hk));
    bool stop = false;      /* interrupted: report the rounds finished */
    size_t rounds_done = 0; /* rounds whose timed calls all ran */
    sagerun_status st = select_entries(reg, ctx, &o, rep, &es, &n, err);
    if (st != SAGERUN_OK)
        goto fail;
    fill_header(rep, ctx, inputs, &o);
    if (es[0].info.backend != sagerun_context_backend(ctx)) {
        st = sr_error_set(err, SAGERUN_UNSUPPORTED,
                          "baseline %s runs on the %s backend, the context is %s (--backend)",
                          es[0].info.name, sagerun_backend_name(es[0].info.backend),
                          sagerun_backend_name(sagerun_context_backend(ctx)));
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(es[i].samples = calloc(R * I, sizeof(double)))) {
            st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
            goto fail;
        }
    }

    /* entries the caller leaves out: failed with the reason given */
    for (size_t k = 0; k < hk.skip_count && hk.skip_labels; k++) {
        for (size_t i = 0; i < n; i++) {
            if (!hk.skip_labels[k] || strcmp(hk.skip_labels[k], es[i].label) != 0)
                continue;
            es[i].failed = true;
            snprintf(es[i].failure, sizeof(es[i].failure), "%s",
                     hk.skip_reasons && hk.skip_reasons[k] ? hk.skip_reasons[k] : "left out");
            snprintf(es[i].failure_phase, sizeof(es[i].failure_phase), "%s",
                     hk.skip_phases && hk.skip_phases[k] ? hk.skip_phases[k] : "");
            if (i == 0) {
                st = sr_error_set(err, SAGERUN_VARIANT, "baseline %s: %s", es[0].label,
                                  es[0].failure);
                goto fail;
            }
        }
    }

    uint32_t acc_rows = o.flags & SAGERUN_COMPARE_SKIP_ACCURACY
                            ? 0
                            : accuracy_row_count(&inputs->problem, o.accuracy_rows,
                                                 sagerun_context_backend(ctx));
    if ((st = check_memory(reg, ctx, inputs, es, n, acc_rows, err)) != SAGERUN_OK)
        goto fail;

    /* create and prepare: the baseline must succeed, the others are recorded when they fail */
    for (size_t i = 0; i < n && !stop; i++) {
        entry *e = &es[i];
        sagerun_error e_err = {0};
        if (e->failed)
            continue;
        if ((stop = interrupted(&hk)))
            break;
        progress(&o, "prepare", e->label, (uint32_t)i + 1, (uint32_t)n);
        double t0 = call_begin(&hk, e, "create", 0);
        if (sagerun_instance_create(reg, e->index, ctx, inputs, &e->inst, &e_err) != SAGERUN_OK) {
            entry_fail(e, &e_err, "create", "create");
        } else {
            e->geometry.struct_size = sizeof(e->geometry);
            e->has_geometry = sagerun_instance_geometry(e->inst, &e->geometry, NULL) == SAGERUN_OK;
        }
        bool lost = context_lost(ctx, e);
        call_end(&hk, e, "create", 0, t0, lost);
        if (lost) {
            st = context_lost_error(err, e);
            goto fail;
        }
        if (!e->failed) {
            t0 = call_begin(&hk, e, "prepare", 0);
            if (sagerun_instance_prepare(e->inst, &e->prepare_s, &e_err) != SAGERUN_OK) {
                entry_fail(e, &e_err, "prepare", "prepare");
            } else {
                e->prepared = true;
                uint64_t bytes;
                sagerun_instance_output(e->inst, &bytes);
                if (sagerun_mem_alloc(ctx, bytes, &e->snapshot, NULL) != SAGERUN_OK)
                    e->snapshot = 0; /* no room: hash in line instead */
            }
            lost = context_lost(ctx, e);
            call_end(&hk, e, "prepare", 0, t0, lost);
            if (lost) {
                st = context_lost_error(err, e);
                goto fail;
            }
        }
        if (e->failed && i == 0) {
            if (err)
                *err = e_err;
            st = sr_error_prefix(err, "baseline %s", e->label);
            goto fail;
        }
    }

    /* warm-up: untimed for the report, one variant after the other */
    for (size_t i = 0; i < n && !stop; i++) {
        entry *e = &es[i];
        if (e->failed)
            continue;
        progress(&o, "warmup", e->label, (uint32_t)i + 1, (uint32_t)n);
        for (uint32_t w = 0; w < o.warmup && !e->failed; w++) {
            sagerun_error e_err = {0};
            if ((stop = interrupted(&hk)))
                break;
            double t0 = call_begin(&hk, e, "warmup", 0);
            if (sagerun_instance_run(e->inst, NULL, &e_err) != SAGERUN_OK)
                entry_fail(e, &e_err, "warm-up run", "warmup");
            bool lost = context_lost(ctx, e);
            call_end(&hk, e, "warmup", 0, t0, lost);
            if (lost) {
                st = context_lost_error(err, e);
                goto fail;
            }
        }
        if (e->failed && i == 0) {
            st = sr_error_set(err, SAGERUN_VARIANT, "baseline %s", e->failure);
            goto fail;
        }
    }

    if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_CUDA && !(o.flags & SAGERUN_COMPARE_NO_CLOCKS)) {
        char why[256] = "";
        nvml = sr_nvml_open(ctx->device, why, sizeof(why));
        if (nvml) {
            rep->clock_source = strdup("nvml");
            rep->max_sm_clock_mhz = sr_nvml_max_sm_clock(nvml);
            rep->clock_rounds = calloc(R, sizeof(*rep->clock_rounds));
        } else {
            rep->clock_unavailable = strdup(why);
        }
    } else {
        rep->clock_unavailable = strdup(sagerun_context_backend(ctx) == SAGERUN_BACKEND_CUDA
                                            ? "not asked for"
                                            : "host backend");
    }

    /* the timed rounds: every variant runs its iterations; the starting variant rotates */
    for (size_t r = 0; r < R && !stop; r++) {
        progress(&o, "round", NULL, (uint32_t)r + 1, (uint32_t)R);
        for (size_t k = 0; k < n && !stop; k++) {
            size_t i = (r + k) % n;
            entry *e = &es[i];
            for (size_t it = 0; it < I && !e->failed; it++) {
                bool first = r == 0 && it == 0, last = r == R - 1 && it == I - 1;
                sagerun_error e_err = {0};
                if ((stop = interrupted(&hk)))
                    break;
                double t0 = call_begin(&hk, e, "run", (uint32_t)r + 1);
                if (timed_call(ctx, e, first || last, &e->samples[r * I + it], &e_err) !=
                        SAGERUN_OK ||
                    (first && checkpoint_first(ctx, e, &e_err) != SAGERUN_OK))
                    entry_fail(e, &e_err, "timed run", "run");
                bool lost = context_lost(ctx, e);
                call_end(&hk, e, "run", (uint32_t)r + 1, t0, lost);
                if (lost) {
                    st = context_lost_error(err, e);
                    goto fail;
                }
                if (e->failed)
                    break;
            }
            if (e->failed && i == 0) {
                st = sr_error_set(err, SAGERUN_VARIANT, "baseline %s", e->failure);
                goto fail;
            }
        }
        if (stop)
            break;
        if (nvml && rep->clock_rounds) {
            sr_nvml_sample(nvml, &rep->clock_rounds[r]);
            rep->clock_round_count = r + 1;
        }
        rounds_done = r + 1;
    }
    if (stop) {
        /* Interrupted: the rounds finished are reported; the output each variant holds now (its
         * latest call, not poisoned before) stands in for the last checked one. */
        rep->incomplete = true;
        rep->rounds_completed = rounds_done;
        for (size_t i = 0; i < n && rounds_done; i++)
            if (!es[i].failed && es[i].inst &&
                resolve_hashes(ctx, inputs, &es[i], NULL) != SAGERUN_OK)
                memcpy(es[i].last_sha, es[i].first_sha, sizeof(es[i].last_sha));
        sr_report_add_warning(rep, "interrupted after %zu of %zu rounds: the report holds the "
                                   "rounds finished; byte differences and accuracy were not "
                                   "measured, the last output hash is that of the latest call",
                              rounds_done, R);
    } else {
        rep->rounds_completed = R;
        for (size_t i = 0; i < n; i++) {
            sagerun_error e_err = {0};
            if (!es[i].failed && es[i].inst &&
                resolve_hashes(ctx, inputs, &es[i], &e_err) != SAGERUN_OK)
                entry_fail(&es[i], &e_err, "hashing the output", "run");
        }
    }

    /* the report's variants, hashes and byte-exactness */
    if (!(rep->variants = calloc(n, sizeof(*rep->variants)))) {
        st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    rep->variant_count = n;
    for (size_t i = 0; i < n; i++)
        fill_variant(&rep->variants[i], &es[i], i == 0, &o, rounds_done);
    rep->reference_sha256 = rep->expect_sha256 ? strdup(rep->expect_sha256)
                            : es[0].first_sha[0] && rounds_done ? strdup(es[0].first_sha)
                                                                : NULL;
    rep->has_scheduler = es[0].has_geometry;
    rep->scheduler = es[0].geometry;
    for (size_t i = 0; i < n; i++) {
        sr_report_variant *v = &rep->variants[i];
        if (es[i].failed || !rounds_done)
            continue;
        v->byte_exact = v->deterministic == 1 && rep->reference_sha256 &&
                        strcmp(es[i].first_sha, rep->reference_sha256) == 0;
        if (v->deterministic == 0)
            sr_report_add_warning(rep, "%s is not deterministic: two runs gave different outputs",
                                  es[i].label);
    }

    /* how outputs differ from the baseline's (last outputs: both still in memory) */
    uint64_t out_bytes = 0; /* stays 0 when interrupted before the baseline was created */
    uint64_t base_out = sagerun_instance_output(es[0].inst, &out_bytes);
    uint64_t elements = out_bytes / 2;
    for (size_t i = 1; i < n && !stop; i++) {
        if (es[i].failed || strcmp(es[i].last_sha, es[0].last_sha) == 0)
            continue;
        progress(&o, "check", es[i].label, (uint32_t)i, (uint32_t)n);
        sr_byte_diff *d = &rep->variants[i].byte_diff;
        uint64_t out_i = sagerun_instance_output(es[i].inst, NULL);
        sagerun_error d_err = {0};
        d->elements = elements;
        if (sagerun_context_backend(ctx) == SAGERUN_BACKEND_HOST) {
            host_byte_diff(out_i, base_out, elements, inputs->problem.dtype, d);
            d->present = true;
        } else if (device_byte_diff(ctx, out_i, base_out, elements, inputs->problem.dtype, d,
                                    &d_err) == SAGERUN_OK) {
            d->present = true;
        } else {
            sr_report_add_warning(rep, "byte difference of %s not measured: %s", es[i].label,
                                  d_err.message);
        }
    }

    /* accuracy against exact attention */
    if (!(o.flags & SAGERUN_COMPARE_SKIP_ACCURACY) && !stop) {
        sagerun_error a_err = {0};
        progress(&o, "check", "reference", 0, (uint32_t)n);
        if (reference_compute(ctx, inputs, o.accuracy_rows, &ref, &a_err) != SAGERUN_OK) {
            sr_report_add_warning(rep, "accuracy not measured: %s", a_err.message);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (es[i].failed)
                    continue;
                uint64_t out_i = sagerun_instance_output(es[i].inst, NULL);
                if (accuracy_of(ctx, inputs, &ref, out_i, &rep->variants[i].accuracy, &a_err) !=
                    SAGERUN_OK) {
                    sr_report_add_warning(rep, "accuracy of %s not measured: %s", es[i].label,
                                          a_err.message);
                    memset(&rep->variants[i].accuracy, 0, sizeof(sr_accuracy));
                }
            }
        }
    }

    judge(rep, o.noise_threshold_percent);
    clock_warnings(rep);
    for (size_t i = 0; i < n; i++)
        if (rep->variants[i].verdict == SR_VERDICT_AMBIGUOUS && rounds_done < 2)
            sr_report_add_warning(rep, "one round gives no interval: use --rounds 2 or more for "
                                       "a verdict");

    res->sample_count = rounds_done * I;
    res->samples = calloc(n, sizeof(*res->samples));
    for (size_t i = 0; i < n; i++) {
        if (res->samples && !es[i].failed && rounds_done) {
            res->samples[i] = es[i].samples;
            es[i].samples = NULL;
        }
    }
    st = SAGERUN_OK;
fail:
    reference_free(ctx, &ref);
    sr_nvml_close(nvml);
    for (size_t i = 0; i < n; i++) {
        release_snapshot(ctx, &es[i]);
        if (es[i].inst) {
            double t0 = call_begin(&hk, &es[i], "destroy", 0);
            sagerun_instance_destroy(es[i].inst);
            call_end(&hk, &es[i], "destroy", 0, t0, false);
        }
        free(es[i].samples);
    }
    free(es);
    if (st != SAGERUN_OK) {
        sagerun_compare_result_destroy(res);
        return st;
    }
    *out = res;
    return SAGERUN_OK;
}

/* ---- results ---------------------------------------------------------------------------------- */

void sagerun_compare_result_destroy(sagerun_compare_result *res)
{
    if (!res)
        return;
    if (res->samples)
        for (size_t i = 0; i < res->report.variant_count; i++)
            free(res->samples[i]);
    free(res->samples);
    sr_report_clear(&res->report);
    free(res);
}

size_t sagerun_compare_result_variant_count(const sagerun_compare_result *res)
{
    return res ? res->report.variant_count : 0;
}

static void timing_out(const sr_summary *s, sagerun_timing_summary *t)
{
    t->reserved = 0;
    t->count = s->count;
    t->mean_s = s->mean;
    t->p50_s = s->p50;
    t->p90_s = s->p90;
    t->p95_s = s->p95;
    t->p99_s = s->p99;
    t->min_s = s->min;
    t->max_s = s->max;
}

sagerun_status sagerun_compare_result_variant(const sagerun_compare_result *res, size_t index,
                                              sagerun_compare_variant *out, sagerun_error *err)
{
    if (!res || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_variant: NULL argument");
    if (index >= res->report.variant_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range (%zu)",
                            index, res->report.variant_count);
    if (out->struct_size < offsetof(sagerun_compare_variant, timing))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare_result_variant: struct_size %u is too small",
                            out->struct_size);
    const sr_report_variant *v = &res->report.variants[index];
    sagerun_compare_variant full;
    memset(&full, 0, sizeof(full));
    full.struct_size = out->struct_size;
    full.round_count = (uint32_t)v->round_count;
    full.name = v->name;
    full.label = v->label;
    full.path = v->path;
    full.failure = v->failure;
    full.is_baseline = v->is_baseline;
    full.ran = !v->failure && v->timing.count > 0;
    full.timing.struct_size = sizeof(full.timing);
    timing_out(&v->timing, &full.timing);
    full.prepare_s = v->prepare_s;
    full.tops = v->tops;
    full.speedup_percent = v->speedup_percent;
    full.speedup_low_percent = v->interval.valid ? v->interval.low : NAN;
    full.speedup_high_percent = v->interval.valid ? v->interval.high : NAN;
    full.verdict = v->verdict;
    snprintf(full.output_sha256, sizeof(full.output_sha256), "%s",
             v->output_sha256 ? v->output_sha256 : "");
    snprintf(full.last_output_sha256, sizeof(full.last_output_sha256), "%s",
             v->last_output_sha256 ? v->last_output_sha256 : "");
    full.deterministic = v->deterministic == 1;
    full.byte_exact = v->byte_exact == 1;
    full.accuracy_present = v->accuracy.present;
    full.accuracy_rows = v->accuracy.rows;
    full.accuracy_nonfinite = v->accuracy.nonfinite;
    full.cosine_similarity = v->accuracy.present ? v->accuracy.cosine : NAN;
    full.relative_l1 = v->accuracy.present ? v->accuracy.rel_l1 : NAN;
    full.rmse = v->accuracy.present ? v->accuracy.rmse : NAN;
    full.max_abs_error = v->accuracy.present ? v->accuracy.max_abs : NAN;
    full.byte_diff_present = v->byte_diff.present;
    full.diff_elements = v->byte_diff.differing;
    full.first_diff_index = v->byte_diff.first_index;
    full.max_abs_diff = v->byte_diff.present ? v->byte_diff.max_abs : NAN;
    full.max_ulp_diff = v->byte_diff.max_ulp;
    /* Only the bytes the caller's struct has (it may be an older, shorter one). */
    memcpy(out, &full, out->struct_size < sizeof(full) ? out->struct_size : sizeof(full));
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_round(const sagerun_compare_result *res, size_t index,
                                            size_t round, sagerun_timing_summary *out,
                                            sagerun_error *err)
{
    if (!res || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_round: NULL argument");
    if (index >= res->report.variant_count ||
        round >= res->report.variants[index].round_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "round %zu of variant %zu: out of range", round, index);
    if (out->struct_size < sizeof(*out))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "compare_result_round: struct_size %u is too small", out->struct_size);
    timing_out(&res->report.variants[index].rounds[round], out);
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_samples(const sagerun_compare_result *res, size_t index,
                                              const double **seconds, size_t *count,
                                              sagerun_error *err)
{
    if (!res || !seconds || !count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "compare_result_samples: NULL argument");
    if (index >= res->report.variant_count)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            index);
    *seconds = res->samples ? res->samples[index] : NULL;
    *count = *seconds ? res->sample_count : 0;
    return SAGERUN_OK;
}

const char *sagerun_compare_result_reference_sha256(const sagerun_compare_result *res)
{
    return res ? res->report.reference_sha256 : NULL;
}

size_t sagerun_compare_result_warning_count(const sagerun_compare_result *res)
{
    return res ? res->report.warning_count : 0;
}

const char *sagerun_compare_result_warning(const sagerun_compare_result *res, size_t index)
{
    return res && index < res->report.warning_count ? res->report.warnings[index] : NULL;
}

int sagerun_compare_result_complete(const sagerun_compare_result *res)
{
    return res && !res->report.incomplete;
}

uint32_t sagerun_compare_result_rounds_completed(const sagerun_compare_result *res)
{
    return res ? (uint32_t)res->report.rounds_completed : 0;
}

const char *sagerun_compare_result_failure_phase(const sagerun_compare_result *res, size_t index)
{
    return res && index < res->report.variant_count ? res->report.variants[index].failure_phase
                                                    : NULL;
}

int sagerun_compare_result_all_ran(const sagerun_compare_result *res)
{
    if (!res)
        return 0;
    for (size_t i = 0; i < res->report.variant_count; i++)
        if (res->report.variants[i].failure || !res->report.variants[i].timing.count)
            return 0;
    return 1;
}

int sagerun_compare_result_all_byte_exact(const sagerun_compare_result *res)
{
    if (!res)
        return 0;
    for (size_t i = 0; i < res->report.variant_count; i++)
        if (res->report.variants[i].byte_exact != 1)
            return 0;
    return 1;
}

sagerun_status sagerun_compare_result_set_metadata(sagerun_compare_result *res,
                                                   const char *metadata_json, sagerun_error *err)
{
    if (!res)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "set_metadata: NULL result");
    json_t *meta = NULL;
    if (metadata_json) {
        json_error_t jerr;
        meta = json_loads(metadata_json, JSON_REJECT_DUPLICATES, &jerr);
        if (!meta)
            return sr_error_set(err, SAGERUN_FORMAT, "metadata: not valid JSON: %s (column %d)",
                                jerr.text, jerr.column);
        if (!json_is_object(meta)) {
            json_decref(meta);
            return sr_error_set(err, SAGERUN_FORMAT, "metadata: expected a JSON object");
        }
    }
    json_decref(res->report.metadata);
    res->report.metadata = meta;
    return SAGERUN_OK;
}

sagerun_status sagerun_compare_result_write_json(const sagerun_compare_result *res,
                                                 const char *path, const char *metadata_json,
                                                 sagerun_error *err)
{
    if (!res || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "write_json: NULL argument");
    if (!metadata_json)
        return sr_report_write_json(&res->report, path, err);
    /* A shallow copy of the report with other metadata: the result stays as it was. */
    sagerun_compare_result tmp = *res;
    tmp.report.metadata = NULL;
    sagerun_status st = sagerun_compare_result_set_metadata(&tmp, metadata_json, err);
    if (st == SAGERUN_OK)
        st = sr_report_write_json(&tmp.report, path, err);
    json_decref(tmp.report.metadata);
    return st;
}

sagerun_status sagerun_compare_result_write_markdown(const sagerun_compare_result *res,
                                                     const char *path, sagerun_error *err)
{
    if (!res || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "write_markdown: NULL argument");
    return sr_report_write_markdown(&res->report, path, err);
}

void sagerun_compare_result_print(const sagerun_compare_result *res, FILE *out)
{
    if (res && out)
        sr_report_print_table(&res->report, out);
}

/* ---- reports read back ------------------------------------------------------------------------ */

/* A report in the seed's format has no interval, verdict or TOPS, but its per-round p50s and
 * q_shape ([B, N, H, D]: the seed's NHD) give them: derived for display, at the default threshold. */
static void derive_missing(sr_report *r)
{
    if (r->has_ext || r->variant_count == 0)
        return;
    const sr_report_variant *base = &r->variants[0];
    size_t R = base->round_count;
    double *b = malloc((R ? R : 1) * sizeof(double)), *x = malloc((R ? R : 1) * sizeof(double));
    for (size_t i = 0; i < r->variant_count; i++) {
        sr_report_variant *v = &r->variants[i];
        if (r->q_shape_len == 4 && v->timing.count && v->timing.p50 > 0) {
            double ops = 4.0 * (double)r->q_shape[0] * (double)r->q_shape[2] *
                         (double)r->q_shape[1] * (double)r->q_shape[1] * (double)r->q_shape[3];
            v->tops = ops / v->timing.p50 / 1e12;
        }
        if (i == 0 || !b || !x || v->round_count != R || R < 2)
            continue;
        for (size_t k = 0; k < R; k++) {
            b[k] = base->rounds[k].p50;
            x[k] = v->rounds[k].p50;
        }
        v->interval = sr_paired_speedup_interval(b, x, R);
        v->verdict = sr_judge_verdict(&v->interval, 1.0);
    }
    free(b);
    free(x);
    if (R >= 2 && r->variant_count > 1)
        sr_report_add_warning(r, "interval, verdict (1%% threshold) and TOPS derived from the "
                                 "report's per-round p50s and q_shape");
}

sagerun_status sagerun_report_show(const char *path, int markdown, FILE *out, sagerun_error *err)
{
    if (!path || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "report_show: NULL argument");
    sr_report r;
    sagerun_status st = sr_report_read(path, &r, err);
    if (st != SAGERUN_OK)
        return st;
    derive_missing(&r);
    if (markdown)
        sr_report_print_markdown(&r, out);
    else
        sr_report_print_table(&r, out);
    sr_report_clear(&r);
    return SAGERUN_OK;
}

void sagerun_report_diff_options_init(sagerun_report_diff_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->struct_size = sizeof(*opts);
    opts->threshold_percent = 2.0;
}

sagerun_status sagerun_report_diff(const char *old_path, const char *new_path,
                                   const sagerun_report_diff_options *opts, FILE *out,
                                   unsigned *findings, sagerun_error *err)
{
    if (!old_path || !new_path || !out || !findings)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "report_diff: NULL argument");
    sagerun_report_diff_options o;
    sagerun_report_diff_options_init(&o);
    if (opts)
        memcpy(&o, opts, opts->struct_size < sizeof(o) ? opts->struct_size : sizeof(o));
    sr_report a, b;
    sagerun_status st = sr_report_read(old_path, &a, err);
    if (st != SAGERUN_OK)
        return st;
    if ((st = sr_report_read(new_path, &b, err)) != SAGERUN_OK) {
        sr_report_clear(&a);
        return st;
    }
    st = sr_report_diff(&a, &b, o.threshold_percent, out, findings, err);
    sr_report_clear(&a);
    sr_report_clear(&b);
    return st;
}
