/* sagerun/workload.h as a client sees it (public headers, libsagerun.so), on the host backend:
 * the default and synthetic workloads, files and their errors, changes, JSON round trips, inputs
 * made from a workload, inputs and outputs written as safetensors and read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_test.h"
#include "sagerun/compare.h"

static sagerun_context *host(void)
{
    sagerun_context *ctx = NULL;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    return ctx;
}

static void the_default_is_the_seed_call(void **state)
{
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_default(&w, &e), SAGERUN_OK);
    const sagerun_problem *p = sagerun_workload_problem(w);
    assert_int_equal(p->batch, 1);
    assert_int_equal(p->seq_len, 37810);
    assert_int_equal(p->heads_q, 56);
    assert_int_equal(p->heads_kv, 56);
    assert_int_equal(p->head_dim, 128);
    assert_int_equal(p->dtype, SAGERUN_DTYPE_F16);
    assert_string_equal(sagerun_workload_name(w), "seed");
    assert_null(sagerun_workload_input_path(w));
    assert_int_equal(sagerun_workload_seed(w), SAGERUN_WORKLOAD_DEFAULT_SEED);
    char *json = sagerun_workload_to_json(w, 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"block_index\":24")); /* the seed report's metadata */
    assert_null(strchr(json, '\n'));
    free(json);
    sagerun_workload_destroy(w);
    sagerun_workload_destroy(NULL);
}

static void a_synthetic_workload_round_trips_through_json(void **state)
{
    sagerun_problem p = sagerun_problem_make(2, 48, 4, 2, 64);
    p.dtype = SAGERUN_DTYPE_BF16;
    p.causal = 1;
    sagerun_workload *w = NULL, *back = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_synthetic(&p, 99, "mine", &w, &e), SAGERUN_OK);
    assert_string_equal(sagerun_workload_name(w), "mine");
    assert_int_equal(sagerun_workload_seed(w), 99);
    char *json = sagerun_workload_to_json(w, 2);
    assert_non_null(strstr(json, "\"dtype\": \"bf16\""));
    assert_non_null(strstr(json, "\"causal\": true"));
    assert_non_null(strstr(json, "\"metadata\": {}"));
    assert_int_equal(sagerun_workload_parse(json, "round trip", NULL, &back, &e), SAGERUN_OK);
    char *again = sagerun_workload_to_json(back, 2);
    assert_string_equal(json, again);
    const sagerun_problem *q = sagerun_workload_problem(back);
    assert_int_equal(q->heads_kv, 2);
    assert_int_equal(q->causal, 1);
    free(json);
    free(again);
    sagerun_workload_destroy(back);
    sagerun_workload_destroy(w);
    /* a problem that does not check is refused, naming why */
    p.heads_kv = 3;
    assert_int_equal(sagerun_workload_synthetic(&p, 1, NULL, &w, &e), SAGERUN_INVALID_ARGUMENT);
    assert_null(w);
}

static void bad_files_name_the_file_and_the_key(void **state)
{
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_parse("{\"shape\": [1, 2]}", "x.json", NULL, &w, &e),
                     SAGERUN_FORMAT);
    assert_non_null(strstr(e.message, "x.json"));
    assert_non_null(strstr(e.message, "shape"));
    assert_null(w);
    assert_int_equal(sagerun_workload_parse("{\"shape\": [1, 8, 2, 64], \"dtype\": \"fp8\"}",
                                            "y.json", NULL, &w, &e),
                     SAGERUN_FORMAT);
    assert_non_null(strstr(e.message, "dtype"));
    const char *f = path_of("w.json");
    assert_int_equal(sagerun_file_write(f, "{\"shape\": [1, 8, 2, 64], \"heads\": 2}", 36, &e),
                     SAGERUN_OK);
    assert_int_equal(sagerun_workload_load(f, &w, &e), SAGERUN_FORMAT);
    assert_non_null(strstr(e.message, f));
    assert_non_null(strstr(e.message, "heads"));
    assert_int_equal(sagerun_workload_load(path_of("none.json"), &w, &e), SAGERUN_NOT_FOUND);
    assert_int_equal(sagerun_workload_from_safetensors(f, 7, &w, &e), SAGERUN_INVALID_ARGUMENT);
    /* a good file: named after it */
    assert_int_equal(sagerun_file_write(f, "{\"shape\": [1, 8, 2, 64]}", 24, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_load(f, &w, &e), SAGERUN_OK);
    assert_string_equal(sagerun_workload_name(w), "w");
    sagerun_workload_destroy(w);
}

