/* The public API misused as a careless client would (public headers): NULL out-pointers, structs
 * shorter than the library's, outputs read before they exist, options out of range, names that
 * are not UTF-8. Each is an error naming what is wrong (or, for a short struct, only what it
 * covers written), never a crash, a write past the caller's memory or an OK with garbage. Every
 * case here once crashed, overflowed or answered wrongly (a helper's audit of the C API). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "api_test.h"
#include "sagerun/compare.h"
#include "sagerun/plugin.h"
#include "sagerun/workload.h"

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    sagerun_inputs *in;
    sagerun_instance *inst;
} fixture;

static int setup(void **state)
{
    if (api_test_make_dir(state) != 0)
        return -1;
    fixture *f = calloc(1, sizeof *f);
    sagerun_error e = {0};
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 8);
    if (!f || sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f->ctx, &e) != SAGERUN_OK ||
        sagerun_registry_create(f->ctx, &f->reg, &e) != SAGERUN_OK ||
        sagerun_registry_add_path(f->reg, SAGERUN_TEST_PLUGINS, &e) != SAGERUN_OK ||
        sagerun_inputs_create_synthetic(f->ctx, &p, 1, &f->in, &e) != SAGERUN_OK) {
        fprintf(stderr, "setup: %s\n", e.message);
        return -1;
    }
    long i = sagerun_registry_find(f->reg, "reference");
    if (i < 0 || sagerun_instance_create(f->reg, (size_t)i, f->ctx, f->in, &f->inst, &e) != SAGERUN_OK) {
        fprintf(stderr, "setup: no reference instance (%s)\n", e.message);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_instance_destroy(f->inst);
    sagerun_inputs_destroy(f->in);
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    free(f);
    return api_test_remove_dir(state);
}

static void expect_error(sagerun_status st, const sagerun_error *e, const char *text)
{
    assert_int_equal(st, SAGERUN_INVALID_ARGUMENT);
    if (!strstr(e->message, text))
        fail_msg("got \"%s\", want \"%s\"", e->message, text);
}

/* Hooks whose struct_size covers no hook (a caller who left it 0) were dropped in silence: an
 * interrupted hook that always stops, and a skip of the baseline, went unheeded (status OK,
 * complete, every round run). */
static void compare_hooks_without_struct_size_are_refused(void **state)
{
    fixture *f = *state;
    static const char *const skip[] = {"reference"};
    sagerun_compare_hooks h;
    memset(&h, 0, sizeof h);
    h.skip_labels = skip;
    h.skip_count = 1;
    sagerun_compare_options o;
    sagerun_compare_options_init(&o);
    o.baseline = "reference";
    o.schedule = SAGERUN_SCHEDULE_FIXED;
    o.rounds = 2;
    o.iterations = 1;
    o.warmup = 0;
    o.hooks = &h;
    sagerun_compare_result *r = (sagerun_compare_result *)(uintptr_t)1;
    sagerun_error e = {0};
    expect_error(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &r, &e), &e,
                 "compare hooks: struct_size 0 covers no hook");
    assert_null(r);
}

/* On the host backend a span that is no live block's was a SIGSEGV in the caller: a made-up
 * address, a block's end passed, a freed block (and a free of a made-up address). */
static void host_memory_outside_blocks_is_refused(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    uint64_t a = 0;
    char buf[4096] = {0};
    assert_int_equal(sagerun_mem_alloc(f->ctx, 16, &a, &e), SAGERUN_OK);
    expect_error(sagerun_mem_upload(f->ctx, a, buf, sizeof buf, &e), &e,
                 "mem_upload: 4096 bytes at");
    expect_error(sagerun_mem_download(f->ctx, buf, a + 8, 9, &e), &e, "not within a block");
    expect_error(sagerun_mem_fill(f->ctx, a, 0, 2u << 20, &e), &e, "mem_fill");
    expect_error(sagerun_mem_upload(f->ctx, 12345, buf, 1, &e), &e, "not within a block");
    assert_int_equal(sagerun_mem_upload(f->ctx, a + 8, buf, 8, &e), SAGERUN_OK); /* its last 8 */
    sagerun_mem_free(f->ctx, 12345); /* no block's: nothing */
    sagerun_mem_free(f->ctx, a);
    expect_error(sagerun_mem_download(f->ctx, buf, a, 1, &e), &e, "freed, made up");
}

