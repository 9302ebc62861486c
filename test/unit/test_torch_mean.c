/* k_mean in torch.mean's order (libsagerun/torch_mean.c): the plan against configurations worked
 * out by hand from PyTorch's setReduceConfig, and the host's k_mean against a simulation of
 * PyTorch's reduction kernel written after its structure (threads, block_y_reduce, the global
 * reduction of the last block), column by column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "kernels/quantize_math.h"
#include "quantize.h"
#include "safetensors.h"
#include "torch_mean.h"

static const sr_torch_device h200 = {132, 2048};

static sr_torch_mean_plan plan_of(uint32_t b, uint32_t n, uint32_t h, uint32_t d, int layout,
                                  const sr_torch_device *dev)
{
    sagerun_problem p = sagerun_problem_make(b, n, h, h, d);
    p.layout = (uint32_t)layout;
    sr_torch_mean_plan plan;
    sagerun_error err = {0};
    assert_int_equal(sr_torch_kmean_plan(&p, dev, &plan, &err), SAGERUN_OK);
    return plan;
}

static void expect_plan(const sr_torch_mean_plan *pl, uint32_t vec, uint32_t bx, uint32_t by,
                        uint32_t grid, uint32_t rows, uint32_t ctas)
{
    assert_int_equal(pl->vec, vec);
    assert_int_equal(pl->block_x, bx);
    assert_int_equal(pl->block_y, by);
    assert_int_equal(pl->grid_x, grid);
    assert_int_equal(pl->rows, rows);
    assert_int_equal(pl->ctas, ctas);
}

/* The seed [1, 37810, 56, 128] on an H200: 7168 outputs, 4 per thread, so dim0 = 1792 and
 * block (32, 4); 37810 >= min(4*16, 256): split across the 4 warps; grid 1792/32 = 56 <= 132 *
 * 2048/128 = 2112 blocks, 9453 values per thread: ctas = max(min(ceil(2112/56) = 38,
 * ceil(9453/16) = 591), ceil(9453/256) = 37) = 38. */
static void plan_seed(void **state)
{
    (void)state;
    sr_torch_mean_plan pl = plan_of(1, 37810, 56, 128, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 32, 4, 56, 4, 38);
    assert_true(pl.factor == (float)7168 / (float)(7168ull * 37810));
    /* A100 (108 SMs): ceil(1728/56) = 31 < 37, so the 256-per-thread bound wins */
    const sr_torch_device a100 = {108, 2048};
    pl = plan_of(1, 37810, 56, 128, SAGERUN_LAYOUT_NHD, &a100);
    expect_plan(&pl, 4, 32, 4, 56, 4, 37);
    /* HND and B = 2: the same outputs per (b, h) but twice as many: grid 112, ceil(2112/112) */
    pl = plan_of(2, 37810, 56, 128, SAGERUN_LAYOUT_HND, &h200);
    expect_plan(&pl, 4, 32, 4, 112, 4, 37);
}

/* Other regimes: a long sequence with few outputs (a large global reduction), short sequences
 * (no split across blocks; none across warps below 64), vec 2 and 1. */
static void plan_regimes(void **state)
{
    (void)state;
    /* 256 outputs: dim0 64 -> block (32, 4), grid 2; 32768 per thread: ceil(2112/2) = 1056 */
    sr_torch_mean_plan pl = plan_of(1, 131072, 2, 128, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 32, 4, 2, 4, 1056);
    pl = plan_of(1, 100, 56, 128, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 32, 4, 56, 4, 1); /* 25 per thread < 256 */
    pl = plan_of(1, 50, 56, 128, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 32, 4, 14, 1, 1); /* 50 < 64: each thread one whole output */
    pl = plan_of(1, 1, 56, 128, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 128, 1, 14, 1, 1); /* block_y 1 frees block_x up to 128 */
    /* 8 outputs: dim0 2 -> block (2, 64); 37810 >= 256: split; 591 per thread, grid 1:
     * ctas = max(min(2112, 37), 3) = 37 */
    pl = plan_of(1, 37810, 1, 8, SAGERUN_LAYOUT_NHD, &h200);
    expect_plan(&pl, 4, 2, 64, 1, 64, 37);
    /* HND with D = 6: vec 2, at most 256 threads; 36 outputs -> dim0 18 -> block (16, 16),
     * grid 2 of 1056; 256 per thread: ctas = max(min(528, 16), 1) = 16 */
    pl = plan_of(1, 4096, 6, 6, SAGERUN_LAYOUT_HND, &h200);
    expect_plan(&pl, 2, 16, 16, 2, 16, 16);
}

