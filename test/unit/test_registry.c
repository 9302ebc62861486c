/* Plugin discovery and ABI negotiation against the fake plugins of test/plugins (built into
 * build/test-plugins), plus the real plugins of the build tree. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <malloc.h>

#include "internal.h"

#define FAKES SAGERUN_TEST_FAKES

/* The reason recorded for the file whose name ends in `file`, or NULL. */
static const char *reason_for(sagerun_registry *reg, const char *file)
{
    for (size_t i = 0; i < sagerun_registry_rejection_count(reg); i++) {
        sagerun_rejection r = {.struct_size = sizeof r};
        assert_int_equal(sagerun_registry_rejection(reg, i, &r, NULL), SAGERUN_OK);
        size_t n = strlen(r.path), m = strlen(file);
        if (n >= m && strcmp(r.path + n - m, file) == 0)
            return r.reason;
    }
    return NULL;
}

static sagerun_registry *load_fakes(void)
{
    sagerun_registry *reg;
    sagerun_error e;
    assert_int_equal(sagerun_registry_create(NULL, &reg, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, FAKES, &e), SAGERUN_OK);
    return reg;
}

static void good_plugins_load_sorted_with_hash(void **state)
{
    (void)state;
    sagerun_registry *reg = load_fakes();
    long good = sagerun_registry_find(reg, "fake-good");
    long big = sagerun_registry_find(reg, "fake-big-struct");
    assert_true(good >= 0);
    assert_true(big >= 0); /* a larger descriptor (future minor) is accepted */
    assert_true(big < good); /* sorted by name */
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    assert_int_equal(sagerun_registry_variant_info(reg, (size_t)good, &vi, NULL), SAGERUN_OK);
    assert_string_equal(vi.name, "fake-good");
    assert_non_null(strstr(vi.path, "fake_good.so"));
    char expect[65];
    assert_int_equal(sagerun_file_sha256(vi.path, expect, NULL), SAGERUN_OK);
    assert_string_equal(vi.sha256, expect);
    assert_int_equal(strlen(vi.sha256), 64);
    /* On the host backend a CUDA variant that needs a future GPU is listed, not rejected. */
    assert_true(sagerun_registry_find(reg, "fake-future-gpu") >= 0);
    sagerun_registry_destroy(reg);
}

static void every_rejection_has_its_reason(void **state)
{
    (void)state;
    sagerun_registry *reg = load_fakes();
    const char *r;
    assert_non_null(r = reason_for(reg, "fake_wrong_major.so"));
    assert_non_null(strstr(r, "ABI mismatch"));
    assert_non_null(strstr(r, "2.0"));
    assert_non_null(r = reason_for(reg, "fake_no_entry.so"));
    assert_non_null(strstr(r, "no entry point [sagerun_plugin_entry]"));
    assert_non_null(r = reason_for(reg, "fake_null_run.so"));
    assert_non_null(strstr(r, "required function run is NULL"));
    assert_non_null(r = reason_for(reg, "fake_small_struct.so"));
    assert_non_null(strstr(r, "descriptor too small"));
    assert_non_null(r = reason_for(reg, "fake_init_fails.so"));
    assert_non_null(strstr(r, "init failed: the fake plugin refuses on purpose"));
    assert_non_null(r = reason_for(reg, "zz_duplicate.so"));
    assert_non_null(strstr(r, "duplicate variant name \"fake-good\""));
    assert_non_null(r = reason_for(reg, "fake_bad_name.so"));
    assert_non_null(strstr(r, "invalid variant name"));
    assert_null(reason_for(reg, "fake_good.so"));
    sagerun_registry_destroy(reg);
}

static void non_plugin_files_are_rejected(void **state)
{
    (void)state;
    char dir[] = "/tmp/sagerun-plugins-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/junk.so", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/ignored.txt", dir); /* not *.so: not even looked at */
    f = fopen(path, "w");
    fclose(f);
    sagerun_registry *reg;
    assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, dir, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_variant_count(reg), 0);
    assert_int_equal(sagerun_registry_rejection_count(reg), 1);
    const char *r = reason_for(reg, "junk.so");
    assert_non_null(r);
    assert_non_null(strstr(r, "not a loadable plugin"));
    sagerun_registry_destroy(reg);
    snprintf(path, sizeof path, "%s/junk.so", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/ignored.txt", dir);
    unlink(path);
    rmdir(dir);
}

static void missing_explicit_path_is_an_error(void **state)
{
    (void)state;
    sagerun_registry *reg;
    sagerun_error e;
    assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, "/nonexistent/plugin.so", &e),
                     SAGERUN_NOT_FOUND);
    assert_non_null(strstr(e.message, "/nonexistent/plugin.so"));
    sagerun_registry_destroy(reg);
}

