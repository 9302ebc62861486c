/* The synthetic generator on the host: determinism, fixed-point rounding, distribution, knobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "kernels/generate_math.h"
#include "kernels/quantize_math.h"

static uint16_t *gen(const sagerun_problem *p, const sr_synthetic *syn, int tensor)
{
    uint64_t heads = tensor == 0 ? p->heads_q : p->heads_kv;
    uint64_t n = (uint64_t)p->batch * p->seq_len * heads * p->head_dim;
    uint16_t *out = malloc(n * 2);
    sagerun_error err = {0};
    assert_int_equal(sr_generate_tensor_host(p, syn, tensor, out, &err), SAGERUN_OK);
    return out;
}

/* The fixed-point -> fp16 rounding against the compiler's own conversion (via double, exact). */
static void test_fixed_to_half(void **state)
{
    (void)state;
    uint64_t s = 5;
    for (int i = 0; i < 2000000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t v = (int64_t)(s >> (5 + (s & 31))) * ((s >> 63) ? -1 : 1);
        double exact = ldexp((double)v, -SR_GEN_FRAC_BITS); /* |v| < 2^59: exact in double? */
        if ((uint64_t)llabs(v) >= (1ull << 53))
            continue; /* keep the reference exact */
        _Float16 ref = (_Float16)exact;
        uint16_t want;
        memcpy(&want, &ref, 2);
        if ((want & 0x7C00) == 0x7C00) /* the generator saturates instead of overflowing */
            want = (uint16_t)((want & 0x8000) | 0x7BFF);
        if (v == 0)
            want = 0;
        uint16_t got = sr_gen_fixed_to_bits16(v, SR_GEN_FRAC_BITS, 10, 15);
        if (got != want)
            fail_msg("fixed %lld -> 0x%04x, reference 0x%04x", (long long)v, got, want);
    }
    /* bf16 against rounding through float (exact for |v| < 2^24 units) */
    for (int64_t v = -300000; v <= 300000; v += 7) {
        float f = (float)ldexp((double)v, -SR_GEN_FRAC_BITS);
        assert_int_equal(sr_gen_fixed_to_bits16(v, SR_GEN_FRAC_BITS, 7, 127), sr_float_to_bf16(f));
    }
    assert_int_equal(sr_gen_fixed_to_bits16(1ll << 40, 40, 10, 15), 0x3C00);          /* 1.0 */
    assert_int_equal(sr_gen_fixed_to_bits16(-(3ll << 39), 40, 10, 15), 0xBE00);       /* -1.5 */
    assert_int_equal(sr_gen_fixed_to_bits16(1ll << 56, 40, 10, 15), 0x7BFF);          /* sat */
    assert_int_equal(sr_gen_fixed_to_bits16(1ll << 16, 40, 10, 15), 0x0001);          /* 2^-24 */
    assert_int_equal(sr_gen_fixed_to_bits16(1ll << 15, 40, 10, 15), 0x0000);          /* tie->0 */
}

static void test_deterministic_and_layout_free(void **state)
{
    (void)state;
    sagerun_problem nhd = sagerun_problem_make(2, 50, 4, 2, 32), hnd = nhd;
    hnd.layout = SAGERUN_LAYOUT_HND;
    sr_synthetic syn;
    sr_synthetic_default(&syn, 123);
    for (int t = 0; t < 3; t++) {
        uint16_t *a = gen(&nhd, &syn, t), *b = gen(&nhd, &syn, t), *c = gen(&hnd, &syn, t);
        uint32_t h = t == 0 ? 4 : 2;
        assert_memory_equal(a, b, (size_t)2 * 50 * h * 32 * 2);
        for (uint32_t bb = 0; bb < 2; bb++)
            for (uint32_t n = 0; n < 50; n++)
                for (uint32_t hh = 0; hh < h; hh++)
                    for (uint32_t d = 0; d < 32; d++)
                        assert_int_equal(a[((bb * 50 + n) * h + hh) * 32 + d],
                                         c[((bb * h + hh) * 50 + n) * 32 + d]);
        free(a);
        free(b);
        free(c);
    }
    /* another seed gives other values; Q, K, V differ from each other */
    sr_synthetic other = syn;
    other.seed = 124;
    uint16_t *a = gen(&nhd, &syn, 1), *b = gen(&nhd, &other, 1), *v = gen(&nhd, &syn, 2);
    assert_memory_not_equal(a, b, 64);
    assert_memory_not_equal(a, v, 64);
    free(a);
    free(b);
    free(v);
}

/* Golden values: the first elements of the seed workload's Q, K, V (guards against accidental
 * changes of the generator, which would change every report's inputs). */
static void test_pinned_values(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 4, 2, 2, 8);
    sr_synthetic syn;
    sr_synthetic_default(&syn, 440420);
    uint16_t *q = gen(&p, &syn, 0), *k = gen(&p, &syn, 1), *v = gen(&p, &syn, 2);
    printf("pinned: q %04x %04x %04x %04x  k %04x %04x %04x %04x  v %04x %04x %04x %04x\n", q[0],
           q[1], q[2], q[3], k[0], k[1], k[2], k[3], v[0], v[1], v[2], v[3]);
    static const uint16_t want[12] = {0x39ff, 0x3b9b, 0x3bc3, 0x3b68, 0xbc86, 0x427a,
                                      0x395d, 0xbbf4, 0x3f76, 0xc0ae, 0xb8b8, 0xbdd4};
    const uint16_t got[12] = {q[0], q[1], q[2], q[3], k[0], k[1], k[2], k[3], v[0], v[1], v[2], v[3]};
    assert_memory_equal(got, want, sizeof want);
    free(q);
    free(k);
    free(v);
}

