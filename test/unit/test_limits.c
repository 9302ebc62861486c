/* Resource limits and the comparison's reliability hooks: overflowing shapes refused before any
 * allocation, the device-memory estimate and check (with the free memory as a parameter), and
 * sagerun_compare_run's hooks (calls announced, interruption, entries left out). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "resource_limits.h"
#include "quantize.h"
#include "sagerun/compare.h"

static void test_overflowing_shapes_refused(void **state)
{
    sagerun_error e = {0};
    /* every size at its own limit: B*N*Hq*D*2 overflows 64 bits */
    sagerun_problem p = sagerun_problem_make(65535, 1u << 30, 65535, 65535, 1024);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "too large"));
    /* no overflow, but Q above 64 TiB */
    p = sagerun_problem_make(64, 1u << 30, 1024, 1024, 1024);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    /* beyond the grid and index limits */
    p = sagerun_problem_make(65536, 16, 1, 1, 64);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    p = sagerun_problem_make(1, (1u << 30) + 1, 1, 1, 64);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    p = sagerun_problem_make(1, 16, 1, 1, 1025);
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
}

static void test_inputs_refuse_before_allocating(void **state)
{
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    sagerun_problem p = sagerun_problem_make(65535, 1u << 30, 65535, 65535, 1024);
    sagerun_inputs *in = NULL;
    sagerun_error e = {0};
    /* would be ~2^73 bytes: refused by the shape check, not by a failed (or wrapped) malloc */
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 1, &in, &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_null(in);
    assert_non_null(strstr(e.message, "too large"));
    sagerun_context_destroy(ctx);
}

static const sagerun_variant_descriptor fp16_variant = {.input_kind = SAGERUN_INPUT_FP16};

static void test_memory_estimate_and_check(void **state)
{
    sagerun_problem p = sagerun_problem_make(1, 1024, 8, 8, 128);
    const uint64_t q = 1024ull * 8 * 128 * 2;
    const sagerun_variant_descriptor *v[3] = {&fp16_variant, NULL, &fp16_variant};
    sr_memory_estimate est;
    sr_memory_estimate_compare(&p, v, 3, true, 0, &est);
    assert_int_equal(est.inputs, 3 * q);
    assert_int_equal(est.outputs, 2 * q); /* NULL entries (failed, left out) need nothing */
    assert_int_equal(est.quantized, 0);
    assert_int_equal(est.variants, 2);
    assert_true(est.scratch > 0);
    assert_int_equal(est.total, est.inputs + est.outputs + est.quantized + est.scratch);

    sagerun_error e = {0};
    assert_int_equal(sr_memory_check(&est, est.total, &e), SAGERUN_OK);
    assert_int_equal(sr_memory_check(&est, est.total - 1, &e), SAGERUN_OUT_OF_MEMORY);
    char needed[64], free_b[64];
    snprintf(needed, sizeof needed, "(%llu bytes", (unsigned long long)est.total);
    assert_non_null(strstr(e.message, needed));
    assert_non_null(strstr(e.message, "does not fit in device memory"));
    snprintf(free_b, sizeof free_b, "(%llu bytes)", (unsigned long long)(est.total - 1));
    assert_non_null(strstr(e.message, free_b));

    /* without the inputs (they exist already) */
    sr_memory_estimate later;
    sr_memory_estimate_compare(&p, v, 3, false, 0, &later);
    assert_int_equal(later.inputs, 0);
    assert_int_equal(later.total, est.total - est.inputs);

    /* accuracy rows add scratch */
    sr_memory_estimate acc;
    sr_memory_estimate_compare(&p, v, 3, true, 1024, &acc);
    assert_true(acc.scratch > est.scratch);
}

/* K and V as stored: a decode problem's kv_len rows, a varlen problem's packed tokens, a paged
 * problem's cache (they were counted as seq_len rows: a decode of 1 query against 128k keys was
 * estimated at 1/128k of its inputs) */
/* Q of 2^63 elements is 2^64 bytes, which wraps to 0 in unchecked 64-bit products: refused by
 * its size, as any shape too large */
static void test_problem_size_wrap(void **state)
{
    sagerun_problem p = sagerun_problem_make(512, 1u << 30, 16384, 16384, 1024);
    sagerun_error e = {0};
    assert_int_equal(sagerun_problem_check(&p, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "too large"));
    (void)state;
}

