/* The accuracy check on the device (compare.cu: exact attention in fp32 over sampled rows) against
 * the host's (verify.c: in double), on a problem of every ABI 1.2 feature (test/unit/
 * accuracy_cases.h): the host `reference`'s output, and a deliberately wrong one, measured on the
 * host and, uploaded with the same inputs, on the device. The two measures agree to ~1e-6 on every
 * feature, over all rows and over a few sampled ones. One line per feature. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../unit/accuracy_cases.h"
#include "engine.h"
#include "gpu_test.h"

typedef struct fixture {
    sagerun_context *dev, *host;
    sagerun_registry *reg; /* `reference`, on the host */
} fixture;

static int setup(void **state)
{
    static fixture f;
    char path[4096];
    if (!(f.dev = gpu_test_context()) ||
        sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f.host, NULL) != SAGERUN_OK ||
        sagerun_registry_create(f.host, &f.reg, NULL) != SAGERUN_OK)
        return -1;
    gpu_test_path("SAGERUN_TEST_PLUGINS", SAGERUN_TEST_PLUGINS, "reference.so", path, sizeof path);
    sagerun_error e = {0};
    if (sagerun_registry_add_path(f.reg, path, &e) != SAGERUN_OK) {
        fprintf(stderr, "%s: %s\n", path, e.message);
        return -1;
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->host);
    sagerun_context_destroy(f->dev);
    return 0;
}

/* The case's synthetic inputs on the host, and the oracle's view of them. */
static sagerun_inputs *host_inputs(fixture *f, const acc_case *c, acc_view *w)
{
    int32_t cu_q[5], cu_kv[5];
    sagerun_sequences seq;
    sagerun_problem p = acc_problem(c, cu_q, cu_kv, &seq);
    sagerun_inputs *in = NULL;
    sagerun_error e = {0};
    if (sagerun_inputs_create_synthetic_seq(f->host, &p, c->varlen || c->page_size ? &seq : NULL,
                                            17, &in, &e) != SAGERUN_OK)
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

/* The same inputs (bytes, lengths, block table) on the device. */
static sagerun_inputs *device_inputs(fixture *f, const sagerun_inputs *h, const acc_case *c)
{
    sagerun_sequences view = {.struct_size = sizeof view};
    assert_int_equal(sagerun_inputs_sequences(h, &view, NULL), SAGERUN_OK);
    sagerun_inputs *in = NULL;
    sagerun_error e = {0};
    if (sagerun_inputs_create_from_host_seq(
            f->dev, &h->problem, c->varlen || c->page_size ? &view : NULL,
            (const void *)(uintptr_t)h->q, (const void *)(uintptr_t)h->k,
            (const void *)(uintptr_t)h->v, &in, &e) != SAGERUN_OK)
        fail_msg("%s: device inputs: %s", c->name, e.message);
    return in;
}

/* `reference`'s output on the host inputs, copied out (q_bytes). */
static uint16_t *reference_output(fixture *f, sagerun_inputs *in, const acc_case *c)
{
    sagerun_instance *inst;
    sagerun_error e = {0};
    double s;
    long index = sagerun_registry_find(f->reg, "reference");
    assert_true(index >= 0);
    if (sagerun_instance_create(f->reg, (size_t)index, f->host, in, &inst, &e) != SAGERUN_OK ||
        sagerun_instance_run(inst, &s, &e) != SAGERUN_OK)
        fail_msg("reference on %s: %s", c->name, e.message);
    uint16_t *out = malloc(in->q_bytes);
    assert_non_null(out);
    assert_int_equal(sagerun_mem_download(f->host, out, sagerun_instance_output(inst, NULL),
                                          in->q_bytes, &e),
                     SAGERUN_OK);
    sagerun_instance_destroy(inst);
    return out;
}

/* out (host memory, laid out as O) measured in ctx over `rows` rows (0: all). */
static sr_accuracy measure(sagerun_context *ctx, const sagerun_inputs *in, const uint16_t *out,
                           uint32_t rows, const char *what)
{
    uint64_t addr;
    sagerun_error e = {0};
    assert_int_equal(sagerun_mem_alloc(ctx, in->q_bytes, &addr, &e), SAGERUN_OK);
    assert_int_equal(sagerun_mem_upload(ctx, addr, out, in->q_bytes, &e), SAGERUN_OK);
    sr_accuracy a;
    if (sr_verify_accuracy(ctx, in, rows, addr, &a, &e) != SAGERUN_OK)
        fail_msg("%s: accuracy: %s", what, e.message);
    sagerun_mem_free(ctx, addr);
    return a;
}

/* The device's measure is the host's: fp32 exact attention is within ~1e-6 of double's. */
static bool agree(const sr_accuracy *d, const sr_accuracy *h)
{
    return d->rows == h->rows && d->nonfinite == h->nonfinite &&
           fabs(d->rel_l1 - h->rel_l1) <= 1e-6 + 1e-5 * h->rel_l1 &&
           fabs(d->cosine - h->cosine) <= 1e-6 &&
           fabs(d->rmse - h->rmse) <= 1e-6 + 1e-5 * h->rmse &&
           fabs(d->max_abs - h->max_abs) <= 1e-5 && strcmp(d->reference, "fp32-device") == 0 &&
           strcmp(h->reference, "fp64-host") == 0;
}

/* Both measures of out, one line; false when they disagree. */
static bool both(fixture *f, sagerun_inputs *hi, sagerun_inputs *di, const uint16_t *out,
                 uint32_t rows, const char *name, const char *what)
{
    sr_accuracy h = measure(f->host, hi, out, rows, name);
    sr_accuracy d = measure(f->dev, di, out, rows, name);
    bool ok = agree(&d, &h);
    printf("%s %-44s %-9s rows %4llu  rel_l1 host %.9g device %.9g  cosine host %.12f device "
           "%.12f  max_abs host %.6g device %.6g\n",
           ok ? "ok  " : "FAIL", name, what, (unsigned long long)h.rows, h.rel_l1, d.rel_l1,
           h.cosine, d.cosine, h.max_abs, d.max_abs);
    return ok;
}

static void device_measures_as_host(void **state)
{
    fixture *f = *state;
    unsigned failed = 0;
    for (size_t i = 0; i < ACC_CASES; i++) {
        const acc_case *c = &acc_cases[i];
        acc_view w;
        sagerun_inputs *hi = host_inputs(f, c, &w);
        sagerun_inputs *di = device_inputs(f, hi, c);
        uint16_t *ref = reference_output(f, hi, c);
        uint16_t *wrong = acc_oracle_output(&w, c->flaw);
        failed += !both(f, hi, di, ref, 0, c->name, "reference");
        failed += !both(f, hi, di, ref, 7, c->name, "7 rows");
        failed += !both(f, hi, di, wrong, 0, c->name, "wrong");
        free(ref);
        free(wrong);
        sagerun_inputs_destroy(di);
        sagerun_inputs_destroy(hi);
    }
    if (failed)
        fail_msg("%u measures of the device differ from the host's (lines marked FAIL)", failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_measures_as_host),
    };
    sagerun_context *probe = gpu_test_context();
    if (!probe)
        return 0; /* skipped, reason printed */
    sagerun_context_destroy(probe);
    return cmocka_run_group_tests(tests, setup, teardown);
}
