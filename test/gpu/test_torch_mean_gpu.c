/* k_mean in torch.mean's order on a CUDA device: the GPU's bits equal the host's for the plan of
 * the device's own properties, over shapes that take every branch of the plan (no split, split
 * across warps, global reductions of a few and of a thousand blocks), NHD and HND, fp16 and bf16.
 * (Equality with torch itself is test/gpu/parity's job.) Skips without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpu_test.h"
#include "kernels/quantize_math.h"
#include "torch_mean.h"

static void gpu_equals_host(void **state)
{
    (void)state;
    sagerun_context *ctx = gpu_test_context();
    if (!ctx)
        skip();
    sagerun_error err = {0};
    sr_torch_device dev;
    assert_int_equal(sr_torch_device_of(ctx, &dev, &err), SAGERUN_OK);
    printf("device: %u SMs, %u threads per SM\n", dev.sm_count, dev.max_threads_per_sm);
    const struct {
        uint32_t b, n, h, d;
        int layout, dtype;
    } cases[] = {
        {1, 37810, 56, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16}, /* the seed */
        {1, 37810, 56, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_BF16},
        {2, 5003, 8, 128, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_F16},
        {3, 333, 3, 64, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_BF16},
        {1, 131072, 2, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16},
        {1, 131072, 1, 64, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_BF16},
        {1, 50, 4, 128, SAGERUN_LAYOUT_NHD, SAGERUN_DTYPE_F16},
        {1, 1, 4, 128, SAGERUN_LAYOUT_HND, SAGERUN_DTYPE_F16},
    };
    int failures = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        sagerun_problem p = sagerun_problem_make(cases[ci].b, cases[ci].n, cases[ci].h,
                                                 cases[ci].h, cases[ci].d);
        p.layout = (uint32_t)cases[ci].layout;
        p.dtype = (uint32_t)cases[ci].dtype;
        const uint64_t count = (uint64_t)p.batch * p.seq_len * p.heads_kv * p.head_dim;
        const uint64_t cols = (uint64_t)p.batch * p.heads_kv * p.head_dim;
        uint16_t *k = malloc(count * 2), *want = malloc(cols * 2), *got = malloc(cols * 2);
        uint64_t s = 99 + ci;
        for (uint64_t i = 0; i < count; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            float x = (float)((int32_t)((s >> 40) % 8192) - 4096) / 256.0f +
                      (float)(i % p.head_dim % 5) * 2.0f;
            k[i] = p.dtype == SAGERUN_DTYPE_BF16 ? sr_float_to_bf16(x) : sr_float_to_half(x);
        }
        sr_torch_mean_plan plan;
        assert_int_equal(sr_torch_kmean_plan(&p, &dev, &plan, &err), SAGERUN_OK);
        assert_int_equal(sr_torch_kmean_host(&p, &plan, k, want, &err), SAGERUN_OK);
        uint64_t dk, dscratch, dmean;
        assert_int_equal(sagerun_mem_alloc(ctx, count * 2, &dk, &err), SAGERUN_OK);
        assert_int_equal(sagerun_mem_alloc(ctx, sr_torch_kmean_scratch_floats(&p, &plan) * 4,
                                           &dscratch, &err),
                         SAGERUN_OK);
        assert_int_equal(sagerun_mem_alloc(ctx, cols * 2, &dmean, &err), SAGERUN_OK);
        assert_int_equal(sagerun_mem_upload(ctx, dk, k, count * 2, &err), SAGERUN_OK);
        assert_int_equal(sr_torch_kmean_cuda(ctx, &p, &plan, dk, dscratch, dmean, &err),
                         SAGERUN_OK);
        assert_int_equal(sagerun_context_synchronize(ctx, &err), SAGERUN_OK);
        assert_int_equal(sagerun_mem_download(ctx, got, dmean, cols * 2, &err), SAGERUN_OK);
        uint64_t diff = 0;
        for (uint64_t i = 0; i < cols; i++)
            diff += got[i] != want[i];
        printf("  [%u, %u, %u, %u] %s %s: plan rows %u ctas %u: %llu of %llu differ\n", p.batch,
               p.seq_len, p.heads_kv, p.head_dim, p.layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD",
               p.dtype == SAGERUN_DTYPE_BF16 ? "bf16" : "fp16", plan.rows, plan.ctas,
               (unsigned long long)diff, (unsigned long long)cols);
        failures += diff != 0;
        sagerun_mem_free(ctx, dk);
        sagerun_mem_free(ctx, dscratch);
        sagerun_mem_free(ctx, dmean);
        free(k);
        free(want);
        free(got);
    }
    sagerun_context_destroy(ctx);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_equals_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
