/* The reference variant (exact attention in double precision) on hand-checked cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "safetensors.h"

#include "../../variants/common/reference_mask.h"

#define PLUGIN SAGERUN_TEST_PLUGINS "/reference.so"

typedef struct fixture {
    sagerun_context *ctx;
    sagerun_registry *reg;
    size_t index;
} fixture;

static int setup(void **state)
{
    static fixture f;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &f.ctx, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_create(f.ctx, &f.reg, NULL), SAGERUN_OK);
    assert_int_equal(sagerun_registry_add_path(f.reg, PLUGIN, NULL), SAGERUN_OK);
    long i = sagerun_registry_find(f.reg, "reference");
    assert_true(i >= 0);
    f.index = (size_t)i;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sagerun_registry_destroy(f->reg);
    sagerun_context_destroy(f->ctx);
    return 0;
}

/* Runs the reference on host arrays (with the sequences of a varlen or paged problem, else
 * NULL) and returns the output in out. */
static void run_reference_seq(fixture *f, const sagerun_problem *p, const sagerun_sequences *seq,
                              const uint16_t *q, const uint16_t *k, const uint16_t *v,
                              uint16_t *out)
{
    sagerun_inputs *in;
    sagerun_instance *inst;
    sagerun_error e;
    if (sagerun_inputs_create_from_host_seq(f->ctx, p, seq, q, k, v, &in, &e) != SAGERUN_OK)
        fail_msg("%s", e.message);
    if (sagerun_instance_create(f->reg, f->index, f->ctx, in, &inst, &e) != SAGERUN_OK)
        fail_msg("%s", e.message);
    uint64_t bytes;
    uint64_t o = sagerun_instance_output(inst, &bytes);
    assert_int_equal(bytes, sagerun_problem_q_elements(p) * 2);
    double s = -1;
    assert_int_equal(sagerun_instance_run(inst, &s, &e), SAGERUN_OK);
    assert_true(s >= 0);
    assert_int_equal(sagerun_mem_download(f->ctx, out, o, bytes, &e), SAGERUN_OK);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
}

static void run_reference(fixture *f, const sagerun_problem *p, const uint16_t *q,
                          const uint16_t *k, const uint16_t *v, uint16_t *out)
{
    run_reference_seq(f, p, NULL, q, k, v, out);
}

/* Q = K = I (2x2), V = [[1,2],[3,4]], scale 1: row 0 weights (e, 1)/(e+1), row 1 (1, e)/(e+1).
 * O = [[1.53788, 2.53788], [2.46212, 3.46212]], rounded to fp16 by hand: 0x3e27 0x4113 0x40ed
 * 0x42ed. */
static void two_by_two_by_hand(void **state)
{
    fixture *f = *state;
    const uint16_t one = 0x3c00, two = 0x4000, three = 0x4200, four = 0x4400;
    uint16_t q[4] = {one, 0, 0, one}, k[4] = {one, 0, 0, one}, v[4] = {one, two, three, four};
    sagerun_problem p = sagerun_problem_make(1, 2, 1, 1, 2);
    p.sm_scale = 1.0f;
    uint16_t o[4];
    run_reference(f, &p, q, k, v, o);
    assert_int_equal(o[0], 0x3e27);
    assert_int_equal(o[1], 0x4113);
    assert_int_equal(o[2], 0x40ed);
    assert_int_equal(o[3], 0x42ed);
}

/* GQA and layouts: 2 query heads share 1 kv head, so both heads' outputs are equal when their Q
 * rows are; HND must give the NHD result transposed. */
static void gqa_and_layouts_agree(void **state)
{
    fixture *f = *state;
    enum { N = 3, D = 4 };
    uint16_t qn[N * 2 * D], kn[N * D], vn[N * D];
    for (int n = 0; n < N; n++)
        for (int d = 0; d < D; d++) {
            uint16_t x = (uint16_t)(0x3000 + 0x111 * ((n * 7 + d * 3) % 11)); /* 0.125 .. 1.x */
            qn[(n * 2 + 0) * D + d] = x;
            qn[(n * 2 + 1) * D + d] = x;
            kn[n * D + d] = (uint16_t)(0x3400 + 0x0a0 * ((n * 5 + d) % 7));
            vn[n * D + d] = (uint16_t)(0x3800 + 0x123 * ((n + d * 2) % 5));
        }
    sagerun_problem p = sagerun_problem_make(1, N, 2, 1, D);
    uint16_t on[N * 2 * D];
    run_reference(f, &p, qn, kn, vn, on);
    for (int n = 0; n < N; n++)
        assert_memory_equal(&on[(n * 2) * D], &on[(n * 2 + 1) * D], D * 2);
    /* The same problem in HND: [B, H, N, D]. */
    uint16_t qh[N * 2 * D], oh[N * 2 * D];
    for (int h = 0; h < 2; h++)
        for (int n = 0; n < N; n++)
            memcpy(&qh[(h * N + n) * D], &qn[(n * 2 + h) * D], D * 2);
    p.layout = SAGERUN_LAYOUT_HND; /* K and V with one head are the same in both layouts */
    run_reference(f, &p, qh, kn, vn, oh);
    for (int h = 0; h < 2; h++)
        for (int n = 0; n < N; n++)
            assert_memory_equal(&oh[(h * N + n) * D], &on[(n * 2 + h) * D], D * 2);
}

