/* Reports: our JSON has every key of the seed report with the same JSON type (recursively), the
 * seed file reads back and renders, malformed reports give errors naming file and key, files are
 * written atomically, and diff finds regressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge.h"
#include "report.h"

#ifndef SAGERUN_SOURCE_DIR
#define SAGERUN_SOURCE_DIR "."
#endif
#define SEED_REPORT SAGERUN_SOURCE_DIR "/test/data/seed-report.json"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sagerun-test-report-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(tmpdir);
    return 0;
}

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static json_t *load_json(const char *path)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (!j)
        fail_msg("%s: %s", path, jerr.text);
    return j;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A report as a comparison fills it: two variants, every extension present. */
static void make_report(sr_report *r)
{
    memset(r, 0, sizeof *r);
    r->metadata = json_pack("{s:i, s:s}", "seed", 440420, "attention", "sage2");
    r->source_commit = strdup("0123456789ab");
    r->reference_sha256 = strdup("4c666c20f5f8f651158a2ced33ccff08f3bada07665c595b99008d171db30574");
    r->q_shape_len = 4;
    r->q_shape[0] = 1, r->q_shape[1] = 256, r->q_shape[2] = 2, r->q_shape[3] = 128;
    r->has_scheduler = true;
    r->scheduler = (sagerun_launch_geometry){sizeof(sagerun_launch_geometry), 128, 64, 32, 64,
                                             128, 32768, 4};
    r->rounds = 2, r->warmup = 3, r->iterations = 3;
    r->has_ext = true;
    r->schema_version = SAGERUN_REPORT_SCHEMA_VERSION;
    r->tool_version = strdup("0.1.0");
    r->tool_commit = strdup("0123456789ab");
    r->created_utc = strdup("2025-01-01T00:00:00Z");
    r->device_name = strdup("host");
    r->backend = strdup("host");
    r->compute_capability = 0, r->driver_version = 0, r->multiprocessors = 2;
    r->has_problem = true;
    r->problem = sagerun_problem_make(1, 256, 2, 2, 128);
    r->problem.sm_scale = sagerun_problem_sm_scale(&r->problem);
    r->noise_threshold_percent = 1.0;
    r->clock_source = strdup("nvml");
    r->max_sm_clock_mhz = 1980;
    r->clock_round_count = 2;
    r->clock_rounds = calloc(2, sizeof *r->clock_rounds);
    r->clock_rounds[0] = (sr_clock_sample){1980, 45, true, 0x0};
    r->clock_rounds[1] = (sr_clock_sample){1755, 61, true, 0x24}; /* sw power cap + thermal */
    sr_report_add_warning(r, "the GPU was throttling");
    r->variant_count = 2;
    r->variants = calloc(2, sizeof *r->variants);
    const double samples[2][6] = {{1.0, 1.1, 1.2, 1.0, 1.05, 1.1}, {0.5, 0.6, 0.55, 0.5, 0.52, 0.6}};
    for (int i = 0; i < 2; i++) {
        sr_report_variant *v = &r->variants[i];
        v->name = strdup(i ? "fast" : "baseline");
        v->label = strdup(v->name);
        v->path = strdup(i ? "/p/fast.so" : "/p/baseline.so");
        v->version = strdup("1.0.0");
        v->backend = strdup("host");
        v->plugin_sha256 = strdup("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        v->is_baseline = i == 0;
        v->output_sha256 = strdup(r->reference_sha256);
        v->last_output_sha256 = strdup(r->reference_sha256);
        v->byte_exact = i == 0;
        v->deterministic = 1;
        sr_summarize(samples[i], 6, NULL, &v->timing);
        v->round_count = 2;
        v->rounds = calloc(2, sizeof *v->rounds);
        sr_summarize(samples[i], 3, NULL, &v->rounds[0]);
        sr_summarize(samples[i] + 3, 3, NULL, &v->rounds[1]);
        v->speedup_percent = i ? sr_speedup_percent(r->variants[0].timing.p50, v->timing.p50) : 0.0;
        v->has_scheduler = true;
        v->scheduler = r->scheduler;
        v->prepare_s = 0.001;
        v->tops = 1.5;
        v->accuracy = (sr_accuracy){true, 512, 65536, 0, 0.9993, 0.037, 1e-3, 2e-2, "fp64-host"};
        if (i) {
            const double b[] = {r->variants[0].rounds[0].p50, r->variants[0].rounds[1].p50};
            const double x[] = {v->rounds[0].p50, v->rounds[1].p50};
            v->interval = sr_paired_speedup_interval(b, x, 2);
            v->verdict = sr_judge_verdict(&v->interval, 1.0);
            v->byte_diff = (sr_byte_diff){true, 65536, 12, 7, 3, 0.0009765625};
        }
        v->how = (sr_variant_timing){.present = true, .timer = "event", .calls_per_sample = 1,
                                     .warmup_calls = 3, .first_call_s = 2e-5, .warm_call_s = 2e-5,
                                     .clock_mhz = NAN, .energy_per_call_j = NAN,
                                     .mean_power_w = NAN, .host_call_s = 4e-6,
                                     .launch_gap_s = i ? 7.5e-7 : NAN,
                                     .seed_speedup_percent = NAN};
    }
}

/* Every key of `seed` is in `ours` with the same JSON type; arrays of objects are checked
 * element by element against the seed's first element. */
static void check_schema(json_t *seed, json_t *ours, const char *path)
{
    if (json_typeof(seed) != json_typeof(ours) && !(json_is_boolean(seed) && json_is_boolean(ours)))
        fail_msg("%s: seed has JSON type %d, ours %d", path, json_typeof(seed), json_typeof(ours));
    char sub[256];
    if (json_is_object(seed)) {
        if (strcmp(path, "metadata") == 0)
            return; /* the workload's own object: free-form */
        const char *key;
        json_t *value;
        json_object_foreach(seed, key, value) {
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
            json_t *mine = json_object_get(ours, key);
            if (!mine)
                fail_msg("%s: missing from our report", sub);
            check_schema(value, mine, sub);
        }
    } else if (json_is_array(seed) && json_array_size(seed) > 0) {
        assert_true(json_array_size(ours) > 0);
        for (size_t i = 0; i < json_array_size(ours); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            check_schema(json_array_get(seed, 0), json_array_get(ours, i), sub);
        }
    }
}

static void test_schema_matches_seed(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r);
    json_t *ours = sr_report_to_json(&r);
    assert_non_null(ours);
    json_t *seed = load_json(SEED_REPORT);
    check_schema(seed, ours, "");
    /* the seed's keys come first, in its order, then ours */
    const char *seed_order[] = {"metadata", "source_commit", "reference_output_sha256", "q_shape",
                                "scheduler", "rounds", "warmup", "iterations_per_round",
                                "variants"};
    void *it = json_object_iter(ours);
    for (size_t i = 0; i < sizeof seed_order / sizeof seed_order[0]; i++) {
        assert_non_null(it);
        assert_string_equal(json_object_iter_key(it), seed_order[i]);
        it = json_object_iter_next(ours, it);
    }
    assert_string_equal(json_object_iter_key(it), "schema_version");
    json_decref(seed);
    json_decref(ours);
    sr_report_clear(&r);
}