static void plugin_path_environment_comes_first(void **state)
{
    (void)state;
    /* The fake folder via SAGERUN_PLUGIN_PATH, then the build tree's plugins/: the fakes and the
     * real reference variant are both found; a missing entry of the path is reported. */
    setenv("SAGERUN_PLUGIN_PATH", FAKES ":/nonexistent-plugin-dir", 1);
    sagerun_registry *reg;
    assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_default_paths(reg, NULL), SAGERUN_OK);
    assert_true(sagerun_registry_find(reg, "fake-good") >= 0);
    assert_true(sagerun_registry_find(reg, "reference") >= 0);
    const char *r = reason_for(reg, "/nonexistent-plugin-dir");
    assert_non_null(r);
    assert_non_null(strstr(r, "does not exist"));
    sagerun_registry_destroy(reg);
    unsetenv("SAGERUN_PLUGIN_PATH");
}

static void instance_refuses_backend_mismatch(void **state)
{
    (void)state;
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    sagerun_registry *reg = load_fakes();
    sagerun_problem p = sagerun_problem_make(1, 4, 1, 1, 8);
    uint16_t zeros[32] = {0};
    sagerun_inputs *in;
    assert_int_equal(sagerun_inputs_create_from_host(ctx, &p, zeros, zeros, zeros, &in, NULL),
                     SAGERUN_OK);
    long i = sagerun_registry_find(reg, "fake-future-gpu");
    sagerun_instance *inst;
    sagerun_error e;
    assert_int_equal(sagerun_instance_create(reg, (size_t)i, ctx, in, &inst, &e),
                     SAGERUN_UNSUPPORTED);
    assert_non_null(strstr(e.message, "variant fake-future-gpu runs on the cuda backend"));
    sagerun_inputs_destroy(in);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
}

/* Copies build/test-plugins/fake_good.so into dir with the given file mode. */
static void copy_fake(const char *dir, mode_t mode, char *path, size_t len)
{
    snprintf(path, len, "%s/fake_good.so", dir);
    FILE *in = fopen(FAKES "/fake_good.so", "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    assert_int_equal(chmod(path, mode), 0);
}

static void writable_plugins_are_refused_unless_allowed(void **state)
{
    (void)state;
    char dir[] = "/tmp/sagerun-unsafe-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    copy_fake(dir, 0666, path, sizeof path);
    sagerun_registry *reg;
    assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, dir, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_find(reg, "fake-good"), -1);
    const char *r = reason_for(reg, "fake_good.so");
    assert_non_null(r);
    assert_non_null(strstr(r, "unsafe permissions: the file"));
    assert_non_null(strstr(r, "writable by everyone"));
    sagerun_registry_destroy(reg);

    /* The same file, allowed explicitly. */
    assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
    sagerun_registry_allow_unsafe(reg, 1);
    assert_int_equal(sagerun_registry_add_path(reg, dir, NULL), SAGERUN_OK);
    assert_true(sagerun_registry_find(reg, "fake-good") >= 0);
    sagerun_registry_destroy(reg);

    /* A safe file in a folder writable by a group that is not the owner's own (no sticky bit)
     * is refused too; its owner's own group may write (StrictModes' user private groups). */
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(chmod(dir, 0775), 0);
    if (chown(dir, (uid_t)-1, 65534) == 0) { /* nogroup: needs root or membership */
        assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
        assert_int_equal(sagerun_registry_add_path(reg, dir, NULL), SAGERUN_OK);
        r = reason_for(reg, "fake_good.so");
        assert_non_null(r);
        assert_non_null(strstr(r, "the folder"));
        assert_non_null(strstr(r, "writable by its group"));
        sagerun_registry_destroy(reg);
    }
    struct passwd *pw = getpwuid(geteuid());
    struct group *gr = pw ? getgrgid(pw->pw_gid) : NULL;
    if (gr && (!gr->gr_mem[0] || (!gr->gr_mem[1] && strcmp(gr->gr_mem[0], pw->pw_name) == 0)) &&
        chown(dir, (uid_t)-1, pw->pw_gid) == 0) {
        assert_int_equal(sagerun_registry_create(NULL, &reg, NULL), SAGERUN_OK);
        assert_int_equal(sagerun_registry_add_path(reg, dir, NULL), SAGERUN_OK);
        assert_null(reason_for(reg, "fake_good.so"));
        assert_true(sagerun_registry_find(reg, "fake-good") >= 0);
        sagerun_registry_destroy(reg);
    }
    unlink(path);
    rmdir(dir);
}

