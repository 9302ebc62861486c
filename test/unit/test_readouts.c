/* Readouts of a report (issue 41): the first difference in the layout's terms, not a flat index,
 * and accuracy figures that say when NaN or Inf outputs were left out of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* A report of a baseline and one variant differing from it, on a [2, 8, 3, 4] problem. */
static void make_report(sr_report *r, uint32_t layout)
{
    memset(r, 0, sizeof *r);
    r->q_shape_len = 4;
    r->q_shape[0] = 2, r->q_shape[1] = 8, r->q_shape[2] = 3, r->q_shape[3] = 4;
    r->has_problem = true;
    r->problem = sagerun_problem_make(2, 8, 3, 3, 4);
    r->problem.layout = layout;
    r->variant_count = 2;
    r->variants = calloc(2, sizeof *r->variants);
    for (int i = 0; i < 2; i++) {
        sr_report_variant *v = &r->variants[i];
        v->name = strdup(i ? "variant" : "base");
        v->is_baseline = i == 0;
        v->byte_exact = i == 0;
        v->prepare_s = 0.001;
        v->tops = NAN;
        v->speedup_percent = NAN;
        v->tolerance.passed = -1;
        v->accuracy = (sr_accuracy){true, 48, 192, 0, 0.99, 0.01, 1e-3, 2e-2, "fp64-host"};
    }
    r->variants[1].byte_diff = (sr_byte_diff){true, 192, 5, 0, 3, 0.5};
}

static char *table_of(const sr_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sr_report_print_table(r, f);
    fclose(f);
    return text;
}

static void expect_in(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("no \"%s\" in:\n%s", want, text);
}

/* element 2*8*3*4 - 1 - 13 = 178 of NHD [2, 8, 3, 4]: b 1, n 6, h 2, d 2; of HND [2, 3, 8, 4]:
 * b 1, h 2, n 4, d 2 */
static void test_first_difference_in_layout_terms(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r, SAGERUN_LAYOUT_NHD);
    r.variants[1].byte_diff.first_index = 178;
    char *text = table_of(&r);
    expect_in(text, "(first at b 1, n 6, h 2, d 2: element 178)");
    free(text);
    r.problem.layout = SAGERUN_LAYOUT_HND;
    text = table_of(&r);
    expect_in(text, "(first at b 1, h 2, n 4, d 2: element 178)");
    free(text);
    r.has_problem = false; /* the seed's reports: q_shape, NHD */
    text = table_of(&r);
    expect_in(text, "(first at b 1, n 6, h 2, d 2: element 178)");
    free(text);
    sr_report_clear(&r);
}

/* varlen: packed [tokens, Hq, D]; sequences of 5, 0 and 11 queries: token 9 is sequence 2's 4th */
static void test_first_difference_varlen(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r, SAGERUN_LAYOUT_NHD);
    r.problem.batch = 3, r.problem.varlen = 1, r.problem.seq_len = 11, r.problem.total_q = 16;
    const int32_t cu[4] = {0, 5, 5, 16};
    sagerun_sequences s = {sizeof s, 3, cu, cu, NULL};
    assert_true(sr_report_set_sequences(&r, &s));
    r.variants[1].byte_diff.first_index = (9 * 3 + 1) * 4 + 3;
    char *text = table_of(&r);
    expect_in(text, "first at token 9 (sequence 2, its query 4), h 1, d 3: element 115)");
    free(text);
    r.variants[1].byte_diff.first_index = 2 * 4; /* token 0, h 2 */
    text = table_of(&r);
    expect_in(text, "first at token 0 (sequence 0, its query 0), h 2, d 0: element 8)");
    free(text);
    sr_report_clear(&r);
}

/* rmse and max error over the finite elements only: the note says how many were not */
static void test_nonfinite_said(void **state)
{
    (void)state;
    sr_report r;
    make_report(&r, SAGERUN_LAYOUT_NHD);
    char *text = table_of(&r);
    assert_null(strstr(text, "NOT FINITE"));
    free(text);
    r.variants[1].accuracy.nonfinite = 7;
    text = table_of(&r);
    expect_in(text, "variant: prepare 1.000 ms, rmse 0.001, max abs error 0.02 over 48 rows "
                    "(fp64-host); NOT FINITE: 7 of the 192 elements in those rows are NaN or Inf, "
                    "left out of rmse, max error, cosine and relative L1");
    expect_in(text, "7 non-finite"); /* the table's accuracy column */
    free(text);
    r.variants[1].accuracy.nonfinite = 192;
    r.variants[1].accuracy.rmse = r.variants[1].accuracy.max_abs = NAN;
    text = table_of(&r);
    expect_in(text, "rmse -, max abs error - over 48 rows (fp64-host); NOT FINITE: 192 of");
    free(text);
    sr_report_clear(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_difference_in_layout_terms),
        cmocka_unit_test(test_first_difference_varlen),
        cmocka_unit_test(test_nonfinite_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
