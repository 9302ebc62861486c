/* compare.h's additions as a client sees them (public headers, libsagerun.so), on the host
 * backend: the option words, a comparison on a workload, its report written (JSON, CSV) and read
 * back, what a report says about the whole comparison, a seed report's judgement derived, diffs
 * of many reports. */
#include <math.h>
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

__attribute__((noinline)) static char *slurp(const char *path)
{
    char *data = NULL;
    size_t n;
    assert_int_equal(sagerun_file_read(path, 1u << 26, &data, &n, NULL), SAGERUN_OK);
    return data;
}

static void option_words_both_ways(void **state)
{
    static const struct {
        const char *field, *word;
        int value;
    } cases[] = {{"schedule", "timed", SAGERUN_SCHEDULE_TIMED},
                 {"schedule", "fixed", SAGERUN_SCHEDULE_FIXED},
                 {"schedule", "seed", SAGERUN_SCHEDULE_SEED},
                 {"order", "interleave", SAGERUN_ORDER_INTERLEAVE},
                 {"order", "rotate", SAGERUN_ORDER_ROTATE},
                 {"timer", "auto", SAGERUN_TIMER_AUTO},
                 {"timer", "event", SAGERUN_TIMER_EVENT},
                 {"timer", "batch", SAGERUN_TIMER_BATCH},
                 {"timer", "graph", SAGERUN_TIMER_GRAPH},
                 {"cache", "hot", SAGERUN_CACHE_HOT},
                 {"cache", "cold", SAGERUN_CACHE_COLD}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(sagerun_compare_option_parse(cases[i].field, cases[i].word),
                         cases[i].value);
        assert_string_equal(sagerun_compare_option_word(cases[i].field, (uint32_t)cases[i].value),
                            cases[i].word);
    }
    assert_int_equal(sagerun_compare_option_parse("order", "zigzag"), -1);
    assert_int_equal(sagerun_compare_option_parse("colour", "hot"), -1);
    assert_int_equal(sagerun_compare_option_parse(NULL, "hot"), -1);
    assert_int_equal(sagerun_compare_option_parse("cache", NULL), -1);
    assert_null(sagerun_compare_option_word("cache", 2));
    assert_null(sagerun_compare_option_word("schedule", 3));
    assert_null(sagerun_compare_option_word("colour", 0));
}

/* reference against reference-mt on a small workload with metadata, fixed schedule. */
static sagerun_compare_result *compare_host_variant(uint32_t seq_len, const char *metadata,
                                                    const char *variant);
static sagerun_compare_result *compare_host(uint32_t seq_len, const char *metadata)
{
    return compare_host_variant(seq_len, metadata, "reference-mt");
}

/* reference against variant (a fake plugin's too) on a small synthetic workload */
static sagerun_compare_result *compare_host_variant(uint32_t seq_len, const char *metadata,
                                                    const char *variant)
{
    sagerun_context *ctx = NULL;
    sagerun_registry *reg = NULL;
    sagerun_workload *w = NULL;
    sagerun_compare_result *res = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_create(ctx, &reg, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, SAGERUN_TEST_PLUGINS, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, SAGERUN_TEST_FAKES "/fake_good.so", &e), SAGERUN_OK);
    sagerun_problem p = sagerun_problem_make(1, seq_len, 2, 2, 64);
    assert_int_equal(sagerun_workload_synthetic(&p, 11, "small", &w, &e), SAGERUN_OK);
    assert_int_equal(sagerun_workload_set_metadata(w, metadata, &e), SAGERUN_OK);
    sagerun_compare_options o;
    sagerun_compare_options_init(&o);
    const char *variants[] = {variant};
    o.baseline = "reference";
    o.variants = variants;
    o.variant_count = 1;
    o.schedule = SAGERUN_SCHEDULE_FIXED;
    o.warmup = 0;
    o.rounds = 3;
    o.iterations = 2;
    o.flags = SAGERUN_COMPARE_NO_CLOCKS;
    sagerun_status st = sagerun_compare_run_workload(reg, ctx, w, &o, &res, &e);
    if (st != SAGERUN_OK)
        fail_msg("compare_run_workload: %s", e.message);
    sagerun_workload_destroy(w);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
    return res;
}

