/* The warp-specialized plugin's host side without a GPU: its code is sm_90a only, so geometry
 * (what the loader asks before anything runs) must refuse every other part by name, accept
 * Hopper with the launch its kernel needs, and refuse what sage2 does not do. Skips when the
 * plugin is not built (a build without nvcc). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sagerun/plugin.h>

static const sagerun_variant_descriptor *variant;

static int setup(void **state)
{
    (void)state;
    const char *path = SAGERUN_TEST_PLUGINS "/warp-specialized.so";
    if (access(path, R_OK) != 0) {
        printf("SKIP: %s is not built (a build without nvcc)\n", path);
        return 0;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return -1;
    }
    int (*entry)(const sagerun_plugin_query *, sagerun_plugin_answer *) =
        (int (*)(const sagerun_plugin_query *, sagerun_plugin_answer *))dlsym(h, "sagerun_plugin_entry");
    sagerun_plugin_query q = {.struct_size = sizeof q,
                              .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
                              .abi_minor = SAGERUN_PLUGIN_ABI_MINOR};
    sagerun_plugin_answer a = {.struct_size = sizeof a};
    if (!entry || entry(&q, &a) != 0 || !a.variant)
        return -1;
    variant = a.variant;
    return 0;
}

static sagerun_problem problem(uint32_t n, uint32_t d)
{
    sagerun_problem p = {.struct_size = sizeof p, .batch = 1, .seq_len = n, .heads_q = 2, .heads_kv = 2,
                         .head_dim = d, .layout = SAGERUN_LAYOUT_NHD, .dtype = SAGERUN_DTYPE_F16};
    return p;
}

/* geometry_with on a CUDA device of compute capability cc */
static int geometry_on(int cc, const sagerun_problem *p, sagerun_launch_geometry *g, char *err, size_t errlen)
{
    sagerun_plugin_device dev = {.struct_size = sizeof dev, .backend = SAGERUN_BACKEND_CUDA,
                                 .compute_capability = cc, .sm_count = 132};
    snprintf(dev.name, sizeof dev.name, "test part sm_%d", cc);
    sagerun_geometry_args args = {.struct_size = sizeof args, .device = &dev};
    memset(g, 0, sizeof *g);
    g->struct_size = sizeof *g;
    err[0] = 0;
    return variant->geometry_with(&args, p, g, err, errlen);
}

static void refuses_other_parts_by_name(void **state)
{
    (void)state;
    if (!variant)
        skip();
    const int parts[] = {80, 86, 89, 100, 120};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        sagerun_problem p = problem(1000, 128);
        sagerun_launch_geometry g;
        char err[256], want[32];
        assert_int_equal(geometry_on(parts[i], &p, &g, err, sizeof err), SAGERUN_UNSUPPORTED);
        snprintf(want, sizeof want, "sm_%d", parts[i]);
        if (!strstr(err, "sm_90a") || !strstr(err, want))
            fail_msg("sm_%d refused with \"%s\": should name sm_90a and %s", parts[i], err, want);
    }
}

static void accepts_hopper_with_its_launch(void **state)
{
    (void)state;
    if (!variant)
        skip();
    assert_int_equal(variant->min_compute_capability, 90);
    sagerun_problem p = problem(1000, 128);
    sagerun_launch_geometry g;
    char err[256];
    assert_int_equal(geometry_on(90, &p, &g, err, sizeof err), 0);
    /* the default configuration (ws_params.h): one consumer warpgroup, 128 rows, V as f16 */
    assert_int_equal(g.threads_per_cta, 128); /* one consumer warpgroup, no producer (ws_params.h) */
    assert_int_equal(g.cta_q, 128);
    assert_int_equal(g.cta_k, 64);
    assert_int_equal(g.grid_ctas, 8 * 2); /* ceil(1000 / 128) blocks x 2 heads */
    /* Q 128 x 128 + 3 stages of K (8 KiB), f16 V (16 KiB) and its K scale rows (1 KiB) + mbarriers */
    assert_int_equal(g.dynamic_shared_memory_bytes, 16384 + 3 * (8192 + 16384 + 1024) + 1024);
}

static void refuses_what_sage2_does_not_do(void **state)
{
    (void)state;
    if (!variant)
        skip();
    sagerun_launch_geometry g;
    char err[256];
    sagerun_problem p = problem(1000, 96);
    assert_int_equal(geometry_on(90, &p, &g, err, sizeof err), SAGERUN_UNSUPPORTED);
    if (!strstr(err, "head_dim 96"))
        fail_msg("head_dim 96 refused with \"%s\"", err);
    p = problem(1000, 64);
    p.dtype = SAGERUN_DTYPE_F32;
    assert_int_equal(geometry_on(90, &p, &g, err, sizeof err), SAGERUN_UNSUPPORTED);
    if (!strstr(err, "dtype"))
        fail_msg("an fp32 problem refused with \"%s\"", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refuses_other_parts_by_name),
        cmocka_unit_test(accepts_hopper_with_its_launch),
        cmocka_unit_test(refuses_what_sage2_does_not_do),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