static void test_memory_estimate_kv_storage(void **state)
{
    const sagerun_variant_descriptor *v[1] = {&fp16_variant};
    sr_memory_estimate est;
    sagerun_problem p = sagerun_problem_make(2, 1, 32, 8, 128);
    p.kv_len = 131072;
    sr_memory_estimate_compare(&p, v, 1, true, 0, &est);
    const uint64_t q = 2ull * 1 * 32 * 128 * 2, kv = 2ull * 131072 * 8 * 128 * 2;
    assert_int_equal(est.inputs, q + 2 * kv);
    assert_int_equal(est.outputs, q);
    p = sagerun_problem_make(3, 100, 4, 2, 64);
    p.varlen = 1;
    p.total_q = 150;
    p.total_kv = 250;
    p.kv_len = 120;
    sr_memory_estimate_compare(&p, v, 1, true, 0, &est);
    assert_int_equal(est.inputs, (150ull * 4 + 2 * 250ull * 2) * 64 * 2);
    p = sagerun_problem_make(2, 16, 4, 2, 64);
    p.kv_len = 100;
    p.page_size = 16;
    p.pages = 20;
    p.pages_per_seq = 7;
    sr_memory_estimate_compare(&p, v, 1, true, 0, &est);
    assert_int_equal(est.inputs, (2ull * 16 * 4 + 2 * 20ull * 16 * 2) * 64 * 2);
    (void)state;
}

static void test_memory_estimate_sage2(void **state)
{
    sagerun_problem p = sagerun_problem_make(1, 4096, 8, 8, 128);
    sagerun_variant_descriptor s2 = {.input_kind = SAGERUN_INPUT_SAGE2,
                                     .quant = sr_sage2_params_sm90()};
    const sagerun_variant_descriptor *v[2] = {&fp16_variant, &s2};
    sr_memory_estimate est;
    sr_memory_estimate_compare(&p, v, 2, true, 0, &est);
    assert_int_equal(est.sage2_variants, 1);
    /* int8 Q and K and fp8 V at least */
    assert_true(est.quantized >= 3ull * 4096 * 8 * 128);
}

static void test_memory_estimate_saturates(void **state)
{
    /* an unchecked absurd shape: saturates instead of wrapping to a small number that fits */
    sagerun_problem p = sagerun_problem_make(65535, 1u << 30, 65535, 65535, 1024);
    const sagerun_variant_descriptor *v[1] = {&fp16_variant};
    sr_memory_estimate est;
    sr_memory_estimate_compare(&p, v, 1, true, 0, &est);
    assert_true(est.total == UINT64_MAX);
    sagerun_error e = {0};
    assert_int_equal(sr_memory_check(&est, 80ull << 30, &e), SAGERUN_OUT_OF_MEMORY);
    assert_non_null(strstr(e.message, "more than 16 EiB"));
}

/* ---- hooks ---- */

typedef struct hook_log {
    int begins, ends, runs;
    int stop_after_runs; /* interrupted() says yes once this many timed calls ended */
    char last_phase[16];
    uint32_t run_calls, other_calls_max; /* the calls of the last timed sample; of any other */
} hook_log;

static void on_call(void *user, const sagerun_compare_call *c)
{
    hook_log *h = user;
    assert_true(c->struct_size >= offsetof(sagerun_compare_call, calls) + sizeof c->calls);
    if (strcmp(c->phase, "run") == 0)
        h->run_calls = c->calls;
    else if (c->calls > h->other_calls_max)
        h->other_calls_max = c->calls;
    if (!c->end) {
        h->begins++;
        snprintf(h->last_phase, sizeof h->last_phase, "%s", c->phase);
        return;
    }
    h->ends++;
    assert_true(c->seconds >= 0);
    assert_int_equal(c->context_lost, 0);
    if (strcmp(c->phase, "run") == 0) {
        assert_true(c->round >= 1);
        h->runs++;
    }
}

static int on_interrupted(void *user)
{
    hook_log *h = user;
    return h->stop_after_runs && h->runs >= h->stop_after_runs;
}

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    sagerun_inputs *in;
} fixture;

