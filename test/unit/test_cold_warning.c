/* The report's warning about cold microsecond calls (assemble.c, sr_cold_offset_warned): only
 * cold, only timed on the device, only for calls under SR_COLD_INSTANCE_OFFSET_CALL_S. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "engine.h"

static void warned_for_cold_us_calls_on_the_device(void **state)
{
    (void)state;
    const double under = SR_COLD_INSTANCE_OFFSET_CALL_S * 0.99;
    assert_true(sr_cold_offset_warned("cold", "kernel timestamps (CUPTI)", 20e-6));
    assert_true(sr_cold_offset_warned("cold", "device events", under));
    assert_false(sr_cold_offset_warned("cold", "device events", SR_COLD_INSTANCE_OFFSET_CALL_S));
    assert_false(sr_cold_offset_warned("cold", "kernel timestamps (CUPTI)", 0.1));
    assert_false(sr_cold_offset_warned("hot", "device events", 20e-6));
    assert_false(sr_cold_offset_warned("cold", "host monotonic clock", 20e-6));
    assert_false(sr_cold_offset_warned("cold", "", 20e-6)); /* a report that says no clock */
    assert_false(sr_cold_offset_warned(NULL, "device events", 20e-6));
    assert_false(sr_cold_offset_warned("cold", NULL, 20e-6));
    assert_false(sr_cold_offset_warned("cold", "device events", INFINITY)); /* no call timed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(warned_for_cold_us_calls_on_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
