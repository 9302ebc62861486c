/* fp16 / bf16 <-> double for the reference oracle (reference_attention.h). The conversions to
 * double are exact; the conversions from double round once, to nearest even, straight from the
 * double (no double rounding through float), with exact zeros, the subnormal range and overflow
 * to infinity handled. Header-only (static functions) so that test/unit/test_reference_convert.c
 * checks the very code the plugins run. */
#ifndef SAGERUN_REFERENCE_CONVERT_H
#define SAGERUN_REFERENCE_CONVERT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(frac, -24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp(frac | 0x400, exp - 25);
    return sign ? -v : v;
}

static double bf16_to_double(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The bit pattern (sign excluded) of the magnitude a >= 0 rounded to nearest even in a binary
 * format with frac_bits fraction bits, exponent bias `bias` and normal exponents emin..emax;
 * beyond the largest finite value it is infinity. */
static uint16_t round_magnitude(double a, int frac_bits, int bias, int emin, int emax)
{
    const uint16_t inf = (uint16_t)((emax + bias + 1) << frac_bits);
    if (a == 0)
        return 0;
    if (isinf(a))
        return inf;
    int e;
    frexp(a, &e);    /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1; /* a = 1.f * 2^exp */
    if (exp < emin)
        exp = emin; /* subnormal: the quantum stays 2^(emin - frac_bits) */
    /* a in units of the quantum: exact (a power-of-two scaling), then one rounding to integer in
     * the current rounding mode, which is nearest-even. */
    uint32_t m = (uint32_t)nearbyint(ldexp(a, frac_bits - exp));
    if (m >> (frac_bits + 1)) { /* rounded up into the next binade */
        m >>= 1;
        exp++;
    }
    if (m < (1u << frac_bits))
        return (uint16_t)m; /* subnormal or zero (biased exponent 0) */
    if (exp > emax)
        return inf;
    return (uint16_t)(((uint32_t)(exp + bias) << frac_bits) | (m & ((1u << frac_bits) - 1)));
}

static uint16_t double_to_half(double x)
{
    if (isnan(x))
        return 0x7e00;
    return (uint16_t)((signbit(x) ? 0x8000 : 0) | round_magnitude(fabs(x), 10, 15, -14, 15));
}

static uint16_t double_to_bf16(double x)
{
    if (isnan(x))
        return 0x7fc0;
    return (uint16_t)((signbit(x) ? 0x8000 : 0) | round_magnitude(fabs(x), 7, 127, -126, 127));
}

#endif
