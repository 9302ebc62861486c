/* Input kinds named by id (plugin.h section 10, input_kinds.c): what the loader refuses, by
 * name, in a descriptor's input_id, input_params, input_kind and quant; which kind and
 * parameters each spelling resolves to; what get_extension gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "plugin_load.h"

static const sagerun_sage2_quant_params sm89 = {sizeof sm89, 32, 128, 64, 64, 448.0f};
static const sagerun_sage2_quant_params sm90 = {sizeof sm90, 16, 64, 128, 128, 448.0f};

static int no_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *e, size_t n)
{
    (void)p, (void)g, (void)e, (void)n;
    return 0;
}
static int no_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in, void **st,
                     char *e, size_t n)
{
    (void)s, (void)in, (void)st, (void)e, (void)n;
    return 0;
}
static int no_run(void *st, char *e, size_t n)
{
    (void)st, (void)e, (void)n;
    return 0;
}
static void no_destroy(void *st) { (void)st; }

static sagerun_variant_descriptor descriptor(const char *id, const void *params)
{
    sagerun_variant_descriptor d = {
        .struct_size = sizeof d, .abi_major = SAGERUN_PLUGIN_ABI_MAJOR, .name = "kind",
        .backend = SAGERUN_BACKEND_HOST, .geometry = no_geometry, .create = no_create,
        .run = no_run, .destroy = no_destroy, .input_id = id, .input_params = params};
    return d;
}

static const char *problem(const sagerun_variant_descriptor *d)
{
    static char buf[512];
    return sr_descriptor_problem(d, buf, sizeof buf);
}

static void by_id_resolves_to_sage2_with_its_params(void **state)
{
    (void)state;
    sagerun_variant_descriptor d = descriptor(SAGERUN_SAGE2_EXTENSION_ID, &sm90);
    assert_null(problem(&d));
    sr_input_kind k = sr_descriptor_input_kind(&d);
    assert_non_null(k.provider);
    assert_int_equal(k.provider->kind, SAGERUN_INPUT_SAGE2);
    assert_ptr_equal(k.params, &sm90);
    assert_ptr_equal(sr_descriptor_sage2_params(&d), &sm90);
    /* the 1.0/1.1 spelling: its quant */
    d = descriptor(NULL, NULL);
    d.input_kind = SAGERUN_INPUT_SAGE2, d.quant = sm89;
    assert_null(problem(&d));
    assert_ptr_equal(sr_descriptor_sage2_params(&d), &d.quant);
    /* a descriptor of an early 1.2 header (not covering input_id) is read by input_kind alone */
    d.input_id = "garbage past its end";
    d.struct_size = offsetof(sagerun_variant_descriptor, input_id);
    assert_null(problem(&d));
    assert_ptr_equal(sr_descriptor_sage2_params(&d), &d.quant);
    /* the generic core: no sage2 */
    d = descriptor(NULL, NULL);
    assert_null(problem(&d));
    assert_null(sr_descriptor_sage2_params(&d));
    assert_int_equal(sr_descriptor_input_kind(&d).provider->kind, SAGERUN_INPUT_FP16);
}

static void bad_ids_and_params_are_refused_by_name(void **state)
{
    (void)state;
    sagerun_variant_descriptor d = descriptor("vendor.flash/3", NULL);
    assert_string_equal(problem(&d), "variant kind: unknown input kind id \"vendor.flash/3\" "
                                     "(this sagerun knows sagerun.sage2/1)");
    d = descriptor("bad\x1bid", NULL);
    assert_string_equal(problem(&d), "variant kind: unknown input kind id \"bad\\x1bid\" (this "
                                     "sagerun knows sagerun.sage2/1)");
    d = descriptor(SAGERUN_SAGE2_EXTENSION_ID, NULL);
    assert_string_equal(problem(&d), "variant kind: input kind \"sagerun.sage2/1\" needs its "
                                     "parameters (input_params is NULL)");
    sagerun_sage2_quant_params q = sm89;
    q.struct_size = 8;
    d = descriptor(SAGERUN_SAGE2_EXTENSION_ID, &q);
    char want[200];
    snprintf(want, sizeof want, "variant kind: the input_params of input kind \"sagerun.sage2/1\" "
             "have struct_size 8, its parameters need %zu", sizeof q);
    assert_string_equal(problem(&d), want);
    q = sm89, q.q_block_rows = 48;
    assert_string_equal(problem(&d), "variant kind: the input_params of input kind "
                                     "\"sagerun.sage2/1\" are unusable: sage2 quantizer: "
                                     "q_block_rows 48 is not a multiple of q_group_rows 32");
    d = descriptor(NULL, NULL);
    d.input_kind = 9;
    assert_string_equal(problem(&d), "variant kind: unknown input kind 9");
}

static void both_spellings_must_agree(void **state)
{
    (void)state;
    sagerun_variant_descriptor d = descriptor(SAGERUN_SAGE2_EXTENSION_ID, &sm89);
    d.input_kind = SAGERUN_INPUT_SAGE2, d.quant = sm89;
    assert_null(problem(&d)); /* alike: one kind */
    assert_ptr_equal(sr_descriptor_sage2_params(&d), &sm89);
    d.quant = sm90;
    assert_string_equal(problem(&d),
                        "variant kind: input_kind 1 (sage2) with its quant and input_id "
                        "\"sagerun.sage2/1\" with input_params name different parameters "
                        "(plugin.h section 10: set input_id alone, or both alike)");
    d.input_kind = 7;
    assert_string_equal(problem(&d),
                        "variant kind: input_kind 7 (unknown) and input_id \"sagerun.sage2/1\" "
                        "name different input kinds (plugin.h section 10: set input_id alone, "
                        "or both alike)");
}

static void get_extension_knows_its_ids_only(void **state)
{
    (void)state;
    const sagerun_sage2_extension *x = sr_extension_get(NULL, SAGERUN_SAGE2_EXTENSION_ID);
    assert_ptr_equal(x, &sr_sage2_extension);
    assert_true(x->struct_size == sizeof *x && x->quantize && x->tensors_free &&
                x->instance_tensors);
    assert_null(sr_extension_get(NULL, "sagerun.sage2/2"));
    assert_null(sr_extension_get(NULL, "sagerun.sage2"));
    assert_null(sr_extension_get(NULL, NULL));
    /* outside any call into an instance there are no instance tensors */
    assert_null(x->instance_tensors(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_id_resolves_to_sage2_with_its_params),
        cmocka_unit_test(bad_ids_and_params_are_refused_by_name),
        cmocka_unit_test(both_spellings_must_agree),
        cmocka_unit_test(get_extension_knows_its_ids_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