static void a_comparison_on_a_workload_carries_its_metadata(void **state)
{
    sagerun_compare_result *res = compare_host(32, "{\"experiment\": \"api-test\"}");
    assert_int_equal(sagerun_compare_result_variant_count(res), 2);
    assert_true(sagerun_compare_result_all_ran(res));
    assert_true(sagerun_compare_result_all_byte_exact(res));
    sagerun_compare_info info = {.struct_size = sizeof info};
    assert_int_equal(sagerun_compare_result_info(res, &info, NULL), SAGERUN_OK);
    assert_int_equal(info.schema_version, SAGERUN_REPORT_SCHEMA_VERSION);
    assert_int_equal(info.q_shape_len, 4);
    assert_int_equal(info.q_shape[1], 32);
    assert_int_equal(info.rounds, 3);
    assert_int_equal(info.iterations, 2);
    assert_true(info.complete);
    assert_true(info.has_problem);
    assert_int_equal(info.problem.seq_len, 32);
    assert_string_equal(info.backend, "host");
    assert_true(fabs(info.noise_threshold_percent - 1.0) < 1e-12);
    assert_int_equal(sagerun_compare_result_write_json(res, path_of("r.json"), NULL, NULL),
                     SAGERUN_OK);
    char *json = slurp(path_of("r.json"));
    assert_non_null(strstr(json, "\"experiment\": \"api-test\""));
    free(json);
    /* an older caller's smaller struct gets only what it has */
    sagerun_compare_info old;
    memset(&old, 0x55, sizeof old);
    old.struct_size = offsetof(sagerun_compare_info, warmup);
    assert_int_equal(sagerun_compare_result_info(res, &old, NULL), SAGERUN_OK);
    assert_int_equal(old.q_shape[1], 32);
    assert_int_equal(*(const unsigned char *)&old.warmup, 0x55);
    old.struct_size = 2;
    assert_int_equal(sagerun_compare_result_info(res, &old, NULL), SAGERUN_INVALID_ARGUMENT);
    sagerun_compare_result_destroy(res);
}

static void a_report_reads_back_as_the_result(void **state)
{
    sagerun_compare_result *res = compare_host(32, NULL), *back = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_compare_result_write_json(res, path_of("a.json"), NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_compare_result_read(path_of("a.json"), &back, &e), SAGERUN_OK);
    assert_int_equal(sagerun_compare_result_variant_count(back), 2);
    for (size_t i = 0; i < 2; i++) {
        sagerun_compare_variant a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
        assert_int_equal(sagerun_compare_result_variant(res, i, &a, &e), SAGERUN_OK);
        assert_int_equal(sagerun_compare_result_variant(back, i, &b, &e), SAGERUN_OK);
        assert_string_equal(a.label, b.label);
        assert_string_equal(a.output_sha256, b.output_sha256);
        assert_true(a.timing.p50_s == b.timing.p50_s);
        assert_int_equal(a.round_count, 3);
        assert_int_equal(b.round_count, 3);
        assert_int_equal(b.sample_rounds, 3);
        assert_int_equal(b.samples_per_round, 2);
        const double *s;
        size_t n;
        assert_int_equal(sagerun_compare_result_samples(back, i, &s, &n, &e), SAGERUN_OK);
        assert_int_equal(n, (size_t)b.sample_rounds * b.samples_per_round);
        if (!b.is_baseline) {
            assert_true(isfinite(b.speedup_estimate_percent));
            assert_true(b.speedup_low_percent <= b.speedup_estimate_percent &&
                        b.speedup_estimate_percent <= b.speedup_high_percent);
        }
    }
    assert_true(sagerun_compare_result_all_byte_exact(back));
    sagerun_compare_result_destroy(back);
    /* a broken report (the seed's with "rounds": "x"): the file and the key */
    char *seed = slurp(SAGERUN_SOURCE_DIR "/test/data/seed-report.json");
    const char *key = "\"rounds\": 5,";
    size_t at = (size_t)(strstr(seed, key) - seed), n = strlen(seed);
    char *broken = malloc(n + 8);
    assert_non_null(broken);
    snprintf(broken, n + 8, "%.*s\"rounds\": \"x\",%s", (int)at, seed, seed + at + strlen(key));
    assert_int_equal(sagerun_file_write(path_of("bad.json"), broken, strlen(broken), &e),
                     SAGERUN_OK);
    free(broken);
    free(seed);
    back = (sagerun_compare_result *)1;
    assert_int_equal(sagerun_compare_result_read(path_of("bad.json"), &back, &e), SAGERUN_FORMAT);
    assert_null(back);
    assert_non_null(strstr(e.message, "bad.json"));
    assert_non_null(strstr(e.message, "rounds: expected a non-negative integer"));
    assert_int_equal(sagerun_compare_result_read(path_of("none.json"), &back, &e),
                     SAGERUN_NOT_FOUND);
    sagerun_compare_result_destroy(res);
}

