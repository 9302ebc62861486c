/* The sage2 variants against the golden vectors: on each file's quantized tensors `baseline`,
 * `interleave-softmax` and (on Hopper) `warp-specialized` must each reproduce o_sm89_f32acc bit
 * for bit, twice; `baseline-fp16acc`
 * (fp32+fp16 accumulation, V range 2.25), quantizing the file's q, k, v itself, must reproduce
 * o_sm89_f16acc. Also: NHD and HND give the same bytes (transposed), and the other variants give
 * baseline's bytes on synthetic problems of many shapes (partial tiles, one key, GQA, D = 64, HND),
 * causal and bf16 included; causal masks (row 0 sees key 0 only, the last row sees every key).
 * Golden files come from SAGERUN_GOLDEN_DIR (default ../shared/golden); absent -> skip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>

#include <cmocka.h>
#include <sodium.h>

#include "gpu_test.h"
#include "safetensors.h"

#define PLUGINS SAGERUN_TEST_PLUGINS

static const char *const golden_files[] = {"n1000_h2.safetensors", "b2_n333_h3.safetensors",
                                           "n1200_gqa4to2.safetensors"};

/* The variants that claim baseline's bytes (SAGE2.md); [0] is baseline itself. The last ones
 * (from HOPPER_ONLY on) have sm_90a code only and are checked on Hopper alone. */
static const char *const sage2_variants[] = {"baseline", "interleave-softmax", "warp-specialized"};
enum { N_VARIANTS = sizeof sage2_variants / sizeof sage2_variants[0], HOPPER_ONLY = 2 };

/* The fp32+fp16 kernel (its own bytes: o_sm89_f16acc). */
static const char *const fp16acc_variant = "baseline-fp16acc";

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    size_t variant[N_VARIANTS];
    int n_variants; /* those of sage2_variants this device runs */
    size_t fp16acc;
    char dir[4096];
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.ctx = gpu_test_context();
    if (!f.ctx)
        return -1;
    assert_int_equal(sagerun_registry_create(f.ctx, &f.reg, NULL), SAGERUN_OK);
    /* every plugin first, then the indices: the registry keeps its variants sorted by name, so
     * an index read before the last plugin was added can name another variant (it did: with
     * baseline-fp16acc added after, "interleave-softmax"'s old index ran baseline-fp16acc) */
    for (int v = 0; v <= N_VARIANTS; v++) {
        char file[256], path[4096];
        snprintf(file, sizeof file, "%s.so", v < N_VARIANTS ? sage2_variants[v] : fp16acc_variant);
        gpu_test_path("SAGERUN_TEST_PLUGINS", PLUGINS, file, path, sizeof path);
        assert_int_equal(sagerun_registry_add_path(f.reg, path, NULL), SAGERUN_OK);
    }
    for (int v = 0; v <= N_VARIANTS; v++) {
        const char *name = v < N_VARIANTS ? sage2_variants[v] : fp16acc_variant;
        long i = sagerun_registry_find(f.reg, name);
        if (i < 0)
            fail_msg("variant %s not found", name);
        if (v < N_VARIANTS)
            f.variant[v] = (size_t)i;
        else
            f.fp16acc = (size_t)i;
    }
    sagerun_device_info info = {.struct_size = sizeof info};
    assert_int_equal(sagerun_context_device_info(f.ctx, &info, NULL), SAGERUN_OK);
    f.n_variants = info.compute_capability == 90 ? N_VARIANTS : HOPPER_ONLY;
    for (int v = f.n_variants; v < N_VARIANTS; v++)
        printf("SKIP: %s runs on sm_90a only; this device is sm_%d\n", sage2_variants[v], info.compute_capability);
    const char *env = getenv("SAGERUN_GOLDEN_DIR");
    snprintf(f.dir, sizeof f.dir, "%s", env && *env ? env : SAGERUN_SOURCE_DIR "/../shared/golden");
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    return 0;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, frac = h & 0x3ff, bits;
    if (exp == 0) {
        float v = (float)frac / 16777216.0f;
        return sign ? -v : v;
    }
    bits = sign | ((exp == 31 ? 255 : exp + 112) << 23) | (frac << 13);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Runs the variant of registry index `index` on the file (its own quantized tensors where their
 * parameters are the variant's, else quantizing q, k, v with the file's k_mean) and compares with
 * the file's tensor `want_name`; returns 1 if the golden file is absent. */
