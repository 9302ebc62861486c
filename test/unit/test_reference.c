/* The reference variant (exact attention in double precision) on hand-checked cases. */
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
#include "safetensors.h"

#define PLUGIN SAGERUN_TEST_PLUGINS "/reference.so"

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    size_t index;
} fixture;

static int setup(void **state)
{
    static fixture f;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f.ctx, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_create(f.ctx, &f.reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(f.reg, PLUGIN, NULL), SAGERUN_OK);
    long i = sagerun_registry_find(f.reg, "reference");
    assert_true(i >= 0);
    f.index = (size_t)i;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    return 0;
}

/* Runs the reference on host arrays and returns the output in out. */
static void run_reference(fixture *f, const sagerun_problem *p, const uint16_t *q,
                          const uint16_t *k, const uint16_t *v, uint16_t *out)
{
    sagerun_inputs *in;
    sagerun_instance *inst;
    sagerun_error e;
    assert_int_equal(sagerun_inputs_create_from_host(f->ctx, p, q, k, v, &in, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_create(f->reg, f->index, f->ctx, in, &inst, &e), SAGERUN_OK);
    uint64_t bytes;
    uint64_t o = sagerun_instance_output(inst, &bytes);
    assert_int_equal(bytes, sagerun_problem_q_elements(p) * 2);
    double s = -1;
    assert_int_equal(sagerun_instance_run(inst, &s, &e), SAGERUN_OK);
    assert_true(s >= 0);
    assert_int_equal(sagerun_mem_download(f->ctx, out, o, bytes, &e), SAGERUN_OK);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
}

/* Q = K = I (2x2), V = [[1,2],[3,4]], scale 1: row 0 weights (e, 1)/(e+1), row 1 (1, e)/(e+1).
 * O = [[1.53788, 2.53788], [2.46212, 3.46212]], rounded to fp16 by hand: 0x3e27 0x4113 0x40ed
 * 0x42ed. */
static void two_by_two_by_hand(void **state)
{
    fixture *f = *state;
    const uint16_t one = 0x3c00, two = 0x4000, three = 0x4200, four = 0x4400;
    uint16_t q[4] = {one, 0, 0, one}, k[4] = {one, 0, 0, one}, v[4] = {one, two, three, four};
    sagerun_problem p = sagerun_problem_make(1, 2, 1, 1, 2);
    p.sm_scale = 1.0f;
    uint16_t o[4];
    run_reference(f, &p, q, k, v, o);
    assert_int_equal(o[0], 0x3e27);
    assert_int_equal(o[1], 0x4113);
    assert_int_equal(o[2], 0x40ed);
    assert_int_equal(o[3], 0x42ed);
}

/* GQA and layouts: 2 query heads share 1 kv head, so both heads' outputs are equal when their Q
 * rows are; HND must give the NHD result transposed. */
static void gqa_and_layouts_agree(void **state)
{
    fixture *f = *state;
    enum { N = 3, D = 4 };
    uint16_t qn[N * 2 * D], kn[N * D], vn[N * D];
    for (int n = 0; n < N; n++)
        for (int d = 0; d < D; d++) {
            uint16_t x = (uint16_t)(0x3000 + 0x111 * ((n * 7 + d * 3) % 11)); /* 0.125 .. 1.x */
            qn[(n * 2 + 0) * D + d] = x;
            qn[(n * 2 + 1) * D + d] = x;
            kn[n * D + d] = (uint16_t)(0x3400 + 0x0a0 * ((n * 5 + d) % 7));
            vn[n * D + d] = (uint16_t)(0x3800 + 0x123 * ((n + d * 2) % 5));
        }
    sagerun_problem p = sagerun_problem_make(1, N, 2, 1, D);
    uint16_t on[N * 2 * D];
    run_reference(f, &p, qn, kn, vn, on);
    for (int n = 0; n < N; n++)
        assert_memory_equal(&on[(n * 2) * D], &on[(n * 2 + 1) * D], D * 2);
    /* The same problem in HND: [B, H, N, D]. */
    uint16_t qh[N * 2 * D], oh[N * 2 * D];
    for (int h = 0; h < 2; h++)
        for (int n = 0; n < N; n++)
            memcpy(&qh[(h * N + n) * D], &qn[(n * 2 + h) * D], D * 2);
    p.layout = SAGERUN_LAYOUT_HND; /* K and V with one head are the same in both layouts */
    run_reference(f, &p, qh, kn, vn, oh);
    for (int h = 0; h < 2; h++)
        for (int n = 0; n < N; n++)
            assert_memory_equal(&oh[(h * N + n) * D], &on[(n * 2 + h) * D], D * 2);
}

/* Issue 15: an all-zero V gives exactly zero (the oracle once wrote 0.5, 0x3800, for every 0),
 * in fp16 and bf16; one zero V channel gives zero in that channel only. */
static void zero_v_gives_zero_output(void **state)
{
    fixture *f = *state;
    enum { N = 7, H = 2, D = 8 };
    const uint32_t dtypes[2] = {SAGERUN_DTYPE_F16, SAGERUN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        const uint16_t one = dtypes[t] == SAGERUN_DTYPE_BF16 ? 0x3f80 : 0x3c00;
        uint16_t q[N * H * D], k[N * H * D], v[N * H * D], o[N * H * D];
        for (int i = 0; i < N * H * D; i++) {
            q[i] = (uint16_t)(i % 3 ? one : 0);
            k[i] = (uint16_t)(i % 5 ? one : 0x8000 | one);
            v[i] = 0;
        }
        sagerun_problem p = sagerun_problem_make(1, N, H, H, D);
        p.dtype = dtypes[t];
        run_reference(f, &p, q, k, v, o);
        for (int i = 0; i < N * H * D; i++)
            assert_int_equal(o[i], 0);
        /* V = 1 everywhere but channel 3: the output is exactly 1 there, 0 in channel 3 */
        for (int i = 0; i < N * H * D; i++)
            v[i] = (uint16_t)(i % D == 3 ? 0 : one);
        run_reference(f, &p, q, k, v, o);
        for (int i = 0; i < N * H * D; i++)
            assert_int_equal(o[i], i % D == 3 ? 0 : one);
    }
}

/* Causal (query row n attends to keys 0..n): the 2x2 case above; row 0 sees key 0 only, so its
 * output is V's row 0 exactly; row 1 sees both keys, as without the mask. */
static void causal_by_hand(void **state)
{
    fixture *f = *state;
    const uint16_t one = 0x3c00, two = 0x4000, three = 0x4200, four = 0x4400;
    uint16_t q[4] = {one, 0, 0, one}, k[4] = {one, 0, 0, one}, v[4] = {one, two, three, four};
    sagerun_problem p = sagerun_problem_make(1, 2, 1, 1, 2);
    p.sm_scale = 1.0f;
    p.causal = 1;
    uint16_t o[4];
    run_reference(f, &p, q, k, v, o);
    assert_int_equal(o[0], one);
    assert_int_equal(o[1], two);
    assert_int_equal(o[2], 0x40ed);
    assert_int_equal(o[3], 0x42ed);
}

/* Against the golden files' o_ref_fp32 (exact attention in float64, rounded to fp32): our fp16
 * output, widened, must be within half an fp16 ulp of it plus the fp32 rounding. */
static void matches_golden_fp32_reference(void **state)
{
    fixture *f = *state;
    const char *env = getenv("SAGERUN_GOLDEN_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/b2_n333_h3.safetensors",
             env && *env ? env : SAGERUN_SOURCE_DIR "/../shared/golden");
    if (access(path, R_OK) != 0) {
        printf("SKIP: golden file %s not found (set SAGERUN_GOLDEN_DIR)\n", path);
        skip();
    }
    sagerun_error e;
    sagerun_inputs *in;
    sagerun_instance *inst;
    if (sagerun_inputs_create_from_safetensors(f->ctx, path, SAGERUN_LAYOUT_NHD, &in, &e) ||
        sagerun_instance_create(f->reg, f->index, f->ctx, in, &inst, &e) ||
        sagerun_instance_run(inst, NULL, &e))
        fail_msg("%s", e.message);
    uint64_t bytes, o = sagerun_instance_output(inst, &bytes);
    uint64_t n = bytes / 2;
    uint16_t *got = malloc(bytes);
    float *want = malloc(n * 4);
    assert_int_equal(sagerun_mem_download(f->ctx, got, o, bytes, &e), SAGERUN_OK);
    sr_safetensors *sf;
    assert_int_equal(sr_safetensors_open(path, &sf, &e), SAGERUN_OK);
    assert_int_equal(sr_safetensors_read_tensor(sf, "o_ref_fp32", want, n * 4, &e), SAGERUN_OK);
    sr_safetensors_close(sf);
    double worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint16_t h = got[i];
        int exp = (h >> 10) & 0x1f;
        double mag = exp ? ldexp((h & 0x3ff) | 0x400, exp - 25) : ldexp(h & 0x3ff, -24);
        double g = (h & 0x8000) ? -mag : mag;
        double ulp = ldexp(1.0, (exp ? exp : 1) - 25); /* one fp16 ulp at this magnitude */
        double err_ulps = fabs(g - (double)want[i]) / ulp;
        if (err_ulps > worst) {
            worst = err_ulps;
            if (worst > 0.5)
                printf("element %llu: fp16 0x%04x = %.9g, o_ref_fp32 %.9g\n",
                       (unsigned long long)i, h, g, (double)want[i]);
        }
    }
    printf("reference vs o_ref_fp32: worst %.4f fp16 ulp over %llu elements\n", worst,
           (unsigned long long)n);
    assert_true(worst <= 0.5 + 1e-3);
    free(got);
    free(want);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_by_two_by_hand),
        cmocka_unit_test(gqa_and_layouts_agree),
        cmocka_unit_test(zero_v_gives_zero_output),
        cmocka_unit_test(causal_by_hand),
        cmocka_unit_test(matches_golden_fp32_reference),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
