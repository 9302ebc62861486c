/* The public API's small pieces as a client sees them (public headers, libsagerun.so): the file
 * I/O of sagerun.h ("Files"), the dtype words, parameter formatting, registry pins, the scan
 * cache's path and the profiler ranges without a tool. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_test.h"
#include "sagerun/compare.h"
#include "sagerun/plugin.h"

static void write_then_read_gives_the_bytes(void **state)
{
    const char bytes[] = {'a', 0, 'b', '\n', (char)0xff};
    sagerun_error e = {0};
    const char *p = path_of("bytes.bin");
    assert_int_equal(sagerun_file_write(p, bytes, sizeof bytes, &e), SAGERUN_OK);
    char *data = NULL;
    size_t size = 0;
    assert_int_equal(sagerun_file_read(p, 1024, &data, &size, &e), SAGERUN_OK);
    assert_int_equal(size, sizeof bytes);
    assert_memory_equal(data, bytes, sizeof bytes);
    assert_int_equal(data[size], 0); /* NUL after the bytes */
    free(data);
    /* an existing file keeps its mode when replaced */
    assert_int_equal(chmod(p, 0604), 0);
    assert_int_equal(sagerun_file_write(p, "x", 1, &e), SAGERUN_OK);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0604);
    assert_int_equal(sb.st_size, 1);
}

static void read_refuses_what_is_not_a_regular_file_at_once(void **state)
{
    sagerun_error e = {0};
    char *data = (char *)1;
    size_t size = 7;
    const char *fifo = path_of("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    time_t t0 = time(NULL);
    assert_int_not_equal(sagerun_file_read(fifo, 1024, &data, &size, &e), SAGERUN_OK);
    assert_true(time(NULL) - t0 < 5); /* no writer: must not block */
    assert_non_null(strstr(e.message, "FIFO"));
    assert_non_null(strstr(e.message, fifo));
    assert_null(data);
    assert_int_equal(size, 0);
    assert_int_not_equal(sagerun_file_read(api_test_dir, 1024, &data, &size, &e), SAGERUN_OK);
    assert_non_null(strstr(e.message, "folder"));
    assert_int_equal(sagerun_file_read(path_of("none"), 1024, &data, &size, &e),
                     SAGERUN_NOT_FOUND);
}

static void read_refuses_more_than_the_limit(void **state)
{
    sagerun_error e = {0};
    const char *p = path_of("big");
    char buf[20000];
    memset(buf, 'z', sizeof buf);
    assert_int_equal(sagerun_file_write(p, buf, sizeof buf, &e), SAGERUN_OK);
    char *data = NULL;
    size_t size;
    assert_int_equal(sagerun_file_read(p, sizeof buf - 1, &data, &size, &e), SAGERUN_FORMAT);
    assert_non_null(strstr(e.message, "too large"));
    assert_null(data);
    assert_int_equal(sagerun_file_read(p, sizeof buf, &data, &size, &e), SAGERUN_OK);
    assert_int_equal(size, sizeof buf);
    free(data);
}

static void output_check_says_what_cannot_be_written(void **state)
{
    sagerun_error e = {0};
    assert_int_equal(sagerun_output_check("-", &e), SAGERUN_OK);
    assert_int_equal(sagerun_output_check(path_of("new.json"), &e), SAGERUN_OK);
    assert_int_equal(access(path_of("new.json"), F_OK), -1); /* nothing created */
    assert_int_not_equal(sagerun_output_check(path_of("no-such-folder/x.json"), &e), SAGERUN_OK);
    assert_non_null(strstr(e.message, "no-such-folder"));
    assert_int_not_equal(sagerun_output_check(api_test_dir, &e), SAGERUN_OK);
    assert_int_not_equal(sagerun_output_check("/dev/null", &e), SAGERUN_OK);
    assert_int_not_equal(sagerun_output_check(NULL, &e), SAGERUN_OK);
    /* a symlink to a regular file is written through, the link kept */
    const char *target = path_of("target.txt"), *link = path_of("link.txt");
    assert_int_equal(sagerun_file_write(target, "old", 3, &e), SAGERUN_OK);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(sagerun_output_check(link, &e), SAGERUN_OK);
    assert_int_equal(sagerun_file_write(link, "new!", 4, &e), SAGERUN_OK);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_size, 4);
    /* a dangling link is refused, nothing written */
    const char *dangling = path_of("dangling");
    assert_int_equal(symlink(path_of("nowhere"), dangling), 0);
    assert_int_not_equal(sagerun_file_write(dangling, "x", 1, &e), SAGERUN_OK);
    assert_int_equal(access(path_of("nowhere"), F_OK), -1);
}

