/* The plugin contract of include/sagerun/plugin.h, seen from the plugin's side: contract_probe.so
 * (written from the header alone) records the calls it receives and every rule broken; the 1.0
 * fixture (abi10_fake.so, built against the frozen 1.0 header) loads and runs unchanged; variant
 * parameters are bound, labelled and refused with the key named. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "plugin_load.h"
#include "quantize.h"

#define FAKES SAGERUN_TEST_FAKES
#define PROBE FAKES "/contract_probe.so"

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    sagerun_inputs *in;
    const char *(*trace)(void);
    int (*breaches)(const char **what);
    void (*reset)(void);
    void *probe; /* the probe's dlopen handle: the registry's, opened again */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    sagerun_error e = {0};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f->ctx, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_create(f->ctx, &f->reg, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(f->reg, FAKES, &e), SAGERUN_OK);
    sagerun_problem p = sagerun_problem_make(1, 64, 2, 2, 64);
    assert_int_equal(sagerun_inputs_create_synthetic(f->ctx, &p, 7, &f->in, &e), SAGERUN_OK);
    f->probe = dlopen(PROBE, RTLD_NOW | RTLD_NOLOAD); /* the registry loaded it: same copy */
    assert_non_null(f->probe);
    *(void **)&f->trace = dlsym(f->probe, "contract_probe_trace");
    *(void **)&f->breaches = dlsym(f->probe, "contract_probe_breaches");
    *(void **)&f->reset = dlsym(f->probe, "contract_probe_reset");
    assert_non_null(f->trace);
    assert_non_null(f->breaches);
    assert_non_null(f->reset);
    f->reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_inputs_destroy(f->in);
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    dlclose(f->probe);
    free(f);
    return 0;
}

/* The probe found no breach of the contract. */
static void assert_no_breach(const fixture *f)
{
    const char *what;
    int n = f->breaches(&what);
    if (n)
        fail_msg("the host broke the plugin contract %d times: %s", n, what);
}

static size_t bind(fixture *f, const char *spec)
{
    long i;
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_bind(f->reg, spec, &i, &e), SAGERUN_OK);
    assert_true(i >= 0);
    return (size_t)i;
}

/* The trace with instance numbers replaced by N: "create#N prepare#N ...". */
static void trace_without_ids(const fixture *f, char *out, size_t len)
{
    const char *t = f->trace();
    size_t j = 0;
    for (size_t i = 0; t[i] && j + 1 < len; i++) {
        out[j++] = t[i];
        if (t[i] == '#') {
            out[j++] = 'N';
            while (t[i + 1] >= '0' && t[i + 1] <= '9')
                i++;
        }
    }
    out[j] = '\0';
}

static void lifecycle_in_order(void **state)
{
    fixture *f = *state;
    sagerun_instance *inst;
    sagerun_error e = {0};
    assert_int_equal(sagerun_instance_create(f->reg, bind(f, "probe"), f->ctx, f->in, &inst, &e),
                     SAGERUN_OK);
    assert_int_equal(sagerun_instance_prepare(inst, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_OK);
    sagerun_instance_destroy(inst);
    char t[512];
    trace_without_ids(f, t, sizeof t);
    assert_string_equal(t, "geometry(gain=1) create#N gain=1 prepare#N run#N run#N destroy#N ");
    assert_no_breach(f);
}

static void failed_create_is_not_destroyed(void **state)
{
    fixture *f = *state;
    sagerun_instance *inst = (sagerun_instance *)&inst;
    sagerun_error e = {0};
    size_t i = bind(f, "probe[fail_create=true]");
    assert_int_equal(sagerun_instance_create(f->reg, i, f->ctx, f->in, &inst, &e),
                     SAGERUN_VARIANT);
    assert_null(inst);
    assert_non_null(strstr(e.message, "variant probe: create failed"));
    assert_non_null(strstr(e.message, "create fails on purpose"));
    char t[512];
    trace_without_ids(f, t, sizeof t);
    assert_string_equal(t, "geometry(gain=1) create#N gain=1 "); /* no destroy after a failed create */
    assert_no_breach(f);
}

/* A value within the declared range that the variant cannot launch: refused by geometry_with,
 * before any create. */
static void geometry_with_refuses_a_value(void **state)
{
    fixture *f = *state;
    sagerun_instance *inst;
    sagerun_error e = {0};
    size_t i = bind(f, "probe[gain=3.75]");
    assert_int_equal(sagerun_instance_create(f->reg, i, f->ctx, f->in, &inst, &e),
                     SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(e.message, "variant probe: geometry failed"));
    assert_non_null(strstr(e.message, "gain=3.75 cannot be launched"));
    char t[512];
    trace_without_ids(f, t, sizeof t);
    assert_string_equal(t, "geometry(gain=3.75) ");
    assert_no_breach(f);
}

static void failed_prepare_is_retried_before_run(void **state)
{
    fixture *f = *state;
    sagerun_instance *inst;
    sagerun_error e = {0};
    size_t i = bind(f, "probe[fail_prepare=2]");
    assert_int_equal(sagerun_instance_create(f->reg, i, f->ctx, f->in, &inst, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_prepare(inst, NULL, &e), SAGERUN_VARIANT);
    assert_non_null(strstr(e.message, "prepare fails on purpose"));
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_VARIANT); /* prepares again */
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_OK);
    sagerun_instance_destroy(inst);
    char t[512];
    trace_without_ids(f, t, sizeof t);
    assert_string_equal(t, "geometry(gain=1) create#N gain=1 prepare#N prepare#N prepare#N run#N "
                           "destroy#N ");
    assert_no_breach(f);
}

