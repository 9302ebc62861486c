/* The generator and the sage2 quantizer on a CUDA device: GPU == host bytes for the generator,
 * bit-exactness with the golden files, and the seed workload's timings. Skips without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../unit/sage2_golden.h"
#include "generate.h"
#include "kernels/quantize_math.h"

static sagerun_context *ctx;

static int setup(void **state)
{
    (void)state;
    sagerun_error err = {0};
    sagerun_status st = sagerun_context_create(SAGERUN_BACKEND_CUDA, 0, &ctx, &err);
    if (st == SAGERUN_NO_DRIVER || st == SAGERUN_NO_DEVICE) {
        printf("SKIP: %s\n", err.message);
        ctx = NULL;
        return 0;
    }
    if (st != SAGERUN_OK) {
        fprintf(stderr, "context: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sagerun_context_destroy(ctx);
    return 0;
}

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!ctx)                                                                                  \
            skip();                                                                                \
    } while (0)

static uint64_t dev_alloc(uint64_t bytes)
{
    sagerun_error err = {0};
    uint64_t a = 0;
    if (sagerun_mem_alloc(ctx, bytes, &a, &err) != SAGERUN_OK)
        fail_msg("alloc %llu: %s", (unsigned long long)bytes, err.message);
    return a;
}

static void *download(uint64_t addr, uint64_t bytes)
{
    sagerun_error err = {0};
    void *h = malloc(bytes ? bytes : 1);
    if (sagerun_mem_download(ctx, h, addr, bytes, &err) != SAGERUN_OK)
        fail_msg("download: %s", err.message);
    return h;
}

static uint64_t upload(const void *src, uint64_t bytes)
{
    sagerun_error err = {0};
    uint64_t a = dev_alloc(bytes);
    if (sagerun_mem_upload(ctx, a, src, bytes, &err) != SAGERUN_OK)
        fail_msg("upload: %s", err.message);
    return a;
}

static void test_generator_matches_host(void **state)
{
    (void)state;
    NEED_GPU();
    sagerun_problem shapes[3] = {sagerun_problem_make(1, 333, 3, 3, 128),
                                 sagerun_problem_make(2, 100, 8, 2, 64),
                                 sagerun_problem_make(1, 257, 4, 4, 128)};
    shapes[1].layout = SAGERUN_LAYOUT_HND;
    shapes[2].dtype = SAGERUN_DTYPE_BF16;
    for (int s = 0; s < 3; s++) {
        const sagerun_problem *p = &shapes[s];
        sr_synthetic syn;
        sr_synthetic_default(&syn, 1000 + (uint64_t)s);
        syn.outlier_channels = (uint32_t)(3 * s);
        uint64_t qn = (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim;
        uint64_t kn = qn / p->heads_q * p->heads_kv;
        uint64_t d[3] = {dev_alloc(qn * 2), dev_alloc(kn * 2), dev_alloc(kn * 2)};
        sagerun_error err = {0};
        assert_int_equal(sr_generate_inputs(ctx, p, &syn, d[0], d[1], d[2], &err), SAGERUN_OK);
        assert_int_equal(sagerun_context_synchronize(ctx, &err), SAGERUN_OK);
        for (int t = 0; t < 3; t++) {
            uint64_t bytes = (t ? kn : qn) * 2;
            void *gpu = download(d[t], bytes), *host = malloc(bytes);
            assert_int_equal(sr_generate_tensor_host(p, &syn, t, host, &err), SAGERUN_OK);
            assert_memory_equal(gpu, host, bytes);
            free(gpu);
            free(host);
            sagerun_mem_free(ctx, d[t]);
        }
    }
    printf("generator: GPU bytes == host bytes on 3 shapes (NHD fp16, HND GQA, bf16)\n");
}

/* Downloads quantized tensors into host copies. */
static host_sage2 download_sage2(const sagerun_problem *p, const sagerun_sage2_tensors *t)
{
    sr_sage2_sizes s;
    sagerun_error err = {0};
    assert_int_equal(sr_sage2_sizes_of(p, &t->params, &s, &err), SAGERUN_OK);
    host_sage2 h = {download(t->q_int8, s.q_elements), download(t->q_scale, s.q_scale_count * 4),
                    download(t->k_int8, s.kv_elements), download(t->k_scale, s.k_scale_count * 4),
                    download(t->v_fp8, s.v_fp8_bytes),  download(t->v_scale, s.v_scale_count * 4),
                    download(t->k_mean, s.k_mean_count * 2)};
    return h;
}

