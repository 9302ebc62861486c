/* The accuracy check of a comparison (verify.c, host backend: exact attention in double over
 * sampled rows) on a problem of every ABI 1.2 feature (accuracy_cases.h): kv_len != q_len, causal
 * and window in both alignments, softcap, varlen, paged K/V, rows that attend no key. Each is
 * measured against an oracle written apart from the library's: an exact output reads as exact
 * (fp16 rounding only), a deliberately wrong one (the mask, alignment, keys, softcap or pages
 * ignored) as wrong, and `reference`'s own output as accurate. Also: the one mask rule of the
 * kernels (mask_math.h) is sagerun_problem_key_range's, the rows sampled, and the input guard
 * covering the sequences' arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accuracy_cases.h"
#include "engine.h"
#include "kernels/mask_math.h"

/* fp16 rounds to 2^-11 relative (about 1.7e-4 relative L1 on these inputs), bf16 to 2^-8. */
static double exact_limit(const sagerun_problem *p)
{
    return p->dtype == SAGERUN_DTYPE_BF16 ? 4e-3 : 5e-4;
}

static int setup(void **state)
{
    sagerun_context *ctx = NULL;
    if (sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL) != SAGERUN_OK)
        return -1;
    *state = ctx;
    return 0;
}

static int teardown(void **state)
{
    sagerun_context_destroy(*state);
    return 0;
}

/* The case's synthetic inputs on the host backend, and the oracle's view of them. */
static sagerun_inputs *make_inputs(sagerun_context *ctx, const acc_case *c, acc_view *w)
{
    int32_t cu_q[5], cu_kv[5];
    sagerun_sequences seq;
    sagerun_problem p = acc_problem(c, cu_q, cu_kv, &seq);
    sagerun_inputs *in = NULL;
    sagerun_error e = {0};
    if (sagerun_inputs_create_synthetic_seq(ctx, &p, c->varlen || c->page_size ? &seq : NULL, 17,
                                            &in, &e) != SAGERUN_OK)
        fail_msg("%s: inputs: %s", c->name, e.message);
    sagerun_sequences view = {.struct_size = sizeof view};
    assert_int_equal(sagerun_inputs_sequences(in, &view, NULL), SAGERUN_OK);
    *w = (acc_view){.p = in->problem,
                    .q = (const uint16_t *)(uintptr_t)in->q,
                    .k = (const uint16_t *)(uintptr_t)in->k,
                    .v = (const uint16_t *)(uintptr_t)in->v,
                    .cu_q = view.cu_seqlens_q,
                    .cu_kv = view.cu_seqlens_kv,
                    .table = view.block_table};
    return in;
}

static uint64_t upload(sagerun_context *ctx, const sagerun_inputs *in, const uint16_t *out)
{
    uint64_t addr;
    assert_int_equal(sagerun_mem_alloc(ctx, in->q_bytes, &addr, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_mem_upload(ctx, addr, out, in->q_bytes, NULL), SAGERUN_OK);
    return addr;
}

static bool near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-14;
}

/* The library's measure agrees with the oracle's (the same rows, the same sums up to rounding). */
static void assert_agrees(const char *what, const sr_accuracy *got, const sr_accuracy *want)
{
    if (!got->present || got->rows != want->rows || got->elements != want->elements ||
        got->nonfinite != 0 || !near(got->rel_l1, want->rel_l1, 1e-9) ||
        !near(got->cosine, want->cosine, 1e-12) || !near(got->rmse, want->rmse, 1e-9) ||
        !near(got->max_abs, want->max_abs, 1e-9))
        fail_msg("%s: measured rows %llu rel_l1 %.12g cosine %.15g rmse %.12g max_abs %.12g; the "
                 "oracle's rows %llu rel_l1 %.12g cosine %.15g rmse %.12g max_abs %.12g",
                 what, (unsigned long long)got->rows, got->rel_l1, got->cosine, got->rmse,
                 got->max_abs, (unsigned long long)want->rows, want->rel_l1, want->cosine,
                 want->rmse, want->max_abs);
}

/* Measures out (host memory, laid out as O) over `rows` rows against the oracle's measure. */
static sr_accuracy measure(sagerun_context *ctx, const sagerun_inputs *in, const acc_view *w,
                           const uint16_t *out, uint32_t rows, const char *what)
{
    uint64_t addr = upload(ctx, in, out);
    sr_accuracy got;
    sagerun_error e = {0};
    if (sr_verify_accuracy(ctx, in, rows, addr, &got, &e) != SAGERUN_OK)
        fail_msg("%s: accuracy: %s", what, e.message);
    uint64_t n;
    uint64_t *sampled = acc_sampled_rows(&w->p, rows, &n);
    sr_accuracy want = acc_expected(w, out, sampled, n);
    assert_agrees(what, &got, &want);
    assert_string_equal(got.reference, "fp64-host");
    free(sampled);
    sagerun_mem_free(ctx, addr);
    return got;
}