static void file_sha256_is_the_bytes_hash(void **state)
{
    sagerun_error e = {0};
    const char *p = path_of("abc");
    assert_int_equal(sagerun_file_write(p, "abc", 3, &e), SAGERUN_OK);
    char hex[65];
    assert_int_equal(sagerun_file_sha256(p, hex, &e), SAGERUN_OK);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_not_equal(sagerun_file_sha256(path_of("none"), hex, &e), SAGERUN_OK);
}

static void dtype_words(void **state)
{
    const char *f16[] = {"fp16", "F16", "float16", "HALF"}, *bf16[] = {"bf16", "BFloat16"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(sagerun_dtype_parse(f16[i]), SAGERUN_DTYPE_F16);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(sagerun_dtype_parse(bf16[i]), SAGERUN_DTYPE_BF16);
    assert_int_equal(sagerun_dtype_parse("fp8"), -1);
    assert_int_equal(sagerun_dtype_parse("fp16 "), -1);
    assert_int_equal(sagerun_dtype_parse(NULL), -1);
    assert_string_equal(sagerun_dtype_word(SAGERUN_DTYPE_F16), "fp16");
    assert_string_equal(sagerun_dtype_word(SAGERUN_DTYPE_BF16), "bf16");
    assert_null(sagerun_dtype_word(SAGERUN_DTYPE_F32));
    assert_int_equal(sagerun_dtype_parse(sagerun_dtype_word(SAGERUN_DTYPE_BF16)),
                     SAGERUN_DTYPE_BF16);
}

static void param_words_and_values(void **state)
{
    assert_string_equal(sagerun_param_type_name(SAGERUN_PARAM_INT), "int");
    assert_string_equal(sagerun_param_type_name(SAGERUN_PARAM_FLOAT), "float");
    assert_string_equal(sagerun_param_type_name(SAGERUN_PARAM_BOOL), "bool");
    assert_string_equal(sagerun_param_type_name(77), "unknown");
    char buf[32];
    sagerun_param_format(SAGERUN_PARAM_INT, 64, buf, sizeof buf);
    assert_string_equal(buf, "64");
    sagerun_param_format(SAGERUN_PARAM_FLOAT, 0.5, buf, sizeof buf);
    assert_string_equal(buf, "0.5");
    sagerun_param_format(SAGERUN_PARAM_FLOAT, 1.0 / 3.0, buf, sizeof buf);
    assert_string_equal(buf, "0.3333333333333333"); /* 17 digits at most: reads back exactly */
    sagerun_param_format(SAGERUN_PARAM_BOOL, 1, buf, sizeof buf);
    assert_string_equal(buf, "true");
    sagerun_param_format(SAGERUN_PARAM_BOOL, 0, buf, sizeof buf);
    assert_string_equal(buf, "false");
    char small[3];
    sagerun_param_format(SAGERUN_PARAM_INT, 12345, small, sizeof small);
    assert_string_equal(small, "12"); /* cut, NUL-terminated */
}

static sagerun_registry *registry(void)
{
    sagerun_registry *reg = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_create(NULL, &reg, &e), SAGERUN_OK);
    return reg;
}