static void test_roundtrip(void **state)
{
    (void)state;
    sr_report r, back;
    make_report(&r);
    sagerun_error err = {0};
    assert_int_equal(sr_report_write_json(&r, tmp_path("r.json"), &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(tmp_path("r.json"), &back, &err), SAGERUN_OK);
    assert_true(back.has_ext);
    assert_int_equal(back.variant_count, 2);
    assert_true(back.variants[0].is_baseline && !back.variants[1].is_baseline);
    assert_true(back.variants[1].timing.p50 == r.variants[1].timing.p50);
    assert_true(back.variants[1].rounds[1].p99 == r.variants[1].rounds[1].p99);
    assert_true(back.variants[1].speedup_percent == r.variants[1].speedup_percent);
    assert_true(back.variants[1].interval.valid);
    assert_true(back.variants[1].interval.low == r.variants[1].interval.low);
    assert_int_equal(back.variants[1].verdict, r.variants[1].verdict);
    assert_int_equal(back.variants[1].byte_exact, 0);
    assert_int_equal(back.variants[1].byte_diff.differing, 12);
    assert_int_equal(back.variants[1].byte_diff.max_ulp, 3);
    assert_true(back.variants[0].accuracy.present);
    assert_true(back.variants[0].accuracy.cosine == 0.9993);
    assert_int_equal(back.clock_round_count, 2);
    assert_int_equal(back.clock_rounds[1].sm_clock_mhz, 1755);
    assert_int_equal(back.clock_rounds[1].throttle_reasons, 0x24);
    assert_int_equal(back.warning_count, 1);
    assert_int_equal(back.problem.head_dim, 128);
    assert_true(json_equal(back.metadata, r.metadata));
    /* a cold sample's launch gap (kernel timestamps): kept, and null stays null */
    assert_true(back.variants[1].how.launch_gap_s == 7.5e-7);
    assert_true(isnan(back.variants[0].how.launch_gap_s));
    /* written and read again: the same JSON */
    json_t *a = sr_report_to_json(&r), *b = sr_report_to_json(&back);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    sr_report_clear(&back);
    sr_report_clear(&r);
    /* no temporary file left behind */
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while ((e = readdir(d)))
        assert_null(strstr(e->d_name, ".tmp."));
    closedir(d);
}

/* The seed file reads back, and written out again (no extensions) it is the same JSON. */
static void test_seed_reads_and_renders(void **state)
{
    (void)state;
    sr_report r;
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(SEED_REPORT, &r, &err), SAGERUN_OK);
    assert_false(r.has_ext);
    assert_int_equal(r.variant_count, 2);
    assert_string_equal(r.variants[1].name, "interleave-softmax");
    assert_true(r.variants[0].is_baseline);
    assert_int_equal(r.variants[1].round_count, 5);
    assert_true(r.variants[1].speedup_percent == -0.015880643112875514);
    assert_int_equal(r.scheduler.grid_ctas, 16576);
    json_t *seed = load_json(SEED_REPORT), *again = sr_report_to_json(&r);
    assert_true(json_equal(seed, again));
    json_decref(seed);
    json_decref(again);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sr_report_print_table(&r, f);
    fclose(f);
    assert_non_null(strstr(buf, "interleave-softmax"));
    assert_non_null(strstr(buf, "243.919 ms"));
    assert_non_null(strstr(buf, "-0.02%"));
    assert_non_null(strstr(buf, "(baseline)"));
    free(buf);
    f = open_memstream(&buf, &len);
    sr_report_print_markdown(&r, f);
    fclose(f);
    assert_non_null(strstr(buf, "| interleave-softmax |"));
    free(buf);
    sr_report_clear(&r);
}