/* Issue 15: an all-zero V gives exactly zero (the oracle once wrote 0.5, 0x3800, for every 0),
 * in fp16 and bf16; one zero V channel gives zero in that channel only. */
static void zero_v_gives_zero_output(void **state)
{
    fixture *f = *state;
    enum { N = 7, H = 2, D = 8 };
    const uint32_t dtypes[2] = {SAGERUN_DTYPE_F16, SAGERUN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        const uint16_t one = dtypes[t] == SAGERUN_DTYPE_BF16 ? 0x3f80 : 0x3c00;
        uint16_t q[N * H * D], k[N * H * D], v[N * H * D], o[N * H * D];
        for (int i = 0; i < N * H * D; i++) {
            q[i] = (uint16_t)(i % 3 ? one : 0);
            k[i] = (uint16_t)(i % 5 ? one : 0x8000 | one);
            v[i] = 0;
        }
        sagerun_problem p = sagerun_problem_make(1, N, H, H, D);
        p.dtype = dtypes[t];
        run_reference(f, &p, q, k, v, o);
        for (int i = 0; i < N * H * D; i++)
            assert_int_equal(o[i], 0);
        /* V = 1 everywhere but channel 3: the output is exactly 1 there, 0 in channel 3 */
        for (int i = 0; i < N * H * D; i++)
            v[i] = (uint16_t)(i % D == 3 ? 0 : one);
        run_reference(f, &p, q, k, v, o);
        for (int i = 0; i < N * H * D; i++)
            assert_int_equal(o[i], i % D == 3 ? 0 : one);
    }
}

/* Causal (query row n attends to keys 0..n): the 2x2 case above; row 0 sees key 0 only, so its
 * output is V's row 0 exactly; row 1 sees both keys, as without the mask. */
static void causal_by_hand(void **state)
{
    fixture *f = *state;
    const uint16_t one = 0x3c00, two = 0x4000, three = 0x4200, four = 0x4400;
    uint16_t q[4] = {one, 0, 0, one}, k[4] = {one, 0, 0, one}, v[4] = {one, two, three, four};
    sagerun_problem p = sagerun_problem_make(1, 2, 1, 1, 2);
    p.sm_scale = 1.0f;
    p.causal = 1;
    uint16_t o[4];
    run_reference(f, &p, q, k, v, o);
    assert_int_equal(o[0], one);
    assert_int_equal(o[1], two);
    assert_int_equal(o[2], 0x40ed);
    assert_int_equal(o[3], 0x42ed);
}

/* A deterministic fp16 value of index i: magnitude 0.125 to 2, either sign, one series per salt. */
static uint16_t test_half(uint32_t i, uint32_t salt)
{
    uint32_t h = (i + 1) * 2654435761u ^ (salt + 1) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (uint16_t)(((h >> 16) & 0x8000) | (0x3000 + (h & 0x0fff)));
}

static void fill_halves(uint16_t *x, size_t n, uint32_t salt)
{
    for (size_t i = 0; i < n; i++)
        x[i] = test_half((uint32_t)i, salt);
}

/* Bottom-right causal with 3 queries and 1 key: the diagonal of row i is key i - 2, so rows 0 and
 * 1 attend no key and write 0, row 2 attends key 0 alone and is V's row 0 exactly. */
static void bottom_right_empty_rows_by_hand(void **state)
{
    fixture *f = *state;
    const uint16_t one = 0x3c00, two = 0x4000;
    uint16_t q[6] = {one, 0, 0, one, one, one}, k[2] = {one, two}, v[2] = {one, two}, o[6];
    sagerun_problem p = sagerun_problem_make(1, 3, 1, 1, 2);
    p.kv_len = 1;
    p.causal = 1;
    p.align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    run_reference(f, &p, q, k, v, o);
    const uint16_t want[6] = {0, 0, 0, 0, one, two};
    assert_memory_equal(o, want, sizeof want);
    p.align = SAGERUN_ALIGN_TOP_LEFT; /* row i sees keys 0..i: all of them, the one key */
    run_reference(f, &p, q, k, v, o);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(o[2 * i], one);
        assert_int_equal(o[2 * i + 1], two);
    }
}