static void free_host_sage2(host_sage2 *h)
{
    free(h->q_int8);
    free(h->q_scale);
    free(h->k_int8);
    free(h->k_scale);
    free(h->v_fp8);
    free(h->v_scale);
    free(h->k_mean);
}

static void test_golden_bit_exact(void **state)
{
    (void)state;
    NEED_GPU();
    char paths[16][1024], why[1200];
    size_t n = golden_files(paths, 16, why, sizeof why);
    if (n == 0) {
        printf("SKIP: %s\n", why);
        skip();
    }
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        sagerun_error err = {0};
        sr_workload w;
        assert_int_equal(sr_workload_from_safetensors(paths[i], -1, &w, &err), SAGERUN_OK);
        sagerun_problem p = w.problem;
        sr_workload_free(&w);
        sr_safetensors *f;
        assert_int_equal(sr_safetensors_open(paths[i], &f, &err), SAGERUN_OK);
        uint64_t qb = 0, kb = 0, mb = 0;
        void *q = golden_read(f, "q", &qb), *k = golden_read(f, "k", &kb),
             *v = golden_read(f, "v", NULL), *km = golden_read(f, "k_mean", &mb);
        uint64_t dq = upload(q, qb), dk = upload(k, kb), dv = upload(v, kb), dkm = upload(km, mb);
        printf("%s\n", paths[i]);
        golden_set sets[3];
        golden_sets(sets);
        for (int s = 0; s < 3; s++) {
            sagerun_sage2_tensors t;
            uint64_t zero = 99;
            assert_int_equal(sr_sage2_quantize(ctx, &p, dq, dk, dv, &sets[s].params, dkm, &t,
                                               &zero, &err),
                             SAGERUN_OK);
            assert_int_equal(zero, 0);
            host_sage2 h = download_sage2(&p, &t);
            failures += golden_compare(f, &sets[s], &h, 1, 0.0, NULL);
            free_host_sage2(&h);
            sr_sage2_tensors_free(ctx, &t);
        }
        /* our own k_mean: within one ulp of the file's, and the same bytes as the host's */
        sagerun_sage2_quant_params qp = sr_sage2_params_sm89(448.0f);
        sagerun_sage2_tensors t;
        assert_int_equal(sr_sage2_quantize(ctx, &p, dq, dk, dv, &qp, 0, &t, NULL, &err),
                         SAGERUN_OK);
        uint16_t *gm = download(t.k_mean, mb);
        sagerun_context *host;
        assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &host, &err), SAGERUN_OK);
        sagerun_sage2_tensors ht;
        assert_int_equal(sr_sage2_quantize(host, &p, (uint64_t)(uintptr_t)q,
                                           (uint64_t)(uintptr_t)k, (uint64_t)(uintptr_t)v, &qp, 0,
                                           &ht, NULL, &err),
                         SAGERUN_OK);
        int worst = 0;
        for (uint64_t j = 0; j < mb / 2; j++) {
            int d = half_ulps(gm[j], ((uint16_t *)km)[j]);
            worst = d > worst ? d : worst;
        }
        int same_as_host = memcmp(gm, (void *)(uintptr_t)ht.k_mean, mb) == 0;
        printf("  own k_mean: worst %d ulp from the file's; %s the host's\n", worst,
               same_as_host ? "identical to" : "DIFFERENT from");
        failures += worst > 1 || !same_as_host;
        sr_sage2_tensors_free(host, &ht);
        sagerun_context_destroy(host);
        sr_sage2_tensors_free(ctx, &t);
        free(gm);
        sagerun_mem_free(ctx, dq);
        sagerun_mem_free(ctx, dk);
        sagerun_mem_free(ctx, dv);
        sagerun_mem_free(ctx, dkm);
        free(q);
        free(k);
        free(v);
        free(km);
        sr_safetensors_close(f);
    }
    assert_int_equal(failures, 0);
}