/* Malformed reports: the error names the file and the key. */
static void expect_error(const char *text, int status, const char *needle)
{
    const char *path = tmp_path("bad.json");
    write_text(path, text);
    sr_report r;
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(path, &r, &err), status);
    assert_int_equal(err.status, status);
    if (!strstr(err.message, path) || !strstr(err.message, needle))
        fail_msg("error \"%s\" should name %s and say \"%s\"", err.message, path, needle);
    assert_null(r.variants);
}

static char *seed_with(const char *key_path, json_t *value)
{
    json_t *seed = load_json(SEED_REPORT);
    json_t *obj = seed;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", key_path);
    char *save = NULL, *tok = strtok_r(buf, ".", &save), *next;
    for (; (next = strtok_r(NULL, ".", &save)); tok = next) {
        char *br = strchr(tok, '[');
        if (br) {
            *br = '\0';
            obj = json_array_get(json_object_get(obj, tok), strtoul(br + 1, NULL, 10));
        } else {
            obj = json_object_get(obj, tok);
        }
    }
    if (value)
        json_object_set_new(obj, tok, value);
    else
        json_object_del(obj, tok);
    char *text = json_dumps(seed, 0);
    json_decref(seed);
    return text;
}

static void test_malformed_reports(void **state)
{
    (void)state;
    expect_error("{\"metadata\": ", SAGERUN_FORMAT, "not valid JSON");
    expect_error("[1, 2]", SAGERUN_FORMAT, "expected a JSON object");
    char *t;
    t = seed_with("variants", NULL);
    expect_error(t, SAGERUN_FORMAT, "variants: missing");
    free(t);
    t = seed_with("variants[1].timing.p50_s", json_string("fast"));
    expect_error(t, SAGERUN_FORMAT, "variants[1].timing.p50_s: expected a number");
    free(t);
    t = seed_with("variants[0].rounds", json_object());
    expect_error(t, SAGERUN_FORMAT, "variants[0].rounds: expected an array");
    free(t);
    t = seed_with("variants[0].byte_exact", json_integer(1));
    expect_error(t, SAGERUN_FORMAT, "variants[0].byte_exact: expected a boolean");
    free(t);
    t = seed_with("scheduler.grid_ctas", json_integer(-1));
    expect_error(t, SAGERUN_FORMAT, "scheduler.grid_ctas: expected a non-negative integer");
    free(t);
    t = seed_with("warmup", json_real(3.5));
    expect_error(t, SAGERUN_FORMAT, "warmup: expected a non-negative integer");
    free(t);

    sr_report r;
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(tmp_path("does-not-exist.json"), &r, &err), SAGERUN_NOT_FOUND);
    assert_non_null(strstr(err.message, "does-not-exist.json"));
}

static void test_bad_extension_named(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r);
    json_t *j = sr_report_to_json(&r);
    json_object_set_new(json_array_get(json_object_get(j, "variants"), 1), "verdict",
                        json_string("quicker"));
    json_dump_file(j, tmp_path("ext.json"), 0);
    json_decref(j);
    sr_report_clear(&r);
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(tmp_path("ext.json"), &r, &err), SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "variants[1].verdict: unknown verdict \"quicker\""));
}

/* A launch gap that is not a number is named with its place in the file. */
static void test_bad_launch_gap_named(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r);
    json_t *j = sr_report_to_json(&r);
    json_t *how = json_object_get(json_array_get(json_object_get(j, "variants"), 1), "measurement");
    assert_non_null(json_object_get(how, "launch_gap_s"));
    json_object_set_new(how, "launch_gap_s", json_string("0.75 us"));
    json_dump_file(j, tmp_path("gap.json"), 0);
    json_decref(j);
    sr_report_clear(&r);
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(tmp_path("gap.json"), &r, &err), SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "variants[1].measurement.launch_gap_s"));
    assert_non_null(strstr(err.message, "expected a number or null"));
}

/* measurement.order_seed: kept as written, null stays null, anything but 16 lowercase hex digits
 * is named with its place in the file. */
static void test_order_seed(void **state)
{
    (void)state;
    sr_report r, back;
    make_report(&r);
    r.measurement = (sr_measurement_info){.present = true, .schedule = "timed",
                                          .order = "interleave", .cache = "hot", .end = "budget",
                                          .target_half_width = 0.05, .max_time_s = 8,
                                          .elapsed_s = 1, .half_width = 0.1, .min_rounds = 20,
                                          .max_rounds = 2000, .launch_floor_s = NAN,
                                          .order_seed = "00ff12ab34cd56ef"};
    sagerun_error err = {0};
    assert_int_equal(sr_report_write_json(&r, tmp_path("seed.json"), &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(tmp_path("seed.json"), &back, &err), SAGERUN_OK);
    assert_string_equal(back.measurement.order_seed, "00ff12ab34cd56ef");
    sr_report_clear(&back);
    static const char *const bad[] = {"00FF12AB34CD56EF", "00ff12ab34cd56e", "00ff12ab34cd56ef0",
                                      "00ff12ab34cd56eg", ""};
    for (size_t i = 0; i <= sizeof bad / sizeof *bad; i++) {
        json_t *j = sr_report_to_json(&r);
        json_t *m = json_object_get(j, "measurement");
        json_object_set_new(m, "order_seed", i < sizeof bad / sizeof *bad ? json_string(bad[i])
                                                                           : json_null());
        json_dump_file(j, tmp_path("seed.json"), 0);
        json_decref(j);
        int st = sr_report_read(tmp_path("seed.json"), &back, &err);
        if (i == sizeof bad / sizeof *bad) { /* null */
            assert_int_equal(st, SAGERUN_OK);
            assert_string_equal(back.measurement.order_seed, "");
            sr_report_clear(&back);
            continue;
        }
        assert_int_equal(st, SAGERUN_FORMAT);
        assert_non_null(strstr(err.message, "measurement.order_seed"));
        assert_non_null(strstr(err.message, "16 lowercase hex digits"));
    }
    sr_report_clear(&r);
}

static void test_atomic_write_failure(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r);
    sagerun_error err = {0};
    assert_int_equal(sr_report_write_json(&r, "/nonexistent-dir/r.json", &err), SAGERUN_IO);
    assert_non_null(strstr(err.message, "/nonexistent-dir/r.json"));
    assert_int_equal(sr_report_write_markdown(&r, tmp_path("r.md"), &err), SAGERUN_OK);
    sr_report_clear(&r);
}

