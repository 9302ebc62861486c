/* Status table, version, problem checks, host-context memory, text escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include <cmocka.h>

#include "internal.h"

static void status_table_names_every_code(void **state)
{
    (void)state;
    assert_string_equal(sagerun_status_name(SAGERUN_OK), "SAGERUN_OK");
    assert_string_equal(sagerun_status_name(SAGERUN_NO_DRIVER), "SAGERUN_NO_DRIVER");
    assert_string_equal(sagerun_status_message(SAGERUN_NO_DRIVER),
                        "no NVIDIA driver found (libcuda.so.1)");
    assert_string_equal(sagerun_status_message(SAGERUN_NO_DEVICE), "no CUDA device");
    assert_string_equal(sagerun_status_name(12345), "SAGERUN_UNKNOWN_STATUS");
    assert_string_equal(sagerun_status_message(-999), "unknown status");
    /* Every code in the table has a distinct name. */
    static const int codes[] = {
#define CODE_(name, code, msg) code,
        SAGERUN_STATUS_MAP(CODE_)
#undef CODE_
    };
    for (size_t i = 0; i < SR_ARRAY_LEN(codes); i++)
        for (size_t j = i + 1; j < SR_ARRAY_LEN(codes); j++) {
            assert_int_not_equal(codes[i], codes[j]);
            assert_string_not_equal(sagerun_status_name(codes[i]), sagerun_status_name(codes[j]));
        }
}

/* The public escaping rule (sagerun_text_escape): what is escaped, what passes, and refusals. */
static void text_escape_shows_controls_and_line_breaks(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        unsigned flags;
        const char *out;
    } cases[] = {
        {"plain é ✓", 0, "plain é ✓"},
        {"a\nb\rc\x1b[2J\x7f", 0, "a\\x0ab\\x0dc\\x1b[2J\\x7f"},
        {"x\xe2\x80\xa8y\xe2\x80\xa9z\xc2\x85", 0, "x\\u2028y\\u2029z\\u0085"},
        {"a|b\\", 0, "a|b\\"},
        {"a|b\\", SAGERUN_TEXT_MARKDOWN_CELL, "a\\|b\\\\"},
        {"", SAGERUN_TEXT_MARKDOWN_CELL, ""},
        /* no HTML through a cell: a label "<script>" went into summary.md as it was */
        {"<script>a&b</script>", SAGERUN_TEXT_MARKDOWN_CELL, "\\<script>a\\&b\\</script>"},
        {"yes -> yes", SAGERUN_TEXT_MARKDOWN_CELL, "yes -> yes"}, /* '>' opens nothing */
        {"<b>", 0, "<b>"},
    };
    for (size_t i = 0; i < SR_ARRAY_LEN(cases); i++) {
        char *got = sagerun_text_escape(cases[i].in, cases[i].flags);
        assert_non_null(got);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
    assert_null(sagerun_text_escape(NULL, 0));
    assert_null(sagerun_text_escape("x", 2u)); /* a flag this version does not define */
}

static void version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(sagerun_version(), SAGERUN_VERSION);
    assert_string_equal(sagerun_version_string(), SAGERUN_VERSION_STRING);
    assert_int_equal(SAGERUN_VERSION_ENCODE(1, 2, 3), 10203);
}

static void error_prefix_keeps_status(void **state)
{
    (void)state;
    sagerun_error e;
    sr_error_set(&e, SAGERUN_FORMAT, "bad key %s", "x");
    assert_int_equal(sr_error_prefix(SAGERUN_FORMAT, &e, "file.json"), SAGERUN_FORMAT);
    assert_string_equal(e.message, "file.json: bad key x");
    /* A NULL error buffer is allowed everywhere, and changes no status (a prefixed one was
     * SAGERUN_INTERNAL without it). */
    assert_int_equal(sr_error_set(NULL, SAGERUN_IO, "ignored"), SAGERUN_IO);
    assert_int_equal(sr_error_prefix(SAGERUN_IO, NULL, "ignored"), SAGERUN_IO);
    /* too long for the buffer: its start and its end kept, the cause after a long path too
     * (truncating the end left the path alone), cut between characters */
    char path[1201]; /* 600 two-byte characters: any cut between bytes would split one */
    for (int i = 0; i < 600; i++)
        memcpy(path + 2 * i, "\xc3\xa9", 2);
    path[1200] = '\0';
    sr_error_set(&e, SAGERUN_NOT_FOUND, "%s: No such file or directory", path);
    assert_true(strlen(e.message) >= sizeof e.message - 8);
    for (size_t i = 0; e.message[i]; i++)
        if ((unsigned char)e.message[i] == 0xa9 && (i == 0 || (unsigned char)e.message[i - 1] != 0xc3))
            fail_msg("a character cut at byte %zu", i);
        else if ((unsigned char)e.message[i] == 0xc3 && (unsigned char)e.message[i + 1] != 0xa9)
            fail_msg("a character cut at byte %zu", i);
    assert_non_null(strstr(e.message, " ... "));
    assert_int_equal(strncmp(e.message, "\xc3\xa9", 2), 0);
    const char *end = ": No such file or directory";
    assert_string_equal(e.message + strlen(e.message) - strlen(end), end);
    sr_error_set(&e, SAGERUN_IO, "disk full");
    assert_int_equal(sr_error_prefix(SAGERUN_IO, &e, "writing %s", path), SAGERUN_IO);
    assert_string_equal(e.message + strlen(e.message) - strlen(": disk full"), ": disk full");
}