/* Synthetic shapes the golden files do not cover (HND, GQA with D = 64, bf16, an all-zero V
 * channel): GPU and host agree on every scale and k_mean, codes within one step. */
static void test_gpu_matches_host(void **state)
{
    (void)state;
    NEED_GPU();
    sagerun_problem shapes[3] = {sagerun_problem_make(2, 300, 8, 2, 64),
                                 sagerun_problem_make(1, 1000, 2, 2, 128),
                                 sagerun_problem_make(1, 130, 4, 4, 128)};
    shapes[0].layout = SAGERUN_LAYOUT_HND;
    shapes[2].dtype = SAGERUN_DTYPE_BF16;
    sagerun_sage2_quant_params params[3] = {sr_sage2_params_sm89(448.0f), sr_sage2_params_sm90(),
                                            sr_sage2_params_sm89(2.25f)};
    sagerun_context *host;
    sagerun_error err = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &host, &err), SAGERUN_OK);
    for (int s = 0; s < 3; s++) {
        const sagerun_problem *p = &shapes[s];
        sr_synthetic syn;
        sr_synthetic_default(&syn, 77 + (uint64_t)s);
        syn.outlier_channels = 2;
        uint64_t qn = (uint64_t)p->batch * p->seq_len * p->heads_q * p->head_dim;
        uint64_t kn = qn / p->heads_q * p->heads_kv;
        void *hq = malloc(qn * 2), *hk = malloc(kn * 2);
        uint16_t *hv = malloc(kn * 2);
        assert_int_equal(sr_generate_tensor_host(p, &syn, 0, hq, &err), SAGERUN_OK);
        assert_int_equal(sr_generate_tensor_host(p, &syn, 1, hk, &err), SAGERUN_OK);
        assert_int_equal(sr_generate_tensor_host(p, &syn, 2, hv, &err), SAGERUN_OK);
        if (s == 1) /* channel 3 of head 0 all zero: NaN codes on both */
            for (uint32_t n = 0; n < p->seq_len; n++)
                hv[((uint64_t)n * p->heads_kv) * p->head_dim + 3] = 0;
        uint64_t dq = upload(hq, qn * 2), dk = upload(hk, kn * 2), dv = upload(hv, kn * 2);
        sagerun_sage2_tensors gt, ht;
        uint64_t gz = 0, hz = 0;
        assert_int_equal(sr_sage2_quantize(ctx, p, dq, dk, dv, &params[s], 0, &gt, &gz, &err),
                         SAGERUN_OK);
        assert_int_equal(sr_sage2_quantize(host, p, (uint64_t)(uintptr_t)hq,
                                           (uint64_t)(uintptr_t)hk, (uint64_t)(uintptr_t)hv,
                                           &params[s], 0, &ht, &hz, &err),
                         SAGERUN_OK);
        assert_int_equal(gz, hz);
        host_sage2 g = download_sage2(p, &gt);
        sr_sage2_sizes sz;
        assert_int_equal(sr_sage2_sizes_of(p, &params[s], &sz, &err), SAGERUN_OK);
        uint64_t dmean = memcmp(g.k_mean, (void *)(uintptr_t)ht.k_mean, sz.k_mean_count * 2) != 0;
        uint64_t dqs = compare_f32_bits(g.q_scale, (void *)(uintptr_t)ht.q_scale, sz.q_scale_count);
        uint64_t dks = compare_f32_bits(g.k_scale, (void *)(uintptr_t)ht.k_scale, sz.k_scale_count);
        uint64_t dvs = compare_f32_bits(g.v_scale, (void *)(uintptr_t)ht.v_scale, sz.v_scale_count);
        cmp_stats cq = compare_codes(g.q_int8, (void *)(uintptr_t)ht.q_int8, sz.q_elements, 0);
        cmp_stats ck = compare_codes(g.k_int8, (void *)(uintptr_t)ht.k_int8, sz.kv_elements, 0);
        cmp_stats cv = compare_codes(g.v_fp8, (void *)(uintptr_t)ht.v_fp8, sz.v_fp8_bytes, 1);
        printf("shape %d: zero channels %llu; k_mean %s; scales differ q %llu k %llu v %llu; codes "
               "differ q %llu k %llu v %llu (over one step: %llu)\n",
               s, (unsigned long long)gz, dmean ? "DIFFERS" : "same", (unsigned long long)dqs,
               (unsigned long long)dks, (unsigned long long)dvs, (unsigned long long)cq.differ,
               (unsigned long long)ck.differ, (unsigned long long)cv.differ,
               (unsigned long long)(cq.over_one_step + ck.over_one_step + cv.over_one_step));
        assert_int_equal(dmean + dqs + dks + dvs, 0);
        assert_int_equal(cq.over_one_step + ck.over_one_step + cv.over_one_step, 0);
        assert_true(cq.differ <= cq.n / 1000 + 1 && ck.differ <= ck.n / 1000 + 1 &&
                    cv.differ <= cv.n / 1000 + 1);
        free_host_sage2(&g);
        sr_sage2_tensors_free(ctx, &gt);
        sr_sage2_tensors_free(host, &ht);
        sagerun_mem_free(ctx, dq);
        sagerun_mem_free(ctx, dk);
        sagerun_mem_free(ctx, dv);
        free(hq);
        free(hk);
        free(hv);
    }
    sagerun_context_destroy(host);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static sagerun_status copy_bytes(uint64_t dst, uint64_t src, uint64_t bytes, sagerun_error *err)
{
    uint32_t grid[3] = {132 * 16, 1, 1}, block[3] = {256, 1, 1};
    void *params[] = {&dst, &src, &bytes};
    return sr_launch_library_kernel(ctx, "sr_copy16_kernel", grid, block, 0, params, err);
}