static int setup(void **state)
{
    setenv("SAGERUN_TEST_FAULTS", "1", 1); /* fault_error_run.so loads only then */
    static fixture f;
    memset(&f, 0, sizeof f);
    if (sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f.ctx, NULL) != SAGERUN_OK ||
        sagerun_registry_create(f.ctx, &f.reg, NULL) != SAGERUN_OK ||
        sagerun_registry_add_path(f.reg, SAGERUN_TEST_FAKES "/fake_good.so", NULL) !=
            SAGERUN_OK ||
        sagerun_registry_add_path(f.reg, SAGERUN_TEST_FAKES "/fault_error_run.so", NULL) !=
            SAGERUN_OK)
        return -1;
    sagerun_problem p = sagerun_problem_make(1, 64, 2, 2, 64);
    if (sagerun_inputs_create_synthetic(f.ctx, &p, 7, &f.in, NULL) != SAGERUN_OK)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_inputs_destroy(f->in);
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    return 0;
}

/* A fixed schedule against fake-good: one warm-up call, 2 rounds of `iterations`, no accuracy. */
static void fixed_options(sagerun_compare_options *o, const char **names, size_t n,
                          uint32_t iterations, const sagerun_compare_hooks *hooks)
{
    sagerun_compare_options_init(o);
    o->schedule = SAGERUN_SCHEDULE_FIXED;
    o->baseline = "fake-good";
    o->variants = names;
    o->variant_count = n;
    o->warmup = 1;
    o->rounds = 2;
    o->iterations = iterations;
    o->flags = SAGERUN_COMPARE_SKIP_ACCURACY;
    o->hooks = hooks;
}

static void test_hooks_calls_and_failure_phase(void **state)
{
    fixture *f = *state;
    hook_log log = {0};
    sagerun_compare_hooks hooks = {.struct_size = sizeof hooks, .call = on_call,
                                   .call_user = &log};
    const char *names[] = {"fake-good", "fault-error-run"};
    sagerun_compare_options o;
    fixed_options(&o, names, 2, 2, &hooks);
    sagerun_compare_result *res;
    sagerun_error e = {0};
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, &e), SAGERUN_OK);
    assert_int_equal(log.begins, log.ends);
    assert_string_equal(log.last_phase, "destroy");
    assert_true(sagerun_compare_result_complete(res));
    assert_int_equal(sagerun_compare_result_rounds_completed(res), 2);
    assert_null(sagerun_compare_result_failure_phase(res, 0));
    assert_null(sagerun_compare_result_failure_phase(res, 1));
    /* the fault plugin fails its third run call: the first timed one (after the warm-up call
     * and the first checked call) */
    assert_string_equal(sagerun_compare_result_failure_phase(res, 2), "run");
    sagerun_compare_result_destroy(res);
}

/* A timed sample's events carry its K calls (the watchdog of `sagerun compare` scales by them),
 * every other event one call, except the first warm-up event, which holds the first call of every
 * instance (--instances: first contact, once per entry); a batch with a cold cache is refused (a
 * cold sample is one call). */
static void test_hooks_calls_per_sample(void **state)
{
    fixture *f = *state;
    hook_log log = {0};
    sagerun_compare_hooks hooks = {.struct_size = sizeof hooks, .call = on_call,
                                   .call_user = &log};
    const char *names[] = {"fake-good"};
    sagerun_compare_options o;
    fixed_options(&o, names, 1, 1, &hooks);
    o.timer = SAGERUN_TIMER_BATCH;
    o.batch = 7;
    sagerun_compare_result *res;
    sagerun_error e = {0};
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, &e), SAGERUN_OK);
    assert_int_equal(log.run_calls, 7);
    assert_int_equal(log.other_calls_max, o.instances);
    sagerun_compare_result_destroy(res);
    o.instances = 1;
    log = (hook_log){0};
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, &e), SAGERUN_OK);
    assert_int_equal(log.other_calls_max, 1);
    sagerun_compare_result_destroy(res);

    o.cache = SAGERUN_CACHE_COLD;
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "cold"));
}

