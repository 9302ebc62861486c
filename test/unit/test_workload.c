/* Workloads: the built-in default, JSON files (good and bad), safetensors inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safetensors.h"
#include "workload.h"

static void test_default_is_the_seed(void **state)
{
    (void)state;
    sr_workload w;
    sagerun_error err = {0};
    assert_int_equal(sr_workload_default(&w, &err), SAGERUN_OK);
    const sagerun_problem *p = &w.problem;
    assert_int_equal(p->batch, 1);
    assert_int_equal(p->seq_len, 37810);
    assert_int_equal(p->heads_q, 56);
    assert_int_equal(p->heads_kv, 56);
    assert_int_equal(p->head_dim, 128);
    assert_int_equal(p->layout, SAGERUN_LAYOUT_NHD);
    assert_int_equal(p->dtype, SAGERUN_DTYPE_F16);
    assert_int_equal(p->causal, 0);
    assert_int_equal(w.source, SR_WORKLOAD_SYNTHETIC);
    assert_int_equal(w.synthetic.seed, 440420);
    /* the metadata equals the seed report's, key for key */
    json_t *seed = json_load_file(SAGERUN_SOURCE_DIR "/test/data/seed-report.json", 0, NULL);
    if (!seed)
        seed = json_load_file(SAGERUN_SOURCE_DIR "/../shared/fixtures/seed-report.json", 0, NULL);
    assert_non_null(seed);
    assert_true(json_equal(w.metadata, json_object_get(seed, "metadata")));
    json_decref(seed);
    /* to_json makes every default explicit, and parses back to the same workload */
    json_t *j = sr_workload_to_json(&w);
    assert_non_null(j);
    assert_true(fabs(json_real_value(json_object_get(j, "sm_scale")) - 0.0883883461356163) < 1e-12);
    char *text = json_dumps(j, 0);
    sr_workload w2;
    assert_int_equal(sr_workload_parse(text, "round-trip", NULL, &w2, &err), SAGERUN_OK);
    json_t *j2 = sr_workload_to_json(&w2);
    assert_true(json_equal(j, j2));
    free(text);
    json_decref(j);
    json_decref(j2);
    sr_workload_free(&w2);
    sr_workload_free(&w);
}

static void test_full_file(void **state)
{
    (void)state;
    const char *text =
        "{\"name\": \"gqa\", \"shape\": [2, 1000, 8, 64], \"heads_kv\": 2, \"layout\": \"HND\","
        " \"dtype\": \"bf16\", \"causal\": false, \"sm_scale\": 0.1,"
        " \"input\": {\"source\": \"synthetic\", \"seed\": 7, \"k_bias\": 0, \"q_std\": 2,"
        " \"outlier_channels\": 4, \"outlier_scale\": 16},"
        " \"metadata\": {\"model\": \"x\", \"nested\": {\"a\": [1, 2]}}}";
    sr_workload w;
    sagerun_error err = {0};
    assert_int_equal(sr_workload_parse(text, "t.json", NULL, &w, &err), SAGERUN_OK);
    assert_string_equal(w.name, "gqa");
    assert_int_equal(w.problem.batch, 2);
    assert_int_equal(w.problem.heads_kv, 2);
    assert_int_equal(w.problem.layout, SAGERUN_LAYOUT_HND);
    assert_int_equal(w.problem.dtype, SAGERUN_DTYPE_BF16);
    assert_true(w.problem.sm_scale == 0.1f);
    /* a layout in any case, as the CLI's --layout hnd and dtypes (only "HND" was taken) */
    sr_workload lower;
    assert_int_equal(sr_workload_parse("{\"shape\": [1, 10, 2, 64], \"layout\": \"hnd\"}", "l.json",
                                       NULL, &lower, &err), SAGERUN_OK);
    assert_int_equal(lower.problem.layout, SAGERUN_LAYOUT_HND);
    sr_workload_free(&lower);
    assert_int_equal(w.synthetic.seed, 7);
    assert_true(w.synthetic.k_bias == 0.0 && w.synthetic.q_std == 2.0);
    assert_int_equal(w.synthetic.outlier_channels, 4);
    assert_non_null(json_object_get(json_object_get(w.metadata, "nested"), "a"));
    sr_workload_free(&w);
    /* minimal: only the shape; name from the file name */
    assert_int_equal(sr_workload_parse("{\"shape\": [1, 10, 2, 64]}", "dir/small.json", NULL, &w,
                                       &err),
                     SAGERUN_OK);
    assert_string_equal(w.name, "small");
    assert_int_equal(w.problem.heads_kv, 2);
    assert_int_equal(json_object_size(w.metadata), 0);
    assert_int_equal(w.problem.causal, 0);
    sr_workload_free(&w);
    /* causal: true is SageAttention's is_causal (q_len = kv_len), and round-trips */
    assert_int_equal(sr_workload_parse("{\"shape\": [1, 10, 2, 64], \"causal\": true}", "c.json",
                                       NULL, &w, &err),
                     SAGERUN_OK);
    assert_int_equal(w.problem.causal, 1);
    sr_workload_free(&w);
}