/* The problem's helpers read through NULL (a SIGSEGV) where every other accessor answers 0. */
static void problem_helpers_take_null(void **state)
{
    (void)state;
    assert_int_equal(sagerun_problem_q_elements(NULL), 0);
    assert_int_equal(sagerun_problem_kv_elements(NULL), 0);
    assert_true(sagerun_problem_operations(NULL) == 0.0);
    assert_true(sagerun_problem_sm_scale(NULL) == 0.0f);
}

/* A NaN, negative or infinite threshold made every regression vanish (OK, no findings). */
static void report_diff_checks_its_threshold(void **state)
{
    (void)state;
    const double bad[] = {NAN, -50, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sagerun_report_diff_options o;
        sagerun_report_diff_options_init(&o);
        o.threshold_percent = bad[i];
        unsigned findings = 0;
        sagerun_error e = {0};
        FILE *out = fopen("/dev/null", "w");
        assert_non_null(out);
        sagerun_status st = sagerun_report_diff(path_of("old.json"), path_of("new.json"), &o, out,
                                                &findings, &e);
        fclose(out);
        expect_error(st, &e, "the threshold must be a percentage");
        sagerun_diff *d = (sagerun_diff *)(uintptr_t)1;
        expect_error(sagerun_diff_create(&o, &d, &e), &e, "the threshold must be a percentage");
        assert_null(d); /* a failed create leaves no stale handle */
    }
}

/* NULL out-pointers were written through (SIGSEGV); a failed create left the caller's value. */
static void creates_take_null_and_clear_out(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 8);
    char q[1024] = {0};
    expect_error(sagerun_inputs_create_synthetic(f->ctx, &p, 1, NULL, &e), &e, "NULL out");
    expect_error(sagerun_inputs_create_from_host(f->ctx, &p, q, q, q, NULL, &e), &e, "NULL out");
    sagerun_inputs *in = (sagerun_inputs *)(uintptr_t)1;
    assert_int_not_equal(sagerun_inputs_create_synthetic(NULL, &p, 1, &in, &e), SAGERUN_OK);
    assert_null(in);
    in = (sagerun_inputs *)(uintptr_t)1;
    assert_int_not_equal(sagerun_inputs_create_from_host(f->ctx, &p, NULL, q, q, &in, &e), SAGERUN_OK);
    assert_null(in);
    sagerun_workload *w = (sagerun_workload *)(uintptr_t)1;
    assert_int_not_equal(sagerun_workload_synthetic(NULL, 1, "n", &w, &e), SAGERUN_OK);
    assert_null(w);
    /* it kept the caller's value on a bad layout or a NULL path (a caller destroying any non-NULL
     * handle freed it twice) */
    w = (sagerun_workload *)(uintptr_t)1;
    expect_error(sagerun_workload_from_safetensors(path_of("qkv.safetensors"), 7, &w, &e), &e, "layout 7");
    assert_null(w);
    w = (sagerun_workload *)(uintptr_t)1;
    expect_error(sagerun_workload_from_safetensors(NULL, -1, &w, &e), &e, "NULL path");
    assert_null(w);
}

/* Without an error buffer a failure returns the status it returns with one (a prefixed error,
 * the file or key named before the cause, came back as SAGERUN_INTERNAL). */
static void status_is_the_same_without_err(void **state)
{
    (void)state;
    const char *j = "{\"shape\": [1, 16, 2, 8], \"input\": {\"outlier_channels\": 99}}";
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_parse(j, "w.json", NULL, &w, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "w.json: key 'input'"));
    assert_int_equal(sagerun_workload_parse(j, "w.json", NULL, &w, NULL), SAGERUN_INVALID_ARGUMENT);
    assert_null(w);
}