/* The kernels' mask (mask_math.h) is sagerun_problem_key_range's over every small case. */
static void mask_rule_is_key_range(void **state)
{
    static const int32_t sides[] = {-1, 0, 1, 3};
    sagerun_problem p = sagerun_problem_make(1, 1, 1, 1, 8);
    unsigned checked = 0;
    for (p.causal = 0; p.causal < 2; p.causal++)
        for (p.align = 0; p.align < 2; p.align++)
            for (p.window = 0; p.window < 2; p.window++)
                for (size_t l = 0; l < 4; l++)
                    for (size_t r = 0; r < 4; r++)
                        for (uint32_t q_len = 0; q_len < 7; q_len++)
                            for (uint32_t kv_len = 0; kv_len < 7; kv_len++)
                                for (uint32_t i = 0; i < q_len; i++) {
                                    p.window_left = sides[l];
                                    p.window_right = sides[r];
                                    uint32_t a, b, x, y;
                                    sagerun_problem_key_range(&p, q_len, kv_len, i, &a, &b);
                                    sr_mask_key_range(p.causal, p.align, p.window, sides[l],
                                                      sides[r], q_len, kv_len, i, &x, &y);
                                    if (a != x || b != y)
                                        fail_msg("causal %u align %u window %u (%d, %d) q_len %u "
                                                 "kv_len %u row %u: key_range [%u, %u), the "
                                                 "kernels' [%u, %u)",
                                                 p.causal, p.align, p.window, sides[l], sides[r],
                                                 q_len, kv_len, i, a, b, x, y);
                                    checked++;
                                }
    assert_true(checked > 5000);
}

/* An exact output (the oracle's, rounded) reads as accurate to the rounding on every feature. */
static void exact_output_reads_exact(void **state)
{
    sagerun_context *ctx = *state;
    for (size_t i = 0; i < ACC_CASES; i++) {
        acc_view w;
        sagerun_inputs *in = make_inputs(ctx, &acc_cases[i], &w);
        uint16_t *out = acc_oracle_output(&w, ACC_FLAW_NONE);
        sr_accuracy a = measure(ctx, in, &w, out, 0, acc_cases[i].name);
        printf("  %-44s exact:  rel_l1 %.3g cosine %.9f over %llu rows\n", acc_cases[i].name,
               a.rel_l1, a.cosine, (unsigned long long)a.rows);
        if (!(a.rel_l1 <= exact_limit(&w.p)) || !(a.cosine > 0.99999))
            fail_msg("%s: the exact output measured rel_l1 %g, cosine %g", acc_cases[i].name,
                     a.rel_l1, a.cosine);
        assert_int_equal(a.rows, acc_row_total(&w.p));
        free(out);
        sagerun_inputs_destroy(in);
    }
}

/* A wrong output (what each case's feature changes, ignored) reads as inaccurate. */
static void wrong_output_reads_wrong(void **state)
{
    sagerun_context *ctx = *state;
    for (size_t i = 0; i < ACC_CASES; i++) {
        acc_view w;
        sagerun_inputs *in = make_inputs(ctx, &acc_cases[i], &w);
        uint16_t *out = acc_oracle_output(&w, acc_cases[i].flaw);
        sr_accuracy a = measure(ctx, in, &w, out, 0, acc_cases[i].name);
        printf("  %-44s wrong:  rel_l1 %.3g cosine %.6f\n", acc_cases[i].name, a.rel_l1,
               a.cosine);
        if (!(a.rel_l1 > 0.02))
            fail_msg("%s: an output with flaw %d measured rel_l1 %g: not seen as wrong",
                     acc_cases[i].name, acc_cases[i].flaw, a.rel_l1);
        free(out);
        sagerun_inputs_destroy(in);
    }
}

/* The output of a variant of the plugin file `file` on the case's inputs, measured. */
static sr_accuracy variant_accuracy(sagerun_context *ctx, const char *file, const char *name,
                                    const acc_case *c)
{
    char path[4096];
    const char *dir = getenv("SAGERUN_TEST_PLUGINS");
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : SAGERUN_TEST_PLUGINS, file);
    sagerun_registry *reg;
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_create(ctx, &reg, &e), SAGERUN_OK);
    if (sagerun_registry_add_path(reg, path, &e) != SAGERUN_OK)
        fail_msg("%s: %s", path, e.message);
    long index = sagerun_registry_find(reg, name);
    assert_true(index >= 0);
    acc_view w;
    sagerun_inputs *in = make_inputs(ctx, c, &w);
    sagerun_instance *inst;
    if (sagerun_instance_create(reg, (size_t)index, ctx, in, &inst, &e) != SAGERUN_OK)
        fail_msg("%s on %s: %s", name, c->name, e.message);
    double s;
    if (sagerun_instance_run(inst, &s, &e) != SAGERUN_OK)
        fail_msg("%s on %s: run: %s", name, c->name, e.message);
    sr_accuracy a;
    if (sr_verify_accuracy(ctx, in, 0, sagerun_instance_output(inst, NULL), &a, &e) != SAGERUN_OK)
        fail_msg("%s on %s: accuracy: %s", name, c->name, e.message);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    sagerun_registry_destroy(reg);
    printf("  %-44s %-13s rel_l1 %.3g cosine %.9f\n", c->name, name, a.rel_l1, a.cosine);
    if (!(a.rel_l1 <= exact_limit(&w.p)) || !(a.cosine > 0.99999) || a.nonfinite)
        fail_msg("%s on %s: rel_l1 %g, cosine %g, %llu non-finite: not exact attention", name,
                 c->name, a.rel_l1, a.cosine, (unsigned long long)a.nonfinite);
    return a;
}