/* A paged K/V cache with a shuffled block table gives the bytes of the dense problem holding the
 * same logical keys; the same cache read with the table 0, 1, 2, ... (what a kernel ignoring the
 * table reads) gives other bytes, so the first check can fail. */
static void paged_follows_a_shuffled_block_table(void **state)
{
    fixture *f = *state;
    enum { B = 2, N = 6, KV = 11, HQ = 4, HKV = 2, D = 8, PS = 4, PPS = 3, PAGES = 8 };
    enum { ROW = HKV * D }; /* elements of one key's row, every KV head */
    static const int32_t table[B * PPS] = {5, 0, 7, 2, 4, 3}; /* pages 1 and 6 spare */
    static const int32_t in_order[B * PPS] = {0, 1, 2, 3, 4, 5};
    static uint16_t q[B * N * HQ * D], kd[B * KV * ROW], vd[B * KV * ROW];
    static uint16_t kp[PAGES * PS * ROW], vp[PAGES * PS * ROW];
    static uint16_t od[B * N * HQ * D], op[B * N * HQ * D], oi[B * N * HQ * D];
    fill_halves(q, B * N * HQ * D, 1);
    fill_halves(kd, B * KV * ROW, 2);
    fill_halves(vd, B * KV * ROW, 3);
    fill_halves(kp, PAGES * PS * ROW, 4); /* noise where no key is copied */
    fill_halves(vp, PAGES * PS * ROW, 5);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < KV; j++) {
            int row = table[b * PPS + j / PS] * PS + j % PS;
            memcpy(&kp[row * ROW], &kd[(b * KV + j) * ROW], ROW * sizeof *kp);
            memcpy(&vp[row * ROW], &vd[(b * KV + j) * ROW], ROW * sizeof *vp);
        }
    sagerun_problem dense = sagerun_problem_make(B, N, HQ, HKV, D);
    dense.kv_len = KV;
    dense.causal = 1;
    dense.align = SAGERUN_ALIGN_BOTTOM_RIGHT; /* the last row sees every key */
    sagerun_problem paged = dense;
    paged.page_size = PS;
    paged.pages = PAGES;
    paged.pages_per_seq = PPS;
    sagerun_sequences seq = {sizeof seq, B, NULL, NULL, table};
    run_reference(f, &dense, q, kd, vd, od);
    run_reference_seq(f, &paged, &seq, q, kp, vp, op);
    assert_memory_equal(op, od, sizeof od);
    seq.block_table = in_order;
    run_reference_seq(f, &paged, &seq, q, kp, vp, oi);
    assert_memory_not_equal(oi, od, sizeof od);
}

/* Each sequence of a varlen problem (packed Q, K, V, O) is computed as the dense problem of its
 * own lengths would be, the bottom-right diagonal and the window from its own q_len and kv_len;
 * the second sequence has more queries than keys (empty rows). */
static void varlen_is_each_sequence_alone(void **state)
{
    fixture *f = *state;
    enum { H = 2, D = 8, TQ = 8, TKV = 9 };
    static const int32_t cu_q[3] = {0, 3, 8}, cu_kv[3] = {0, 7, 9};
    static uint16_t q[TQ * H * D], k[TKV * H * D], v[TKV * H * D], o[TQ * H * D], alone[TQ * H * D];
    fill_halves(q, TQ * H * D, 6);
    fill_halves(k, TKV * H * D, 7);
    fill_halves(v, TKV * H * D, 8);
    sagerun_problem p = sagerun_problem_make(2, 5, H, H, D);
    p.kv_len = 7;
    p.causal = 1;
    p.align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    p.window = 1;
    p.window_left = 2;
    p.window_right = 0;
    p.varlen = 1;
    p.total_q = TQ;
    p.total_kv = TKV;
    sagerun_sequences seq = {sizeof seq, 2, cu_q, cu_kv, NULL};
    run_reference_seq(f, &p, &seq, q, k, v, o);
    for (int b = 0; b < 2; b++) {
        sagerun_problem one = p;
        one.batch = 1;
        one.seq_len = (uint32_t)(cu_q[b + 1] - cu_q[b]);
        one.kv_len = (uint32_t)(cu_kv[b + 1] - cu_kv[b]);
        one.varlen = one.total_q = one.total_kv = 0;
        run_reference(f, &one, &q[cu_q[b] * H * D], &k[cu_kv[b] * H * D], &v[cu_kv[b] * H * D],
                      alone);
        assert_memory_equal(&o[cu_q[b] * H * D], alone, one.seq_len * H * D * sizeof *o);
    }
}