/* The driver's own version from the kernel module's text (the fallback when NVML is absent). */
static void test_driver_release_parse(void **state)
{
    (void)state;
    char buf[32];
    assert_true(sr_nvidia_proc_version_parse(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
        "(dvs-builder@U22-I3-AF03-09-1)  Thu Oct  9 2025\nGCC version:  gcc version 12.2.0\n",
        buf, sizeof buf));
    assert_string_equal(buf, "580.159.04");
    assert_true(sr_nvidia_proc_version_parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
                                             "535.54.03  Tue Jun  6 22:20:39 UTC 2023",
                                             buf, sizeof buf));
    assert_string_equal(buf, "535.54.03");
    assert_false(sr_nvidia_proc_version_parse("", buf, sizeof buf));
    assert_false(sr_nvidia_proc_version_parse("NVRM version: Kernel Module  beta", buf, sizeof buf));
    char tiny[4];
    assert_false(sr_nvidia_proc_version_parse("Kernel Module 580.159.04", tiny, sizeof tiny));
}

static char *header_text(const sr_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sr_report_print_table(r, f);
    fclose(f);
    return text;
}

/* GPU fields only in a GPU report: the CUDA API version and the driver's own version side by
 * side; a host report has no compute capability, multiprocessors or driver. */
static void test_device_fields(void **state)
{
    (void)state;
    sr_report r, back;
    make_report(&r);
    json_t *j = sr_report_to_json(&r), *dev = json_object_get(j, "device");
    assert_int_equal(json_object_size(dev), 2); /* name, backend */
    assert_null(json_object_get(dev, "compute_capability"));
    assert_null(json_object_get(dev, "multiprocessors"));
    assert_null(json_object_get(dev, "driver_version"));
    json_decref(j);

    free(r.backend);
    r.backend = strdup("cuda");
    r.compute_capability = 90, r.driver_version = 13000, r.multiprocessors = 132;
    r.driver_release = strdup("580.159.04");
    /* a GPU report names its card: null where NVML or the driver did not say */
    j = sr_report_to_json(&r);
    dev = json_object_get(j, "device");
    assert_true(json_is_null(json_object_get(dev, "uuid")));
    assert_true(json_is_null(json_object_get(dev, "pci_bus_id")));
    json_decref(j);
    r.device_uuid = strdup("GPU-8f2c1a4e-0000-1111-2222-333344445555");
    r.pci_bus_id = strdup("00000000:19:00.0");
    sagerun_error err = {0};
    assert_int_equal(sr_report_write_json(&r, tmp_path("gpu.json"), &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(tmp_path("gpu.json"), &back, &err), SAGERUN_OK);
    assert_string_equal(back.driver_release, "580.159.04");
    assert_string_equal(back.device_uuid, "GPU-8f2c1a4e-0000-1111-2222-333344445555");
    assert_string_equal(back.pci_bus_id, "00000000:19:00.0");
    assert_int_equal(back.driver_version, 13000);
    assert_int_equal(back.multiprocessors, 132);
    char *text = header_text(&back);
    assert_non_null(strstr(text, "(sm_90, CUDA 13.0, driver 580.159.04, PCI 00000000:19:00.0)"));
    free(text);
    sr_report_clear(&back);
    sr_report_clear(&r);
}

/* The seed's format has no tolerance and no completion: its variants read as judged by no
 * tolerance (not as failing one, with an empty reason) and the report as complete. */
static void test_seed_defaults(void **state)
{
    (void)state;
    sr_report r;
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(SEED_REPORT, &r, &err), SAGERUN_OK);
    assert_false(r.incomplete);
    assert_int_equal(r.rounds_completed, r.rounds);
    for (size_t i = 0; i < r.variant_count; i++) {
        assert_false(r.variants[i].tolerance.present);
        assert_int_equal(r.variants[i].tolerance.passed, -1);
    }
    r.variants[1].byte_exact = 0; /* not byte-exact: still no tolerance to pass or fail */
    char *text = header_text(&r);
    if (strstr(text, "tolerance") || strstr(text, "tol."))
        fail_msg("the seed's table names a tolerance:\n%s", text);
    free(text);
    sr_report_clear(&r);
}

