/* The reference variant (exact attention in double precision) on hand-checked cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

#define PLUGIN SAGERUN_SOURCE_DIR "/plugins/reference.so"

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

static void refuses_causal(void **state)
{
    fixture *f = *state;
    sagerun_problem p = sagerun_problem_make(1, 2, 1, 1, 2);
    p.causal = 1;
    uint16_t z[4] = {0};
    sagerun_inputs *in;
    sagerun_instance *inst;
    sagerun_error e;
    assert_int_equal(sagerun_inputs_create_from_host(f->ctx, &p, z, z, z, &in, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_create(f->reg, f->index, f->ctx, in, &inst, &e),
                     SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(e.message, "causal"));
    sagerun_inputs_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_by_two_by_hand),
        cmocka_unit_test(gqa_and_layouts_agree),
        cmocka_unit_test(refuses_causal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
