/* Tolerance mode (tolerance.h): what each limit compares, the cases it cannot judge (a NaN in the
 * byte difference, accuracy not measured or non-finite) failing rather than passing, the label's
 * limit over the general one, byte-exact and failed variants left alone, and the JSON round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "tolerance.h"

/* A report of one variant that ran, is not byte-exact, 3 ulp from the baseline, cos 0.9995. */
static void one_variant(sr_report *r, sr_report_variant *v)
{
    memset(r, 0, sizeof *r);
    memset(v, 0, sizeof *v);
    v->name = "cand";
    v->label = "cand";
    v->byte_exact = 0;
    v->deterministic = 1;
    v->timing.count = 4;
    v->byte_diff = (sr_byte_diff){.present = true, .elements = 100, .differing = 7,
                                  .max_ulp = 3, .max_abs = 0.001};
    v->accuracy = (sr_accuracy){.present = true, .rows = 10, .cosine = 0.9995, .rel_l1 = 0.02};
    r->variants = v;
    r->variant_count = 1;
}

static sr_tolerance_set *set_of(const char *ulp, const char *cos, const char *rel)
{
    static sr_tolerance_set t;
    char err[256];
    memset(&t, 0, sizeof t);
    if (ulp)
        assert_true(sr_tolerance_add(&t, SR_TOL_MAX_ULP, ulp, err, sizeof err));
    if (cos)
        assert_true(sr_tolerance_add(&t, SR_TOL_MIN_COS, cos, err, sizeof err));
    if (rel)
        assert_true(sr_tolerance_add(&t, SR_TOL_MAX_REL_L1, rel, err, sizeof err));
    return &t;
}

static void test_limits(void **state)
{
    (void)state;
    sr_report r;
    sr_report_variant v;
    one_variant(&r, &v);
    sr_tolerance_apply(&r, set_of("3", "0.999", "0.02"));
    assert_int_equal(v.tolerance.passed, 1); /* every limit met, at its edge */
    assert_true(sr_report_variant_accepted(&v));
    assert_non_null(strstr(v.tolerance.detail, "max 3 ulp"));
    sr_tolerance_apply(&r, set_of("2", NULL, NULL));
    assert_int_equal(v.tolerance.passed, 0);
    assert_false(sr_report_variant_accepted(&v));
    sr_tolerance_apply(&r, set_of(NULL, "0.9999", NULL));
    assert_int_equal(v.tolerance.passed, 0);
    sr_tolerance_apply(&r, set_of(NULL, NULL, "0.01"));
    assert_int_equal(v.tolerance.passed, 0);
    assert_non_null(strstr(v.tolerance.detail, "relative L1 0.02 (limit <= 0.01)"));
}

static void test_unjudgeable_fails(void **state)
{
    (void)state;
    sr_report r;
    sr_report_variant v;
    one_variant(&r, &v);
    v.byte_diff.max_abs = INFINITY; /* a NaN met a number */
    sr_tolerance_apply(&r, set_of("65535", NULL, NULL));
    assert_int_equal(v.tolerance.passed, 0);
    assert_non_null(strstr(v.tolerance.detail, "NaN"));
    one_variant(&r, &v);
    v.byte_diff.present = false;
    sr_tolerance_apply(&r, set_of("65535", NULL, NULL));
    assert_int_equal(v.tolerance.passed, 0);
    one_variant(&r, &v);
    v.accuracy.present = false;
    sr_tolerance_apply(&r, set_of(NULL, "-1", NULL));
    assert_int_equal(v.tolerance.passed, 0);
    assert_non_null(strstr(v.tolerance.detail, "accuracy not measured"));
    one_variant(&r, &v);
    v.accuracy.nonfinite = 2;
    sr_tolerance_apply(&r, set_of(NULL, NULL, "1e9"));
    assert_int_equal(v.tolerance.passed, 0);
    assert_non_null(strstr(v.tolerance.detail, "non-finite"));
}

static void test_labels_and_who_is_judged(void **state)
{
    (void)state;
    sr_report r;
    sr_report_variant v;
    char err[256];
    one_variant(&r, &v);
    sr_tolerance_set *t = set_of("1", NULL, NULL);
    assert_true(sr_tolerance_add(t, SR_TOL_MAX_ULP, "cand=5", err, sizeof err));
    sr_tolerance_apply(&r, t);
    assert_int_equal(v.tolerance.passed, 1); /* its own limit, 5, over the general 1 */
    assert_true(v.tolerance.max_ulp == 5);
    v.byte_exact = 1;
    sr_tolerance_apply(&r, t);
    assert_int_equal(v.tolerance.passed, -1); /* byte-exact: nothing to judge */
    assert_true(sr_report_variant_accepted(&v));
    v.byte_exact = 0;
    v.failure = "create: no";
    sr_tolerance_apply(&r, t);
    assert_int_equal(v.tolerance.passed, -1);
    assert_false(sr_report_variant_accepted(&v));
    v.failure = NULL;
    sr_tolerance_apply(&r, set_of(NULL, NULL, NULL));
    assert_false(sr_report_variant_accepted(&v)); /* no tolerance: bytes decide */
}

static void test_bad_specs(void **state)
{
    (void)state;
    sr_tolerance_set t;
    char err[256];
    memset(&t, 0, sizeof t);
    const char *bad_ulp[] = {"1.5", "-1", "x", "", "a=", "=3", "70000"};
    for (size_t i = 0; i < sizeof bad_ulp / sizeof *bad_ulp; i++) {
        assert_false(sr_tolerance_add(&t, SR_TOL_MAX_ULP, bad_ulp[i], err, sizeof err));
        assert_non_null(strstr(err, "--max-ulp"));
    }
    assert_false(sr_tolerance_add(&t, SR_TOL_MIN_COS, "1.01", err, sizeof err));
    assert_false(sr_tolerance_add(&t, SR_TOL_MAX_REL_L1, "nan", err, sizeof err));
    assert_true(sr_tolerance_add(&t, SR_TOL_MIN_COS, "tuned[block=64]=0.5", err, sizeof err));
    assert_string_equal(t.limits[SR_TOL_MIN_COS][0].label, "tuned[block=64]");
    assert_true(sr_tolerance_empty(&(sr_tolerance_set){0}));
}

static void test_json_round_trip(void **state)
{
    (void)state;
    sr_report r;
    sr_report_variant v;
    one_variant(&r, &v);
    sr_tolerance_apply(&r, set_of("2", "0.999", NULL));
    json_t *j = sr_tolerance_to_json(&v.tolerance);
    sr_tolerance back;
    assert_null(sr_tolerance_from_json(j, &back));
    assert_true(back.present && back.passed == 0 && back.max_ulp == 2 && back.min_cos == 0.999);
    assert_true(isnan(back.max_rel_l1));
    assert_string_equal(back.detail, v.tolerance.detail);
    json_object_set_new(j, "passed", json_string("yes"));
    assert_non_null(sr_tolerance_from_json(j, &back));
    json_decref(j);
    assert_null(sr_tolerance_from_json(json_null(), &back));
    assert_false(back.present);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_unjudgeable_fails),
        cmocka_unit_test(test_labels_and_who_is_judged),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