/* The parse must fail with a message naming the origin and containing `needle`. */
static void expect_error(const char *text, int status, const char *needle)
{
    sr_workload w;
    sagerun_error err = {0};
    int st = sr_workload_parse(text, "bad.json", NULL, &w, &err);
    if (st != status)
        fail_msg("status %d, expected %d for %s (%s)", st, status, text, err.message);
    if (!strstr(err.message, "bad.json") || !strstr(err.message, needle))
        fail_msg("message '%s' lacks the file or '%s'", err.message, needle);
}

static void test_bad_files(void **state)
{
    (void)state;
    expect_error("{\"shape\": [1, 10, 2, 64], \"hedas_kv\": 2}", SAGERUN_FORMAT,
                 "unknown key 'hedas_kv'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"input\": {\"seed\": 1, \"sed\": 2}}",
                 SAGERUN_FORMAT, "unknown key 'input.sed'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"heads_kv\": \"2\"}", SAGERUN_FORMAT,
                 "'heads_kv' must be an integer");
    expect_error("{\"shape\": [1, 10, 2.5, 64]}", SAGERUN_FORMAT, "shape[2] (Hq)");
    expect_error("{\"shape\": [1, 10, 2]}", SAGERUN_FORMAT, "'shape'");
    expect_error("{\"heads_kv\": 2}", SAGERUN_FORMAT, "'shape'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"causal\": 0}", SAGERUN_FORMAT,
                 "'causal' must be a boolean");
    expect_error("{\"shape\": [1, 10, 2, 64], \"layout\": \"NDH\"}", SAGERUN_FORMAT,
                 "unknown layout 'NDH'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"dtype\": \"fp32\"}", SAGERUN_FORMAT,
                 "unsupported dtype 'fp32'");
    expect_error("{\"shape\": [1, 10, 6, 64], \"heads_kv\": 4}", SAGERUN_FORMAT,
                 "not a multiple of heads_kv");
    expect_error("{\"shape\": [1, 10, 2, 64], \"sm_scale\": -1}", SAGERUN_FORMAT, "'sm_scale'");
    /* found by fuzzing: positive but 0 as a float, it would have meant the default D^-0.5 */
    expect_error("{\"shape\": [1, 10, 2, 64], \"sm_scale\": 1e-50}", SAGERUN_FORMAT,
                 "'sm_scale'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"sm_scale\": 1e39}", SAGERUN_FORMAT, "'sm_scale'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"metadata\": [1]}", SAGERUN_FORMAT, "'metadata'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"input\": {\"source\": \"random\"}}",
                 SAGERUN_FORMAT, "unknown source 'random'");
    expect_error("{\"shape\": [1, 10, 2, 64], \"input\": {\"k_bias\": \"big\"}}", SAGERUN_FORMAT,
                 "'input.k_bias' must be a number");
    expect_error("{\"shape\": [1, 10, 2, 64], \"input\": {\"k_bias\": 1000}}",
                 SAGERUN_INVALID_ARGUMENT, "k_bias");
    expect_error("{\"shape\": [1, 10, 2, 64], \"input\": {\"source\": \"safetensors\"}}",
                 SAGERUN_FORMAT, "'input.path'");
    expect_error("{\"shape\": [1, 10, 2, 64],}", SAGERUN_FORMAT, "not valid JSON");
    expect_error("[1, 10, 2, 64]", SAGERUN_FORMAT, "JSON object");
    expect_error("{\"shape\": [1, 10, 2, 64], \"name\": 3}", SAGERUN_FORMAT, "'name'");
}