static void pinned_hashes_are_checked(void **state)
{
    (void)state;
    sagerun_registry *reg = load_fakes();
    sagerun_variant_info vi = {.struct_size = sizeof vi};
    long i = sagerun_registry_find(reg, "fake-good");
    assert_int_equal(sagerun_registry_variant_info(reg, (size_t)i, &vi, NULL), SAGERUN_OK);
    sagerun_error e;
    assert_int_equal(sagerun_registry_expect_sha256(reg, "fake-good", vi.sha256, &e), SAGERUN_OK);
    char other[65];
    memcpy(other, vi.sha256, sizeof other);
    other[0] = other[0] == '0' ? '1' : '0';
    assert_int_equal(sagerun_registry_expect_sha256(reg, "fake-good", other, &e), SAGERUN_PLUGIN);
    assert_non_null(strstr(e.message, "expected"));
    assert_non_null(strstr(e.message, vi.sha256));
    assert_int_equal(sagerun_registry_expect_sha256(reg, "nosuch", other, &e), SAGERUN_NOT_FOUND);
    assert_int_equal(sagerun_registry_expect_sha256(reg, "fake-good", "xyz", &e),
                     SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "64 hex digits"));
    sagerun_registry_destroy(reg);
}

/* A sage2 variant whose prepare fails: prepare again (or run, which prepares first) must not
 * quantize the inputs again, leaking the first set of quantized tensors each time. */
static void failed_prepare_does_not_quantize_again(void **state)
{
    (void)state;
    setenv("SAGERUN_TEST_FAULTS", "1", 1);
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, NULL), SAGERUN_OK);
    sagerun_registry *reg;
    sagerun_error e = {0};
    assert_int_equal(sagerun_registry_create(ctx, &reg, &e), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(reg, FAKES "/fault_error_prepare_sage2.so", &e),
                     SAGERUN_OK);
    long i = sagerun_registry_find(reg, "fault-error-prepare-sage2");
    assert_true(i >= 0);
    sagerun_problem p = sagerun_problem_make(1, 256, 2, 2, 64);
    sagerun_inputs *in;
    assert_int_equal(sagerun_inputs_create_synthetic(ctx, &p, 1, &in, &e), SAGERUN_OK);
    sagerun_instance *inst;
    assert_int_equal(sagerun_instance_create(reg, (size_t)i, ctx, in, &inst, &e), SAGERUN_OK);
    assert_int_equal(sagerun_instance_prepare(inst, NULL, &e), SAGERUN_VARIANT);
    /* each further attempt would leak q_int8, k_int8 and v_fp8 (3 x 32 KiB) */
    size_t before = mallinfo2().uordblks;
    for (int k = 0; k < 4; k++) {
        assert_int_equal(sagerun_instance_prepare(inst, NULL, &e), SAGERUN_VARIANT);
        assert_int_equal(sagerun_instance_run(inst, NULL, &e), SAGERUN_VARIANT);
    }
    size_t after = mallinfo2().uordblks;
    if (after > before + 16384)
        fail_msg("heap grew by %zu bytes over 8 failed prepares", after - before);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(ctx);
    unsetenv("SAGERUN_TEST_FAULTS");
}

/* A shipped plugin (SAGERUN_PLUGIN_DEFINE_ENTRY) asked by a host of another ABI major refuses
 * with both versions named, and answers a matching host with its descriptor. */
static void entry_refuses_another_major(void **state)
{
    (void)state;
    void *h = dlopen(SAGERUN_TEST_PLUGINS "/reference.so", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    sagerun_plugin_entry_fn entry;
    void *sym = dlsym(h, SAGERUN_PLUGIN_ENTRY_NAME);
    assert_non_null(sym);
    memcpy(&entry, &sym, sizeof entry);
    sagerun_plugin_query q = {.struct_size = sizeof q, .abi_major = 2, .abi_minor = 0};
    sagerun_plugin_answer a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    assert_int_equal(entry(&q, &a), SAGERUN_PLUGIN); /* a negative sagerun_status, as the rule */
    char want[96];
    snprintf(want, sizeof want, "built for plugin ABI %d.%d, the host speaks 2.0",
             SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR);
    assert_non_null(strstr(a.reason, want));
    q.abi_major = SAGERUN_PLUGIN_ABI_MAJOR;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    assert_int_equal(entry(&q, &a), 0);
    assert_int_equal(a.abi_major, SAGERUN_PLUGIN_ABI_MAJOR);
    assert_string_equal(a.variant->name, "reference");
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_plugins_load_sorted_with_hash),
        cmocka_unit_test(every_rejection_has_its_reason),
        cmocka_unit_test(non_plugin_files_are_rejected),
        cmocka_unit_test(missing_explicit_path_is_an_error),
        cmocka_unit_test(plugin_path_environment_comes_first),
        cmocka_unit_test(instance_refuses_backend_mismatch),
        cmocka_unit_test(writable_plugins_are_refused_unless_allowed),
        cmocka_unit_test(pinned_hashes_are_checked),
        cmocka_unit_test(entry_refuses_another_major),
        cmocka_unit_test(failed_prepare_does_not_quantize_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