static int check_golden_path(fixture *f, size_t index, const char *label, const char *path,
                             const char *want_name, sagerun_layout layout, int causal,
                             int file_quantized)
{
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    sagerun_error e = {0};
    sagerun_inputs *in;
    if (sagerun_inputs_create_from_safetensors(f->ctx, path, layout, &in, &e))
        fail_msg("%s", e.message);
    assert_int_equal(sr_inputs_has_file_quantization(in), file_quantized);
    in->problem.causal = (uint32_t)causal; /* a file does not say causal; the instance copies it */
    sagerun_instance *inst;
    if (sagerun_instance_create(f->reg, index, f->ctx, in, &inst, &e))
        fail_msg("%s", e.message);
    uint64_t bytes, o = sagerun_instance_output(inst, &bytes);
    uint16_t *got = malloc(bytes), *want = malloc(bytes);
    sr_safetensors *sf;
    assert_int_equal(sr_safetensors_open(path, &sf, &e), SAGERUN_OK);
    assert_int_equal(sr_safetensors_read_tensor(sf, want_name, want, bytes, &e), SAGERUN_OK);
    sr_safetensors_close(sf);
    char hex[2][65];
    for (int rep = 0; rep < 2; rep++) {
        assert_int_equal(sagerun_mem_fill(f->ctx, o, 0xff, bytes, &e), SAGERUN_OK); /* poison */
        double s;
        if (sagerun_instance_run(inst, &s, &e))
            fail_msg("%s", e.message);
        assert_int_equal(sagerun_instance_output_sha256(inst, hex[rep], &e), SAGERUN_OK);
    }
    assert_int_equal(sagerun_mem_download(f->ctx, got, o, bytes, &e), SAGERUN_OK);
    uint64_t n = bytes / 2, differ = 0, first = 0;
    int max_ulp = 0;
    float max_abs = 0;
    for (uint64_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (!differ++)
                first = i;
            int ulp = abs((int)(got[i] & 0x7fff) - (int)(want[i] & 0x7fff));
            if (ulp > max_ulp)
                max_ulp = ulp;
            float d = half_to_float(got[i]) - half_to_float(want[i]);
            if (d < 0)
                d = -d;
            if (d > max_abs)
                max_abs = d;
        }
    unsigned char digest[crypto_hash_sha256_BYTES];
    char want_hex[65];
    crypto_hash_sha256(digest, (const unsigned char *)want, bytes);
    sodium_bin2hex(want_hex, sizeof want_hex, digest, sizeof digest);
    printf("%s %s: %llu of %llu elements differ from %s (first %llu, max %d ulp, max abs %g); "
           "sha256 %s, golden %s, second run %s\n",
           label, name, (unsigned long long)differ, (unsigned long long)n, want_name,
           (unsigned long long)first,
           max_ulp, (double)max_abs, hex[0], want_hex,
           strcmp(hex[0], hex[1]) == 0 ? "identical" : "DIFFERENT");
    free(got);
    free(want);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    assert_int_equal(differ, 0);
    assert_string_equal(hex[0], want_hex);
    assert_string_equal(hex[0], hex[1]);
    return 0;
}

static int check_golden_output(fixture *f, size_t index, const char *label, const char *name,
                               const char *want_name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    if (access(path, R_OK) != 0) {
        printf("SKIP: golden file %s not found (set SAGERUN_GOLDEN_DIR)\n", path);
        return 1;
    }
    return check_golden_path(f, index, label, path, want_name, SAGERUN_LAYOUT_NHD, 0, 1);
}

/* test/gpu/golden15/ (or $SAGERUN_GOLDEN15_DIR): small files written by SageAttention itself
 * (`parity.py --write-golden`): q, k, v and o_sm89_f32acc / o_sm89_f16acc of both sm89 kernels
 * for causal, bf16, HND and D = 64 cases; the name says causal and hnd. Each sage2 variant,
 * quantizing q, k, v itself, must give the file's bytes. */
