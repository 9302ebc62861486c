/* The oracle's double -> fp16 / bf16 rounding (variants/common/reference_convert.h) against an
 * independent conversion: the nearest of all finite values of the format, found by bisection
 * over a sorted table and decided at the exact midpoints (ties to the even pattern). Every value,
 * every midpoint and its neighbours, zeros, the subnormal range, overflow, and random doubles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../variants/common/reference_convert.h"

/* A 16-bit format: its largest finite pattern, its infinity, and a decoder written here from the
 * format's definition (not shared with the code under test). */
typedef struct format {
    const char *name;
    int frac_bits, bias;
    uint16_t max_finite, inf;
    uint16_t (*convert)(double);
} format;

static double decode(const format *f, uint16_t bits)
{
    int e = bits >> f->frac_bits, m = bits & ((1 << f->frac_bits) - 1);
    if (e == 0)
        return ldexp(m, 1 - f->bias - f->frac_bits);
    return ldexp(m + (1 << f->frac_bits), e - f->bias - f->frac_bits);
}

/* The correctly rounded pattern of x >= 0 (finite). */
static uint16_t nearest(const format *f, double x)
{
    double top = decode(f, f->max_finite);
    double beyond = top + ldexp(1.0, (f->max_finite >> f->frac_bits) - f->bias - f->frac_bits);
    if (x >= top) { /* the midpoint to the next (unrepresentable) value rounds to infinity */
        double mid = (top + beyond) / 2;
        return x < mid ? f->max_finite : f->inf;
    }
    uint32_t lo = 0, hi = f->max_finite; /* decode(lo) <= x < decode(hi) */
    while (hi - lo > 1) {
        uint32_t m = (lo + hi) / 2;
        if (decode(f, (uint16_t)m) <= x)
            lo = m;
        else
            hi = m;
    }
    double mid = (decode(f, (uint16_t)lo) + decode(f, (uint16_t)hi)) / 2; /* exact in double */
    if (x < mid)
        return (uint16_t)lo;
    if (x > mid)
        return (uint16_t)hi;
    return (uint16_t)((lo & 1) ? hi : lo);
}

static void check(const format *f, double x, unsigned long *checked)
{
    uint16_t want = nearest(f, fabs(x)) | (signbit(x) ? 0x8000 : 0);
    uint16_t got = f->convert(x);
    if (got != want)
        fail_msg("%s(%a = %.17g): 0x%04x, expected 0x%04x", f->name, x, x, got, want);
    (*checked)++;
}

static void check_both_signs(const format *f, double x, unsigned long *checked)
{
    check(f, x, checked);
    check(f, -x, checked);
}

static void exhaustive(const format *f)
{
    unsigned long checked = 0;
    for (uint32_t b = 0; b <= f->max_finite; b++) {
        double v = decode(f, (uint16_t)b);
        check_both_signs(f, v, &checked);
        double next = b < f->max_finite
                          ? decode(f, (uint16_t)(b + 1))
                          : v + ldexp(1.0, (b >> f->frac_bits) - f->bias - f->frac_bits);
        double mid = (v + next) / 2;
        check_both_signs(f, mid, &checked);
        check_both_signs(f, nextafter(mid, 0), &checked);
        check_both_signs(f, nextafter(mid, INFINITY), &checked);
        check_both_signs(f, nextafter(v, INFINITY), &checked);
        if (b > 0)
            check_both_signs(f, nextafter(v, 0), &checked);
    }
    /* below the smallest subnormal's half, at it, just above it */
    double tiny = decode(f, 1) / 2;
    check_both_signs(f, tiny, &checked);
    check_both_signs(f, nextafter(tiny, 0), &checked);
    check_both_signs(f, nextafter(tiny, 1), &checked);
    check_both_signs(f, 5e-324, &checked);
    check_both_signs(f, 1e300, &checked);
    /* random doubles over the whole exponent range of the format and beyond */
    srand(12345);
    for (int i = 0; i < 200000; i++) {
        double m = (double)rand() / RAND_MAX + (double)rand() / RAND_MAX / 4294967296.0;
        int e = rand() % (2 * f->bias + 2 * f->frac_bits + 8) - f->bias - f->frac_bits - 4;
        check_both_signs(f, ldexp(1.0 + m, e), &checked);
    }
    print_message("%s: %lu conversions checked\n", f->name, checked);
}

static const format f16 = {"double_to_half", 10, 15, 0x7bff, 0x7c00, double_to_half};
static const format bf16 = {"double_to_bf16", 7, 127, 0x7f7f, 0x7f80, double_to_bf16};

/* The bug of issue 15: 0 encoded as 0x3800 (0.5), because frexp(0) gives exponent 0. */
static void zeros_are_zeros(void **state)
{
    (void)state;
    assert_int_equal(double_to_half(0.0), 0x0000);
    assert_int_equal(double_to_half(-0.0), 0x8000);
    assert_int_equal(double_to_bf16(0.0), 0x0000);
    assert_int_equal(double_to_bf16(-0.0), 0x8000);
}

/* Subnormal ends and the carry into the normal range, by hand. */
static void subnormal_edges_by_hand(void **state)
{
    (void)state;
    assert_int_equal(double_to_half(ldexp(1, -24)), 0x0001);        /* smallest subnormal */
    assert_int_equal(double_to_half(ldexp(1, -25)), 0x0000);        /* tie: to even (zero) */
    assert_int_equal(double_to_half(ldexp(3, -26)), 0x0001);        /* 0.75 quantum: up */
    assert_int_equal(double_to_half(ldexp(1023.5, -24)), 0x0400);   /* tie: up to 2^-14 */
    assert_int_equal(double_to_half(ldexp(1022.5, -24)), 0x03fe);   /* tie: to even */
    assert_int_equal(double_to_half(65519.0), 0x7bff);
    assert_int_equal(double_to_half(65520.0), 0x7c00);
    assert_int_equal(double_to_half(-INFINITY), 0xfc00);
    assert_int_equal(double_to_bf16(ldexp(1, -133)), 0x0001);
    assert_int_equal(double_to_bf16(ldexp(1, -134)), 0x0000);
    assert_int_equal(double_to_bf16(ldexp(127.5, -133)), 0x0080);
    assert_int_equal(double_to_bf16(INFINITY), 0x7f80);
    assert_true((double_to_half(NAN) & 0x7c00) == 0x7c00 && (double_to_half(NAN) & 0x3ff));
    assert_true((double_to_bf16(NAN) & 0x7f80) == 0x7f80 && (double_to_bf16(NAN) & 0x7f));
}

static void half_against_independent(void **state)
{
    (void)state;
    exhaustive(&f16);
}

static void bf16_against_independent(void **state)
{
    (void)state;
    exhaustive(&bf16);
}

/* Decoding is exact: every finite pattern round-trips. */
static void round_trips(void **state)
{
    (void)state;
    for (uint32_t b = 0; b < 0x10000; b++) {
        uint16_t h = (uint16_t)b;
        if ((h & 0x7c00) != 0x7c00)
            assert_int_equal(double_to_half(half_to_double(h)), h);
        if ((h & 0x7f80) != 0x7f80)
            assert_int_equal(double_to_bf16(bf16_to_double(h)), h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zeros_are_zeros),
        cmocka_unit_test(subnormal_edges_by_hand),
        cmocka_unit_test(half_against_independent),
        cmocka_unit_test(bf16_against_independent),
        cmocka_unit_test(round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
