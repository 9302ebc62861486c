/* Versioned symbols: a program linked against an older libsagerun keeps the struct it allocated.
 * sagerun_report_diff_options grew in 0.3 (three doubles): its init, called by a program built
 * against 0.2's header, wrote the 0.3 struct past the caller's (the Python package, which declared
 * the 0.2 fields, crashed at random after its diff). The 0.2 callers' symbol is
 * sagerun_report_diff_options_init@SAGERUN_0; the same holds for sagerun_problem_make (0.1). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sagerun/compare.h"
#include "sagerun/sagerun.h"

typedef struct {
    uint32_t struct_size;
    double threshold_percent;
    int relative;
} diff_options_0_2; /* as library 0.2's compare.h declared it */

typedef struct {
    diff_options_0_2 options;
    unsigned char after[64]; /* what a 0.2 caller keeps next to it */
} guarded;

static void diff_options_init_0_2_writes_the_0_2_struct(void **state)
{
    (void)state;
    void (*init)(diff_options_0_2 *) = (void (*)(diff_options_0_2 *))dlvsym(
        RTLD_DEFAULT, "sagerun_report_diff_options_init", "SAGERUN_0");
    assert_non_null(init);
    guarded g;
    memset(&g, 0xA5, sizeof g);
    init(&g.options);
    assert_int_equal(g.options.struct_size, sizeof(diff_options_0_2));
    assert_true(g.options.threshold_percent == 1.0);
    assert_int_equal(g.options.relative, 0); /* 0.2's default */
    for (size_t i = 0; i < sizeof g.after; i++)
        assert_int_equal(g.after[i], 0xA5);
}

static void diff_options_init_0_3_is_the_default(void **state)
{
    (void)state;
    void *v03 = dlvsym(RTLD_DEFAULT, "sagerun_report_diff_options_init", "SAGERUN_0.3");
    assert_non_null(v03);
    assert_ptr_equal(v03, dlsym(RTLD_DEFAULT, "sagerun_report_diff_options_init"));
    sagerun_report_diff_options o;
    memset(&o, 0xA5, sizeof o);
    sagerun_report_diff_options_init(&o);
    assert_int_equal(o.struct_size, sizeof o);
    assert_int_equal(o.relative, 1);
    assert_true(o.between_run_sd_percent == 0);
    assert_true(o.fail_if_slower_percent != o.fail_if_slower_percent); /* NaN: off */
}

static void problem_make_0_1_is_kept(void **state)
{
    (void)state;
    assert_non_null(dlvsym(RTLD_DEFAULT, "sagerun_problem_make", "SAGERUN_0"));
    assert_non_null(dlvsym(RTLD_DEFAULT, "sagerun_problem_make", "SAGERUN_0.2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diff_options_init_0_2_writes_the_0_2_struct),
        cmocka_unit_test(diff_options_init_0_3_is_the_default),
        cmocka_unit_test(problem_make_0_1_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