static void file_functions_refuse_null(void **state)
{
    (void)state;
    sagerun_error e = {0};
    char hex[65];
    const char *p = path_of("five.txt");
    assert_int_equal(sagerun_file_write(p, "hello", 5, &e), SAGERUN_OK);
    expect_error(sagerun_file_sha256(p, NULL, &e), &e, "file_sha256: NULL argument");
    expect_error(sagerun_file_sha256(NULL, hex, &e), &e, "file_sha256: NULL argument");
    /* no bytes: data may be NULL (fwrite of NULL was undefined: UBSan stopped here) */
    const char *empty = path_of("empty.bin");
    assert_int_equal(sagerun_file_write(empty, NULL, 0, &e), SAGERUN_OK);
    struct stat sb;
    assert_int_equal(stat(empty, &sb), 0);
    assert_int_equal(sb.st_size, 0);
}

/* A struct shorter than the library's: only what its struct_size covers is written. */
static void geometry_writes_what_struct_size_covers(void **state)
{
    fixture *f = *state;
    unsigned char buf[sizeof(sagerun_launch_geometry) + 16];
    memset(buf, 0xab, sizeof buf);
    sagerun_launch_geometry *g = (sagerun_launch_geometry *)(void *)buf;
    g->struct_size = 8; /* struct_size and cta_q */
    sagerun_error e = {0};
    assert_int_equal(sagerun_instance_geometry(f->inst, g, &e), SAGERUN_OK);
    assert_int_equal(g->struct_size, 8);
    for (size_t i = 8; i < sizeof buf; i++)
        if (buf[i] != 0xab)
            fail_msg("byte %zu past the caller's 8 was written", i);
    memset(buf, 0, sizeof buf);
    g->struct_size = 0; /* this header's */
    assert_int_equal(sagerun_instance_geometry(f->inst, g, &e), SAGERUN_OK);
    assert_int_equal(g->struct_size, sizeof *g);
}

/* The quantizer filled the whole struct whatever the caller's struct_size (a heap overflow). */
static void quantize_refuses_a_short_struct(void **state)
{
    fixture *f = *state;
    sagerun_sage2_quant_params qp = {sizeof qp, 32, 128, 64, 64, 448.0f};
    size_t short_size = offsetof(sagerun_sage2_tensors, q_int8);
    unsigned char buf[sizeof(sagerun_sage2_tensors)];
    memset(buf, 0xab, sizeof buf);
    sagerun_sage2_tensors *t = (sagerun_sage2_tensors *)(void *)buf;
    t->struct_size = (uint32_t)short_size;
    sagerun_error e = {0};
    expect_error(sagerun_sage2_quantize(f->in, &qp, t, &e), &e, "sage2_quantize: struct_size");
    for (size_t i = sizeof(uint32_t); i < sizeof buf; i++)
        if (buf[i] != 0xab)
            fail_msg("byte %zu written on a refused call", i);
}