/* The reference's mask (reference_mask.h, restated because a plugin links no library) is
 * sagerun_problem_key_range on every row of every combination of causal, alignment, window sides
 * and lengths from 1 to 9 queries and 0 to 9 keys. */
static void mask_is_the_library_rule(void **state)
{
    (void)state;
    static const int32_t sides[] = {-1, 0, 1, 3};
    sagerun_problem p = sagerun_problem_make(1, 1, 1, 1, 8);
    unsigned rows = 0;
    for (int c = 0; c < 8; c++)
        for (int l = 0; l < 4; l++)
            for (int r = 0; r < 4; r++)
                for (uint32_t ql = 1; ql <= 9; ql++)
                    for (uint32_t kl = 0; kl <= 9; kl++)
                        for (uint32_t i = 0; i < ql; i++, rows++) {
                            p.causal = c & 1;
                            p.align = (c >> 1) & 1;
                            p.window = (c >> 2) & 1;
                            p.window_left = sides[l];
                            p.window_right = sides[r];
                            uint32_t a, b, x, y;
                            sagerun_problem_key_range(&p, ql, kl, i, &a, &b);
                            reference_key_range(&p, ql, kl, i, &x, &y);
                            if (a != x || b != y)
                                fail_msg("causal %u align %u window %u (%d, %d), q %u kv %u "
                                         "row %u: library [%u, %u), reference [%u, %u)",
                                         p.causal, p.align, p.window, p.window_left,
                                         p.window_right, ql, kl, i, a, b, x, y);
                        }
    assert_true(rows > 10000);
}

/* Against the golden files' o_ref_fp32 (exact attention in float64, rounded to fp32): our fp16
 * output, widened, must be within half an fp16 ulp of it plus the fp32 rounding. */
static void matches_golden_fp32_reference(void **state)
{
    fixture *f = *state;
    const char *env = getenv("SAGERUN_GOLDEN_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/b2_n333_h3.safetensors",
             env && *env ? env : SAGERUN_SOURCE_DIR "/../shared/golden");
    if (access(path, R_OK) != 0) {
        printf("SKIP: golden file %s not found (set SAGERUN_GOLDEN_DIR)\n", path);
        skip();
    }
    sagerun_error e;
    sagerun_inputs *in;
    sagerun_instance *inst;
    if (sagerun_inputs_create_from_safetensors(f->ctx, path, SAGERUN_LAYOUT_NHD, &in, &e) ||
        sagerun_instance_create(f->reg, f->index, f->ctx, in, &inst, &e) ||
        sagerun_instance_run(inst, NULL, &e))
        fail_msg("%s", e.message);
    uint64_t bytes, o = sagerun_instance_output(inst, &bytes);
    uint64_t n = bytes / 2;
    uint16_t *got = malloc(bytes);
    float *want = malloc(n * 4);
    assert_int_equal(sagerun_mem_download(f->ctx, got, o, bytes, &e), SAGERUN_OK);
    sr_safetensors *sf;
    assert_int_equal(sr_safetensors_open(path, &sf, &e), SAGERUN_OK);
    assert_int_equal(sr_safetensors_read_tensor(sf, "o_ref_fp32", want, n * 4, &e), SAGERUN_OK);
    sr_safetensors_close(sf);
    double worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint16_t h = got[i];
        int exp = (h >> 10) & 0x1f;
        double mag = exp ? ldexp((h & 0x3ff) | 0x400, exp - 25) : ldexp(h & 0x3ff, -24);
        double g = (h & 0x8000) ? -mag : mag;
        double ulp = ldexp(1.0, (exp ? exp : 1) - 25); /* one fp16 ulp at this magnitude */
        double err_ulps = fabs(g - (double)want[i]) / ulp;
        if (err_ulps > worst) {
            worst = err_ulps;
            if (worst > 0.5)
                printf("element %llu: fp16 0x%04x = %.9g, o_ref_fp32 %.9g\n",
                       (unsigned long long)i, h, g, (double)want[i]);
        }
    }
    printf("reference vs o_ref_fp32: worst %.4f fp16 ulp over %llu elements\n", worst,
           (unsigned long long)n);
    assert_true(worst <= 0.5 + 1e-3);
    free(got);
    free(want);
    sagerun_instance_destroy(inst);
    sagerun_inputs_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_by_two_by_hand),
        cmocka_unit_test(gqa_and_layouts_agree),
        cmocka_unit_test(zero_v_gives_zero_output),
        cmocka_unit_test(causal_by_hand),
        cmocka_unit_test(bottom_right_empty_rows_by_hand),
        cmocka_unit_test(paged_follows_a_shuffled_block_table),
        cmocka_unit_test(varlen_is_each_sequence_alone),
        cmocka_unit_test(mask_is_the_library_rule),
        cmocka_unit_test(matches_golden_fp32_reference),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