/* An A/A: two instances of one variant alive at once, each its own state; the values reach
 * create. */
static void instances_alive_at_once_get_their_values(void **state)
{
    fixture *f = *state;
    sagerun_instance *a, *b;
    sagerun_error e = {0};
    size_t i = bind(f, "probe[gain=2.5]");
    assert_int_equal(sagerun_instance_create(f->reg, i, f->ctx, f->in, &a, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_create(f->reg, i, f->ctx, f->in, &b, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(a, NULL, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(b, NULL, &e), SAGERUN_OK);
    char ha[65], hb[65];
    assert_int_equal(sagerun_instance_output_sha256(a, ha, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_output_sha256(b, hb, &e), SAGERUN_OK);
    assert_string_equal(ha, hb);
    sagerun_instance_destroy(b);
    sagerun_instance_destroy(a);
    char t[512];
    trace_without_ids(f, t, sizeof t);
    assert_string_equal(t, "geometry(gain=2.5) create#N gain=2.5 geometry(gain=2.5) create#N gain=2.5 prepare#N "
                           "run#N prepare#N run#N destroy#N destroy#N ");
    assert_no_breach(f);
}

static void factory_gives_several_variants(void **state)
{
    fixture *f = *state;
    long p = sagerun_registry_find(f->reg, "probe"), t = sagerun_registry_find(f->reg,
                                                                               "probe-twin");
    assert_true(p >= 0 && t >= 0);
    sagerun_variant_info vp = {.struct_size = sizeof vp}, vt = {.struct_size = sizeof vt};
    assert_int_equal(sagerun_registry_variant_info(f->reg, (size_t)p, &vp, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_variant_info(f->reg, (size_t)t, &vt, NULL), SAGERUN_OK);
    assert_string_equal(vp.path, vt.path);
    assert_int_equal(vp.n_params, 3);
    assert_int_equal(vt.n_params, 0);
    assert_int_equal(vp.flags, 0);
    assert_int_equal(vt.flags, SAGERUN_VARIANT_GRAPH_CAPTURABLE);
    sagerun_variant_param k = {.struct_size = sizeof k};
    assert_int_equal(sagerun_registry_variant_param(f->reg, (size_t)p, 2, &k, NULL), SAGERUN_OK);
    assert_string_equal(k.key, "gain");
    assert_int_equal(k.type, SAGERUN_PARAM_FLOAT);
    assert_true(k.default_value == 1.0 && k.min_value == 0.25 && k.max_value == 4.0);
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_variant_param(f->reg, (size_t)p, 3, &k, &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "variant probe: parameter 3 out of range (it has 3)"));
}

static void bound_labels_are_canonical(void **state)
{
    fixture *f = *state;
    long twin = sagerun_registry_find(f->reg, "probe-twin");
    size_t a = bind(f, "probe[gain=2,fail_prepare=0]");
    size_t b = bind(f, "probe[fail_prepare=0,gain=2.0]");
    assert_int_equal(a, b);
    assert_int_equal(sagerun_registry_find(f->reg, "probe[gain=2]"), (long)a);
    assert_int_equal(sagerun_registry_find(f->reg, "probe-twin"), twin); /* nothing moved */
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    assert_int_equal(sagerun_registry_variant_info(f->reg, a, &vi, NULL), SAGERUN_OK);
    assert_string_equal(vi.name, "probe[fail_create=false,fail_prepare=0,gain=2]");
    assert_string_equal(vi.base_name, "probe");
    sagerun_variant_param k = {.struct_size = sizeof k};
    assert_int_equal(sagerun_registry_variant_param(f->reg, a, 2, &k, NULL), SAGERUN_OK);
    assert_true(k.value == 2.0);
    assert_int_equal(sagerun_registry_find(f->reg, "probe[gain=3]"), -1); /* not bound */
}

static void bad_specs_name_what_and_where(void **state)
{
    fixture *f = *state;
    static const struct { const char *spec; sagerun_status st; const char *msg; } cases[] = {
        {"probe[bogus=1]", SAGERUN_INVALID_ARGUMENT,
         "variant probe: unknown parameter 'bogus' (its parameters: fail_create, fail_prepare, "
         "gain)"},
        {"probe[gain=9]", SAGERUN_INVALID_ARGUMENT, "variant probe: parameter gain=9 is outside "
                                                    "[0.25, 4]"},
        {"probe[fail_prepare=1.5]", SAGERUN_INVALID_ARGUMENT, "fail_prepare=1.5 is not an integer"},
        {"probe[fail_create=maybe]", SAGERUN_INVALID_ARGUMENT,
         "parameter fail_create: 'maybe' is not a bool"},
        {"probe[gain=x]", SAGERUN_INVALID_ARGUMENT, "parameter gain: 'x' is not a float"},
        {"probe[gain]", SAGERUN_INVALID_ARGUMENT, "variant probe: 'gain' is not key=value"},
        {"probe[gain=1,gain=2]", SAGERUN_INVALID_ARGUMENT, "parameter gain given twice"},
        {"probe[gain=1", SAGERUN_INVALID_ARGUMENT, "want NAME[key=value,...]"},
        {"probe[gain=1]x", SAGERUN_INVALID_ARGUMENT, "want NAME[key=value,...]"},
        /* only plain decimals: strtod took these, and " 1" or "0x1" bound 1 under label "=1" */
        {"probe[fail_prepare= 1]", SAGERUN_INVALID_ARGUMENT, "fail_prepare: ' 1' is not an int"},
        {"probe[fail_prepare=+1]", SAGERUN_INVALID_ARGUMENT, "fail_prepare: '+1' is not an int"},
        {"probe[fail_prepare=0x1]", SAGERUN_INVALID_ARGUMENT, "fail_prepare: '0x1' is not an int"},
        {"probe[fail_prepare=1e0]", SAGERUN_INVALID_ARGUMENT, "fail_prepare: '1e0' is not an int"},
        {"probe[gain=0x1p1]", SAGERUN_INVALID_ARGUMENT, "gain: '0x1p1' is not a float"},
        {"probe[gain=2 ]", SAGERUN_INVALID_ARGUMENT, "gain: '2 ' is not a float"},
        {"probe[gain=.]", SAGERUN_INVALID_ARGUMENT, "gain: '.' is not a float"},
        {"probe[gain=1e]", SAGERUN_INVALID_ARGUMENT, "gain: '1e' is not a float"},
        /* empty bindings: "[]" ran the defaults under another label than the bare name */
        {"probe[]", SAGERUN_INVALID_ARGUMENT, "variant probe: an empty binding in []"},
        {"probe[gain=1,]", SAGERUN_INVALID_ARGUMENT, "an empty binding in [gain=1,]"},
        {"probe[,gain=1]", SAGERUN_INVALID_ARGUMENT, "an empty binding in [,gain=1]"},
        {"abi10-fake[x=1]", SAGERUN_INVALID_ARGUMENT, "variant abi10-fake takes no parameters"},
        {"nope[x=1]", SAGERUN_NOT_FOUND, "no variant named nope"},
    };
    size_t before = sagerun_registry_variant_count(f->reg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long index = 5;
        sagerun_error e = {0};
        assert_int_equal(sagerun_registry_bind(f->reg, cases[i].spec, &index, &e), cases[i].st);
        if (!strstr(e.message, cases[i].msg))
            fail_msg("%s: got \"%s\", want \"%s\"", cases[i].spec, e.message, cases[i].msg);
        assert_int_equal(sagerun_registry_find(f->reg, cases[i].spec), -1);
    }
    assert_int_equal(sagerun_registry_variant_count(f->reg), before);
}

/* Floats are labelled by the shortest text that reads back as the value: with 9 digits two
 * bindings 3e-10 apart shared a label, and the second ran with the first one's value. */
static void float_bindings_keep_their_digits(void **state)
{
    fixture *f = *state;
    long a = -1, b = -1, c = -1;
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_bind(f->reg, "probe[gain=1.0000000001]", &a, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_bind(f->reg, "probe[gain=1.0000000004]", &b, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_bind(f->reg, "probe[gain=1.5]", &c, &e), SAGERUN_OK);
    assert_true(a >= 0 && b >= 0 && a != b);
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    assert_int_equal(sagerun_registry_variant_info(f->reg, (size_t)b, &vi, NULL), SAGERUN_OK);
    assert_string_equal(vi.name, "probe[fail_create=false,fail_prepare=0,gain=1.0000000004]");
    sagerun_variant_param k = {.struct_size = sizeof k};
    assert_int_equal(sagerun_registry_variant_param(f->reg, (size_t)b, 2, &k, NULL), SAGERUN_OK);
    assert_true(k.value == 1.0000000004);
    assert_int_equal(sagerun_registry_variant_info(f->reg, (size_t)c, &vi, NULL), SAGERUN_OK);
    assert_string_equal(vi.name, "probe[fail_create=false,fail_prepare=0,gain=1.5]");
    char text[32];
    sagerun_param_format(SAGERUN_PARAM_FLOAT, 0.1, text, sizeof text);
    assert_string_equal(text, "0.1");
    sagerun_param_format(SAGERUN_PARAM_FLOAT, 1.0 / 3.0, text, sizeof text);
    assert_true(strtod(text, NULL) == 1.0 / 3.0);
}

/* An int beyond 2^53 is not held exactly by the double every parameter travels in (a Python
 * variant got -2^63 for 2^64 + 1): refused, as a value and as a default. */
static void int_parameters_stay_exact(void **state)
{
    (void)state;
    const sagerun_param_decl p = {sizeof p, SAGERUN_PARAM_INT, "n", "", 0, -1e30, 1e30};
    char why[160];
    assert_int_equal(sr_param_check(&p, 9007199254740992.0, why, sizeof why), 0);
    assert_int_not_equal(sr_param_check(&p, 9007199254740994.0, why, sizeof why), 0);
    assert_non_null(strstr(why, "n=9007199254740994 is beyond the integers a parameter holds exactly"));
    assert_int_not_equal(sr_param_check(&p, -1e20, why, sizeof why), 0);
}

static void bad_parameter_declarations_are_rejected(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sagerun_registry_rejection_count(f->reg); i++) {
        sagerun_rejection r = {.struct_size = sizeof r};
        assert_int_equal(sagerun_registry_rejection(f->reg, i, &r, NULL), SAGERUN_OK);
        if (strstr(r.path, "fake_bad_param.so")) {
            assert_string_equal(r.reason, "variant fake-bad-param: parameter tile: default 512 "
                                          "outside its range [16, 128]");
            return;
        }
    }
    fail_msg("fake_bad_param.so was not rejected");
}

/* A stranger's mistakes in a descriptor, each refused at load with what is wrong and where (an
 * audit's findings: an int's fractional bounds loaded and `list` showed them rounded, an inverted
 * range read as "default outside its range", a struct_size short of params dropped the parameters
 * in silence, a zeroed sage2 quant failed only at the first call, a NULL name showed "(null)"). */
static int any_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *e, size_t n)
{
    (void)p, (void)g, (void)e, (void)n;
    return 0;
}
static int any_create(const sagerun_host_services *s, const sagerun_plugin_inputs *in, void **st,
                      char *e, size_t n)
{
    (void)s, (void)in, (void)st, (void)e, (void)n;
    return 0;
}
static int any_run(void *st, char *e, size_t n)
{
    (void)st, (void)e, (void)n;
    return 0;
}
static void any_destroy(void *st)
{
    (void)st;
}

static void descriptor_mistakes_are_named(void **state)
{
    (void)state;
    sagerun_param_decl p = {sizeof p, SAGERUN_PARAM_INT, "block", "", 2, 0.5, 10.5};
    sagerun_variant_descriptor d = {
        .struct_size = sizeof d, .abi_major = SAGERUN_PLUGIN_ABI_MAJOR, .name = "odd",
        .backend = SAGERUN_BACKEND_HOST, .input_kind = SAGERUN_INPUT_FP16,
        .geometry = any_geometry, .create = any_create, .run = any_run, .destroy = any_destroy,
        .n_params = 1, .params = &p};
    char buf[256];
    const char *why = sr_descriptor_problem(&d, buf, sizeof buf);
    assert_non_null(why);
    assert_string_equal(why, "variant odd: parameter block: an int's range [0.5, 10.5] needs whole "
                             "bounds");
    p.min_value = 10, p.max_value = 5, p.default_value = 7;
    assert_string_equal(sr_descriptor_problem(&d, buf, sizeof buf),
                        "variant odd: parameter block: its range [10, 5] is inverted (min above max)");
    p.min_value = 0, p.max_value = 10;
    assert_null(sr_descriptor_problem(&d, buf, sizeof buf)); /* now a good one */
    p.key = NULL;
    assert_string_equal(sr_descriptor_problem(&d, buf, sizeof buf),
                        "variant odd: parameter 0: no key (key is NULL)");
    p.key = "block";
    d.struct_size = offsetof(sagerun_variant_descriptor, params);
    char want[128];
    snprintf(want, sizeof want, "variant odd: struct_size %u covers n_params (1) but not params",
             d.struct_size);
    assert_string_equal(sr_descriptor_problem(&d, buf, sizeof buf), want);
    d.struct_size = sizeof d;
    d.input_kind = SAGERUN_INPUT_SAGE2; /* quant left zero */
    why = sr_descriptor_problem(&d, buf, sizeof buf);
    assert_non_null(why);
    assert_non_null(strstr(why, "variant odd: its quant (read for SAGERUN_INPUT_SAGE2) is unusable: "
                                "sage2 quantizer: q_block_rows 0"));
    d.quant = sr_sage2_params_sm89(448.0f);
    assert_null(sr_descriptor_problem(&d, buf, sizeof buf));
    d.name = NULL;
    assert_string_equal(sr_descriptor_problem(&d, buf, sizeof buf),
                        "variant descriptor without a name (name is NULL)");
}

/* The ABI 1.0 fixture: loads, has no 1.1 fields, runs through the 1.1 host. */
static void abi_1_0_plugin_loads_and_runs(void **state)
{
    fixture *f = *state;
    long i = sagerun_registry_find(f->reg, "abi10-fake");
    assert_true(i >= 0);
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    assert_int_equal(sagerun_registry_variant_info(f->reg, (size_t)i, &vi, NULL), SAGERUN_OK);
    assert_int_equal(vi.n_params, 0);
    assert_int_equal(vi.flags, 0);
    const sagerun_variant_descriptor *d = sr_registry_descriptor(f->reg, (size_t)i);
    assert_int_equal(d->struct_size, offsetof(sagerun_variant_descriptor, destroy) +
                                         sizeof d->destroy); /* exactly the 1.0 size */
    sagerun_instance *inst;
    sagerun_error e = {0};
    assert_int_equal(sagerun_instance_create(f->reg, (size_t)i, f->ctx, f->in, &inst, &e),
                     SAGERUN_OK);
    assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_OK);
    uint64_t bytes;
    const uint16_t *o = (const uint16_t *)(uintptr_t)sagerun_instance_output(inst, &bytes);
    const sagerun_problem *p = sagerun_inputs_problem(f->in);
    assert_int_equal(bytes, (uint64_t)p->seq_len * p->heads_q * p->head_dim * 2);
    assert_memory_equal(o, (const void *)(uintptr_t)f->in->v, bytes); /* it copies V into O */
    sagerun_instance_destroy(inst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lifecycle_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_create_is_not_destroyed, setup, teardown),
        cmocka_unit_test_setup_teardown(geometry_with_refuses_a_value, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_prepare_is_retried_before_run, setup, teardown),
        cmocka_unit_test_setup_teardown(instances_alive_at_once_get_their_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(factory_gives_several_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(bound_labels_are_canonical, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_specs_name_what_and_where, setup, teardown),
        cmocka_unit_test_setup_teardown(float_bindings_keep_their_digits, setup, teardown),
        cmocka_unit_test_setup_teardown(int_parameters_stay_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_parameter_declarations_are_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(abi_1_0_plugin_loads_and_runs, setup, teardown),
        cmocka_unit_test(descriptor_mistakes_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
