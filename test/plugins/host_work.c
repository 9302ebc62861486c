/* A host variant with a tuning parameter and a calibrated cost, for sweep tests on machines
 * without a GPU (test_sweep_variant_axes.sh, test_sweep_regression.sh, test_plot.sh).
 *
 *   work  host backend; parameter block (int, default 4, [1, 64]): query rows per tile.
 *
 * Its run is a stand-in for a tiled attention main loop with normalised keys: q and k are decoded
 * to fp32 once (prepare, not timed); then for every tile of `block` query rows it takes each key
 * row's norm (a dot product of D values) and each query row's dot product with each key row. The
 * query-key dots cost N*N*D per head whatever the block; the norms cost N*D per tile, so a larger
 * block is faster (fewer tiles): block 1 does 2 N*N dots, 4 does 1.25 N*N, 16 does 1.06 N*N.
 * Every block value runs the same instruction mix, only more or fewer of the same dot products, so
 * what slows the machine (load on a shared host) slows them alike and cancels in a ratio. The
 * output is V copied into O (as fake_plugin.h does), so every block value and every instance
 * writes the same bytes (byte-exact with a `work` baseline).
 *
 * SAGERUN_TEST_WORK_LOG=FILE: each instance appends "create seq_len=N block=B" to FILE (what a
 * test checks that a sweep's point reached the variant with).
 *
 * SAGERUN_TEST_WORK_EXTRA="N:BLOCK:PERCENT" injects a regression: an instance with seq_len N and
 * block BLOCK runs every tile's key loops over N*PERCENT/100 more keys (rounded down; the first
 * ones again), so the call does PERCENT% more of the same work: 5 at N=160 is 8 more keys of 160. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>

enum { PARAM_BLOCK };

static const sagerun_param_decl work_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "block", "query rows per tile", 4, 1, 64},
};

typedef struct work_state {
    const sagerun_plugin_inputs *in;
    uint32_t block;
    uint32_t extra_keys; /* per tile, from SAGERUN_TEST_WORK_EXTRA */
    float *q, *k;        /* decoded by prepare: B x Hq x N x D and B x Hkv x N x D */
    float *norm;         /* N: the key rows' norms of one tile */
} work_state;

static volatile float work_sink; /* keeps the dot products from being optimised away */

static float decode(uint16_t h, int dtype)
{
    union {
        uint32_t u;
        float f;
    } x;
    if (dtype == SAGERUN_DTYPE_BF16) {
        x.u = (uint32_t)h << 16;
        return x.f;
    }
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) /* zero or subnormal: m * 2^-24 */
        return (sign ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-8f;
    x.u = sign | (e == 31 ? 0xffu << 23 : (e + 112) << 23) | m << 13;
    return x.f;
}

static uint64_t offset(const sagerun_problem *p, uint32_t heads, uint32_t b, uint32_t n,
                       uint32_t h)
{
    if (p->layout == SAGERUN_LAYOUT_HND)
        return (((uint64_t)b * heads + h) * p->seq_len + n) * p->head_dim;
    return (((uint64_t)b * p->seq_len + n) * heads + h) * p->head_dim;
}

static int work_geometry_with(const sagerun_geometry_args *args, const sagerun_problem *p,
                              sagerun_launch_geometry *g, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    uint32_t block = args && args->n_param_values ? (uint32_t)args->param_values[PARAM_BLOCK] : 4;
    g->cta_q = g->warp_q = block;
    g->cta_k = g->warp_k = p->seq_len;
    g->threads_per_cta = 1;
    g->grid_ctas = (uint64_t)p->batch * p->heads_q * ((p->seq_len + block - 1) / block);
    return 0;
}

static int work_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                         size_t errlen)
{
    return work_geometry_with(NULL, p, g, err, errlen);
}

/* PERCENT% of the keys when SAGERUN_TEST_WORK_EXTRA names this instance. */
static uint32_t extra_keys(const sagerun_problem *p, uint32_t block)
{
    const char *spec = getenv("SAGERUN_TEST_WORK_EXTRA");
    unsigned n, b;
    double percent;
    if (!spec || sscanf(spec, "%u:%u:%lf", &n, &b, &percent) != 3 || n != p->seq_len ||
        b != block || !(percent > 0 && percent <= 100))
        return 0;
    return (uint32_t)(p->seq_len * percent / 100.0);
}

/* Page-aligned, so that every instance (and every run) places its arrays alike: where malloc
 * happened to put them moved an A/A's timing by 2% from run to run. */
static float *page_floats(size_t n)
{
    return aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096);
}

static void log_create(const sagerun_problem *p, uint32_t block)
{
    const char *path = getenv("SAGERUN_TEST_WORK_LOG");
    FILE *f = path && path[0] ? fopen(path, "a") : NULL;
    if (!f)
        return;
    fprintf(f, "create seq_len=%u block=%u\n", p->seq_len, block);
    fclose(f);
}

