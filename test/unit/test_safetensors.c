/* safetensors: round trip, chunked reads, and every kind of malformed file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safetensors.h"
#include "sagerun/workload.h"

static char dir[256];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sagerun-st-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes a raw file: 8-byte length (header_len_override when not ~0), header text, data_bytes
 * of data. Returns the path (static buffer). */
static const char *raw_file(const char *name, uint64_t header_len_override, const char *header,
                            uint64_t data_bytes)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t len = header_len_override != ~0ull ? header_len_override : strlen(header);
    for (int i = 0; i < 8; i++)
        fputc((int)((len >> (8 * i)) & 0xFF), f);
    fputs(header, f);
    for (uint64_t i = 0; i < data_bytes; i++)
        fputc((int)(i & 0xFF), f);
    fclose(f);
    return path;
}

/* Opening must fail with `status` and a message containing every one of the words. */
static void expect_open_error(const char *path, int status, const char *w1, const char *w2)
{
    sr_safetensors *f = NULL;
    sagerun_error err = {0};
    int st = sr_safetensors_open(path, &f, &err);
    if (st != status)
        fail_msg("%s: status %d, expected %d (%s)", path, st, status, err.message);
    assert_null(f);
    if (!strstr(err.message, path))
        fail_msg("message does not name the file: %s", err.message);
    if (w1 && !strstr(err.message, w1))
        fail_msg("message lacks '%s': %s", w1, err.message);
    if (w2 && !strstr(err.message, w2))
        fail_msg("message lacks '%s': %s", w2, err.message);
}

static void test_round_trip(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/rt.safetensors", dir);
    uint16_t q[2 * 3 * 4];
    float s[5];
    int8_t i8[7];
    for (int i = 0; i < 24; i++)
        q[i] = (uint16_t)(i * 1000);
    for (int i = 0; i < 5; i++)
        s[i] = (float)i / 3;
    for (int i = 0; i < 7; i++)
        i8[i] = (int8_t)(i - 3);
    sr_st_write_tensor t[3] = {
        {.name = "q", .dtype = SAGERUN_DTYPE_F16, .rank = 3, .shape = {2, 3, 4}, .data = q},
        {.name = "scale", .dtype = SAGERUN_DTYPE_F32, .rank = 1, .shape = {5}, .data = s},
        {.name = "codes", .dtype = SAGERUN_DTYPE_I8, .rank = 1, .shape = {7}, .data = i8},
    };
    json_t *meta = json_pack("{s:s, s:s}", "layout", "NHD", "note", "hello");
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_write(path, t, 3, meta, &err), SAGERUN_OK);
    json_decref(meta);
    /* no temporary file left behind */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", dir);
    assert_int_not_equal(system(cmd), 0);

    sr_safetensors *f;
    assert_int_equal(sr_safetensors_open(path, &f, &err), SAGERUN_OK);
    assert_int_equal(f->count, 3);
    assert_int_equal(f->data_start % 8, 0);
    assert_string_equal(json_string_value(json_object_get(f->metadata, "note")), "hello");
    const sr_st_tensor *tq;
    uint64_t shape[3] = {2, 3, 4};
    assert_int_equal(sr_safetensors_expect(f, "q", SAGERUN_DTYPE_F16, 3, shape, &tq, &err),
                     SAGERUN_OK);
    assert_int_equal(tq->bytes, 48);
    uint16_t q2[24];
    assert_int_equal(sr_safetensors_read_tensor(f, "q", q2, sizeof q2, &err), SAGERUN_OK);
    assert_memory_equal(q, q2, sizeof q);
    float s2[2];
    assert_int_equal(sr_safetensors_read_range(f, sr_safetensors_find(f, "scale"), 8, s2, 8, &err),
                     SAGERUN_OK);
    assert_memory_equal(s + 2, s2, 8);
    /* reads beyond a tensor, wrong sizes, wrong expectations */
    assert_int_equal(sr_safetensors_read_range(f, tq, 40, q2, 16, &err), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sr_safetensors_read_tensor(f, "q", q2, 10, &err), SAGERUN_INVALID_ARGUMENT);
    assert_int_equal(sr_safetensors_read_tensor(f, "nope", q2, 10, &err), SAGERUN_NOT_FOUND);
    assert_non_null(strstr(err.message, "'nope'"));
    shape[2] = 5;
    assert_int_equal(sr_safetensors_expect(f, "q", SAGERUN_DTYPE_F16, 3, shape, &tq, &err),
                     SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "[2, 3, 4]"));
    assert_int_equal(sr_safetensors_expect(f, "q", SAGERUN_DTYPE_BF16, 0, NULL, &tq, &err),
                     SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "BF16"));
    sr_safetensors_close(f);

    /* host-context upload goes straight into the destination */
    sagerun_context *ctx;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    assert_int_equal(sr_safetensors_open(path, &f, &err), SAGERUN_OK);
    uint64_t addr;
    assert_int_equal(sagerun_mem_alloc(ctx, 48, &addr, &err), SAGERUN_OK);
    assert_int_equal(sr_safetensors_upload_tensor(f, sr_safetensors_find(f, "q"), ctx, addr, &err),
                     SAGERUN_OK);
    assert_memory_equal((void *)(uintptr_t)addr, q, 48);
    /* writing from a context's memory */
    char path2[512];
    snprintf(path2, sizeof path2, "%s/rt2.safetensors", dir);
    sr_st_write_tensor t2 = {.name = "q", .dtype = SAGERUN_DTYPE_F16, .rank = 3,
                             .shape = {2, 3, 4}, .ctx = ctx, .addr = addr};
    assert_int_equal(sr_safetensors_write(path2, &t2, 1, NULL, &err), SAGERUN_OK);
    sagerun_mem_free(ctx, addr);
    sagerun_context_destroy(ctx);
    sr_safetensors_close(f);
    assert_int_equal(sr_safetensors_open(path2, &f, &err), SAGERUN_OK);
    assert_int_equal(sr_safetensors_read_tensor(f, "q", q2, 48, &err), SAGERUN_OK);
    assert_memory_equal(q, q2, 48);
    assert_null(f->metadata);
    sr_safetensors_close(f);
}