/* make_report's JSON with problem.KEY set to value (NULL: removed), read back. */
static sagerun_status read_problem_with(const char *key, json_t *value, sr_report *back,
                                        sagerun_error *err)
{
    sr_report r;
    make_report(&r);
    json_t *j = sr_report_to_json(&r), *p = json_object_get(j, "problem");
    sr_report_clear(&r);
    if (value)
        json_object_set_new(p, key, value);
    else
        json_object_del(p, key);
    json_dump_file(j, tmp_path("problem.json"), 0);
    json_decref(j);
    return sr_report_read(tmp_path("problem.json"), back, err);
}

/* problem: the words sagerun writes (layout NHD, HND; dtype fp16, bf16, and F16, BF16 of older
 * reports) and sizes from 1 to 2^32-1; anything else is named, not read as the default (show
 * and diff took "fp8" for fp16, "hnd" for NHD and 2^32+1 heads for 1). */
static void test_problem_fields(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        uint32_t dtype;
    } dtypes[] = {{"fp16", SAGERUN_DTYPE_F16}, {"bf16", SAGERUN_DTYPE_BF16},
                  {"F16", SAGERUN_DTYPE_F16}, {"BF16", SAGERUN_DTYPE_BF16}};
    sr_report back;
    sagerun_error err = {0};
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        assert_int_equal(read_problem_with("dtype", json_string(dtypes[i].word), &back, &err),
                         SAGERUN_OK);
        assert_int_equal(back.problem.dtype, dtypes[i].dtype);
        sr_report_clear(&back);
    }
    assert_int_equal(read_problem_with("layout", json_string("HND"), &back, &err), SAGERUN_OK);
    assert_int_equal(back.problem.layout, SAGERUN_LAYOUT_HND);
    sr_report_clear(&back);
    static const struct {
        const char *key, *json, *says;
    } bad[] = {
        {"dtype", "\"fp8\"", "problem.dtype: expected one of \"fp16\", \"bf16\""},
        {"dtype", "\"fp8\"", "found \"fp8\""},
        {"dtype", "\"half\"", "found \"half\""},
        {"dtype", "\"Fp16\"", "found \"Fp16\""},
        {"dtype", "null", "problem.dtype: expected a string, found null"},
        {"dtype", NULL, "problem.dtype: missing"},
        {"layout", "\"hnd\"", "problem.layout: expected one of \"NHD\", \"HND\", found \"hnd\""},
        {"layout", "3", "problem.layout: expected a string, found an integer"},
        {"heads_kv", "4294967297",
         "problem.heads_kv: expected an integer from 1 to 4294967295, found 4294967297"},
        {"heads_kv", "0", "problem.heads_kv: expected an integer from 1 to 4294967295, found 0"},
        {"batch", "-1", "problem.batch: expected an integer from 1 to 4294967295, found -1"},
        {"head_dim", "64.0", "problem.head_dim: expected an integer from 1 to 4294967295, found a"},
        {"sm_scale", "1e300", "problem.sm_scale: expected a number from 0 to"},
        {"sm_scale", "-0.5", "problem.sm_scale: expected a number from 0 to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *value = bad[i].json ? json_loads(bad[i].json, JSON_DECODE_ANY, NULL) : NULL;
        assert_true(value || !bad[i].json);
        assert_int_equal(read_problem_with(bad[i].key, value, &back, &err), SAGERUN_FORMAT);
        if (!strstr(err.message, bad[i].says))
            fail_msg("problem.%s = %s: error \"%s\" should say \"%s\"", bad[i].key,
                     bad[i].json ? bad[i].json : "(none)", err.message, bad[i].says);
    }
}

/* make_report's problem with every key of problem ABI 0.2: three sequences of their own lengths
 * (more keys than queries), causal bottom-right, a window, a soft-cap and a paged cache. */
static void make_problem_02(sr_report *r)
{
    static const int32_t cu_q[] = {0, 100, 356, 363}, cu_kv[] = {0, 300, 812, 819};
    sagerun_problem *p = &r->problem;
    p->batch = 3, p->seq_len = 256, p->kv_len = 512;
    p->causal = 1, p->align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    p->window = 1, p->window_left = 64, p->window_right = 0;
    p->softcap = 30.0f;
    p->varlen = 1, p->total_q = 363, p->total_kv = 819;
    p->page_size = 16, p->pages = 52, p->pages_per_seq = 32;
    sagerun_sequences s = {.struct_size = sizeof s, .count = 3, .cu_seqlens_q = cu_q,
                           .cu_seqlens_kv = cu_kv};
    assert_true(sr_report_set_sequences(r, &s));
}

/* The whole problem goes into the report and comes back: the keys of problem ABI 0.2, the
 * lengths (owned by the report), the header line naming each feature, and TOPS counting the
 * pairs the sequences attend, not B * seq_len * kv_len. */
