/* The host backend's memory blocks (host_memory.c): aligned and zero-filled, and every byte just
 * before a block, past it (beyond its 256-byte rounding) or in a sealed block faults, so that a
 * variant's stray write is its own crash. Each fault is tried in a child process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* Whether writing one byte at p ends a child other than by a clean exit: SIGSEGV, or a sanitizer's
 * report of it (ASan and TSan catch the signal themselves and exit non-zero). */
static bool write_faults(volatile char *p)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        *p = 1;
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_block_layout(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 255, 256, 1000, 4096, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i], used = (n + 255) / 256 * 256;
        char *b = sr_host_block_alloc(n);
        assert_non_null(b);
        assert_int_equal((uintptr_t)b % 256, 0);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(b[k], 0);
        b[0] = b[n - 1] = 7; /* the block itself is writable */
        assert_false(write_faults(b + used - 1));
        assert_true(write_faults(b + used));                 /* just past its rounding */
        assert_true(write_faults(b + used + 80000));         /* far past it */
        assert_true(write_faults(b - 1 - ((uintptr_t)b % 4096))); /* before its first page */
        assert_true(write_faults(b - SR_HOST_GUARD_BEFORE / 2));
        sr_host_block_free(b);
    }
    sr_host_block_free(NULL);
}

static void test_block_seal(void **state)
{
    (void)state;
    char *b = sr_host_block_alloc(10000);
    assert_non_null(b);
    b[9999] = 3;
    assert_true(sr_host_block_seal(b, 10000));
    assert_int_equal(b[9999], 3); /* still readable */
    assert_true(write_faults(b));
    assert_true(write_faults(b + 9999));
    sr_host_block_free(b); /* a sealed block is freed like any other */
    assert_false(sr_host_block_seal(NULL, 1));
}

/* Through the public API: sagerun_mem_alloc on the host gives such blocks, and the free is clean. */
static void test_mem_alloc_host(void **state)
{
    (void)state;
    sagerun_context *ctx = NULL;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    uint64_t a = 0, b = 0;
    assert_int_equal(sagerun_mem_alloc(ctx, 5000, &a, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_mem_alloc(ctx, 5000, &b, NULL), SAGERUN_OK);
    assert_true(write_faults((char *)(uintptr_t)a + 5120));
    assert_true(write_faults((char *)(uintptr_t)b + 5120));
    /* two blocks of one size start at the same offset in their pages (an A/A's outputs alike) */
    assert_int_equal(a % 4096, b % 4096);
    sagerun_mem_free(ctx, a);
    sagerun_mem_free(ctx, b);
    sagerun_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_layout),
        cmocka_unit_test(test_block_seal),
        cmocka_unit_test(test_mem_alloc_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