static void test_write_rejects(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/bad.safetensors", dir);
    uint8_t d[4] = {0};
    sr_st_write_tensor t[2] = {
        {.name = "a", .dtype = SAGERUN_DTYPE_I8, .rank = 1, .shape = {4}, .data = d},
        {.name = "a", .dtype = SAGERUN_DTYPE_I8, .rank = 1, .shape = {4}, .data = d},
    };
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_write(path, t, 2, NULL, &err), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "duplicate"));
    json_t *meta = json_pack("{s:i}", "n", 3);
    assert_int_equal(sr_safetensors_write(path, t, 1, meta, &err), SAGERUN_FORMAT);
    assert_non_null(strstr(err.message, "'n'"));
    json_decref(meta);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof path, "%s/no/such/dir/x.safetensors", dir);
    assert_int_equal(sr_safetensors_write(path, t, 1, NULL, &err), SAGERUN_IO);
}

#define T_OK "\"t\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]}"

static void test_malformed(void **state)
{
    (void)state;
    /* a good one first, to make sure the helpers are right */
    sr_safetensors *f;
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_open(raw_file("good", ~0ull, "{" T_OK "}", 8), &f, &err),
                     SAGERUN_OK);
    sr_safetensors_close(f);

    assert_int_equal(sr_safetensors_open(raw_file("empty", ~0ull, "{}", 0), &f, &err), SAGERUN_OK);
    assert_int_equal(f->count, 0);
    sr_safetensors_close(f);
    char path[512];
    snprintf(path, sizeof path, "%s/short", dir);
    FILE *fp = fopen(path, "wb");
    fputs("abc", fp);
    fclose(fp);
    expect_open_error(path, SAGERUN_FORMAT, "too short", NULL);
    expect_open_error(raw_file("hdr_too_long", 4096, "{" T_OK "}", 8), SAGERUN_FORMAT,
                      "header length 4096", "exceeds");
    expect_open_error(raw_file("truncated_data", ~0ull, "{" T_OK "}", 5), SAGERUN_FORMAT, "'t'",
                      "out of bounds");
    expect_open_error(raw_file("bad_json", ~0ull, "{\"t\":{\"dtype\":\"F16\",", 8), SAGERUN_FORMAT,
                      "not valid JSON", NULL);
    expect_open_error(raw_file("not_object", ~0ull, "[1,2]", 0), SAGERUN_FORMAT,
                      "not a JSON object", NULL);
    expect_open_error(raw_file("dup_key", ~0ull, "{" T_OK "," T_OK "}", 8), SAGERUN_FORMAT,
                      "not valid JSON", "duplicate");
    expect_open_error(
        raw_file("unknown_dtype", ~0ull,
                 "{\"t\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4),
        SAGERUN_FORMAT, "'t'", "unknown dtype 'F12'");
    expect_open_error(
        raw_file("shape_mismatch", ~0ull,
                 "{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8),
        SAGERUN_FORMAT, "'t'", "shape mismatch");
    expect_open_error(
        raw_file("overlap", ~0ull,
                 "{\"a\":{\"dtype\":\"I8\",\"shape\":[6],\"data_offsets\":[0,6]},"
                 "\"b\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[4,8]}}",
                 8),
        SAGERUN_FORMAT, "'a'", "overlap");
    expect_open_error(
        raw_file("out_of_bounds", ~0ull,
                 "{\"t\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[100,104]}}", 8),
        SAGERUN_FORMAT, "'t'", "out of bounds");
    expect_open_error(
        raw_file("end_before_begin", ~0ull,
                 "{\"t\":{\"dtype\":\"I8\",\"shape\":[0],\"data_offsets\":[4,2]}}", 8),
        SAGERUN_FORMAT, "'t'", "end before begin");
    expect_open_error(raw_file("overflow_shape", ~0ull,
                               "{\"t\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],"
                               "\"data_offsets\":[0,8]}}",
                               8),
                      SAGERUN_FORMAT, "'t'", "overflow");
    expect_open_error(raw_file("overflow_bytes", ~0ull,
                               "{\"t\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],"
                               "\"data_offsets\":[0,8]}}",
                               8),
                      SAGERUN_FORMAT, "'t'", "overflow");
    expect_open_error(
        raw_file("negative", ~0ull,
                 "{\"t\":{\"dtype\":\"I8\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8),
        SAGERUN_FORMAT, "'t'", "shape[0]");
    expect_open_error(raw_file("bad_offsets", ~0ull,
                               "{\"t\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0]}}", 8),
                      SAGERUN_FORMAT, "'t'", "data_offsets");
    expect_open_error(
        raw_file("extra_field", ~0ull,
                 "{\"t\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4],\"x\":1}}", 4),
        SAGERUN_FORMAT, "'t'", "unknown field 'x'");
    expect_open_error(raw_file("missing_dtype", ~0ull,
                               "{\"t\":{\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                      SAGERUN_FORMAT, "'t'", "'dtype'");
    expect_open_error(raw_file("bad_meta", ~0ull, "{\"__metadata__\":{\"a\":1}," T_OK "}", 8),
                      SAGERUN_FORMAT, "__metadata__", "'a'");
    expect_open_error(raw_file("rank9", ~0ull,
                               "{\"t\":{\"dtype\":\"I8\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                               "\"data_offsets\":[0,1]}}",
                               1),
                      SAGERUN_FORMAT, "'t'", "dimensions");
    snprintf(path, sizeof path, "%s/does-not-exist", dir);
    expect_open_error(path, SAGERUN_NOT_FOUND, NULL, NULL);
}

/* The checked-in test file and the golden files' layout (when present) parse. */
static void test_data_file(void **state)
{
    (void)state;
    sr_safetensors *f;
    sagerun_error err = {0};
    const char *path = SAGERUN_SOURCE_DIR "/test/data/tiny_qkv.safetensors";
    assert_int_equal(sr_safetensors_open(path, &f, &err), SAGERUN_OK);
    assert_non_null(sr_safetensors_find(f, "q"));
    assert_non_null(sr_safetensors_find(f, "k"));
    assert_non_null(sr_safetensors_find(f, "v"));
    sr_safetensors_close(f);
}

/* A file's sage2 tensors are read whole into buffers sized for the problem: one of another size
 * must be refused, naming the file and the tensor (a larger one used to overrun the buffer). */
static void test_sage2_tensor_sizes(void **state)
{
    (void)state;
    /* q, k, v [1, 64, 1, 64] F16; sm89 granularities: q_scale 4 per head, k_scale 1, L 64 */
    static uint8_t zeros[64 * 64 * 2 * 2];
    sr_st_write_tensor t[10];
    memset(t, 0, sizeof t);
    const char *names[10] = {"q", "k", "v", "q_int8", "q_scale", "k_int8", "k_scale",
                             "v_fp8_f32acc", "v_scale_f32acc", "k_mean"};
    const int dtypes[10] = {SAGERUN_DTYPE_F16, SAGERUN_DTYPE_F16, SAGERUN_DTYPE_F16,
                            SAGERUN_DTYPE_I8, SAGERUN_DTYPE_F32, SAGERUN_DTYPE_I8,
                            SAGERUN_DTYPE_F32, SAGERUN_DTYPE_F8_E4M3, SAGERUN_DTYPE_F32,
                            SAGERUN_DTYPE_F16};
    /* q_int8 twice its size: 2 * 64 * 64 bytes instead of 64 * 64 */
    const uint64_t shapes[10][4] = {{1, 64, 1, 64}, {1, 64, 1, 64}, {1, 64, 1, 64},
                                    {1, 128, 1, 64}, {1, 1, 4, 1},  {1, 64, 1, 64},
                                    {1, 1, 1, 1},   {1, 64, 1, 64}, {1, 1, 64, 1},
                                    {1, 1, 1, 64}};
    for (int i = 0; i < 10; i++) {
        t[i].name = names[i];
        t[i].dtype = dtypes[i];
        t[i].rank = 4;
        memcpy(t[i].shape, shapes[i], sizeof shapes[i]);
        t[i].data = zeros;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/sage2-wrong-size.safetensors", dir);
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_write(path, t, 10, NULL, &err), SAGERUN_OK);
    sagerun_context *ctx = NULL;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    sagerun_inputs *in = NULL;
    int st = sagerun_inputs_create_from_safetensors(ctx, path, SAGERUN_LAYOUT_NHD, &in, &err);
    if (st != SAGERUN_FORMAT)
        fail_msg("status %d, expected SAGERUN_FORMAT (%s)", st, err.message);
    assert_null(in);
    if (!strstr(err.message, path) || !strstr(err.message, "q_int8"))
        fail_msg("message does not name the file and the tensor: %s", err.message);
    /* the right size is accepted */
    t[3].shape[1] = 64;
    assert_int_equal(sr_safetensors_write(path, t, 10, NULL, &err), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_create_from_safetensors(ctx, path, SAGERUN_LAYOUT_NHD, &in,
                                                            &err),
                     SAGERUN_OK);
    sagerun_inputs_destroy(in);
    sagerun_context_destroy(ctx);
}

/* ---- inputs of a varlen or paged problem: written, read back the same ---------------------- */

/* A problem of the given sizes and masks every test below shares: causal bottom-right, a window,
 * a soft-cap and an sm_scale of its own, each of which the file must carry. */
static sagerun_problem masked_problem(uint32_t batch, uint32_t seq_len, uint32_t kv_len)
{
    sagerun_problem p = sagerun_problem_make(batch, seq_len, 4, 2, 16);
    p.kv_len = kv_len == seq_len ? 0 : kv_len;
    p.causal = 1, p.align = SAGERUN_ALIGN_BOTTOM_RIGHT;
    p.window = 1, p.window_left = 8, p.window_right = 0;
    p.softcap = 20.0f, p.sm_scale = 0.3f;
    return p;
}

/* Context memory of the host backend at addr, elements of dtype, equal in a and b. */
static void same_bytes(uint64_t a, uint64_t b, uint64_t bytes)
{
    assert_memory_equal((const void *)(uintptr_t)a, (const void *)(uintptr_t)b, bytes);
}

static void same_sequences(const sagerun_inputs *a, const sagerun_inputs *b)
{
    sagerun_sequences sa = {.struct_size = sizeof sa}, sb = {.struct_size = sizeof sb};
    sagerun_error err = {0};
    assert_int_equal(sagerun_inputs_sequences(a, &sa, &err), SAGERUN_OK);
    assert_int_equal(sagerun_inputs_sequences(b, &sb, &err), SAGERUN_OK);
    const sagerun_problem *p = sagerun_inputs_problem(a);
    const int32_t *x[3] = {sa.cu_seqlens_q, sa.cu_seqlens_kv, sa.block_table};
    const int32_t *y[3] = {sb.cu_seqlens_q, sb.cu_seqlens_kv, sb.block_table};
    const uint64_t n[3] = {p->batch + 1ull, p->batch + 1ull, (uint64_t)p->batch * p->pages_per_seq};
    for (int i = 0; i < 3; i++) {
        assert_true(!x[i] == !y[i]);
        if (x[i])
            assert_memory_equal(x[i], y[i], n[i] * sizeof(int32_t));
    }
}

static void same_inputs(const sagerun_inputs *a, const sagerun_inputs *b)
{
    const sagerun_problem *p = &a->problem;
    uint64_t qb = sagerun_problem_q_elements(p) * 2, kb = sagerun_problem_kv_elements(p) * 2;
    same_bytes(a->q, b->q, qb);
    same_bytes(a->k, b->k, kb);
    same_bytes(a->v, b->v, kb);
    same_sequences(a, b);
}

/* Synthetic inputs of p written and read back: inputs_create_from_safetensors gives the same
 * bytes and sequences (the masks are the workload's), workload_from_safetensors the same problem,
 * and its inputs the same again. */
static void round_trip_problem(const char *name, const sagerun_problem *p, const int32_t *cu_q,
                               const int32_t *cu_kv)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    sagerun_error err = {0};
    sagerun_context *ctx = NULL;
    sagerun_inputs *in = NULL, *back = NULL, *again = NULL;
    sagerun_workload *w = NULL;
    sagerun_sequences s = {.struct_size = sizeof s, .count = p->batch, .cu_seqlens_q = cu_q,
                           .cu_seqlens_kv = cu_kv};
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    if (sagerun_inputs_create_synthetic_seq(ctx, p, &s, 7, &in, &err) != SAGERUN_OK ||
        sagerun_inputs_write_safetensors(in, path, &err) != SAGERUN_OK ||
        sagerun_inputs_create_from_safetensors(ctx, path, SAGERUN_LAYOUT_NHD, &back, &err) ||
        sagerun_workload_from_safetensors(path, -1, &w, &err) != SAGERUN_OK ||
        sagerun_workload_create_inputs(w, ctx, &again, &err) != SAGERUN_OK)
        fail_msg("%s: %s", name, err.message);
    same_inputs(in, back);
    sagerun_problem storage = in->problem; /* the file's tensors alone: no masks */
    storage.causal = 0, storage.align = 0, storage.window = 0, storage.softcap = 0.0f;
    storage.sm_scale = 0.0f, storage.window_left = storage.window_right = -1;
    assert_memory_equal(&back->problem, &storage, sizeof storage);
    assert_memory_equal(sagerun_workload_problem(w), &in->problem, sizeof in->problem);
    same_inputs(in, again);
    assert_memory_equal(&again->problem, &in->problem, sizeof in->problem);
    sagerun_inputs_destroy(again);
    sagerun_workload_destroy(w);
    sagerun_inputs_destroy(back);
    sagerun_inputs_destroy(in);
    sagerun_context_destroy(ctx);
}

static void test_varlen_paged_round_trip(void **state)
{
    (void)state;
    /* varlen: three sequences, more keys than queries in two */
    static const int32_t cq[] = {0, 5, 22, 23}, ckv[] = {0, 9, 26, 56};
    sagerun_problem p = masked_problem(3, 17, 30);
    p.varlen = 1, p.total_q = 23, p.total_kv = 56;
    round_trip_problem("varlen", &p, cq, ckv);
    /* paged: 2 sequences of 40 keys in pages of 8, the cache 3 pages larger than they need */
    p = masked_problem(2, 12, 40);
    p.page_size = 8, p.pages_per_seq = 5, p.pages = 13;
    round_trip_problem("paged", &p, NULL, NULL);
    /* both, seq_len above the longest sequence (the file says it) */
    static const int32_t pq[] = {0, 3, 9}, pkv[] = {0, 10, 35};
    p = masked_problem(2, 8, 25);
    p.varlen = 1, p.total_q = 9, p.total_kv = 35;
    p.page_size = 4, p.pages_per_seq = 7, p.pages = 12;
    round_trip_problem("varlen-paged", &p, pq, pkv);
}

/* One file of a varlen + paged problem, B 2, H 1, D 4, pages of 4 (each array as given). */
typedef struct seq_file {
    uint64_t q_rows, pages, page_rows;
    int32_t cu_q[3], cu_kv[3], table[4];
    int cu_q_dtype;
    uint32_t table_rank;
    bool no_cu_kv;
    const char *meta_key, *meta_value;
} seq_file;

static const seq_file good_file = {9, 5, 4, {0, 3, 9}, {0, 5, 9}, {0, 1, 2, -1},
                                   SAGERUN_DTYPE_I32, 2, false, NULL, NULL};

static const char *write_seq_file(const char *name, const seq_file *c)
{
    static char path[512];
    static uint16_t zeros[4096]; /* more than any case's q, k or v (k of 5 pages of 4 rows is 80) */
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    sr_st_write_tensor t[6] = {
        {.name = "q", .dtype = SAGERUN_DTYPE_F16, .rank = 3, .shape = {c->q_rows, 1, 4}},
        {.name = "k", .dtype = SAGERUN_DTYPE_F16, .rank = 4,
         .shape = {c->pages, c->page_rows, 1, 4}},
        {.name = "v", .dtype = SAGERUN_DTYPE_F16, .rank = 4,
         .shape = {c->pages, c->page_rows, 1, 4}},
        {.name = "cu_seqlens_q", .dtype = c->cu_q_dtype, .rank = 1, .shape = {3}, .data = c->cu_q},
        {.name = "block_table", .dtype = SAGERUN_DTYPE_I32, .rank = c->table_rank,
         .shape = {c->table_rank == 2 ? 2 : 4, 2}, .data = c->table},
        {.name = "cu_seqlens_kv", .dtype = SAGERUN_DTYPE_I32, .rank = 1, .shape = {3},
         .data = c->cu_kv},
    };
    for (int i = 0; i < 3; i++)
        t[i].data = zeros;
    json_t *meta = json_pack("{s:s}", "layout", "NHD");
    if (c->meta_key)
        json_object_set_new(meta, c->meta_key, json_string(c->meta_value));
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_write(path, t, c->no_cu_kv ? 5 : 6, meta, &err), SAGERUN_OK);
    json_decref(meta);
    return path;
}

/* Both readers refuse the file, naming it and the field. */
static void expect_refused(const char *path, const char *field)
{
    sagerun_error err = {0};
    sagerun_context *ctx = NULL;
    sagerun_inputs *in = NULL;
    sagerun_workload *w = NULL;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &err), SAGERUN_OK);
    int st = sagerun_inputs_create_from_safetensors(ctx, path, SAGERUN_LAYOUT_NHD, &in, &err);
    if (st == SAGERUN_OK || !strstr(err.message, path) || !strstr(err.message, field))
        fail_msg("inputs: status %d, the message should name %s and %s: %s", st, path, field,
                 err.message);
    st = sagerun_workload_from_safetensors(path, -1, &w, &err);
    if (st == SAGERUN_OK || !strstr(err.message, path) || !strstr(err.message, field))
        fail_msg("workload: status %d, the message should name %s and %s: %s", st, path, field,
                 err.message);
    assert_null(in);
    assert_null(w);
    sagerun_context_destroy(ctx);
}

