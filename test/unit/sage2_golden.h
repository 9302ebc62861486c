/* Shared by test_quantize.c and test/gpu/test_quantize_gpu.c: finding the golden files and
 * comparing quantizer outputs with them. Static functions only (each test includes it once). */
#ifndef SAGERUN_TEST_SAGE2_GOLDEN_H
#define SAGERUN_TEST_SAGE2_GOLDEN_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"
#include "safetensors.h"
#include "workload.h"

#ifndef SAGERUN_SOURCE_DIR
#define SAGERUN_SOURCE_DIR "."
#endif

/* The golden folder (SAGERUN_GOLDEN_DIR, else ../shared/golden next to the checkout) and its
 * *.safetensors files, sorted; returns the count (0 when absent; *why says so). */
static inline size_t golden_files(char paths[][1024], size_t max, char *why, size_t whylen)
{
    const char *env = getenv("SAGERUN_GOLDEN_DIR");
    char dir[768];
    snprintf(dir, sizeof dir, "%s", env && env[0] ? env : SAGERUN_SOURCE_DIR "/../shared/golden");
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0) {
        snprintf(why, whylen, "golden files not found in %s (set SAGERUN_GOLDEN_DIR)", dir);
        return 0;
    }
    size_t count = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list[i]->d_name);
        if (count < max && len > 12 && strcmp(list[i]->d_name + len - 12, ".safetensors") == 0)
            snprintf(paths[count++], 1024, "%s/%s", dir, list[i]->d_name);
        free(list[i]);
    }
    free(list);
    if (count == 0)
        snprintf(why, whylen, "no *.safetensors golden files in %s", dir);
    return count;
}

/* Reads a whole tensor of a file into a new host buffer (NULL on failure, message printed). */
static inline void *golden_read(const sr_safetensors *f, const char *name, uint64_t *bytes)
{
    const sr_st_tensor *t = sr_safetensors_find(f, name);
    if (!t) {
        fprintf(stderr, "%s: no tensor %s\n", f->path, name);
        return NULL;
    }
    void *buf = malloc(t->bytes ? t->bytes : 1);
    sagerun_error err = {0};
    if (sr_safetensors_read_tensor(f, name, buf, t->bytes, &err) != SAGERUN_OK) {
        fprintf(stderr, "%s\n", err.message);
        free(buf);
        return NULL;
    }
    if (bytes)
        *bytes = t->bytes;
    return buf;
}

/* Signed ordinal of an int8 / e4m3 code, so that adjacent representable values differ by one. */
static inline int code_ordinal(uint8_t c, int fp8)
{
    if (!fp8)
        return (int8_t)c;
    int mag = c & 0x7F;
    return (c & 0x80) ? -mag : mag;
}

typedef struct cmp_stats {
    uint64_t n, differ, over_one_step;
} cmp_stats;

/* Compares quantized codes (int8 or e4m3) */
static inline cmp_stats compare_codes(const uint8_t *got, const uint8_t *want, uint64_t n, int fp8)
{
    cmp_stats s = {n, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        if (got[i] == want[i])
            continue;
        s.differ++;
        int d = code_ordinal(got[i], fp8) - code_ordinal(want[i], fp8);
        if (d > 1 || d < -1 || (fp8 && ((got[i] & 0x7F) == 0x7F || (want[i] & 0x7F) == 0x7F)))
            s.over_one_step++;
    }
    return s;
}

/* Bitwise equality of fp32 arrays; returns the count of differing entries. */
static inline uint64_t compare_f32_bits(const void *got, const void *want, uint64_t n)
{
    const uint32_t *a = got, *b = want;
    uint64_t d = 0;
    for (uint64_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* One golden set: tensor names and the params that produce it. */
typedef struct golden_set {
    const char *label;
    const char *q_int8, *q_scale, *k_int8, *k_scale, *v_fp8, *v_scale;
    sagerun_sage2_quant_params params;
} golden_set;

static inline void golden_sets(golden_set sets[3])
{
    sets[0] = (golden_set){"sm89 f32acc", "q_int8", "q_scale", "k_int8", "k_scale",
                           "v_fp8_f32acc", "v_scale_f32acc", sr_sage2_params_sm89(448.0f)};
    sets[1] = (golden_set){"sm89 f16acc", "q_int8", "q_scale", "k_int8", "k_scale",
                           "v_fp8_f16acc", "v_scale_f16acc", sr_sage2_params_sm89(2.25f)};
    sets[2] = (golden_set){"sm90", "sm90_q_int8", "sm90_q_scale", "sm90_k_int8", "sm90_k_scale",
                           "sm90_v_fp8", "sm90_v_scale", sr_sage2_params_sm90()};
}

typedef struct host_sage2 {
    void *q_int8, *q_scale, *k_int8, *k_scale, *v_fp8, *v_scale, *k_mean;
} host_sage2;

/* Compares quantized tensors (host copies) with a golden set; prints one line per tensor and
 * returns the number of failures: scales must match bit for bit; codes must match exactly when
 * exact, else differ by at most one step on at most max_frac of the elements. totals (NULL or
 * 3 entries: q, k, v codes) accumulates the comparisons. */
static inline int golden_compare(const sr_safetensors *f, const golden_set *g, const host_sage2 *got,
                          int exact, double max_frac, cmp_stats totals[3])
{
    int failures = 0;
    const char *codes[3] = {g->q_int8, g->k_int8, g->v_fp8};
    const void *code_data[3] = {got->q_int8, got->k_int8, got->v_fp8};
    for (int i = 0; i < 3; i++) {
        uint64_t bytes;
        uint8_t *want = golden_read(f, codes[i], &bytes);
        if (!want)
            return failures + 1;
        cmp_stats s = compare_codes(code_data[i], want, bytes, i == 2);
        if (totals) {
            totals[i].n += s.n;
            totals[i].differ += s.differ;
            totals[i].over_one_step += s.over_one_step;
        }
        int ok = exact ? s.differ == 0
                       : s.over_one_step == 0 && (double)s.differ <= max_frac * (double)s.n;
        printf("  %-12s %-14s %9llu elements, %6llu differ (%.2e), %llu by more than one step%s\n",
               g->label, codes[i], (unsigned long long)s.n, (unsigned long long)s.differ,
               (double)s.differ / (double)s.n, (unsigned long long)s.over_one_step,
               ok ? "" : "  <-- FAIL");
        failures += !ok;
        free(want);
    }
    const char *scales[3] = {g->q_scale, g->k_scale, g->v_scale};
    const void *scale_data[3] = {got->q_scale, got->k_scale, got->v_scale};
    for (int i = 0; i < 3; i++) {
        uint64_t bytes;
        void *want = golden_read(f, scales[i], &bytes);
        if (!want)
            return failures + 1;
        uint64_t d = compare_f32_bits(scale_data[i], want, bytes / 4);
        printf("  %-12s %-14s %9llu scales, %llu differ%s\n", g->label, scales[i],
               (unsigned long long)(bytes / 4), (unsigned long long)d, d ? "  <-- FAIL" : "");
        failures += d != 0;
        free(want);
    }
    return failures;
}

/* Distance in fp16 ulps between two finite fp16 values of the same sign or near zero. */
static inline int half_ulps(uint16_t a, uint16_t b)
{
    int ia = (a & 0x8000) ? -(int)(a & 0x7FFF) : (int)a;
    int ib = (b & 0x8000) ? -(int)(b & 0x7FFF) : (int)b;
    return abs(ia - ib);
}

#endif