/* ---- a simulation of PyTorch's kernel, one output column at a time ---- */

static float input_at(const sagerun_problem *p, const uint16_t *k, uint32_t b, uint32_t n,
                      uint32_t h, uint32_t c)
{
    uint64_t off = p->layout == SAGERUN_LAYOUT_NHD
                       ? (((uint64_t)b * p->seq_len + n) * p->heads_kv + h) * p->head_dim + c
                       : (((uint64_t)b * p->heads_kv + h) * p->seq_len + n) * p->head_dim + c;
    return p->dtype == SAGERUN_DTYPE_BF16 ? sr_bf16_to_float(k[off]) : sr_half_to_float(k[off]);
}

/* ReduceOp::thread_reduce_impl with vt0 = 4 for the thread starting at input `idx`. */
static float sim_thread(const sagerun_problem *p, const uint16_t *k, uint32_t b, uint32_t h,
                        uint32_t c, uint32_t idx, uint32_t stride)
{
    const uint32_t end = p->seq_len;
    float value_list[4] = {0, 0, 0, 0};
    while (idx + 3 * stride < end) {
        float values[4];
        for (uint32_t i = 0; i < 4; i++)
            values[i] = input_at(p, k, b, idx + i * stride, h, c);
        for (uint32_t i = 0; i < 4; i++)
            value_list[i] = value_list[i] + values[i];
        idx += stride * 4;
    }
    for (uint32_t i = 0; i < 4; i++) {
        if (idx >= end)
            break;
        value_list[i] = value_list[i] + input_at(p, k, b, idx, h, c);
        idx += stride;
    }
    for (int i = 1; i < 4; i++)
        value_list[0] = value_list[0] + value_list[i];
    return value_list[0];
}

/* ReduceOp::block_y_reduce over shared[0 .. block_y). */
static float sim_block_y(float *shared, uint32_t block_y)
{
    for (uint32_t offset = block_y / 2; offset > 0; offset >>= 1)
        for (uint32_t y = 0; y < offset; y++)
            shared[y] = shared[y] + shared[y + offset];
    return shared[0];
}

static uint16_t sim_column(const sagerun_problem *p, const sr_torch_mean_plan *pl,
                           const uint16_t *k, uint32_t b, uint32_t h, uint32_t c)
{
    /* setReduceConfig: split across warps when each thread keeps >= min(16 * block_y, 256) */
    const bool split = p->seq_len >= (pl->block_y * 16 < 256 ? pl->block_y * 16 : 256);
    const uint32_t by = split ? pl->block_y : 1, step_input = by * pl->ctas;
    float *shared = calloc(by, sizeof *shared), *staging = calloc(pl->ctas, sizeof *staging);
    for (uint32_t cta = 0; cta < pl->ctas; cta++) {
        for (uint32_t y = 0; y < by; y++) /* input_idx = y * input_mult[1] + cta * input_mult[2] */
            shared[y] = sim_thread(p, k, b, h, c, y + cta * by, step_input);
        staging[cta] = split ? sim_block_y(shared, by) : shared[0];
    }
    float value = staging[0];
    if (pl->ctas > 1) { /* global_reduce: the last block's threads over the staging buffer */
        for (uint32_t y = 0; y < by; y++) {
            float v = 0.0f;
            for (uint32_t in = y; in < pl->ctas; in += by)
                v = v + staging[in];
            shared[y] = v;
        }
        value = sim_block_y(shared, by);
    }
    free(shared);
    free(staging);
    float m = value * pl->factor; /* MeanOps::project, then the cast to the input dtype */
    return p->dtype == SAGERUN_DTYPE_BF16 ? sr_float_to_bf16(m) : sr_float_to_half(m);
}

