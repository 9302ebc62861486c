/* sagerun_inputs_sha256: each tensor of the inputs hashed by name, the same bytes the same hash,
 * a tensor the problem has not NOT_FOUND, another name refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <string.h>

#include "sagerun/sagerun.h"

static void test_inputs_sha256(void **state)
{
    (void)state;
    sagerun_context *ctx = NULL;
    sagerun_inputs *a = NULL, *b = NULL;
    sagerun_error e = {0};
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 8);
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 1, &a, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 2, &b, &e), SAGERUN_OK);
    char q1[65], q2[65], k1[65];
    assert_int_equal(sagerun_inputs_sha256(a, "q", q1, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_sha256(a, "q", q2, &e), SAGERUN_OK);
    assert_string_equal(q1, q2);
    assert_int_equal(strlen(q1), 64);
    assert_int_equal(sagerun_inputs_sha256(a, "k", k1, &e), SAGERUN_OK);
    assert_string_not_equal(q1, k1);
    assert_int_equal(sagerun_inputs_sha256(b, "q", q2, &e), SAGERUN_OK);
    assert_string_not_equal(q1, q2); /* another seed, other bytes */
    assert_int_equal(sagerun_inputs_sha256(a, "cu_seqlens_q", q2, &e), SAGERUN_NOT_FOUND);
    assert_non_null(strstr(e.message, "no cu_seqlens_q"));
    assert_int_equal(sagerun_inputs_sha256(a, "o", q2, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "no such tensor"));
    assert_int_equal(sagerun_inputs_sha256(NULL, "q", q2, &e), SAGERUN_INVALID_ARGUMENT);
    sagerun_inputs_destroy(b);
    sagerun_inputs_destroy(a);
    sagerun_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_inputs_sha256)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