static void golden15_files(void **state)
{
    fixture *f = *state;
    const char *env = getenv("SAGERUN_GOLDEN15_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", env && *env ? env : SAGERUN_SOURCE_DIR "/test/gpu/golden15");
    DIR *d = opendir(dir);
    int files = 0;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            size_t len = strlen(de->d_name);
            if (len < 12 || strcmp(de->d_name + len - 12, ".safetensors") != 0)
                continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            const sagerun_layout layout = strstr(de->d_name, "hnd") ? SAGERUN_LAYOUT_HND : SAGERUN_LAYOUT_NHD;
            const int causal = strstr(de->d_name, "causal") != NULL;
            for (int v = 0; v < f->n_variants; v++)
                check_golden_path(f, f->variant[v], sage2_variants[v], path, "o_sm89_f32acc", layout,
                                  causal, 0);
            check_golden_path(f, f->fp16acc, fp16acc_variant, path, "o_sm89_f16acc", layout, causal, 0);
            files++;
        }
        closedir(d);
    }
    if (!files) {
        printf("SKIP: no golden files in %s (parity.py --write-golden makes them)\n", dir);
        skip();
    }
}

static int check_golden_file(fixture *f, int v, const char *name)
{
    return check_golden_output(f, f->variant[v], sage2_variants[v], name, "o_sm89_f32acc");
}

static void golden_all(void **state, const char *file)
{
    const fixture *f = *state;
    for (int v = 0; v < f->n_variants; v++)
        if (check_golden_file(*state, v, file))
            return;
}

/* baseline-fp16acc from the file's q, k, v (R = 2.25: the file's v_fp8_f32acc is not its input)
 * against SageAttention's fp32+fp16 kernel. */
static void golden_fp16acc(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sizeof golden_files / sizeof golden_files[0]; i++)
        if (check_golden_output(f, f->fp16acc, fp16acc_variant, golden_files[i], "o_sm89_f16acc"))
            skip();
}
static void golden_n1000_h2(void **state) { golden_all(state, golden_files[0]); }
static void golden_b2_n333_h3(void **state) { golden_all(state, golden_files[1]); }
static void golden_n1200_gqa4to2(void **state) { golden_all(state, golden_files[2]); }

/* Runs the variant of registry index `index` on synthetic inputs of a problem (seed 11);
 * returns the output in host memory. */
static uint16_t *run_synthetic_index(fixture *f, size_t index, const sagerun_problem *p,
                                     uint64_t *bytes)
{
    sagerun_error e = {0};
    sagerun_inputs *in;
    sagerun_instance *inst;
    if (sagerun_inputs_create_synthetic(f->ctx, p, 11, &in, &e) ||
        sagerun_instance_create(f->reg, index, f->ctx, in, &inst, &e) ||
        sagerun_instance_prepare(inst, NULL, &e) || sagerun_instance_run(inst, NULL, &e))
        fail_msg("%s", e.message);
    uint64_t o = sagerun_instance_output(inst, bytes);
    uint16_t *host = malloc(*bytes);
    assert_int_equal(sagerun_mem_download(f->ctx, host, o, *bytes, &e), SAGERUN_OK);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
    return host;
}

/* Runs variant v of sage2_variants on synthetic inputs of a problem. */
static uint16_t *run_synthetic(fixture *f, int v, const sagerun_problem *p, uint64_t *bytes)
{
    return run_synthetic_index(f, f->variant[v], p, bytes);
}

/* The generator fills by logical index, so an HND problem holds the same values as the NHD one,
 * transposed; quantization is per (b, h) over tokens, so the outputs must match bit for bit. */
static void hnd_equals_nhd_transposed(void **state)
{
    fixture *f = *state;
    enum { B = 2, N = 300, H = 4, HKV = 2, D = 128 };
    sagerun_problem p = sagerun_problem_make(B, N, H, HKV, D);
    uint64_t bytes;
    uint16_t *nhd = run_synthetic(f, 0, &p, &bytes);
    p.layout = SAGERUN_LAYOUT_HND;
    uint16_t *hnd = run_synthetic(f, 0, &p, &bytes);
    uint64_t differ = 0;
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N; n++)
            for (int h = 0; h < H; h++)
                differ += memcmp(&nhd[(((size_t)b * N + n) * H + h) * D],
                                 &hnd[(((size_t)b * H + h) * N + n) * D], D * 2) != 0;
    printf("HND vs NHD: %llu of %d rows differ\n", (unsigned long long)differ, B * N * H);
    free(nhd);
    free(hnd);
    assert_int_equal(differ, 0);
}