/* K with a per-channel bias and noise (what smoothing is for), as fp16 or bf16. */
static uint16_t *make_k(const sagerun_problem *p, uint64_t seed)
{
    uint64_t count = (uint64_t)p->batch * p->seq_len * p->heads_kv * p->head_dim;
    uint16_t *k = malloc(count * sizeof *k);
    for (uint64_t i = 0; i < count; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        float noise = (float)((int32_t)((seed >> 40) % 4096) - 2048) / 256.0f; /* [-8, 8) */
        float bias = (float)(i % p->head_dim % 7) * 3.0f - 9.0f;
        k[i] = p->dtype == SAGERUN_DTYPE_BF16 ? sr_float_to_bf16(bias + noise)
                                              : sr_float_to_half(bias + noise);
    }
    return k;
}

/* The order sagerun used before issue 15: sums over 128-token slices, the slices in order, then
 * one division by N. */
static uint16_t old_order(const sagerun_problem *p, const uint16_t *k, uint32_t b, uint32_t h,
                          uint32_t c)
{
    float total = 0;
    for (uint32_t n0 = 0; n0 < p->seq_len; n0 += 128) {
        float part = 0;
        for (uint32_t n = n0; n < n0 + 128 && n < p->seq_len; n++)
            part += input_at(p, k, b, n, h, c);
        total += part;
    }
    float m = total / (float)p->seq_len;
    return p->dtype == SAGERUN_DTYPE_BF16 ? sr_float_to_bf16(m) : sr_float_to_half(m);
}

/* Runs the quantizer's host k_mean and checks every column against the simulation; returns how
 * many columns sagerun's old order would get wrong (the data must make the order matter). */
static uint64_t check_against_simulation(uint32_t b, uint32_t n, uint32_t h, uint32_t d,
                                         int layout, int dtype)
{
    sagerun_problem p = sagerun_problem_make(b, n, h, h, d);
    p.layout = (uint32_t)layout;
    p.dtype = (uint32_t)dtype;
    uint16_t *k = make_k(&p, 7 + n);
    uint16_t *q = calloc((uint64_t)b * n * h * d, 2), *v = malloc((uint64_t)b * n * h * d * 2);
    for (uint64_t i = 0; i < (uint64_t)b * n * h * d; i++)
        v[i] = 0x3c00;
    sagerun_context *ctx;
    sagerun_error err = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    sagerun_sage2_quant_params qp = sr_sage2_params_sm89(448.0f);
    sagerun_sage2_tensors t;
    assert_int_equal(sr_sage2_quantize(ctx, &p, (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)k,
                                       (uint64_t)(uintptr_t)v, &qp, 0, &t, NULL, &err),
                     SAGERUN_OK);
    sr_torch_mean_plan pl;
    assert_int_equal(sr_torch_kmean_plan(&p, &h200, &pl, &err), SAGERUN_OK);
    const uint16_t *got = (const uint16_t *)(uintptr_t)t.k_mean;
    uint64_t naive_wrong = 0;
    for (uint32_t bb = 0; bb < b; bb++)
        for (uint32_t hh = 0; hh < h; hh++)
            for (uint32_t c = 0; c < d; c++) {
                uint16_t want = sim_column(&p, &pl, k, bb, hh, c);
                uint64_t i = ((uint64_t)bb * h + hh) * d + c;
                if (got[i] != want)
                    fail_msg("[%u, %u, %u, %u] %s %s column (%u, %u, %u): 0x%04x, torch's order "
                             "gives 0x%04x",
                             b, n, h, d, layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD",
                             dtype == SAGERUN_DTYPE_BF16 ? "bf16" : "fp16", bb, hh, c, got[i],
                             want);
                naive_wrong += old_order(&p, k, bb, hh, c) != want;
            }
    sr_sage2_tensors_free(ctx, &t);
    sagerun_context_destroy(ctx);
    free(k);
    free(q);
    free(v);
    return naive_wrong;
}

