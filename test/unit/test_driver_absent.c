/* With no CUDA driver (the loader pointed at a missing library), the library still works on the
 * host backend and asking for a CUDA context fails with a clear message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

static void cuda_context_reports_missing_driver(void **state)
{
    (void)state;
    sagerun_context *ctx = (sagerun_context *)1;
    sagerun_error e = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_CUDA, 0, &ctx, &e), SAGERUN_NO_DRIVER);
    assert_null(ctx);
    assert_int_equal(e.status, SAGERUN_NO_DRIVER);
#ifdef SAGERUN_NO_CUDA
    assert_non_null(strstr(e.message, "built without CUDA"));
#else
    assert_non_null(strstr(e.message, "no NVIDIA driver found"));
    assert_non_null(strstr(e.message, "/nonexistent/libcuda.so.1"));
#endif
    /* Asking again gives the same answer (the load is attempted once). */
    sagerun_error e2 = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_CUDA, 0, &ctx, &e2), SAGERUN_NO_DRIVER);
    assert_string_equal(e.message, e2.message);
}

static void host_backend_still_works(void **state)
{
    (void)state;
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    sagerun_context_destroy(ctx);
}

static void unknown_backend_is_an_invalid_argument(void **state)
{
    (void)state;
    sagerun_context *ctx;
    sagerun_error e;
    assert_int_equal(sagerun_context_create(7, 0, &ctx, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "unknown backend 7"));
}

int main(void)
{
    setenv("SAGERUN_TEST_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_context_reports_missing_driver),
        cmocka_unit_test(host_backend_still_works),
        cmocka_unit_test(unknown_backend_is_an_invalid_argument),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