/* Mean 0, std about 1 for Q and V; K's per-channel bias with std about k_bias. */
static void test_distribution(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 2048, 2, 2, 64);
    sr_synthetic syn;
    sr_synthetic_default(&syn, 9);
    syn.k_bias = 2.0;
    uint16_t *q = gen(&p, &syn, 0), *k = gen(&p, &syn, 1);
    uint64_t n = 2048ull * 2 * 64;
    double sum = 0, sq = 0, mx = 0;
    for (uint64_t i = 0; i < n; i++) {
        double x = sr_half_to_float(q[i]);
        sum += x;
        sq += x * x;
        mx = fabs(x) > mx ? fabs(x) : mx;
    }
    double mean = sum / (double)n, sd = sqrt(sq / (double)n - mean * mean);
    printf("q: mean %.4f std %.4f max %.3f\n", mean, sd, mx);
    assert_true(fabs(mean) < 0.02 && fabs(sd - 1.0) < 0.02 && mx < 3.47 && mx > 3.0);
    double lag1 = 0; /* neighbouring elements are uncorrelated */
    for (uint64_t i = 0; i + 1 < n; i++)
        lag1 += sr_half_to_float(q[i]) * sr_half_to_float(q[i + 1]);
    assert_true(fabs(lag1 / sq) < 0.01);
    /* K: per-channel means spread with std ~2; within a channel std ~1 */
    double msum = 0, msq = 0, within = 0;
    for (uint32_t col = 0; col < 128; col++) {
        double s1 = 0, s2 = 0;
        for (uint32_t t = 0; t < 2048; t++) {
            double x = sr_half_to_float(k[(uint64_t)t * 128 + col]);
            s1 += x;
            s2 += x * x;
        }
        double m = s1 / 2048;
        msum += m;
        msq += m * m;
        within += s2 / 2048 - m * m;
    }
    double bias_sd = sqrt(msq / 128 - (msum / 128) * (msum / 128));
    printf("k: channel-mean std %.3f, within-channel std %.3f\n", bias_sd, sqrt(within / 128));
    assert_true(bias_sd > 1.5 && bias_sd < 2.5);
    assert_true(fabs(sqrt(within / 128) - 1.0) < 0.05);
    free(q);
    free(k);
}

static void test_outliers(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 1024, 4, 2, 64);
    sr_synthetic syn;
    sr_synthetic_default(&syn, 3);
    syn.k_bias = 0;
    syn.outlier_channels = 4;
    syn.outlier_scale = 10;
    uint16_t *q = gen(&p, &syn, 0), *k = gen(&p, &syn, 1);
    /* per (head, channel) std: exactly 4 channels per head stand out, the same in Q heads 2h,
     * 2h+1 and K head h */
    for (uint32_t hk = 0; hk < 2; hk++) {
        int outl_k[64], count = 0;
        for (uint32_t c = 0; c < 64; c++) {
            double s2 = 0;
            for (uint32_t t = 0; t < 1024; t++) {
                double x = sr_half_to_float(k[((uint64_t)t * 2 + hk) * 64 + c]);
                s2 += x * x;
            }
            outl_k[c] = sqrt(s2 / 1024) > 5;
            count += outl_k[c];
        }
        assert_int_equal(count, 4);
        for (uint32_t g = 0; g < 2; g++)
            for (uint32_t c = 0; c < 64; c++) {
                double s2 = 0;
                for (uint32_t t = 0; t < 1024; t++) {
                    double x = sr_half_to_float(q[((uint64_t)t * 4 + hk * 2 + g) * 64 + c]);
                    s2 += x * x;
                }
                assert_int_equal(sqrt(s2 / 1024) > 5, outl_k[c]);
            }
    }
    free(q);
    free(k);
}

static void test_knobs_checked(void **state)
{
    (void)state;
    sagerun_problem p = sagerun_problem_make(1, 8, 1, 1, 64);
    sr_synthetic syn;
    sagerun_error err = {0};
    uint16_t buf[8 * 64];
    sr_synthetic_default(&syn, 1);
    syn.k_bias = -1;
    assert_int_equal(sr_generate_tensor_host(&p, &syn, 1, buf, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "k_bias"));
    sr_synthetic_default(&syn, 1);
    syn.outlier_channels = 65;
    assert_int_equal(sr_generate_tensor_host(&p, &syn, 1, buf, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "outlier_channels"));
    sr_synthetic_default(&syn, 1);
    syn.outlier_scale = 0.5;
    assert_int_equal(sr_generate_tensor_host(&p, &syn, 1, buf, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "outlier_scale"));
    p.dtype = SAGERUN_DTYPE_F32;
    sr_synthetic_default(&syn, 1);
    assert_int_equal(sr_generate_tensor_host(&p, &syn, 1, buf, &err), SAGERUN_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_to_half),   cmocka_unit_test(test_deterministic_and_layout_free),
        cmocka_unit_test(test_pinned_values),   cmocka_unit_test(test_distribution),
        cmocka_unit_test(test_outliers),        cmocka_unit_test(test_knobs_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