/* Issue 15: the seed's sequence length (a global reduction over 264 blocks here, with 1024
 * outputs) — the old fixed order (128-token slices, then a division) is not torch's. */
static void host_matches_simulation_long(void **state)
{
    (void)state;
    uint64_t naive = check_against_simulation(1, 37810, 8, 128, SAGERUN_LAYOUT_NHD,
                                              SAGERUN_DTYPE_F16);
    print_message("N 37810: sagerun's old order differs from torch's in %llu of 1024 columns\n",
                  (unsigned long long)naive);
    assert_true(naive > 0);
    check_against_simulation(1, 37810, 1, 8, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_BF16);
    check_against_simulation(1, 131072, 1, 16, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_F16);
}

static void host_matches_simulation_shapes(void **state)
{
    (void)state;
    const struct {
        uint32_t b, n, h, d;
        int layout, dtype;
    } cases[] = {
        {1, 1, 4, 64, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16},
        {1, 50, 4, 64, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16},
        {2, 333, 3, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16},
        {2, 333, 3, 128, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_BF16},
        {3, 5003, 2, 64, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_F16},
        {1, 4096, 6, 6, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_F16},
        {1, 2111, 3, 2, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_against_simulation(cases[i].b, cases[i].n, cases[i].h, cases[i].d, cases[i].layout,
                                 cases[i].dtype);
}

/* kv_len != seq_len: the mean runs over K's kv_len rows, planned for [B, kv_len, Hkv, D] (torch
 * plans by shape): the quantizer's k_mean for N queries against KV keys is the simulation's of
 * the square K of KV rows, column by column. */
static void check_kv_len(uint32_t b, uint32_t n, uint32_t kv, uint32_t h, uint32_t d, int layout,
                         int dtype)
{
    sagerun_problem p = sagerun_problem_make(b, n, h, h, d), ps;
    p.layout = (uint32_t)layout;
    p.dtype = (uint32_t)dtype;
    p.kv_len = kv;
    ps = sagerun_problem_make(b, kv, h, h, d);
    ps.layout = p.layout;
    ps.dtype = p.dtype;
    sagerun_error err = {0};
    sr_torch_mean_plan pl, pls;
    assert_int_equal(sr_torch_kmean_plan(&p, &h200, &pl, &err), SAGERUN_OK);
    assert_int_equal(sr_torch_kmean_plan(&ps, &h200, &pls, &err), SAGERUN_OK);
    assert_int_equal(pl.n, kv);
    assert_memory_equal(&pl, &pls, sizeof pl);
    uint16_t *k = make_k(&ps, 11 + kv), *v = malloc((uint64_t)b * kv * h * d * 2);
    uint16_t *q = calloc((uint64_t)b * n * h * d, 2);
    for (uint64_t i = 0; i < (uint64_t)b * kv * h * d; i++)
        v[i] = 0x3c00;
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    sagerun_sage2_quant_params qp = sr_sage2_params_sm89(448.0f);
    sagerun_sage2_tensors t;
    assert_int_equal(sr_sage2_quantize(ctx, &p, (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)k,
                                       (uint64_t)(uintptr_t)v, &qp, 0, &t, NULL, &err),
                     SAGERUN_OK);
    const uint16_t *got = (const uint16_t *)(uintptr_t)t.k_mean;
    for (uint32_t bb = 0; bb < b; bb++)
        for (uint32_t hh = 0; hh < h; hh++)
            for (uint32_t c = 0; c < d; c++) {
                uint16_t want = sim_column(&ps, &pls, k, bb, hh, c);
                uint64_t i = ((uint64_t)bb * h + hh) * d + c;
                if (got[i] != want)
                    fail_msg("q_len %u kv_len %u column (%u, %u, %u): 0x%04x, torch's order "
                             "over kv_len gives 0x%04x",
                             n, kv, bb, hh, c, got[i], want);
            }
    sr_sage2_tensors_free(ctx, &t);
    sagerun_context_destroy(ctx);
    free(k);
    free(q);
    free(v);
}

static void kv_len_reduces_over_keys(void **state)
{
    (void)state;
    check_kv_len(1, 1, 4096, 8, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16);
    check_kv_len(2, 16, 5003, 2, 64, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_BF16);
    check_kv_len(1, 1000, 37, 3, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16);
    /* the 2 GiB limit is K's: kv_len decides it, not seq_len */
    sagerun_error err = {0};
    sr_torch_mean_plan pl;
    uint16_t dummy = 0;
    sagerun_problem p = sagerun_problem_make(1, 1, 64, 64, 128);
    p.kv_len = 131073;
    assert_int_equal(sr_torch_kmean_plan(&p, &h200, &pl, &err), SAGERUN_OK);
    assert_int_equal(sr_torch_kmean_host(&p, &pl, &dummy, &dummy, &err), SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(err.message, "131073"));
}

/* Bad inputs get errors that say why. */
static void refuses_what_it_does_not_model(void **state)
{
    (void)state;
    sagerun_error err = {0};
    sr_torch_mean_plan pl;
    sagerun_problem p = sagerun_problem_make(1, 100, 4, 4, 1);
    p.layout = SAGERUN_LAYOUT_HND;
    assert_int_equal(sr_torch_kmean_plan(&p, &h200, &pl, &err), SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(err.message, "fastest-moving"));
    assert_int_equal(sr_torch_mean_plan_make(8, 100, 3, &h200, &pl, &err),
                     SAGERUN_INVALID_ARGUMENT);
    const sr_torch_device none = {0, 0};
    assert_int_equal(sr_torch_mean_plan_make(8, 100, 4, &none, &pl, &err),
                     SAGERUN_INVALID_ARGUMENT);
    /* over 2 GiB of K: refused with the way out (k_mean in the inputs file) */
    p = sagerun_problem_make(1, 131073, 64, 64, 128);
    assert_int_equal(sr_torch_kmean_plan(&p, &h200, &pl, &err), SAGERUN_OK);
    uint16_t dummy = 0;
    assert_int_equal(sr_torch_kmean_host(&p, &pl, &dummy, &dummy, &err), SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(err.message, "k_mean tensor"));
}

/* The host takes the device's properties from SAGERUN_TORCH_DEVICE. */
static void host_device_from_environment(void **state)
{
    (void)state;
    sagerun_context *ctx;
    sagerun_error err = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    sr_torch_device dev;
    unsetenv("SAGERUN_TORCH_DEVICE");
    assert_int_equal(sr_torch_device_of(ctx, &dev, &err), SAGERUN_OK);
    assert_int_equal(dev.sm_count, 132);
    assert_int_equal(dev.max_threads_per_sm, 2048);
    setenv("SAGERUN_TORCH_DEVICE", "108x2048", 1);
    assert_int_equal(sr_torch_device_of(ctx, &dev, &err), SAGERUN_OK);
    assert_int_equal(dev.sm_count, 108);
    setenv("SAGERUN_TORCH_DEVICE", "108", 1);
    assert_int_equal(sr_torch_device_of(ctx, &dev, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "SMSxTHREADS"));
    unsetenv("SAGERUN_TORCH_DEVICE");
    sagerun_context_destroy(ctx);
}

/* An inputs file may carry k_mean (k's dtype, the keepdim shape of the layout): the quantizer
 * uses it instead of computing one; a wrong shape or dtype is refused, naming the tensor. */
static void k_mean_from_inputs_file(void **state)
{
    (void)state;
    enum { B = 1, N = 40, H = 2, D = 8 };
    static uint16_t q[B * N * H * D], k[B * N * H * D], v[B * N * H * D], km[B * H * D];
    for (int i = 0; i < B * N * H * D; i++) {
        q[i] = k[i] = 0x3c00; /* 1.0: the computed mean would be 1.0 (0x3c00) too */
        v[i] = 0x4000;
    }
    for (int i = 0; i < B * H * D; i++)
        km[i] = (uint16_t)(0x3800 + i); /* something no mean of k gives */
    char path[] = "/tmp/sagerun-kmean-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const int layouts[2] = {SAGERUN_LAYOUT_NHD, SAGERUN_LAYOUT_HND};
    for (int li = 0; li < 2; li++) {
        const bool hnd = layouts[li] == SAGERUN_LAYOUT_HND;
        sr_st_write_tensor t[4] = {
            {.name = "q", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {B, N, H, D}, .data = q},
            {.name = "k", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {B, N, H, D}, .data = k},
            {.name = "v", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {B, N, H, D}, .data = v},
            {.name = "k_mean", .dtype = SAGERUN_DTYPE_F16, .rank = 4,
             .shape = {B, hnd ? H : 1, hnd ? 1 : H, D}, .data = km}};
        if (hnd)
            for (int i = 0; i < 3; i++) {
                t[i].shape[1] = H;
                t[i].shape[2] = N;
            }
        sagerun_error err = {0};
        assert_int_equal(sr_safetensors_write(path, t, 4, NULL, &err), SAGERUN_OK);
        sagerun_context *ctx;
        assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
        sagerun_inputs *in;
        assert_int_equal(sagerun_inputs_create_from_safetensors(ctx, path, layouts[li], &in, &err),
                         SAGERUN_OK);
        assert_true(in->k_mean != 0);
        sagerun_sage2_quant_params qp = sr_sage2_params_sm89(448.0f);
        sagerun_sage2_tensors qt;
        assert_int_equal(sr_sage2_quantize(ctx, &in->problem, in->q, in->k, in->v, &qp,
                                           in->k_mean, &qt, NULL, &err),
                         SAGERUN_OK);
        assert_memory_equal((void *)(uintptr_t)qt.k_mean, km, sizeof km);
        sr_sage2_tensors_free(ctx, &qt);
        sagerun_inputs_destroy(in);
        /* the NHD shape in an HND file (or the reverse), then a wrong dtype */
        t[3].shape[1] = hnd ? 1 : H;
        t[3].shape[2] = hnd ? H : 1;
        assert_int_equal(sr_safetensors_write(path, t, 4, NULL, &err), SAGERUN_OK);
        assert_int_equal(sagerun_inputs_create_from_safetensors(ctx, path, layouts[li], &in, &err),
                         SAGERUN_FORMAT);
        assert_non_null(strstr(err.message, "\"k_mean\" must be F16"));
        t[3].shape[1] = hnd ? H : 1;
        t[3].shape[2] = hnd ? 1 : H;
        t[3].dtype = SAGERUN_DTYPE_BF16;
        assert_int_equal(sr_safetensors_write(path, t, 4, NULL, &err), SAGERUN_OK);
        assert_int_equal(sagerun_inputs_create_from_safetensors(ctx, path, layouts[li], &in, &err),
                         SAGERUN_FORMAT);
        assert_non_null(strstr(err.message, "not BF16"));
        sagerun_context_destroy(ctx);
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_seed),
        cmocka_unit_test(plan_regimes),
        cmocka_unit_test(host_matches_simulation_long),
        cmocka_unit_test(host_matches_simulation_shapes),
        cmocka_unit_test(refuses_what_it_does_not_model),
        cmocka_unit_test(host_device_from_environment),
        cmocka_unit_test(k_mean_from_inputs_file),
        cmocka_unit_test(kv_len_reduces_over_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