/* Before a run there is no output: its hash was of uninitialised memory, with OK. */
static void no_output_before_a_run(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    char hex[65];
    expect_error(sagerun_instance_output_sha256(f->inst, hex, &e), &e, "no output yet");
    expect_error(sagerun_instance_write_output(f->inst, path_of("o.safetensors"), &e), &e,
                 "no output yet");
    assert_int_equal(sagerun_instance_run(f->inst, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_output_sha256(f->inst, hex, &e), SAGERUN_OK);
    assert_int_equal(strlen(hex), 64);
}

/* A write past the end of the output is named by the library to any caller (run and profile
 * printed the hash and exit 0 after one, only compare's engine checked). */
static void output_end_names_a_write_past_o(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    expect_error(sagerun_instance_check_output_end(NULL, &e), &e, "NULL instance");
    assert_int_equal(sagerun_instance_check_output_end(f->inst, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(f->inst, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_check_output_end(f->inst, &e), SAGERUN_OK);
    uint64_t bytes, o = sagerun_instance_output(f->inst, &bytes);
    assert_int_equal(sagerun_mem_fill(f->ctx, o + bytes + 7, 0, 3, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_check_output_end(f->inst, &e), SAGERUN_VARIANT);
    assert_non_null(strstr(e.message, "3 of the 65536 bytes after o changed, the first at byte 7 "));
}

/* Address 0 is never memory of a context: the host backend's memcpy/memset crashed on it. */
static void memory_at_address_0_is_refused(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    char buf[16] = {0};
    expect_error(sagerun_mem_fill(f->ctx, 0, 0xff, 16, &e), &e, "mem_fill: address 0");
    expect_error(sagerun_mem_upload(f->ctx, 0, buf, 16, &e), &e, "mem_upload: address 0");
    expect_error(sagerun_mem_download(f->ctx, buf, 0, 16, &e), &e, "mem_download: address 0");
    assert_int_equal(sagerun_mem_fill(f->ctx, 0, 0xff, 0, &e), SAGERUN_OK); /* no bytes: nothing */
}

/* Q, K, V borrowed where the caller holds them (a torch CUDA tensor's memory, no copy): only on
 * CUDA; on the host backend, at address 0, or paged without a block table each refused, named,
 * and *out cleared. */
static void device_inputs_are_refused_where_they_cannot_be_borrowed(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 8);
    sagerun_inputs *in = (sagerun_inputs *)f; /* not NULL: each refusal clears it */
    uint64_t a = 4096;
    assert_int_equal(sagerun_inputs_create_from_device_seq(f->ctx, &p, NULL, a, a, a, &in, &e),
                     SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(e.message, "the host backend takes Q, K, V by copy"));
    assert_null(in);
    expect_error(sagerun_inputs_create_from_device_seq(f->ctx, &p, NULL, a, 0, a, &in, &e), &e,
                 "inputs_create_from_device: a tensor at address 0");
    p.page_size = 8, p.pages = 2, p.pages_per_seq = 2;
    expect_error(sagerun_inputs_create_from_device_seq(f->ctx, &p, NULL, a, a, a, &in, &e), &e,
                 "a paged problem's K/V need their block table");
    expect_error(sagerun_inputs_create_from_device_seq(f->ctx, &p, NULL, a, a, a, NULL, &e), &e,
                 "inputs_create_from_device: NULL out");
}

/* A name that is not UTF-8 was taken, and the workload could then not be written as JSON. */
static void workload_names_are_utf8(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 8);
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    expect_error(sagerun_workload_synthetic(&p, 1, "caf\xe9", &w, &e), &e, "not valid UTF-8");
    assert_null(w);
    assert_int_equal(sagerun_workload_synthetic(&p, 1, "café", &w, &e), SAGERUN_OK);
    expect_error(sagerun_workload_set_name(w, "caf\xe9", &e), &e, "not valid UTF-8");
    char *text = sagerun_workload_to_json(w, 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "café"));
    free(text);
    sagerun_workload_destroy(w);
}

/* A NULL out-pointer is said as such, not as an index out of range. */
static void registry_accessors_name_a_null_out(void **state)
{
    fixture *f = *state;
    sagerun_error e = {0};
    expect_error(sagerun_registry_variant_info(f->reg, 0, NULL, &e), &e, "NULL argument");
    expect_error(sagerun_registry_variant_param(f->reg, 0, 0, NULL, &e), &e, "NULL argument");
    expect_error(sagerun_registry_add_path(f->reg, NULL, &e), &e, "NULL path");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(report_diff_checks_its_threshold),
        cmocka_unit_test(compare_hooks_without_struct_size_are_refused),
        cmocka_unit_test(problem_helpers_take_null),
        cmocka_unit_test(host_memory_outside_blocks_is_refused),
        cmocka_unit_test(creates_take_null_and_clear_out),
        cmocka_unit_test(status_is_the_same_without_err),
        cmocka_unit_test(file_functions_refuse_null),
        cmocka_unit_test(geometry_writes_what_struct_size_covers),
        cmocka_unit_test(quantize_refuses_a_short_struct),
        cmocka_unit_test(no_output_before_a_run),
        cmocka_unit_test(output_end_names_a_write_past_o),
        cmocka_unit_test(memory_at_address_0_is_refused),
        cmocka_unit_test(device_inputs_are_refused_where_they_cannot_be_borrowed),
        cmocka_unit_test(workload_names_are_utf8),
        cmocka_unit_test(registry_accessors_name_a_null_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
