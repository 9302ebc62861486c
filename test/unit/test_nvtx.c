/* The NVTX layer (nvtx.h) compiles in with CUDA and out without it.
 *
 * Built with CUDA, NVTX loads the test tool (test/nvtx/fake_tool.c, named by
 * NVTX_INJECTION64_PATH) and every range reaches it in order: ranges of this file's own copy of
 * the header and of the library's (a timed sample's "K calls", a variant call's "run NAME"), and
 * the public sagerun_range_push/pop that callers outside the library use.
 * Built without CUDA (test_nocuda_build.sh runs this program from such a build, with the CUDA
 * build's tool in SAGERUN_TEST_NVTX_TOOL), the same calls reach no tool: no line is written, and
 * sr_nvtx_active() is false even with NVTX_INJECTION64_PATH set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "nvtx.h"
#include "timer.h"

static char log_path[] = "/tmp/sagerun-test-nvtx-XXXXXX";

/* What the tool wrote, "" when nothing (no file). */
static char *read_log(void)
{
    static char buf[4096];
    buf[0] = 0;
    FILE *f = fopen(log_path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    return buf;
}

static int count_calls(void *user, sagerun_error *err)
{
    (void)err;
    ++*(int *)user;
    return SAGERUN_OK;
}

/* Ranges of this file and of the library: a host sample of 3 calls is pushed as "3 calls". */
static void emit_ranges(void)
{
    sr_nvtx_push("outer %d", 1);
    sr_nvtx_push_registered("profile x");
    sr_nvtx_pop();
    sagerun_context *ctx = NULL;
    sr_sample_timer *t = NULL;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    assert_int_equal(sr_sample_timer_create(ctx, SR_CACHE_HOT, &t, NULL), SAGERUN_OK);
    int calls = 0;
    sr_timed_sample s;
    assert_int_equal(sr_sample_timer_take(t, count_calls, &calls, 3, NULL, &s, NULL), SAGERUN_OK);
    assert_int_equal(calls, 3);
    sr_sample_timer_destroy(t);
    sagerun_context_destroy(ctx);
    sagerun_range_push("public", 0);
    sagerun_range_push("profile y", 1);
    sagerun_range_pop();
    sagerun_range_pop();
    sr_nvtx_pop();
}

#if SR_NVTX_COMPILED_IN
static void test_ranges_reach_the_tool_in_order(void **state)
{
    (void)state;
    emit_ranges();
    const char *want = "nvtx tool loaded\n"
                       "nvtx push outer 1\n"
                       "nvtx push profile x (registered)\n"
                       "nvtx pop\n"
                       "nvtx push 3 calls\n"
                       "nvtx pop\n"
                       "nvtx push public\n"
                       "nvtx push profile y (registered)\n"
                       "nvtx pop\n"
                       "nvtx pop\n"
                       "nvtx pop\n";
    assert_string_equal(read_log(), want);
    assert_true(sr_nvtx_active());
    assert_int_equal(sagerun_ranges_state(), SAGERUN_RANGES_TOOL);
}
#else
static void test_ranges_compile_out(void **state)
{
    (void)state;
    assert_false(sr_nvtx_active()); /* NVTX_INJECTION64_PATH is set (main) */
    assert_int_equal(sagerun_ranges_state(), SAGERUN_RANGES_COMPILED_OUT);
    emit_ranges();
    assert_string_equal(read_log(), "");
}
#endif

int main(void)
{
    int fd = mkstemp(log_path);
    if (fd < 0)
        return 1;
    close(fd);
    unlink(log_path); /* the tool creates it at its first line */
#ifdef SAGERUN_TEST_NVTX_TOOL
    const char *tool = SAGERUN_TEST_NVTX_TOOL;
#else
    const char *tool = getenv("SAGERUN_TEST_NVTX_TOOL");
#endif
    if (SR_NVTX_COMPILED_IN && (!tool || access(tool, R_OK) != 0)) {
        printf("SKIP: the NVTX test tool %s is not built\n", tool ? tool : "(none)");
        return 0;
    }
    /* before any range: the layer reads it once */
    setenv("NVTX_INJECTION64_PATH", tool ? tool : "/nonexistent/nvtx-tool.so", 1);
    setenv("SAGERUN_NVTX_LOG", log_path, 1);
    const struct CMUnitTest tests[] = {
#if SR_NVTX_COMPILED_IN
        cmocka_unit_test(test_ranges_reach_the_tool_in_order),
#else
        cmocka_unit_test(test_ranges_compile_out),
#endif
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(log_path);
    return rc;
}