static void test_problem_02_roundtrip(void **state)
{
    (void)state;
    sr_report r, back;
    make_report(&r);
    make_problem_02(&r);
    sagerun_error err = {0};
    assert_int_equal(sagerun_problem_check(&r.problem, &err), SAGERUN_OK);
    assert_int_equal(sr_report_write_json(&r, tmp_path("p02.json"), &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(tmp_path("p02.json"), &back, &err), SAGERUN_OK);
    const sagerun_problem *p = &back.problem;
    assert_int_equal(sagerun_problem_kv_len(p), 512);
    assert_int_equal(p->align, SAGERUN_ALIGN_BOTTOM_RIGHT);
    assert_true(p->window && p->window_left == 64 && p->window_right == 0);
    assert_true(p->softcap == 30.0f);
    assert_true(p->varlen && p->total_q == 363 && p->total_kv == 819);
    assert_true(p->page_size == 16 && p->pages == 52 && p->pages_per_seq == 32);
    assert_int_equal(sagerun_problem_check(p, &err), SAGERUN_OK);
    assert_non_null(back.cu_seqlens_q);
    assert_memory_equal(back.cu_seqlens_q, r.cu_seqlens_q, 4 * sizeof(int32_t));
    assert_memory_equal(back.cu_seqlens_kv, r.cu_seqlens_kv, 4 * sizeof(int32_t));
    json_t *a = sr_report_to_json(&r), *b = sr_report_to_json(&back);
    assert_true(json_equal(a, b));
    json_t *lens = json_object_get(json_object_get(json_object_get(a, "problem"), "varlen"),
                                   "kv_lens");
    assert_int_equal(json_integer_value(json_array_get(lens, 1)), 512);
    json_decref(a);
    json_decref(b);
    /* TOPS: each sequence's own pairs (every row attends at most 65 keys here) */
    sagerun_sequences s = {.struct_size = sizeof s, .count = 3,
                           .cu_seqlens_q = r.cu_seqlens_q, .cu_seqlens_kv = r.cu_seqlens_kv};
    double ops = sagerun_problem_operations_seq(&r.problem, &s);
    assert_true(sr_report_operations(&back) == ops);
    assert_true(ops < sagerun_problem_operations(&r.problem));
    assert_true(ops <= 4.0 * 2 * 128 * 363 * 65);
    back.variants[1].tops = NAN;
    sr_judge_report(&back, 1.0, true);
    assert_true(fabs(back.variants[1].tops - ops / back.variants[1].timing.p50 / 1e12) <
                1e-9 * back.variants[1].tops);
    char *text = header_text(&back);
    if (!strstr(text, "(NHD fp16, Hkv 2, kv_len 512, causal bottom-right, window (64, 0), "
                      "softcap 30, varlen 3 sequences, paged 16)"))
        fail_msg("the header does not name the features:\n%s", text);
    free(text);
    /* a diff matches the same problem only: another window is another workload */
    sr_diff d;
    sr_diff_init(&d, 1.0, false);
    assert_int_equal(sr_diff_reports(&d, NULL, &r, &back, &err), SAGERUN_OK);
    back.problem.window_left = 128;
    assert_int_equal(sr_diff_reports(&d, NULL, &r, &back, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "window (64, 0)"));
    sr_diff_clear(&d);
    sr_report_clear(&back);
    sr_report_clear(&r);
}

/* A report of an older sagerun has none of the keys: it reads as the 1.1 problem. Each key
 * holding what no problem has is named. */
static void test_problem_02_fields(void **state)
{
    (void)state;
    static const char *const keys[] = {"kv_len", "align", "window", "softcap", "varlen",
                                       "page_size", "pages"};
    sr_report back;
    sagerun_error err = {0};
    sr_report r;
    make_report(&r);
    json_t *j = sr_report_to_json(&r), *pj = json_object_get(j, "problem");
    sr_report_clear(&r);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        json_object_del(pj, keys[i]);
    json_dump_file(j, tmp_path("old.json"), 0);
    json_decref(j);
    assert_int_equal(sr_report_read(tmp_path("old.json"), &back, &err), SAGERUN_OK);
    assert_int_equal(sagerun_problem_kv_len(&back.problem), 256);
    assert_true(!back.problem.window && back.problem.window_left == -1);
    assert_true(!back.problem.varlen && !back.problem.page_size && !back.cu_seqlens_q);
    sr_report_clear(&back);
    static const struct {
        const char *key, *json, *says;
    } bad[] = {
        {"kv_len", "0", "problem.kv_len: expected an integer from 1"},
        {"kv_len", "-3", "problem.kv_len: expected a non-negative integer"},
        {"align", "\"bottom\"", "problem.align: expected one of \"top-left\", \"bottom-right\""},
        {"window", "[5]", "problem.window: expected null or [left, right]"},
        {"window", "[-2, 0]", "problem.window: expected null or [left, right]"},
        {"softcap", "-1", "problem.softcap: expected a number from 0"},
        {"softcap", "\"30\"", "problem.softcap: expected a number"},
        {"varlen", "[1, 2]", "problem.varlen: expected an object"},
        {"varlen", "{\"q_lens\": [1]}", "problem.varlen.kv_lens: missing"},
        {"varlen", "{\"q_lens\": [1, 2], \"kv_lens\": [1]}", "problem.varlen.q_lens: 2 lengths"},
        {"varlen", "{\"q_lens\": [-1], \"kv_lens\": [1]}", "problem.varlen.q_lens: [0]"},
        {"varlen", "{\"q_lens\": [257], \"kv_lens\": [1]}", "problem.varlen: a sequence is longer"},
        {"page_size", "16", "problem.pages: 0 pages with page_size 16"},
        {"pages", "-1", "problem.pages: expected a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *value = json_loads(bad[i].json, JSON_DECODE_ANY, NULL);
        assert_non_null(value);
        assert_int_equal(read_problem_with(bad[i].key, value, &back, &err), SAGERUN_FORMAT);
        if (!strstr(err.message, bad[i].says))
            fail_msg("problem.%s = %s: error \"%s\" should say \"%s\"", bad[i].key, bad[i].json,
                     err.message, bad[i].says);
    }
}

/* What print(r, f) renders, or (print NULL) sr_diff_print. */
static char *rendered(void (*print)(const sr_report *, FILE *), const sr_report *r,
                      const sr_diff *d, bool markdown)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (print)
        print(r, f);
    else
        sr_diff_print(d, f, markdown);
    fclose(f);
    return text;
}

/* No string of the report starts a line of its own ("forged"): line breaks (\n, \r, \v, NEL,
 * U+2028) are written visibly, the program's own newlines stay. */
static void expect_no_forged_line(const char *what, char *text, const char *visible)
{
    if (strstr(text, "\nforged") || strchr(text, '\r') || strchr(text, '\v') ||
        strstr(text, "\xe2\x80\xa8") || strstr(text, "\xc2\x85") || !strstr(text, visible))
        fail_msg("%s: a forged line, or no \"%s\":\n%s", what, visible, text);
    assert_true(strchr(text, '\n') != NULL);
    free(text);
}

/* Labels, failures, device names, warnings and diff points from a report or a plugin cannot add
 * rows or notes to the table, the markdown or the diff. */
static void test_forged_lines(void **state)
{
    (void)state;
    sr_report a, b;
    make_report(&a);
    free(a.variants[1].label);
    a.variants[1].label = strdup("fast|\nforged row");
    a.variants[1].failure = strdup("crashed\r\nforged note");
    free(a.device_name);
    a.device_name = strdup("host\xe2\x80\xa8" "forged device");
    snprintf(a.variants[0].accuracy.reference, sizeof a.variants[0].accuracy.reference,
             "fp64\vforged");
    sr_report_add_warning(&a, "noisy\xc2\x85" "forged warning");
    expect_no_forged_line("table", rendered(sr_report_print_table, &a, NULL, false),
                          "fast|\\x0aforged row");
    expect_no_forged_line("markdown", rendered(sr_report_print_markdown, &a, NULL, false),
                          "| fast\\|\\\\x0aforged row |"); /* shown as fast|\x0aforged row */
    make_report(&b);
    free(b.variants[1].label);
    b.variants[1].label = strdup(a.variants[1].label);
    free(b.variants[0].label);
    b.variants[0].label = strdup("baseline\nforged base");
    sr_diff d;
    sagerun_error err = {0};
    sr_diff_init(&d, 1.0, true);
    assert_int_equal(sr_diff_reports(&d, "point\nforged point", &a, &b, &err), SAGERUN_OK);
    assert_true(d.note_count > 0);
    expect_no_forged_line("diff", rendered(NULL, NULL, &d, false), "baseline\\x0aforged base");
    expect_no_forged_line("diff markdown", rendered(NULL, NULL, &d, true),
                          "| point\\x0aforged point | fast\\|\\x0aforged row |");
    sr_diff_clear(&d);
    sr_report_clear(&a);
    sr_report_clear(&b);
}

/* make_report's JSON with variants[0].label and variants[i].KEY set, read back: an error that
 * quotes a value keeps it on its line. */
static void expect_error_on_one_line(const char *label0, size_t i, const char *key,
                                     const char *value, const char *visible)
{
    sr_report r;
    make_report(&r);
    json_t *j = sr_report_to_json(&r), *vars = json_object_get(j, "variants");
    sr_report_clear(&r);
    json_object_set_new(json_array_get(vars, 0), "label", json_string(label0));
    json_object_set_new(json_array_get(vars, i), key, json_string(value));
    json_dump_file(j, tmp_path("quoted.json"), 0);
    json_decref(j);
    sagerun_error err = {0};
    assert_int_equal(sr_report_read(tmp_path("quoted.json"), &r, &err), SAGERUN_FORMAT);
    if (strchr(err.message, '\n') || !strstr(err.message, visible))
        fail_msg("error \"%s\" should say \"%s\" on one line", err.message, visible);
}

/* The reader's errors quote a verdict or a label from the file on their one line. */
static void test_forged_error_lines(void **state)
{
    (void)state;
    expect_error_on_one_line("baseline", 1, "verdict", "quick\nforged",
                             "unknown verdict \"quick\\x0aforged\"");
    expect_error_on_one_line("x\nforged", 1, "label", "x\nforged", "same label 'x\\x0aforged'");
    expect_error_on_one_line("base\nforged", 0, "output_sha256", "xyz",
                             "variants[0] (base\\x0aforged)");
}

/* CSV fields: quoted only where RFC 4180 needs it, quotes doubled; NULL is an empty field. */
static void test_csv_field(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sr_csv_field(f, "plain", true);
    sr_csv_field(f, "a,b", false);
    sr_csv_field(f, "say \"hi\"", false);
    sr_csv_field(f, NULL, false);
    sr_csv_field(f, "two\nlines", false);
    fclose(f);
    assert_string_equal(text, "plain,\"a,b\",\"say \"\"hi\"\"\",,\"two\nlines\"");
    free(text);
}

static void test_diff(void **state)
{
    (void)state;
    sr_report a, b;
    sagerun_error err = {0};
    unsigned findings = 99;
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(sr_report_read(SEED_REPORT, &a, &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(SEED_REPORT, &b, &err), SAGERUN_OK);
    assert_int_equal(sr_report_diff(&a, &b, 2.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, 0);
    /* every round 10% slower: judged from the rounds, a regression at 2%, not at 20% */
    b.variants[1].timing.p50 *= 1.10;
    for (size_t k = 0; k < b.variants[1].round_count; k++)
        b.variants[1].rounds[k].p50 *= 1.10;
    assert_int_equal(sr_report_diff(&a, &b, 2.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, SAGERUN_DIFF_REGRESSION);
    assert_int_equal(sr_report_diff(&a, &b, 20.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, 0);
    /* rounds that disagree (one 30% slower, the others as before): the interval holds 0, so
     * the pooled p50 alone is no regression */
    for (size_t k = 0; k < b.variants[1].round_count; k++)
        b.variants[1].rounds[k].p50 = a.variants[1].rounds[k].p50 * (k == 0 ? 1.3 : k == 1 ? 0.8 : 1.0);
    assert_int_equal(sr_report_diff(&a, &b, 2.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, 0);
    /* without rounds to judge from: the p50 rule */
    size_t saved_rounds = b.variants[1].round_count;
    b.variants[1].round_count = 1;
    assert_int_equal(sr_report_diff(&a, &b, 2.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, SAGERUN_DIFF_REGRESSION);
    b.variants[1].round_count = saved_rounds;
    for (size_t k = 0; k < b.variants[1].round_count; k++)
        b.variants[1].rounds[k].p50 = a.variants[1].rounds[k].p50;
    b.variants[1].timing.p50 = a.variants[1].timing.p50;
    /* byte-exactness lost */
    b.variants[1].byte_exact = 0;
    assert_int_equal(sr_report_diff(&a, &b, 20.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, SAGERUN_DIFF_LOST_BYTE_EXACT);
    /* a variant gone */
    b.variant_count = 1;
    assert_int_equal(sr_report_diff(&a, &b, 20.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, SAGERUN_DIFF_MISSING);
    b.variant_count = 2;
    /* another workload */
    b.q_shape[1] = 1000;
    assert_int_equal(sr_report_diff(&a, &b, 2.0, false, devnull, &findings, &err),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "not the same workload"));
    fclose(devnull);
    sr_report_clear(&a);
    sr_report_clear(&b);
}

/* Scales every round of variant i of r (and its p50) by f[k % 3] in round k. */
static void scale_rounds(sr_report *r, size_t i, const double f[3])
{
    sr_report_variant *v = &r->variants[i];
    for (size_t k = 0; k < v->round_count; k++)
        v->rounds[k].p50 *= f[k % 3];
    v->timing.p50 *= f[1];
}

/* --relative: each variant over its run's baseline, round by round. */
static unsigned diff_relative(const sr_report *a, const sr_report *b, double threshold)
{
    sr_diff d;
    sagerun_error err = {0};
    sr_diff_init(&d, threshold, true);
    assert_int_equal(sr_diff_reports(&d, "p", a, b, &err), SAGERUN_OK);
    unsigned findings = d.findings;
    sr_diff_clear(&d);
    return findings;
}

static void test_diff_relative(void **state)
{
    (void)state;
    sr_report a, b;
    sagerun_error err = {0};
    unsigned findings = 99;
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(sr_report_read(SEED_REPORT, &a, &err), SAGERUN_OK);
    assert_int_equal(sr_report_read(SEED_REPORT, &b, &err), SAGERUN_OK);
    assert_int_equal(diff_relative(&a, &b, 1.0), 0);
    /* the whole new run 10% slower, each round by its own factor (load): by time a regression,
     * relative to the baseline none */
    const double load[3] = {1.08, 1.10, 1.12};
    scale_rounds(&b, 0, load);
    scale_rounds(&b, 1, load);
    assert_int_equal(sr_report_diff(&a, &b, 1.0, false, devnull, &findings, &err), SAGERUN_OK);
    assert_int_equal(findings, SAGERUN_DIFF_REGRESSION);
    assert_int_equal(diff_relative(&a, &b, 1.0), 0);
    /* the variant 5% slower on top: caught relative to the baseline, not at a 10% threshold */
    const double slower[3] = {1.05, 1.05, 1.05};
    scale_rounds(&b, 1, slower);
    assert_int_equal(diff_relative(&a, &b, 1.0), SAGERUN_DIFF_REGRESSION);
    assert_int_equal(diff_relative(&a, &b, 10.0), 0);
    /* a baseline that differs: judged by time, said in a note */
    free(b.variants[0].label);
    b.variants[0].label = strdup("another");
    sr_diff d;
    sr_diff_init(&d, 1.0, true);
    assert_int_equal(sr_diff_reports(&d, NULL, &a, &b, &err), SAGERUN_OK);
    assert_int_equal(d.note_count, 1);
    assert_non_null(strstr(d.notes[0], "relative: no baseline that ran in both"));
    assert_true(d.findings & SAGERUN_DIFF_REGRESSION); /* 15% slower by time */
    sr_diff_clear(&d);
    fclose(devnull);
    sr_report_clear(&a);
    sr_report_clear(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_matches_seed),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_seed_reads_and_renders),
        cmocka_unit_test(test_malformed_reports),
        cmocka_unit_test(test_bad_extension_named),
        cmocka_unit_test(test_bad_launch_gap_named),
        cmocka_unit_test(test_order_seed),
        cmocka_unit_test(test_atomic_write_failure),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_diff_relative),
        cmocka_unit_test(test_driver_release_parse),
        cmocka_unit_test(test_device_fields),
        cmocka_unit_test(test_seed_defaults),
        cmocka_unit_test(test_problem_fields),
        cmocka_unit_test(test_problem_02_roundtrip),
        cmocka_unit_test(test_problem_02_fields),
        cmocka_unit_test(test_forged_lines),
        cmocka_unit_test(test_forged_error_lines),
        cmocka_unit_test(test_csv_field),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