static void a_pin_refuses_another_file_before_it_loads(void **state)
{
    char plugin[512], hex[65];
    snprintf(plugin, sizeof plugin, "%s/reference.so", SAGERUN_TEST_PLUGINS);
    sagerun_error e = {0};
    assert_int_equal(sagerun_file_sha256(plugin, hex, &e), SAGERUN_OK);
    const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";
    sagerun_registry *reg = registry();
    assert_int_equal(sagerun_registry_pin(reg, "reference", wrong, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_pin(reg, "reference", wrong, &e), SAGERUN_OK); /* again */
    assert_int_equal(sagerun_registry_pin(reg, "reference", hex, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "pinned already"));
    assert_int_equal(sagerun_registry_pin(reg, "reference-mt", "12ab", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "'12ab' is not a SHA-256"));
    /* a bad name is named as such (the message blamed the valid hash) */
    assert_int_equal(sagerun_registry_pin(reg, "", hex, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "not a variant name"));
    assert_null(strstr(e.message, "SHA-256"));
    assert_int_equal(sagerun_registry_add_path(reg, plugin, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_find(reg, "reference"), -1);
    assert_int_equal(sagerun_registry_rejection_count(reg), 1);
    sagerun_rejection r = {.struct_size = sizeof r};
    assert_int_equal(sagerun_registry_rejection(reg, 0, &r, &e), SAGERUN_OK);
    assert_non_null(strstr(r.reason, "pinned plugin reference"));
    sagerun_registry_destroy(reg);
    /* pinned to its own hash, it loads */
    reg = registry();
    assert_int_equal(sagerun_registry_pin(reg, "reference", hex, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, plugin, &e), SAGERUN_OK);
    assert_true(sagerun_registry_find(reg, "reference") >= 0);
    sagerun_registry_destroy(reg);
}

static void the_cache_path_is_where_verdicts_go(void **state)
{
    char cache[300], plugin[512];
    snprintf(cache, sizeof cache, "%s/cache", api_test_dir);
    assert_int_equal(mkdir(cache, 0700), 0);
    setenv("SAGERUN_CACHE_DIR", cache, 1);
    sagerun_registry *reg = registry();
    assert_null(sagerun_registry_cache_path(reg)); /* nothing scanned yet */
    snprintf(plugin, sizeof plugin, "%s/reference.so", SAGERUN_TEST_PLUGINS);
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_add_path(reg, plugin, &e), SAGERUN_OK);
    const char *p = sagerun_registry_cache_path(reg);
    assert_non_null(p);
    assert_memory_equal(p, cache, strlen(cache));
    sagerun_registry_destroy(reg);
    setenv("SAGERUN_CACHE_DIR", "", 1);
    reg = registry();
    assert_int_equal(sagerun_registry_add_path(reg, plugin, &e), SAGERUN_OK);
    assert_null(sagerun_registry_cache_path(reg)); /* empty: no cache */
    sagerun_registry_destroy(reg);
}

/* Without a tool (NVTX_INJECTION64_PATH unset) no NVTX call is made: the state says so and the
 * ranges do nothing (test_nvtx has them reach a tool). */
static void ranges_without_a_tool(void **state)
{
    int s = sagerun_ranges_state();
    assert_true(s == SAGERUN_RANGES_NO_TOOL || s == SAGERUN_RANGES_COMPILED_OUT);
    sagerun_range_push("outer", 0);
    sagerun_range_push("profile x", 1);
    sagerun_range_push(NULL, 0);
    sagerun_range_pop();
    sagerun_range_pop();
    sagerun_range_pop();
    assert_int_equal(sagerun_ranges_state(), s);
}

int main(void)
{
    unsetenv("NVTX_INJECTION64_PATH");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_then_read_gives_the_bytes),
        cmocka_unit_test(read_refuses_what_is_not_a_regular_file_at_once),
        cmocka_unit_test(read_refuses_more_than_the_limit),
        cmocka_unit_test(output_check_says_what_cannot_be_written),
        cmocka_unit_test(file_sha256_is_the_bytes_hash),
        cmocka_unit_test(dtype_words),
        cmocka_unit_test(param_words_and_values),
        cmocka_unit_test(a_pin_refuses_another_file_before_it_loads),
        cmocka_unit_test(the_cache_path_is_where_verdicts_go),
        cmocka_unit_test(ranges_without_a_tool),
    };
    return cmocka_run_group_tests(tests, api_test_make_dir, api_test_remove_dir);
}