static void test_hooks_interrupt(void **state)
{
    fixture *f = *state;
    hook_log log = {.stop_after_runs = 5};
    sagerun_compare_hooks hooks = {.struct_size = sizeof hooks, .call = on_call,
                                   .call_user = &log, .interrupted = on_interrupted,
                                   .interrupted_user = &log};
    const char *names[] = {"fake-good"};
    sagerun_compare_options o;
    sagerun_compare_options_init(&o);
    o.schedule = SAGERUN_SCHEDULE_FIXED;
    o.baseline = "fake-good";
    o.variants = names;
    o.variant_count = 1;
    o.warmup = 0;
    o.rounds = 10;
    o.iterations = 2;
    o.hooks = &hooks;
    sagerun_compare_result *res;
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, NULL), SAGERUN_OK);
    /* 4 timed calls per round: stopped in round 2, so one round finished */
    assert_false(sagerun_compare_result_complete(res));
    assert_int_equal(sagerun_compare_result_rounds_completed(res), 1);
    sagerun_compare_variant v = {.struct_size = sizeof v};
    assert_int_equal(sagerun_compare_result_variant(res, 1, &v, NULL), SAGERUN_OK);
    assert_int_equal(v.timing.count, 2);
    assert_int_equal(v.round_count, 1);
    assert_null(v.failure);
    assert_true(sagerun_compare_result_warning_count(res) >= 1);

    /* interrupted before any timed call: nothing timed, no hash, still a result */
    sagerun_compare_result *none;
    hook_log always = {.stop_after_runs = 1, .runs = 1};
    hooks.interrupted_user = &always;
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &none, NULL), SAGERUN_OK);
    assert_false(sagerun_compare_result_complete(none));
    assert_int_equal(sagerun_compare_result_rounds_completed(none), 0);
    assert_null(sagerun_compare_result_reference_sha256(none));
    sagerun_compare_result_destroy(none);
    sagerun_compare_result_destroy(res);
}

static void test_hooks_skip(void **state)
{
    fixture *f = *state;
    const char *labels[] = {"fake-good#3"}, *phases[] = {"run"},
               *reasons[] = {"timed run: crashed: SIGSEGV (Segmentation fault)"};
    sagerun_compare_hooks hooks = {.struct_size = sizeof hooks, .skip_labels = labels,
                                   .skip_phases = phases, .skip_reasons = reasons,
                                   .skip_count = 1};
    const char *names[] = {"fake-good", "fake-good"};
    sagerun_compare_options o;
    sagerun_compare_options_init(&o);
    o.schedule = SAGERUN_SCHEDULE_FIXED;
    o.baseline = "fake-good";
    o.variants = names;
    o.variant_count = 2;
    o.rounds = 2;
    o.iterations = 1;
    o.warmup = 0;
    o.flags = SAGERUN_COMPARE_SKIP_ACCURACY;
    o.hooks = &hooks;
    sagerun_compare_result *res;
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, NULL), SAGERUN_OK);
    sagerun_compare_variant v = {.struct_size = sizeof v};
    assert_int_equal(sagerun_compare_result_variant(res, 2, &v, NULL), SAGERUN_OK);
    assert_string_equal(v.label, "fake-good#3");
    assert_string_equal(v.failure, reasons[0]);
    assert_false(v.ran);
    assert_string_equal(sagerun_compare_result_failure_phase(res, 2), "run");
    assert_int_equal(sagerun_compare_result_variant(res, 1, &v, NULL), SAGERUN_OK);
    assert_true(v.ran);
    sagerun_compare_result_destroy(res);

    /* leaving out the baseline: nothing to compare against, and a result that says so (it was
     * an error, and the caller had no report) */
    labels[0] = "fake-good";
    assert_int_equal(sagerun_compare_run(f->reg, f->ctx, f->in, &o, &res, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_compare_result_variant(res, 0, &v, NULL), SAGERUN_OK);
    assert_string_equal(v.failure, reasons[0]);
    assert_false(v.ran);
    for (size_t i = 1; i < 3; i++) {
        assert_int_equal(sagerun_compare_result_variant(res, i, &v, NULL), SAGERUN_OK);
        assert_string_equal(v.failure, "not measured: the baseline fake-good failed");
        assert_false(v.ran);
    }
    assert_false(sagerun_compare_result_all_ran(res));
    sagerun_compare_result_destroy(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overflowing_shapes_refused),
        cmocka_unit_test(test_inputs_refuse_before_allocating),
        cmocka_unit_test(test_memory_estimate_and_check),
        cmocka_unit_test(test_problem_size_wrap),
        cmocka_unit_test(test_memory_estimate_kv_storage),
        cmocka_unit_test(test_memory_estimate_sage2),
        cmocka_unit_test(test_memory_estimate_saturates),
        cmocka_unit_test_setup_teardown(test_hooks_calls_and_failure_phase, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hooks_calls_per_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hooks_interrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hooks_skip, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