static void test_varlen_paged_malformed(void **state)
{
    (void)state;
    sagerun_error err = {0};
    sagerun_workload *w = NULL;
    assert_int_equal(sagerun_workload_from_safetensors(write_seq_file("good", &good_file), -1, &w,
                                                       &err),
                     SAGERUN_OK);
    assert_int_equal(sagerun_workload_problem(w)->total_kv, 9);
    sagerun_workload_destroy(w);
    struct {
        const char *name, *field;
        seq_file c;
    } bad[12];
    size_t n = 0;
#define BAD(label, says, ...)                                                                      \
    do {                                                                                           \
        bad[n].name = label, bad[n].field = says, bad[n].c = good_file;                            \
        seq_file *c = &bad[n++].c;                                                                 \
        __VA_ARGS__;                                                                               \
    } while (0)
    BAD("sum", "cu_seqlens_q[2] = 9: the lengths sum to 9, the problem's total is 10",
        c->q_rows = 10);
    BAD("past", "block_table[1][0] = 7 points past the 5 pages", c->table[2] = 7);
    BAD("page-size", "__metadata__ 'page_size' is 8", c->meta_key = "page_size",
        c->meta_value = "8");
    BAD("unsorted", "cu_seqlens_kv[2] = 4 is less than cu_seqlens_kv[1] = 5", c->cu_kv[2] = 4);
    BAD("negative", "cu_seqlens_q[1] = -3 is less than cu_seqlens_q[0] = 0", c->cu_q[1] = -3);
    BAD("first", "cu_seqlens_q[0] = 1: must be 0", c->cu_q[0] = 1);
    BAD("dtype", "tensor 'cu_seqlens_q' must be I32 of rank 1", c->cu_q_dtype = SAGERUN_DTYPE_F32);
    BAD("rank", "tensor 'block_table' must be I32 of rank 2", c->table_rank = 1);
    BAD("missing", "no tensor 'cu_seqlens_kv'", c->no_cu_kv = true);
    BAD("kv-len", "__metadata__ 'kv_len' is '0'", c->meta_key = "kv_len", c->meta_value = "0");
    BAD("window", "__metadata__ 'window' is '5'", c->meta_key = "window", c->meta_value = "5");
    BAD("softcap", "__metadata__ 'softcap' is '-1'", c->meta_key = "softcap",
        c->meta_value = "-1");
#undef BAD
    for (size_t i = 0; i < n; i++)
        expect_refused(write_seq_file(bad[i].name, &bad[i].c), bad[i].field);
}