static void test_load_file_and_inputs(void **state)
{
    (void)state;
    char dir[] = "/tmp/sagerun-wl-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], cmd[600];
    snprintf(path, sizeof path, "%s/w.json", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"shape\": [1, 16, 2, 8], \"input\": {\"source\": \"safetensors\", \"path\": "
               "\"qkv.safetensors\"}, \"metadata\": {\"k\": 1}}");
    fclose(f);
    snprintf(cmd, sizeof cmd, "cp '%s/test/data/tiny_qkv.safetensors' '%s/qkv.safetensors'",
             SAGERUN_SOURCE_DIR, dir);
    assert_int_equal(system(cmd), 0);
    sr_workload w;
    sagerun_error err = {0};
    assert_int_equal(sr_workload_load(path, &w, &err), SAGERUN_OK);
    assert_int_equal(w.source, SR_WORKLOAD_SAFETENSORS);
    char want[300];
    snprintf(want, sizeof want, "%s/qkv.safetensors", dir);
    assert_string_equal(w.input_path, want);
    /* inputs from the file equal the generator's (the file was written from it, seed 1) */
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    uint64_t a[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(sagerun_mem_alloc(ctx, 512, &a[i], &err), SAGERUN_OK);
    assert_int_equal(sr_workload_fill_inputs(ctx, &w, a[0], a[1], a[2], &err), SAGERUN_OK);
    sr_synthetic syn;
    sr_synthetic_default(&syn, 1);
    uint16_t ref[256];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sr_generate_tensor_host(&w.problem, &syn, i, ref, &err), SAGERUN_OK);
        assert_memory_equal((void *)(uintptr_t)a[i], ref, 512);
    }
    /* a workload whose shape disagrees with the file: the error names file and tensor */
    w.problem.seq_len = 15;
    assert_int_equal(sr_workload_fill_inputs(ctx, &w, a[0], a[1], a[2], &err), SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "qkv.safetensors"));
    assert_non_null(strstr(err.message, "'q'"));
    for (int i = 0; i < 3; i++)
        sagerun_mem_free(ctx, a[i]);
    sagerun_context_destroy(ctx);
    sr_workload_free(&w);

    /* the safetensors file itself as a workload */
    assert_int_equal(sr_workload_load(want, &w, &err), SAGERUN_OK);
    assert_int_equal(w.problem.seq_len, 16);
    assert_int_equal(w.problem.heads_q, 2);
    assert_int_equal(w.problem.head_dim, 8);
    assert_string_equal(w.name, "qkv");
    assert_string_equal(json_string_value(json_object_get(w.metadata, "layout")), "NHD");
    sr_workload_free(&w);

    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(sr_workload_load(path, &w, &err), SAGERUN_NOT_FOUND);
    assert_non_null(strstr(err.message, "missing.json"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ABI 0.2's keys: each parsed into the problem, written back only where not the default, and the
 * written file parses to the same workload (a "random:" varlen as its explicit lengths). */
static void test_problem_keys_round_trip(void **state)
{
    (void)state;
    const char *text =
        "{\"shape\": [3, 64, 4, 64], \"heads_kv\": 2, \"causal\": \"bottom-right\","
        " \"window\": [8, 0], \"softcap\": 30, \"varlen\": [\"16:64\", 7, \"5:9\"],"
        " \"page_size\": 16}";
    sr_workload w, back;
    sagerun_error err = {0};
    assert_int_equal(sr_workload_parse(text, "f.json", NULL, &w, &err), SAGERUN_OK);
    const sagerun_problem *p = &w.problem;
    assert_int_equal(p->causal, 1);
    assert_int_equal(p->align, SAGERUN_ALIGN_BOTTOM_RIGHT);
    assert_true(p->window && p->window_left == 8 && p->window_right == 0);
    assert_true(p->softcap == 30.0f);
    /* B and N: the count and the longest; kv_len the longest key length */
    assert_true(p->varlen && p->batch == 3 && p->seq_len == 16 && p->kv_len == 64);
    assert_true(p->total_q == 28 && p->total_kv == 80);
    assert_int_equal(w.cu_seqlens_kv[2], 71);
    /* pages: 4 + 1 + 1 of 16 keys; a column per page of the longest */
    assert_true(p->page_size == 16 && p->pages == 6 && p->pages_per_seq == 4);
    json_t *j = sr_workload_to_json(&w);
    char *out = json_dumps(j, JSON_PRESERVE_ORDER);
    assert_non_null(strstr(out, "\"causal\": \"bottom-right\""));
    assert_non_null(strstr(out, "\"varlen\": [\"16:64\", 7, \"5:9\"]"));
    assert_null(strstr(out, "kv_len")); /* a varlen workload's keys are its lengths */
    assert_int_equal(sr_workload_parse(out, "f.json", NULL, &back, &err), SAGERUN_OK);
    json_t *again = sr_workload_to_json(&back);
    assert_true(json_equal(j, again));
    assert_true(back.problem.sm_scale == 0.125f); /* written as the value used */
    back.problem.sm_scale = 0;
    assert_int_equal(memcmp(&back.problem, &w.problem, sizeof w.problem), 0);
    assert_memory_equal(back.cu_seqlens_q, w.cu_seqlens_q, sizeof(int32_t) * 4);
    assert_memory_equal(back.cu_seqlens_kv, w.cu_seqlens_kv, sizeof(int32_t) * 4);
    json_decref(again);
    json_decref(j);
    free(out);
    sr_workload_free(&back);
    sr_workload_free(&w);
    /* dense: kv_len written; defaults (causal false, no window...) not */
    assert_int_equal(sr_workload_parse("{\"shape\": [1, 16, 2, 64], \"kv_len\": 40, \"causal\":"
                                       " \"top-left\"}", "k.json", NULL, &w, &err),
                     SAGERUN_OK);
    j = sr_workload_to_json(&w);
    assert_int_equal(json_integer_value(json_object_get(j, "kv_len")), 40);
    assert_true(json_is_true(json_object_get(j, "causal"))); /* true: top-left, as before */
    assert_null(json_object_get(j, "window"));
    assert_null(json_object_get(j, "softcap"));
    assert_null(json_object_get(j, "varlen"));
    assert_null(json_object_get(j, "page_size"));
    json_decref(j);
    sr_workload_free(&w);
}

/* random:MIN-MAX:SEED: B lengths in [MIN, MAX], the same for the same seed, others for another;
 * MIN = MAX gives that length. */
static void test_random_lengths(void **state)
{
    (void)state;
    uint32_t *q, *kv, *q2, *kv2, n, n2;
    sagerun_error err = {0};
    assert_int_equal(sr_varlen_parse("random:5-40:7", 64, &q, &kv, &n, &err), SAGERUN_OK);
    assert_int_equal(n, 64);
    bool differ = false, low = false, high = false;
    for (uint32_t b = 0; b < n; b++) {
        assert_true(q[b] >= 5 && q[b] <= 40 && kv[b] == q[b]);
        differ |= q[b] != q[0];
        low |= q[b] < 12;
        high |= q[b] > 33;
    }
    assert_true(differ && low && high);
    assert_int_equal(sr_varlen_parse("random:5-40:7", 64, &q2, &kv2, &n2, &err), SAGERUN_OK);
    assert_memory_equal(q, q2, sizeof *q * n);
    free(q2);
    free(kv2);
    assert_int_equal(sr_varlen_parse("random:5-40:8", 64, &q2, &kv2, &n2, &err), SAGERUN_OK);
    assert_true(memcmp(q, q2, sizeof *q * n) != 0);
    free(q2);
    free(kv2);
    free(q);
    free(kv);
    /* the generator as sagerun/workload.h states it: splitmix64 from SEED = 0 */
    assert_int_equal(sr_varlen_parse("random:1-1000000:0", 1, &q, &kv, &n, &err), SAGERUN_OK);
    assert_int_equal(q[0], 1 + (uint32_t)(0xe220a8397b1dcdafull % 1000000));
    free(q);
    free(kv);
    assert_int_equal(sr_varlen_parse("random:9-9:3", 2, &q, &kv, &n, &err), SAGERUN_OK);
    assert_true(q[0] == 9 && q[1] == 9);
    free(q);
    free(kv);
}

static void expect_spec_error(const char *spec, const char *needle)
{
    uint32_t *q = NULL, *kv = NULL, n = 0;
    sagerun_error err = {0};
    if (sr_varlen_parse(spec, 2, &q, &kv, &n, &err) == SAGERUN_OK)
        fail_msg("varlen '%s' was taken", spec);
    if (!strstr(err.message, needle))
        fail_msg("varlen '%s': message '%s' lacks '%s'", spec, err.message, needle);
    assert_null(q);
}

static void test_bad_problem_keys(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"\"kv_len\": 0", "key 'kv_len': 0: expected an integer from 1"},
        {"\"kv_len\": 2.5", "key 'kv_len': 2.5"},
        {"\"window\": [-2, 3]", "key 'window': [-2,3]: expected [L, R]"},
        {"\"window\": [1]", "key 'window': [1]"},
        {"\"softcap\": -1", "key 'softcap': -1: expected a finite number >= 0"},
        {"\"softcap\": \"x\"", "key 'softcap': \"x\""},
        {"\"causal\": \"middle\"", "'causal' must be a boolean, \"top-left\" or \"bottom-right\""},
        {"\"varlen\": \"\"", "key 'varlen': '': an empty SPEC"},
        {"\"varlen\": []", "key 'varlen' must be a non-empty array"},
        {"\"varlen\": [0, 5]", "key 'varlen[0]': '0': expected a length or Q:K"},
        {"\"varlen\": [4, \"3:\"]", "key 'varlen[1]': '3:'"},
        {"\"varlen\": [4, true]", "key 'varlen[1]': expected a length"},
        {"\"varlen\": \"random:9-3:1\"", "key 'varlen': 'random:9-3:1': random: MIN 9 is more"},
        {"\"varlen\": [3], \"layout\": \"HND\"", "key 'varlen': varlen tensors are NHD only"},
        {"\"varlen\": [3], \"kv_len\": 4", "key 'kv_len' with 'varlen'"},
        {"\"page_size\": 0", "key 'page_size': 0: expected an integer from 1"},
        {"\"page_size\": 4, \"layout\": \"HND\"", "key 'page_size': 4: paged tensors are NHD"},
        {"\"kv_len\": 4, \"input\": {\"source\": \"safetensors\", \"path\": \"x.safetensors\"}",
         "key 'kv_len' applies to synthetic inputs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"shape\": [1, 16, 2, 64], %s}", cases[i][0]);
        expect_error(text, SAGERUN_FORMAT, cases[i][1]);
    }
    /* the problem's own check (sagerun_problem_check), the file named */
    expect_error("{\"shape\": [1, 16, 2, 64], \"window\": [0, 3], \"causal\": true}",
                 SAGERUN_INVALID_ARGUMENT, "window right 3 with causal");
    expect_spec_error("", "an empty SPEC");
    expect_spec_error("0,5", "entry 0: '0'");
    expect_spec_error("3,", "entry 1: ''");
    expect_spec_error("3:", "entry 0: '3:'");
    expect_spec_error("1:2:3", "entry 0: '1:2:3'");
    expect_spec_error("1073741825", "from 1 to 1073741824");
    expect_spec_error("-4", "entry 0: '-4'");
    expect_spec_error("random:9-3:1", "MIN 9 is more than MAX 3");
    expect_spec_error("random:0-3:1", "expected random:MIN-MAX:SEED");
    expect_spec_error("random:1-3", "expected random:MIN-MAX:SEED");
    expect_spec_error("random:1-3:x", "expected random:MIN-MAX:SEED");
}