static void csv_rows_after_the_callers_columns(void **state)
{
    sagerun_compare_result *res = compare_host(32, NULL);
    sagerun_error e = {0};
    assert_int_equal(sagerun_compare_result_write_csv(res, path_of("r.csv"), &e), SAGERUN_OK);
    char *csv = slurp(path_of("r.csv"));
    assert_memory_equal(csv, "variant,is_baseline,backend,", 28);
    assert_non_null(strstr(csv, "\nreference,"));
    assert_non_null(strstr(csv, "\nreference-mt,"));
    size_t lines = 0;
    for (const char *c = csv; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    free(csv);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const char *names[] = {"workload", "N"}, *values[] = {"w,1", "32"};
    sagerun_compare_csv_header(f, names, 2);
    sagerun_compare_result_csv_rows(res, f, values, 2);
    fclose(f);
    assert_memory_equal(text, "workload,N,variant,", 19);
    assert_non_null(strstr(text, "\n\"w,1\",32,reference,")); /* quoted where it holds a comma */
    free(text);
    assert_int_equal(sagerun_compare_result_write_csv(res, path_of("no/r.csv"), &e), SAGERUN_IO);
    sagerun_compare_result_destroy(res);
}

static void a_seed_report_gets_its_judgement_derived(void **state)
{
    sagerun_compare_result *r = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_compare_result_read(SAGERUN_SOURCE_DIR "/test/data/seed-report.json",
                                                 &r, &e),
                     SAGERUN_OK);
    sagerun_compare_info info = {.struct_size = sizeof info};
    assert_int_equal(sagerun_compare_result_info(r, &info, &e), SAGERUN_OK);
    assert_int_equal(info.schema_version, 0);
    assert_true(isnan(info.noise_threshold_percent));
    assert_int_equal(info.q_shape[1], 37810);
    assert_false(info.has_problem);
    sagerun_compare_variant v = {.struct_size = sizeof v};
    assert_int_equal(sagerun_compare_result_variant(r, 1, &v, &e), SAGERUN_OK);
    assert_non_null(v.label); /* the name (it was NULL: the seed's format has no labels) */
    assert_string_equal(v.label, v.name);
    assert_true(isnan(v.speedup_low_percent));
    assert_int_equal(v.verdict, SAGERUN_VERDICT_NONE);
    size_t warnings = sagerun_compare_result_warning_count(r);
    sagerun_compare_result_derive(r);
    assert_int_equal(sagerun_compare_result_variant(r, 1, &v, &e), SAGERUN_OK);
    assert_true(isfinite(v.speedup_low_percent) && isfinite(v.speedup_high_percent));
    assert_true(v.verdict != SAGERUN_VERDICT_NONE);
    assert_true(isfinite(v.tops));
    assert_true(sagerun_compare_result_warning_count(r) > warnings);
    assert_non_null(strstr(sagerun_compare_result_warning(r, warnings), "derived"));
    warnings = sagerun_compare_result_warning_count(r);
    sagerun_compare_result_derive(r); /* again: its warning once (it was added at every call) */
    assert_int_equal(sagerun_compare_result_warning_count(r), warnings);
    sagerun_compare_result_destroy(r);
    /* a report of ours is left as it is */
    sagerun_compare_result *ours = compare_host(32, NULL);
    warnings = sagerun_compare_result_warning_count(ours);
    sagerun_compare_result_derive(ours);
    assert_int_equal(sagerun_compare_result_warning_count(ours), warnings);
    sagerun_compare_result_destroy(ours);
}