/* Every other sage2 variant gives baseline's bytes: shapes with partial and single tiles (the
 * two tile classes and the mask of SAGE2.md §2.2), one key, GQA, D = 64, HND. */
static void variants_equal_baseline(void **state)
{
    fixture *f = *state;
    static const struct {
        uint32_t b, n, h, hkv, d;
        sagerun_layout layout;
    } shapes[] = {
        {1, 1, 1, 1, 128, SAGERUN_LAYOUT_NHD},   {2, 17, 4, 2, 128, SAGERUN_LAYOUT_HND},
        {1, 64, 2, 1, 128, SAGERUN_LAYOUT_NHD},  {1, 65, 1, 1, 128, SAGERUN_LAYOUT_NHD},
        {1, 129, 3, 3, 128, SAGERUN_LAYOUT_HND}, {1, 300, 8, 2, 128, SAGERUN_LAYOUT_NHD},
        {2, 200, 6, 2, 64, SAGERUN_LAYOUT_NHD},  {1, 333, 2, 2, 64, SAGERUN_LAYOUT_HND},
        {1, 2049, 4, 4, 128, SAGERUN_LAYOUT_NHD},
    };
    uint64_t failures = 0;
    /* mode: bit 0 causal, bit 1 bf16 in and out */
    for (size_t i = 0; i < 4 * (sizeof shapes / sizeof shapes[0]); i++) {
        const unsigned mode = (unsigned)(i / (sizeof shapes / sizeof shapes[0]));
        const size_t si = i % (sizeof shapes / sizeof shapes[0]);
        sagerun_problem p = sagerun_problem_make(shapes[si].b, shapes[si].n, shapes[si].h,
                                                 shapes[si].hkv, shapes[si].d);
        p.layout = shapes[si].layout;
        p.causal = mode & 1;
        p.dtype = mode & 2 ? SAGERUN_DTYPE_BF16 : SAGERUN_DTYPE_F16;
        uint64_t bytes, vbytes;
        uint16_t *want = run_synthetic(f, 0, &p, &bytes);
        for (int v = 1; v < f->n_variants; v++) {
            uint16_t *got = run_synthetic(f, v, &p, &vbytes);
            assert_int_equal(vbytes, bytes);
            uint64_t differ = 0;
            for (uint64_t k = 0; k < bytes / 2; k++)
                differ += got[k] != want[k];
            printf("[%u,%u,%u/%u,%u] %s%s%s: %s vs baseline: %llu of %llu elements differ\n",
                   shapes[si].b, shapes[si].n, shapes[si].h, shapes[si].hkv, shapes[si].d,
                   shapes[si].layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD",
                   p.causal ? " causal" : "", mode & 2 ? " bf16" : "", sage2_variants[v],
                   (unsigned long long)differ, (unsigned long long)(bytes / 2));
            failures += differ != 0;
            free(got);
        }
        free(want);
    }
    assert_int_equal(failures, 0);
}

/* Causal masks what it should, for every sage2 variant (fp16 and bf16): the last query row sees
 * every key, so its bytes equal the non-causal output's (same quantized inputs, same tiles, and
 * the keys after it are past N anyway); row 0 sees key 0 only, so it differs from the
 * non-causal row 0 and equals key 0's V up to V's FP8 rounding (|V8 - V/s| <= 1/16 of |V/s|
 * plus the output rounding). N = 300: three CTAs, the last partial. */
static float decode16(uint16_t x, int bf16)
{
    if (!bf16)
        return half_to_float(x);
    uint32_t bits = (uint32_t)x << 16;
    float g;
    memcpy(&g, &bits, sizeof g);
    return g;
}