/* A failed change leaves the workload as it was: lengths summing past int32, a paged cache of
 * HND tensors. */
static void test_failed_sequences_change_nothing(void **state)
{
    (void)state;
    sr_workload w;
    sagerun_error err = {0};
    assert_int_equal(sr_workload_parse("{\"shape\": [1, 16, 2, 64], \"varlen\": [5, 7]}", "v.json",
                                       NULL, &w, &err),
                     SAGERUN_OK);
    sagerun_problem before = w.problem;
    int32_t *cu = w.cu_seqlens_q;
    uint32_t big[3] = {1u << 30, 1u << 30, 1u << 30};
    assert_int_equal(sr_workload_set_lengths(&w, big, NULL, 3, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "2^31 - 1"));
    assert_int_equal(sr_workload_set_paged(&w, 1u << 31, &err), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(memcmp(&before, &w.problem, sizeof before), 0);
    assert_ptr_equal(cu, w.cu_seqlens_q);
    assert_int_equal(sr_workload_set_paged(&w, 4, &err), SAGERUN_OK);
    assert_int_equal(w.problem.pages, 2 + 2);
    assert_int_equal(sr_workload_set_paged(&w, 0, &err), SAGERUN_OK); /* dense again */
    assert_true(w.problem.page_size == 0 && w.problem.pages == 0 && w.problem.pages_per_seq == 0);
    sr_workload_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_is_the_seed),
        cmocka_unit_test(test_full_file),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_load_file_and_inputs),
        cmocka_unit_test(test_problem_keys_round_trip),
        cmocka_unit_test(test_random_lengths),
        cmocka_unit_test(test_bad_problem_keys),
        cmocka_unit_test(test_failed_sequences_change_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