static void problem_checks_name_the_problem(void **state)
{
    (void)state;
    sagerun_error e;
    sagerun_problem p = sagerun_problem_make(1, 1000, 4, 2, 128);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_OK);
    assert_int_equal(sagerun_problem_q_elements(&p), 1000ull * 4 * 128);
    assert_int_equal(sagerun_problem_kv_elements(&p), 1000ull * 2 * 128);

    p = sagerun_problem_make(1, 1000, 3, 2, 128);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "Hq=3 is not a multiple of Hkv=2"));

    p = sagerun_problem_make(1, 0, 2, 2, 128);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "N=0"));

    p = sagerun_problem_make(60000, 1u << 30, 60000, 60000, 1024);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "too large"));

    p = sagerun_problem_make(1, 10, 70000, 70000, 64);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "grid limit"));

    p = sagerun_problem_make(1, 10, 2, 2, 64);
    p.layout = 7;
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "layout"));

    p = sagerun_problem_make(1, 10, 2, 2, 64);
    p.struct_size = 4;
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "struct_size"));
}

static void problem_sizes_and_scale(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 37810, 56, 56, 128);
    /* SAGE2.md section 4: 4*B*H*N^2*D = 4.099e13 for the seed workload. */
    assert_true(sagerun_problem_operations(&p) > 4.098e13 &&
                sagerun_problem_operations(&p) < 4.100e13);
    sagerun_problem c = sagerun_problem_make(2, 3, 4, 4, 8);
    c.causal = 1; /* rows attend to 1, 2, 3 keys: 6 pairs */
    assert_true(sagerun_problem_operations(&c) == 4.0 * 2 * 4 * 6 * 8);
    assert_true(sagerun_problem_sm_scale(&p) == (float)(1.0 / sqrt(128.0)));
    p.sm_scale = 0.5f;
    assert_true(sagerun_problem_sm_scale(&p) == 0.5f);
}

static void host_context_memory_round_trip(void **state)
{
    (void)state;
    sagerun_context *ctx;
    sagerun_error e;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_context_backend(ctx), SAGERUN_BACKEND_HOST);
    uint64_t a;
    assert_int_equal(sagerun_mem_alloc(ctx, 1000, &a, &e), SAGERUN_OK);
    assert_int_equal(a % 256, 0);
    assert_int_equal(sagerun_mem_fill(ctx, a, 0xab, 1000, &e), SAGERUN_OK);
    unsigned char buf[1000], src[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = (unsigned char)i;
    assert_int_equal(sagerun_mem_download(ctx, buf, a, 1000, &e), SAGERUN_OK);
    assert_int_equal(buf[999], 0xab);
    assert_int_equal(sagerun_mem_upload(ctx, a, src, 1000, &e), SAGERUN_OK);
    assert_int_equal(sagerun_mem_download(ctx, buf, a, 1000, &e), SAGERUN_OK);
    assert_memory_equal(buf, src, 1000);
    /* SHA-256 of the bytes 0..255 repeated is checked against an independent hash of the same
     * bytes from a file. */
    char h1[65], h2[65];
    assert_int_equal(sr_sha256_memory(ctx, a, 1000, h1, &e), SAGERUN_OK);
    char path[] = "/tmp/sagerun-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, src, 1000), 1000);
    close(fd);
    assert_int_equal(sagerun_file_sha256(path, h2, &e), SAGERUN_OK);
    unlink(path);
    assert_string_equal(h1, h2);
    sagerun_device_info info = {.struct_size = sizeof info};
    assert_int_equal(sagerun_context_device_info(ctx, &info, &e), SAGERUN_OK);
    assert_string_equal(info.name, "host");
    sagerun_mem_free(ctx, a);
    sagerun_context_destroy(ctx);
    sagerun_context_destroy(NULL); /* a no-op */
}

static void sha256_of_empty_input_is_the_known_constant(void **state)
{
    (void)state;
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    uint64_t a;
    assert_int_equal(sagerun_mem_alloc(ctx, 16, &a, NULL), SAGERUN_OK);
    char hex[65];
    assert_int_equal(sr_sha256_memory(ctx, a, 0, hex, NULL), SAGERUN_OK);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sagerun_mem_free(ctx, a);
    sagerun_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_table_names_every_code),
        cmocka_unit_test(version_matches_header),
        cmocka_unit_test(error_prefix_keeps_status),
        cmocka_unit_test(problem_checks_name_the_problem),
        cmocka_unit_test(problem_sizes_and_scale),
        cmocka_unit_test(host_context_memory_round_trip),
        cmocka_unit_test(sha256_of_empty_input_is_the_known_constant),
        cmocka_unit_test(text_escape_shows_controls_and_line_breaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