static void causal_first_and_last_rows(void **state)
{
    fixture *f = *state;
    enum { B = 2, N = 300, H = 4, HKV = 2, D = 128 };
    uint64_t failures = 0;
    for (int mode = 0; mode < 2; mode++) {
        const int bf16 = mode == 1;
        sagerun_problem p = sagerun_problem_make(B, N, H, HKV, D);
        p.dtype = bf16 ? SAGERUN_DTYPE_BF16 : SAGERUN_DTYPE_F16;
        /* V (the inputs' own bytes) for row 0's expectation */
        sagerun_error e = {0};
        sagerun_inputs *in;
        if (sagerun_inputs_create_synthetic(f->ctx, &p, 11, &in, &e))
            fail_msg("%s", e.message);
        uint16_t *v = malloc(in->kv_bytes);
        assert_int_equal(sagerun_mem_download(f->ctx, v, in->v, in->kv_bytes, &e), SAGERUN_OK);
        sagerun_inputs_destroy(in);
        for (int vi = 0; vi <= N_VARIANTS; vi++) {
            if (vi >= f->n_variants && vi < N_VARIANTS)
                continue; /* not on this device */
            const size_t index = vi < N_VARIANTS ? f->variant[vi] : f->fp16acc;
            const char *name = vi < N_VARIANTS ? sage2_variants[vi] : fp16acc_variant;
            uint64_t bytes;
            p.causal = 0;
            uint16_t *full = run_synthetic_index(f, index, &p, &bytes);
            p.causal = 1;
            uint16_t *causal = run_synthetic_index(f, index, &p, &bytes);
            uint64_t last_differ = 0, first_same = 0, first_off = 0;
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++) {
                    const size_t last = (((size_t)b * N + N - 1) * H + h) * D;
                    const size_t first = ((size_t)b * N * H + h) * D;
                    last_differ += memcmp(&full[last], &causal[last], D * 2) != 0;
                    first_same += memcmp(&full[first], &causal[first], D * 2) == 0;
                    const uint16_t *v0 = &v[((size_t)b * N * HKV + h / (H / HKV)) * D];
                    for (int c = 0; c < D; c++) {
                        const float w = decode16(v0[c], bf16), g = decode16(causal[first + c], bf16);
                        const float d = g - w, tol = 0.07f * (w < 0 ? -w : w) + 0.02f;
                        first_off += !((d < 0 ? -d : d) <= tol);
                    }
                }
            printf("causal %s %s: last row differs from non-causal in %llu of %d (b, h); row 0 "
                   "equals non-causal in %llu; row 0 off key 0's V in %llu of %d values\n",
                   name, bf16 ? "bf16" : "fp16", (unsigned long long)last_differ, B * H,
                   (unsigned long long)first_same, (unsigned long long)first_off, B * H * D);
            failures += last_differ + first_same + first_off;
            free(full);
            free(causal);
        }
        free(v);
    }
    assert_int_equal(failures, 0);
}

/* The corner behind interleave-softmax's single add per P·V product (sage2_wgmma.cuh): a row
 * whose max jumps so far that α = 0 while its O is negative, after which every product of a
 * channel is a zero (P = 0, or V = −0). baseline's lowering gives B = (0 + chain) + chain = +0
 * and O = fma(0, O<0, +0) = +0; a chain that returned −0 would give −0 without the first add.
 * Built as quantized tensors in a safetensors file (B = H = 1, N = 192, D = 128):
 *   Q8 row r = (127, 0, ...); K8 key 64 = (127, 0, ...), every other key 0; all scales 1.
 *   tile 0: x = 0, P = 448 on all keys, V < 0 -> O < 0 in every channel;
 *   tile 1: key 64 scores 16129 -> m jumps by ~2057, α = ex2(-2057) = 0, P(64) = 448, others 0;
 *   tile 2: P = 0 everywhere.
 * Channel 0 has V = -0 at key 64 (and < 0 elsewhere): its output must be +0 in every row.
 * Channel 1 has V = +1 at key 64: its output is 1.0 (the scenario is live). */