#define REPS 20

static void test_seed_workload_timing(void **state)
{
    (void)state;
    NEED_GPU();
    sagerun_error err = {0};
    sr_workload w;
    assert_int_equal(sr_workload_default(&w, &err), SAGERUN_OK);
    const sagerun_problem *p = &w.problem;
    uint64_t qb = sagerun_problem_q_elements(p) * 2, kb = sagerun_problem_kv_elements(p) * 2;
    uint64_t dq = dev_alloc(qb), dk = dev_alloc(kb), dv = dev_alloc(kb);
    sr_timer timer;
    assert_int_equal(sr_timer_init(&timer, ctx, &err), SAGERUN_OK);
    double t_gen[REPS], t_quant[REPS], t_copy[REPS];
    for (int i = 0; i < REPS + 1; i++) { /* the first run loads the module: not counted */
        double s;
        assert_int_equal(sr_timer_start(&timer, &err), SAGERUN_OK);
        assert_int_equal(sr_workload_fill_inputs(ctx, &w, dq, dk, dv, &err), SAGERUN_OK);
        assert_int_equal(sr_timer_stop(&timer, &s, &err), SAGERUN_OK);
        if (i)
            t_gen[i - 1] = s;
    }
    sagerun_sage2_quant_params qp = sr_sage2_params_sm89(448.0f);
    sagerun_sage2_tensors t;
    sr_sage2_workspace ws;
    assert_int_equal(sr_sage2_tensors_alloc(ctx, p, &qp, &t, &err), SAGERUN_OK);
    assert_int_equal(sr_sage2_workspace_alloc(ctx, p, &ws, &err), SAGERUN_OK);
    for (int i = 0; i < REPS + 1; i++) {
        double s;
        assert_int_equal(sr_timer_start(&timer, &err), SAGERUN_OK);
        if (sr_sage2_quantize_into(ctx, p, dq, dk, dv, 0, &t, &ws, &err) != SAGERUN_OK)
            fail_msg("%s", err.message);
        assert_int_equal(sr_timer_stop(&timer, &s, &err), SAGERUN_OK);
        if (i)
            t_quant[i - 1] = s;
    }
    static const char *const stage_names[5] = {"K sum + V max", "finalize", "Q int8", "K int8",
                                               "V fp8"};
    double t_stage[5][REPS];
    for (int st = 0; st < 5; st++)
        for (int i = 0; i < REPS; i++) {
            assert_int_equal(sr_timer_start(&timer, &err), SAGERUN_OK);
            assert_int_equal(sr_sage2_quantize_stages(ctx, p, dq, dk, dv, 0, &t, &ws, 1u << st, &err),
                             SAGERUN_OK);
            assert_int_equal(sr_timer_stop(&timer, &t_stage[st][i], &err), SAGERUN_OK);
        }
    uint64_t zero;
    assert_int_equal(sr_sage2_count_zero_v_channels(ctx, p, &t, &zero, &err), SAGERUN_OK);
    sr_sage2_workspace_free(ctx, &ws);
    sr_sage2_tensors_free(ctx, &t);
    /* the yardstick: copying the same 1.63 GB (reads 1.63 GB, writes 1.63 GB) */
    uint64_t dst = dev_alloc(qb + 2 * kb);
    for (int i = 0; i < REPS + 1; i++) {
        double s;
        assert_int_equal(sr_timer_start(&timer, &err), SAGERUN_OK);
        assert_int_equal(copy_bytes(dst, dq, qb, &err), SAGERUN_OK);
        assert_int_equal(copy_bytes(dst + qb, dk, kb, &err), SAGERUN_OK);
        assert_int_equal(copy_bytes(dst + qb + kb, dv, kb, &err), SAGERUN_OK);
        assert_int_equal(sr_timer_stop(&timer, &s, &err), SAGERUN_OK);
        if (i)
            t_copy[i - 1] = s;
    }
    sr_timer_fini(&timer);
    double in = (double)(qb + 2 * kb);
    sr_sage2_sizes sz;
    assert_int_equal(sr_sage2_sizes_of(p, &qp, &sz, &err), SAGERUN_OK);
    double out = (double)(sz.q_elements + sz.kv_elements + sz.v_fp8_bytes);
    double g = median(t_gen, REPS), q = median(t_quant, REPS), c = median(t_copy, REPS);
    printf("seed workload [1, 37810, 56, 128] fp16, medians of %d:\n", REPS);
    printf("  generate Q/K/V   %8.3f ms  (writes %.2f GB: %.0f GB/s)\n", g * 1e3, in / 1e9,
           in / g / 1e9);
    printf("  quantize (sm89)  %8.3f ms  (reads %.2f GB, writes %.2f GB: %.0f GB/s)  min %.3f max %.3f\n",
           q * 1e3, in / 1e9, out / 1e9, (in + out) / q / 1e9, t_quant[0] * 1e3,
           t_quant[REPS - 1] * 1e3);
    printf("  copy same bytes  %8.3f ms  (%.0f GB/s read+write)\n", c * 1e3, 2 * in / c / 1e9);
    for (int st = 0; st < 5; st++)
        printf("    stage %-14s %8.3f ms\n", stage_names[st], median(t_stage[st], REPS) * 1e3);
    printf("  zero V channels: %llu\n", (unsigned long long)zero);
    sagerun_mem_free(ctx, dst);
    sagerun_mem_free(ctx, dq);
    sagerun_mem_free(ctx, dk);
    sagerun_mem_free(ctx, dv);
    sr_workload_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generator_matches_host),
        cmocka_unit_test(test_golden_bit_exact),
        cmocka_unit_test(test_gpu_matches_host),
        cmocka_unit_test(test_seed_workload_timing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