/* `reference` and `reference-mt` compute exact attention on every feature, as measured. */
static void reference_reads_exact(void **state)
{
    sagerun_context *ctx = *state;
    for (size_t i = 0; i < ACC_CASES; i++) {
        sr_accuracy one = variant_accuracy(ctx, "reference.so", "reference", &acc_cases[i]);
        sr_accuracy mt = variant_accuracy(ctx, "reference-mt.so", "reference-mt", &acc_cases[i]);
        assert_true(one.rel_l1 == mt.rel_l1); /* the same bytes */
    }
}

/* A varlen problem samples packed rows (h * total_q + t), a dense one its rows as before
 * ((b * Hq + h) * N + n): a few rows of each, the oracle measuring the same ones. */
static void rows_sampled(void **state)
{
    sagerun_context *ctx = *state;
    static const size_t cases[] = {0, 1, 7, 9}; /* dense, HND, varlen, varlen paged */
    static const uint32_t counts[] = {1, 5, 7, 11};
    for (size_t i = 0; i < SR_ARRAY_LEN(cases); i++) {
        const acc_case *c = &acc_cases[cases[i]];
        acc_view w;
        sagerun_inputs *in = make_inputs(ctx, c, &w);
        uint16_t *out = acc_oracle_output(&w, c->flaw); /* wrong: every row tells */
        for (size_t k = 0; k < SR_ARRAY_LEN(counts); k++) {
            sr_accuracy a = measure(ctx, in, &w, out, counts[k], c->name);
            assert_int_equal(a.rows, counts[k]);
        }
        assert_int_equal(sr_verify_accuracy_rows(&w.p, 0, SAGERUN_BACKEND_HOST),
                         acc_row_total(&w.p));
        free(out);
        sagerun_inputs_destroy(in);
    }
}

/* A row attending no key is exact at 0: an output with anything else there is measured so. */
static void empty_rows_are_zero(void **state)
{
    sagerun_context *ctx = *state;
    const acc_case *c = &acc_cases[3]; /* bottom-right, q_len 30 > kv_len 18: 12 empty rows */
    acc_view w;
    sagerun_inputs *in = make_inputs(ctx, c, &w);
    uint16_t *out = acc_oracle_output(&w, ACC_FLAW_NONE);
    acc_row r0 = acc_decode(&w, 0); /* row 0 of sequence 0, head 0: attends nothing */
    for (uint32_t d = 0; d < w.p.head_dim; d++)
        assert_int_equal(out[r0.q_at + d], 0);
    out[r0.q_at] = sr_float_to_bf16(1.0f);
    sr_accuracy a = measure(ctx, in, &w, out, 0, "an empty row written 1");
    assert_true(fabs(a.max_abs - 1.0) < 1e-12);
    free(out);
    sagerun_inputs_destroy(in);
}

/* The input guard keeps the sequences' arrays: a write into a length or a page is caught, named
 * and put back. */
static void guard_keeps_sequences(void **state)
{
    sagerun_context *ctx = *state;
    acc_view w;
    sagerun_inputs *in = make_inputs(ctx, &acc_cases[9], &w);
    static const char *names[] = {"cu_seqlens_q", "cu_seqlens_kv", "block_table"};
    int32_t *arrays[] = {(int32_t *)(uintptr_t)in->seq.d_cu_q,
                         (int32_t *)(uintptr_t)in->seq.d_cu_kv,
                         (int32_t *)(uintptr_t)in->seq.d_table};
    sr_input_guard g;
    sagerun_error e = {0};
    assert_int_equal(sr_input_guard_take(ctx, in, &g, &e), SAGERUN_OK);
    for (size_t i = 0; i < 3; i++) {
        int32_t was = arrays[i][1];
        arrays[i][1] = was + 1;
        const char *changed = NULL;
        assert_int_equal(sr_input_guard_check(ctx, &g, &changed, &e), SAGERUN_OK);
        assert_non_null(changed);
        assert_string_equal(changed, names[i]);
        assert_int_equal(arrays[i][1], was);
    }
    const char *changed = "x";
    assert_int_equal(sr_input_guard_check(ctx, &g, &changed, &e), SAGERUN_OK);
    assert_null(changed);
    sr_input_guard_release(ctx, &g);
    sagerun_inputs_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mask_rule_is_key_range),
        cmocka_unit_test(exact_output_reads_exact),
        cmocka_unit_test(wrong_output_reads_wrong),
        cmocka_unit_test(rows_sampled),
        cmocka_unit_test(empty_rows_are_zero),
        cmocka_unit_test(guard_keeps_sequences),
        cmocka_unit_test(reference_reads_exact),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