static void a_diff_gathers_points(void **state)
{
    sagerun_compare_result *a = compare_host(32, NULL), *b = compare_host(32, NULL),
                           *other = compare_host(48, NULL);
    sagerun_diff *d = NULL;
    sagerun_error e = {0};
    sagerun_report_diff_options o;
    sagerun_report_diff_options_init(&o);
    o.threshold_percent = 1e5; /* two host runs: nothing is a regression at this threshold */
    assert_int_equal(sagerun_diff_create(&o, &d, &e), SAGERUN_OK);
    assert_int_equal(sagerun_diff_add(d, "n32", a, b, &e), SAGERUN_OK);
    assert_int_equal(sagerun_diff_findings(d), 0);
    assert_int_equal(sagerun_diff_add(d, "n48", a, other, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "not the same workload"));
    assert_int_equal(sagerun_diff_findings(d), 0);
    assert_int_equal(sagerun_diff_add_missing(d, "n64", "MISSING in new", &e), SAGERUN_OK);
    assert_int_equal(sagerun_diff_findings(d), SAGERUN_DIFF_MISSING);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sagerun_diff_print(d, f, 0);
    fclose(f);
    assert_non_null(strstr(text, "n32"));
    assert_non_null(strstr(text, "reference-mt"));
    assert_non_null(strstr(text, "MISSING in new"));
    free(text);
    assert_int_equal(sagerun_diff_write_json(d, path_of("d.json"), &e), SAGERUN_OK);
    char *json = slurp(path_of("d.json"));
    assert_non_null(strstr(json, "\"sagerun_diff\": 1"));
    assert_non_null(strstr(json, "\"point\": \"n64\""));
    assert_non_null(strstr(json, "\"missing\": true"));
    assert_non_null(strstr(json, "\"regression\": true")); /* a missing point is one */
    free(json);
    assert_int_equal(sagerun_diff_write_csv(d, path_of("d.csv"), &e), SAGERUN_OK);
    char *csv = slurp(path_of("d.csv"));
    assert_non_null(strstr(csv, "n64"));
    free(csv);
    assert_int_equal(sagerun_diff_write_markdown(d, path_of("d.md"), &e), SAGERUN_OK);
    sagerun_diff_destroy(d);
    /* relative: each variant over its own run's baseline, which is not judged itself */
    o.relative = 1;
    assert_int_equal(sagerun_diff_create(&o, &d, &e), SAGERUN_OK);
    assert_int_equal(sagerun_diff_add(d, "n32", a, b, &e), SAGERUN_OK);
    assert_int_equal(sagerun_diff_write_json(d, path_of("r.json"), &e), SAGERUN_OK);
    json = slurp(path_of("r.json"));
    assert_non_null(strstr(json, "\"relative\": true"));
    assert_non_null(strstr(json, "the baseline (relative: the others are judged against it)"));
    free(json);
    sagerun_diff_destroy(d);
    o.relative = 0;
    o.threshold_percent = -1;
    assert_int_equal(sagerun_diff_create(&o, &d, &e), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_diff_create(NULL, &d, &e), SAGERUN_OK); /* the defaults */
    sagerun_diff_destroy(d);
    sagerun_compare_result_destroy(a);
    sagerun_compare_result_destroy(b);
    sagerun_compare_result_destroy(other);
}

/* Tolerance limits: their errors, counts, and what applying them does to byte-exact variants
 * (nothing: they need none) and to limits naming no variant (a warning). Variants judged by their
 * limits are test_tolerance's (the rules) and test_python.sh's (end to end). */