/* A dense file's kv_len is k's; __metadata__ saying another is refused. */
static void test_dense_kv_len(void **state)
{
    (void)state;
    sagerun_problem p = masked_problem(2, 5, 12);
    round_trip_problem("dense-kv", &p, NULL, NULL);
    static uint16_t zeros[2 * 12 * 2 * 16];
    sr_st_write_tensor t[3] = {
        {.name = "q", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {2, 5, 2, 16}},
        {.name = "k", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {2, 12, 2, 16}},
        {.name = "v", .dtype = SAGERUN_DTYPE_F16, .rank = 4, .shape = {2, 12, 2, 16}},
    };
    for (int i = 0; i < 3; i++)
        t[i].data = zeros;
    json_t *meta = json_pack("{s:s}", "kv_len", "11");
    char path[512];
    snprintf(path, sizeof path, "%s/dense-kv-bad.safetensors", dir);
    sagerun_error err = {0};
    assert_int_equal(sr_safetensors_write(path, t, 3, meta, &err), SAGERUN_OK);
    json_decref(meta);
    expect_refused(path, "__metadata__ 'kv_len' is 11, tensor \"k\" holds 12 keys");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_write_rejects),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_data_file),
        cmocka_unit_test(test_sage2_tensor_sizes),
        cmocka_unit_test(test_varlen_paged_round_trip),
        cmocka_unit_test(test_varlen_paged_malformed),
        cmocka_unit_test(test_dense_kv_len),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