static int work_create(const sagerun_host_services *services, const sagerun_plugin_inputs *in,
                       void **state, char *err, size_t errlen)
{
    (void)services;
    const sagerun_problem *p = &in->problem;
    work_state *s = calloc(1, sizeof *s);
    uint32_t block = in->n_param_values ? (uint32_t)in->param_values[PARAM_BLOCK] : 4;
    size_t rows = (size_t)p->batch * p->seq_len;
    float *q = page_floats(rows * p->heads_q * p->head_dim);
    float *k = page_floats(rows * p->heads_kv * p->head_dim);
    float *norm = page_floats(p->seq_len);
    if (!s || !q || !k || !norm) {
        free(s);
        free(q);
        free(k);
        free(norm);
        snprintf(err, errlen, "out of memory");
        return SAGERUN_OUT_OF_MEMORY;
    }
    *s = (work_state){in, block, extra_keys(p, block), q, k, norm};
    log_create(p, block);
    *state = s;
    return 0;
}

/* fp16/bf16 q and k to fp32, row after row in (b, h, n) order. */
static void decode_all(const sagerun_problem *p, const uint16_t *src, uint32_t heads, float *dst)
{
    uint32_t D = p->head_dim;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t n = 0; n < p->seq_len; n++, dst += D)
                for (uint32_t c = 0; c < D; c++)
                    dst[c] = decode(src[offset(p, heads, b, n, h) + c], p->dtype);
}

static int work_prepare(void *state, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    work_state *s = state;
    const sagerun_problem *p = &s->in->problem;
    decode_all(p, (const uint16_t *)(uintptr_t)s->in->q, p->heads_q, s->q);
    decode_all(p, (const uint16_t *)(uintptr_t)s->in->k, p->heads_kv, s->k);
    return 0;
}

static float dot(const float *a, const float *b, uint32_t n)
{
    float acc = 0;
    for (uint32_t c = 0; c < n; c++)
        acc += a[c] * b[c];
    return acc;
}

/* One tile: the key rows' norms, then query rows [first, first + rows) against every key. */
static float tile(work_state *s, const float *q, const float *k, uint32_t first, uint32_t rows)
{
    const sagerun_problem *p = &s->in->problem;
    uint32_t D = p->head_dim, keys = p->seq_len + s->extra_keys;
    for (uint32_t jj = 0; jj < keys; jj++) {
        uint32_t j = jj % p->seq_len;
        s->norm[j] = dot(k + (size_t)j * D, k + (size_t)j * D, D);
    }
    float acc = 0;
    for (uint32_t r = first; r < first + rows; r++)
        for (uint32_t jj = 0; jj < keys; jj++) {
            uint32_t j = jj % p->seq_len;
            acc += dot(q + (size_t)r * D, k + (size_t)j * D, D) * s->norm[j];
        }
    return acc;
}

static int work_run(void *state, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    work_state *s = state;
    const sagerun_problem *p = &s->in->problem;
    size_t head = (size_t)p->seq_len * p->head_dim;
    float acc = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < p->heads_q; h++) {
            const float *q = s->q + ((size_t)b * p->heads_q + h) * head;
            const float *k = s->k + ((size_t)b * p->heads_kv + h / (p->heads_q / p->heads_kv)) * head;
            for (uint32_t first = 0; first < p->seq_len; first += s->block)
                acc += tile(s, q, k, first,
                            p->seq_len - first < s->block ? p->seq_len - first : s->block);
        }
    work_sink = acc;
    uint64_t obytes = (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim * 2;
    uint64_t vbytes = (uint64_t)p->batch * p->seq_len * p->heads_kv * p->head_dim * 2;
    memcpy((void *)(uintptr_t)s->in->o, (const void *)(uintptr_t)s->in->v,
           obytes < vbytes ? obytes : vbytes);
    if (obytes > vbytes)
        memset((char *)(uintptr_t)s->in->o + vbytes, 0, obytes - vbytes);
    return 0;
}

static void work_destroy(void *state)
{
    work_state *s = state;
    if (!s)
        return;
    free(s->q);
    free(s->k);
    free(s->norm);
    free(s);
}

static const sagerun_variant_descriptor work_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = "work",
    .version = "1.0.0",
    .description = "test: a tunable, calibrated amount of host work (output = V)",
    .backend = SAGERUN_BACKEND_HOST,
    .input_kind = SAGERUN_INPUT_FP16,
    .geometry = work_geometry,
    .create = work_create,
    .prepare = work_prepare,
    .run = work_run,
    .destroy = work_destroy,
    .n_params = sizeof work_params / sizeof work_params[0],
    .params = work_params,
    .geometry_with = work_geometry_with,
};

SAGERUN_PLUGIN_DEFINE_ENTRY(work_variant)