static void tolerance_limits(void **state)
{
    sagerun_tolerance *t = NULL;
    sagerun_error e = {0};
    assert_int_equal(sagerun_tolerance_create(&t, &e), SAGERUN_OK);
    assert_int_equal(sagerun_tolerance_count(t, SAGERUN_TOLERANCE_MAX_ULP), 0);
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MAX_ULP, "2", &e), SAGERUN_OK);
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MIN_COS, "nosuch=0.5", &e),
                     SAGERUN_OK);
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MIN_COS, "2", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "--min-cos '2'"));
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MAX_ULP, "1.5", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sagerun_tolerance_add(t, 7, "1", &e), SAGERUN_INVALID_ARGUMENT);
    /* a second limit for the same label (or a second general one): which would win is no answer */
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MAX_ULP, "5", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "a second limit for every variant (the first: 2)"));
    assert_int_equal(sagerun_tolerance_add(t, SAGERUN_TOLERANCE_MIN_COS, "nosuch=0.7", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "a second limit for nosuch (the first: 0.5)"));
    assert_int_equal(sagerun_tolerance_count(t, SAGERUN_TOLERANCE_MAX_ULP), 1);
    assert_int_equal(sagerun_tolerance_count(t, SAGERUN_TOLERANCE_MIN_COS), 1);
    assert_int_equal(sagerun_tolerance_count(t, 7), 0);
    sagerun_compare_result *res = compare_host(32, NULL);
    size_t warnings = sagerun_compare_result_warning_count(res);
    sagerun_compare_result_apply_tolerance(res, t);
    assert_true(sagerun_compare_result_all_accepted(res));
    assert_int_equal(sagerun_compare_result_warning_count(res), warnings + 1);
    assert_non_null(strstr(sagerun_compare_result_warning(res, warnings), "nosuch"));
    sagerun_compare_variant v = {.struct_size = sizeof v};
    assert_int_equal(sagerun_compare_result_variant(res, 1, &v, &e), SAGERUN_OK);
    assert_true(v.byte_exact && v.accepted);
    sagerun_compare_result_destroy(res);
    /* applied again, the same warnings (each call added its own again); applied without limits,
     * no judgement left (an earlier acceptance stayed) */
    res = compare_host_variant(32, NULL, "fake-good"); /* not byte-exact */
    sagerun_tolerance *loose = NULL;
    assert_int_equal(sagerun_tolerance_create(&loose, &e), SAGERUN_OK);
    assert_int_equal(sagerun_tolerance_add(loose, SAGERUN_TOLERANCE_MIN_COS, "-1", &e), SAGERUN_OK);
    assert_int_equal(sagerun_tolerance_add(loose, SAGERUN_TOLERANCE_MAX_ULP, "nosuch=3", &e), SAGERUN_OK);
    assert_false(sagerun_compare_result_all_accepted(res));
    sagerun_compare_result_apply_tolerance(res, loose);
    assert_true(sagerun_compare_result_all_accepted(res));
    warnings = sagerun_compare_result_warning_count(res);
    sagerun_compare_result_apply_tolerance(res, loose);
    assert_int_equal(sagerun_compare_result_warning_count(res), warnings);
    sagerun_compare_result_apply_tolerance(res, NULL);
    assert_false(sagerun_compare_result_all_accepted(res));
    assert_int_equal(sagerun_compare_result_variant(res, 1, &v, &e), SAGERUN_OK);
    assert_false(v.accepted);
    sagerun_compare_result_destroy(res);
    sagerun_tolerance_destroy(loose);
    sagerun_tolerance_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(option_words_both_ways),
        cmocka_unit_test(a_comparison_on_a_workload_carries_its_metadata),
        cmocka_unit_test(a_report_reads_back_as_the_result),
        cmocka_unit_test(csv_rows_after_the_callers_columns),
        cmocka_unit_test(a_seed_report_gets_its_judgement_derived),
        cmocka_unit_test(a_diff_gathers_points),
        cmocka_unit_test(tolerance_limits),
    };
    return cmocka_run_group_tests(tests, api_test_make_dir, api_test_remove_dir);
}