static void a_failed_change_leaves_the_workload_as_it_was(void **state)
{
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 64);
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_synthetic(&p, 5, "a", &w, &e), SAGERUN_OK);
    char *before = sagerun_workload_to_json(w, 0);
    sagerun_problem bad = p;
    bad.head_dim = 0;
    assert_int_not_equal(sagerun_workload_set_problem(w, &bad, &e), SAGERUN_OK);
    assert_int_not_equal(sagerun_workload_set_name(w, "", &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_metadata(w, "[1, 2]", &e), SAGERUN_FORMAT);
    assert_int_equal(sagerun_workload_set_metadata(w, "{\"a\": ", &e), SAGERUN_FORMAT);
    char *after = sagerun_workload_to_json(w, 0);
    assert_string_equal(before, after);
    free(after);
    /* good changes show */
    assert_int_equal(sagerun_workload_set_metadata(w, "{\"run\": 7}", &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_seed(w, 12, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_name(w, "b", &e), SAGERUN_OK);
    after = sagerun_workload_to_json(w, 0);
    assert_non_null(strstr(after, "\"metadata\":{\"run\":7}"));
    assert_non_null(strstr(after, "\"seed\":12"));
    assert_non_null(strstr(after, "\"name\":\"b\""));
    free(after);
    free(before);
    sagerun_workload_destroy(w);
}

/* ABI 0.2: the lengths from a SPEC or arrays, then pages; the sequences a caller reads; what
 * set_problem keeps and refuses; inputs made with the sequences. */
static void varlen_and_paged_workloads(void **state)
{
    sagerun_problem p = sagerun_problem_make(3, 16, 2, 1, 64);
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_synthetic(&p, 7, "v", &w, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_varlen(w, "5:9,12,1:30", &e), SAGERUN_OK);
    const sagerun_problem *q = sagerun_workload_problem(w);
    assert_true(q->varlen && q->batch == 3 && q->seq_len == 12 && q->kv_len == 30);
    assert_true(q->total_q == 18 && q->total_kv == 51);
    sagerun_sequences s = {.struct_size = sizeof s};
    assert_int_equal(sagerun_workload_sequences(w, &s, &e), SAGERUN_OK);
    assert_true(s.count == 3 && s.cu_seqlens_q[1] == 5 && s.cu_seqlens_q[3] == 18);
    assert_true(s.cu_seqlens_kv[1] == 9 && s.cu_seqlens_kv[2] == 21 && s.cu_seqlens_kv[3] == 51);
    assert_null(s.block_table);
    assert_int_equal(sagerun_workload_set_paged(w, 8, &e), SAGERUN_OK);
    assert_true(q->page_size == 8 && q->pages == 2 + 2 + 4 && q->pages_per_seq == 4);
    /* the masks change over the lengths; the storage does not */
    sagerun_problem m = *q;
    m.causal = 1;
    m.align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    m.softcap = 20;
    assert_int_equal(sagerun_workload_set_problem(w, &m, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_problem(w)->total_kv, 51);
    m.total_kv = 50;
    assert_int_equal(sagerun_workload_set_problem(w, &m, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "sagerun_workload_set_varlen"));
    char *before = sagerun_workload_to_json(w, 0);
    /* failed changes leave it as it was */
    assert_int_equal(sagerun_workload_set_varlen(w, "4,0", &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "varlen: entry 1: '0'"));
    assert_int_equal(sagerun_workload_set_varlen(w, "random:5-2:1", &e), SAGERUN_INVALID_ARGUMENT);
    uint32_t zero[2] = {3, 0};
    assert_int_equal(sagerun_workload_set_lengths(w, zero, NULL, 2, &e), SAGERUN_INVALID_ARGUMENT);
    char *after = sagerun_workload_to_json(w, 0);
    assert_string_equal(before, after);
    free(after);
    assert_non_null(strstr(before, "\"varlen\":[\"5:9\",12,\"1:30\"]"));
    assert_non_null(strstr(before, "\"page_size\":8"));
    free(before);
    sagerun_workload_destroy(w);
}

/* The varlen and paged workload of the test above, with its masks. */
static sagerun_workload *varlen_paged(void)
{
    sagerun_problem p = sagerun_problem_make(3, 16, 2, 1, 64);
    p.causal = 1;
    p.align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    p.softcap = 20;
    sagerun_workload *w = NULL;
    assert_int_equal(sagerun_workload_synthetic(&p, 7, "v", &w, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_varlen(w, "5:9,12,1:30", NULL), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_paged(w, 8, NULL), SAGERUN_OK);
    return w;
}

/* Its inputs carry the lengths and a block table; a caller of ABI 0.1 changes only the fields it
 * has; a dense problem drops the lengths and pages. */
static void varlen_and_paged_inputs_and_changes(void **state)
{
    sagerun_workload *w = varlen_paged();
    sagerun_error e = {0};
    sagerun_context *ctx = host();
    sagerun_inputs *in = NULL;
    assert_int_equal(sagerun_workload_create_inputs(w, ctx, &in, &e), SAGERUN_OK);
    sagerun_sequences is = {.struct_size = sizeof is};
    assert_int_equal(sagerun_inputs_sequences(in, &is, &e), SAGERUN_OK);
    assert_int_equal(is.cu_seqlens_kv[3], 51);
    assert_non_null(is.block_table); /* drawn from the seed */
    sagerun_inputs_destroy(in);
    sagerun_context_destroy(ctx);
    sagerun_problem old = *sagerun_workload_problem(w);
    old.struct_size = (uint32_t)offsetof(sagerun_problem, kv_len);
    old.dtype = SAGERUN_DTYPE_BF16;
    assert_int_equal(sagerun_workload_set_problem(w, &old, &e), SAGERUN_OK);
    const sagerun_problem *q = sagerun_workload_problem(w);
    assert_true(q->dtype == SAGERUN_DTYPE_BF16 && q->varlen && q->total_kv == 51 && q->pages == 8);
    assert_true(q->softcap == 20 && q->struct_size == sizeof *q);
    sagerun_problem d = sagerun_problem_make(2, 16, 2, 1, 64);
    d.kv_len = 40;
    assert_int_equal(sagerun_workload_set_problem(w, &d, &e), SAGERUN_OK);
    sagerun_sequences s = {.struct_size = sizeof s};
    assert_int_equal(sagerun_workload_sequences(w, &s, &e), SAGERUN_OK);
    assert_null(s.cu_seqlens_q);
    char *after = sagerun_workload_to_json(w, 0);
    assert_non_null(strstr(after, "\"kv_len\":40"));
    assert_null(strstr(after, "varlen"));
    free(after);
    sagerun_workload_destroy(w);
}

/* NULL anywhere is an error; synthetic takes a dense problem (the lengths come after). */
static void varlen_and_paged_misuse(void **state)
{
    sagerun_problem d = sagerun_problem_make(2, 16, 2, 1, 64);
    sagerun_workload *w = NULL;
    sagerun_sequences s = {.struct_size = sizeof s};
    uint32_t zero[2] = {3, 0};
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_set_varlen(NULL, "4", &e), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_workload_set_paged(NULL, 4, &e), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_workload_set_lengths(NULL, zero, NULL, 1, NULL),
                     SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_workload_sequences(NULL, &s, &e), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_workload_synthetic(&d, 1, "n", &w, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_varlen(w, NULL, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "an empty SPEC"));
    assert_int_equal(sagerun_workload_set_lengths(w, NULL, NULL, 1, &e), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_workload_sequences(w, NULL, &e), SAGERUN_INVALID_ARGUMENT);
    sagerun_workload_destroy(w);
    d.varlen = 1;
    d.total_q = d.total_kv = 3;
    assert_int_equal(sagerun_workload_synthetic(&d, 7, "v", &w, &e), SAGERUN_INVALID_ARGUMENT);
    assert_null(w);
}

/* The workload's inputs are the generator's: the same bytes as sagerun_inputs_create_synthetic's
 * with the seed. Compared through their safetensors files (both written by the library). */
static void inputs_of_a_workload_are_the_generators(void **state)
{
    sagerun_context *ctx = host();
    sagerun_problem p = sagerun_problem_make(1, 32, 2, 1, 64);
    sagerun_workload *w = NULL;
    sagerun_inputs *a = NULL, *b = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_workload_synthetic(&p, 4242, NULL, &w, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_create_inputs(w, ctx, &a, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 4242, &b, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_write_safetensors(a, path_of("a.safetensors"), &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_write_safetensors(b, path_of("b.safetensors"), &e), SAGERUN_OK);
    char *x, *y;
    size_t nx, ny;
    assert_int_equal(sagerun_file_read(path_of("a.safetensors"), 1u << 24, &x, &nx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_file_read(path_of("b.safetensors"), 1u << 24, &y, &ny, &e), SAGERUN_OK);
    size_t want = (32 * 2 * 64 + 2 * 32 * 1 * 64) * 2; /* q, k, v in fp16 */
    assert_true(nx > want);
    assert_int_equal(nx, ny);
    assert_memory_equal(x, y, nx);
    free(x);
    free(y);
    sagerun_inputs_destroy(a);
    sagerun_inputs_destroy(b);
    sagerun_workload_destroy(w);
    sagerun_context_destroy(ctx);
}

/* Inputs written as safetensors come back as the same inputs: a workload of the file (its input
 * path, no seed), whose inputs write the same file again. */
static void written_inputs_read_back(void **state)
{
    sagerun_context *ctx = host();
    sagerun_problem p = sagerun_problem_make(1, 24, 4, 2, 64);
    p.layout = SAGERUN_LAYOUT_HND;
    sagerun_inputs *in = NULL, *again = NULL;
    sagerun_workload *w = NULL;
    sagerun_error e = {0};
    const char *f = path_of("qkv.safetensors"), *g = path_of("qkv2.safetensors");
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 3, &in, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_write_safetensors(in, f, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_load(f, &w, &e), SAGERUN_OK);
    assert_string_equal(sagerun_workload_input_path(w), f);
    assert_int_equal(sagerun_workload_seed(w), 0);
    const sagerun_problem *q = sagerun_workload_problem(w);
    assert_int_equal(q->layout, SAGERUN_LAYOUT_HND); /* from the file's __metadata__ */
    assert_int_equal(q->heads_q, 4);
    assert_int_equal(q->heads_kv, 2);
    assert_int_equal(q->seq_len, 24);
    assert_int_equal(sagerun_workload_set_seed(w, 1, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, f));
    assert_int_equal(sagerun_workload_create_inputs(w, ctx, &again, &e), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_write_safetensors(again, g, &e), SAGERUN_OK);
    char *x, *y;
    size_t nx, ny;
    assert_int_equal(sagerun_file_read(f, 1u << 24, &x, &nx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_file_read(g, 1u << 24, &y, &ny, &e), SAGERUN_OK);
    assert_int_equal(nx, ny);
    assert_memory_equal(x, y, nx);
    free(x);
    free(y);
    /* a workload that declares another shape than its file is refused, naming both */
    sagerun_problem other = *q;
    other.seq_len = 25;
    assert_int_equal(sagerun_workload_set_problem(w, &other, &e), SAGERUN_OK);
    sagerun_inputs *refused = NULL;
    assert_int_equal(sagerun_workload_create_inputs(w, ctx, &refused, &e), SAGERUN_FORMAT);
    assert_non_null(strstr(e.message, "N=25"));
    assert_non_null(strstr(e.message, "N=24"));
    assert_null(refused);
    sagerun_inputs_destroy(again);
    sagerun_inputs_destroy(in);
    sagerun_workload_destroy(w);
    sagerun_context_destroy(ctx);
}

/* The output written as the tensor "o" of a safetensors file: its data are the output's bytes. */
static void an_output_is_written_as_its_bytes(void **state)
{
    sagerun_context *ctx = host();
    sagerun_registry *reg = NULL;
    sagerun_inputs *in = NULL;
    sagerun_instance *inst = NULL;
    sagerun_error e = {0};
    char plugin[512];
    snprintf(plugin, sizeof plugin, "%s/reference.so", SAGERUN_TEST_PLUGINS);
    assert_int_equal(sagerun_registry_create(ctx, &reg, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, plugin, &e), SAGERUN_OK);
    long idx = sagerun_registry_find(reg, "reference");
    assert_true(idx >= 0);
    sagerun_problem p = sagerun_problem_make(1, 16, 2, 2, 64);
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 8, &in, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_create(reg, (size_t)idx, ctx, in, &inst, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_prepare(inst, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_OK);
    uint64_t bytes = 0, addr = sagerun_instance_output(inst, &bytes);
    assert_int_equal(bytes, 16 * 2 * 64 * 2);
    uint8_t *o = malloc(bytes);
    assert_int_equal(sagerun_mem_download(ctx, o, addr, bytes, &e), SAGERUN_OK);
    const char *f = path_of("o.safetensors");
    assert_int_equal(sagerun_instance_write_output(inst, f, &e), SAGERUN_OK);
    char *file;
    size_t n;
    assert_int_equal(sagerun_file_read(f, 1u << 24, &file, &n, &e), SAGERUN_OK);
    assert_true(n > bytes);
    assert_memory_equal(file + n - bytes, o, bytes); /* the data section is the output */
    assert_non_null(strstr(file + 8, "\"o\""));
    assert_non_null(strstr(file + 8, "[1,16,2,64]"));
    free(file);
    free(o);
    assert_int_equal(sagerun_instance_write_output(inst, path_of("none/o.safetensors"), &e),
                     SAGERUN_IO);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_default_is_the_seed_call),
        cmocka_unit_test(a_synthetic_workload_round_trips_through_json),
        cmocka_unit_test(bad_files_name_the_file_and_the_key),
        cmocka_unit_test(a_failed_change_leaves_the_workload_as_it_was),
        cmocka_unit_test(varlen_and_paged_workloads),
        cmocka_unit_test(varlen_and_paged_inputs_and_changes),
        cmocka_unit_test(varlen_and_paged_misuse),
        cmocka_unit_test(inputs_of_a_workload_are_the_generators),
        cmocka_unit_test(written_inputs_read_back),
        cmocka_unit_test(an_output_is_written_as_its_bytes),
    };
    return cmocka_run_group_tests(tests, api_test_make_dir, api_test_remove_dir);
}