static void zero_products_corner(void **state)
{
    fixture *f = *state;
    enum { N = 192, D = 128, L = 192, QS = 8, KS = 3 };
    static int8_t q8[N * D], k8[N * D];
    static uint8_t v8[D * L];
    static uint16_t zeros16[N * D], kmean[D];
    static float qs[QS], ks[KS], vs[D];
    memset(q8, 0, sizeof q8);
    memset(k8, 0, sizeof k8);
    for (int r = 0; r < N; r++)
        q8[r * D] = 127;
    k8[64 * D] = 127;
    for (int c = 0; c < D; c++)
        for (int l = 0; l < L; l++)
            v8[c * L + l] = 0xB8; /* -1.0 in e4m3; slot 64 holds token 64 (π(0) = 0) */
    v8[0 * L + 64] = 0x80;       /* channel 0: -0 at key 64 */
    v8[1 * L + 64] = 0x38;       /* channel 1: +1 at key 64 */
    for (int i = 0; i < QS; i++)
        qs[i] = 1.0f;
    for (int i = 0; i < KS; i++)
        ks[i] = 1.0f;
    for (int i = 0; i < D; i++)
        vs[i] = 1.0f;
    const sr_st_write_tensor t[] = {
        {"q", SAGERUN_DTYPE_F16, 4, {1, N, 1, D}, zeros16, NULL, 0},
        {"k", SAGERUN_DTYPE_F16, 4, {1, N, 1, D}, zeros16, NULL, 0},
        {"v", SAGERUN_DTYPE_F16, 4, {1, N, 1, D}, zeros16, NULL, 0},
        {"q_int8", SAGERUN_DTYPE_I8, 4, {1, N, 1, D}, q8, NULL, 0},
        {"q_scale", SAGERUN_DTYPE_F32, 3, {1, 1, QS}, qs, NULL, 0},
        {"k_int8", SAGERUN_DTYPE_I8, 4, {1, N, 1, D}, k8, NULL, 0},
        {"k_scale", SAGERUN_DTYPE_F32, 3, {1, 1, KS}, ks, NULL, 0},
        {"v_fp8_f32acc", SAGERUN_DTYPE_F8_E4M3, 4, {1, D, 1, L}, v8, NULL, 0},
        {"v_scale_f32acc", SAGERUN_DTYPE_F32, 3, {1, 1, D}, vs, NULL, 0},
        {"k_mean", SAGERUN_DTYPE_F16, 4, {1, 1, 1, D}, kmean, NULL, 0},
    };
    char path[] = "/tmp/sagerun-zero-corner-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sagerun_error e = {0};
    if (sr_safetensors_write(path, t, sizeof t / sizeof t[0], NULL, &e))
        fail_msg("%s", e.message);
    uint16_t *out[N_VARIANTS];
    for (int v = 0; v < f->n_variants; v++) {
        sagerun_inputs *in;
        sagerun_instance *inst;
        if (sagerun_inputs_create_from_safetensors(f->ctx, path, SAGERUN_LAYOUT_NHD, &in, &e) ||
            sagerun_instance_create(f->reg, f->variant[v], f->ctx, in, &inst, &e) ||
            sagerun_instance_prepare(inst, NULL, &e) || sagerun_instance_run(inst, NULL, &e))
            fail_msg("%s: %s", sage2_variants[v], e.message);
        assert_true(sr_inputs_has_file_quantization(in));
        uint64_t bytes, o = sagerun_instance_output(inst, &bytes);
        assert_int_equal(bytes, (uint64_t)N * D * 2);
        out[v] = malloc(bytes);
        assert_int_equal(sagerun_mem_download(f->ctx, out[v], o, bytes, &e), SAGERUN_OK);
        sagerun_instance_destroy(inst);
        sagerun_inputs_destroy(in);
    }
    unlink(path);
    uint64_t plus_zero = 0, ones = 0, differ = 0;
    for (int r = 0; r < N; r++) {
        plus_zero += out[0][r * D + 0] == 0x0000;
        ones += out[0][r * D + 1] == 0x3C00;
    }
    for (int v = 1; v < f->n_variants; v++)
        for (int i = 0; i < N * D; i++)
            differ += out[v][i] != out[0][i];
    printf("zero-products corner: baseline +0 in channel 0 for %llu of %d rows, 1.0 in channel 1 "
           "for %llu; other variants differ in %llu elements\n",
           (unsigned long long)plus_zero, N, (unsigned long long)ones, (unsigned long long)differ);
    for (int v = 0; v < f->n_variants; v++)
        free(out[v]);
    assert_int_equal(plus_zero, N);
    assert_int_equal(ones, N);
    assert_int_equal(differ, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_n1000_h2),
        cmocka_unit_test(golden_b2_n333_h3),
        cmocka_unit_test(golden_n1200_gqa4to2),
        cmocka_unit_test(golden_fp16acc),
        cmocka_unit_test(golden15_files),
        cmocka_unit_test(hnd_equals_nhd_transposed),
        cmocka_unit_test(variants_equal_baseline),
        cmocka_unit_test(causal_first_and_last_rows),
        cmocka_unit_test(zero_products_corner),
    };
    sagerun_context *probe = gpu_test_context();
    if (!probe)
        return 0;
    sagerun_context_destroy(probe);
    return cmocka_run_group_tests(tests, setup, teardown);
}
