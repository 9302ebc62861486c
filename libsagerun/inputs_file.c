/* Inputs from a safetensors file: q, k, v (F16 or BF16, rank 4), plus — where the file carries
 * them, as the golden files do — the sage2-quantized tensors, used instead of quantizing. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"
#include "safetensors.h"

/* ---- the problem a file holds: tensors, sequences, __metadata__ ------------------------------ */

static const char *meta(const sr_safetensors *f, const char *key)
{
    return f->metadata ? json_string_value(json_object_get(f->metadata, key)) : NULL;
}

/* A decimal integer in [min, max] of one whole string; false otherwise. */
static bool parse_int(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < min || v > max || isspace((unsigned char)*s))
        return false;
    *out = v;
    return true;
}

/* __metadata__ key as an integer in [min, max], into *out where present. */
static sagerun_status meta_int(const sr_safetensors *f, const char *key, long long min,
                               long long max, long long *out, sagerun_error *err)
{
    const char *s = meta(f, key);
    if (s && !parse_int(s, min, max, out))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ '%s' is '%s' (an integer from %lld to %lld)",
                            f->path, key, s, min, max);
    return SAGERUN_OK;
}

/* The sizes of a tensor of this rank ("[B, N, H, D]" in messages), each from 1 to UINT32_MAX. */
static sagerun_status tensor_dims(const sr_safetensors *f, const sr_st_tensor *t, uint32_t rank,
                                  const char *form, uint32_t *dims, sagerun_error *err)
{
    if (t->rank != rank)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor \"%s\" has rank %u, expected %u (%s)",
                            f->path, t->name, t->rank, rank, form);
    for (uint32_t i = 0; i < rank; i++) {
        if (t->shape[i] == 0 || t->shape[i] > UINT32_MAX)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor \"%s\" dimension %u is %llu",
                                f->path, t->name, i, (unsigned long long)t->shape[i]);
        dims[i] = (uint32_t)t->shape[i];
    }
    return SAGERUN_OK;
}

/* An int32 tensor of the sequences (I32, this rank, no dimension 0), read whole. */
static sagerun_status read_i32(const sr_safetensors *f, const char *name, uint32_t rank,
                               const char *form, uint32_t *dims, int32_t **out,
                               sagerun_error *err)
{
    const sr_st_tensor *t = sr_safetensors_find(f, name);
    if (!t)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: no tensor '%s' (I32 %s)", f->path, name,
                            form);
    if (t->dtype != SAGERUN_DTYPE_I32 || t->rank != rank)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s' must be I32 of rank %u %s, not %s of rank %u",
                            f->path, name, rank, form, t->dtype_name, t->rank);
    for (uint32_t i = 0; i < rank; i++) {
        if (t->shape[i] == 0 || t->shape[i] > INT32_MAX)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor '%s' dimension %u is %llu",
                                f->path, name, i, (unsigned long long)t->shape[i]);
        dims[i] = (uint32_t)t->shape[i];
    }
    if (!(*out = malloc(t->bytes ? (size_t)t->bytes : 1)))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", f->path);
    return sr_safetensors_read_tensor(f, name, *out, t->bytes, err);
}

/* cu_seqlens_*: [batch + 1] prefix sums from 0, never falling; the longest sequence. */
static sagerun_status read_prefix(const sr_safetensors *f, const char *name, int32_t **cu,
                                  uint32_t *count, uint32_t *longest, sagerun_error *err)
{
    uint32_t n;
    sagerun_status st = read_i32(f, name, 1, "[batch + 1]", &n, cu, err);
    if (st != SAGERUN_OK)
        return st;
    if (n < 2)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor '%s' has 1 entry: [batch + 1] needs at least 2", f->path,
                            name);
    const int32_t *c = *cu;
    if (c[0] != 0)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: %s[0] = %d: must be 0", f->path, name, c[0]);
    *longest = 0;
    for (uint32_t b = 0; b + 1 < n; b++) {
        if (c[b + 1] < c[b])
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: %s[%u] = %d is less than %s[%u] = %d (prefix sums never fall)",
                                f->path, name, b + 1, c[b + 1], name, b, c[b]);
        if ((uint32_t)(c[b + 1] - c[b]) > *longest)
            *longest = (uint32_t)(c[b + 1] - c[b]);
    }
    *count = n - 1;
    return SAGERUN_OK;
}

/* The masks of __metadata__ (the computation's, as sagerun writes them): causal, sm_scale,
 * align, window "L,R", softcap. */
static sagerun_status read_masks(const sr_safetensors *f, sagerun_problem *p, sagerun_error *err)
{
    const char *sm = meta(f, "sm_scale"), *causal = meta(f, "causal"), *align = meta(f, "align"),
               *window = meta(f, "window"), *cap = meta(f, "softcap");
    char *end;
    double v = sm ? strtod(sm, &end) : 0;
    if (sm && (*end || !(v > 0.0) || !((float)v > 0.0f) || isinf((float)v))) /* float 0: D^-0.5 */
        return sr_error_set(err, SAGERUN_FORMAT, "%s: __metadata__ 'sm_scale' is '%s'", f->path,
                            sm);
    p->sm_scale = (float)v;
    if (causal && strcmp(causal, "true") != 0 && strcmp(causal, "false") != 0)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'causal' is '%s' (true or false)", f->path, causal);
    p->causal = causal && strcmp(causal, "true") == 0;
    if (align && strcmp(align, "top-left") != 0 && strcmp(align, "bottom-right") != 0)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'align' is '%s' (top-left or bottom-right)",
                            f->path, align);
    p->align = align && strcmp(align, "bottom-right") == 0 ? SAGERUN_ALIGN_BOTTOM_RIGHT
                                                           : SAGERUN_ALIGN_TOP_LEFT;
    const char *comma = window ? strchr(window, ',') : NULL;
    long long l = 0, r = 0;
    char left[24] = "";
    if (comma && (size_t)(comma - window) < sizeof left)
        memcpy(left, window, (size_t)(comma - window));
    if (window && (!comma || !parse_int(left, -1, INT32_MAX, &l) ||
                   !parse_int(comma + 1, -1, INT32_MAX, &r)))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'window' is '%s' (L,R: keys before and after the "
                            "diagonal, -1 for all)",
                            f->path, window);
    p->window = window != NULL;
    p->window_left = window ? (int32_t)l : -1;
    p->window_right = window ? (int32_t)r : -1;
    double c = cap ? strtod(cap, &end) : 0;
    if (cap && (*end || !(c > 0.0) || !((float)c > 0.0f) || isinf((float)c)))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'softcap' is '%s' (a number > 0)", f->path, cap);
    p->softcap = (float)c;
    return SAGERUN_OK;
}

/* q, k and v: present, F16 or BF16, one dtype; k and v of one shape. */
static sagerun_status find_qkv(const sr_safetensors *f, const sr_st_tensor **t,
                               sagerun_error *err)
{
    static const char *const names[3] = {"q", "k", "v"};
    sagerun_status st;
    for (int i = 0; i < 3; i++)
        if ((st = sr_safetensors_expect(f, names[i], -1, 0, NULL, &t[i], err)) != SAGERUN_OK)
            return st;
    for (int i = 0; i < 3; i++)
        if (t[i]->dtype != SAGERUN_DTYPE_F16 && t[i]->dtype != SAGERUN_DTYPE_BF16)
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: tensor \"%s\" has dtype %s, expected F16 or BF16", f->path,
                                t[i]->name, t[i]->dtype_name);
    if (t[1]->dtype != t[0]->dtype || t[2]->dtype != t[0]->dtype)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: q, k and v must share one dtype (%s, %s, %s)",
                            f->path, t[0]->dtype_name, t[1]->dtype_name, t[2]->dtype_name);
    if (t[2]->rank != t[1]->rank || memcmp(t[2]->shape, t[1]->shape, sizeof t[1]->shape) != 0)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensors \"k\" and \"v\" differ in shape",
                            f->path);
    return SAGERUN_OK;
}

/* Q's side: [total_q, Hq, D] (varlen) or [B, N, Hq, D] / [B, Hq, N, D]; the lengths of a varlen
 * file. */
static sagerun_status read_queries(const sr_safetensors *f, const sr_st_tensor *q, int layout,
                                   sr_file_problem *fp, uint32_t *longest_kv, sagerun_error *err)
{
    sagerun_problem *p = &fp->problem;
    uint32_t d[4], count_kv, longest_q;
    sagerun_status st;
    if (!fp->varlen) {
        const bool hnd = layout == SAGERUN_LAYOUT_HND;
        if ((st = tensor_dims(f, q, 4, hnd ? "[B, H, N, D]" : "[B, N, H, D]", d, err)))
            return st;
        p->batch = d[0], p->seq_len = d[hnd ? 2 : 1], p->heads_q = d[hnd ? 1 : 2];
        p->head_dim = d[3];
        return SAGERUN_OK;
    }
    if ((st = tensor_dims(f, q, 3, "[total_q, H, D] with cu_seqlens", d, err)) ||
        (st = read_prefix(f, "cu_seqlens_q", &fp->cu_q, &p->batch, &longest_q, err)) ||
        (st = read_prefix(f, "cu_seqlens_kv", &fp->cu_kv, &count_kv, longest_kv, err)))
        return st;
    if (count_kv != p->batch)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: cu_seqlens_kv has %u sequences, cu_seqlens_q %u", f->path,
                            count_kv, p->batch);
    long long n = longest_q ? longest_q : 1; /* the longest, unless the file says */
    if ((st = meta_int(f, "seq_len", 1, UINT32_MAX, &n, err)))
        return st;
    p->varlen = 1;
    p->seq_len = (uint32_t)n;
    p->total_q = d[0], p->heads_q = d[1], p->head_dim = d[2];
    return SAGERUN_OK;
}

/* K's side: a page cache [pages, page_size, Hkv, D] with its block table, [total_kv, Hkv, D]
 * (varlen) or [B, kv_len, Hkv, D] / [B, Hkv, kv_len, D]; kv_len. */
static sagerun_status read_keys(const sr_safetensors *f, const sr_st_tensor *k, int layout,
                                sr_file_problem *fp, uint32_t longest_kv, sagerun_error *err)
{
    sagerun_problem *p = &fp->problem;
    const bool hnd = layout == SAGERUN_LAYOUT_HND, paged = fp->paged;
    uint32_t d[4], t[2];
    const char *form = paged        ? "[pages, page_size, H, D]"
                       : fp->varlen ? "[total_kv, H, D] with cu_seqlens"
                       : hnd        ? "[B, H, N, D]"
                                    : "[B, N, H, D]";
    sagerun_status st = tensor_dims(f, k, fp->varlen && !paged ? 3 : 4, form, d, err);
    if (st != SAGERUN_OK)
        return st;
    uint32_t rank = (uint32_t)k->rank;
    p->heads_kv = d[rank == 3 ? 1 : paged ? 2 : hnd ? 1 : 2];
    long long kv = paged || fp->varlen ? (p->seq_len > longest_kv ? p->seq_len : longest_kv)
                                       : d[hnd ? 2 : 1];
    if (d[rank - 1] != p->head_dim || (!paged && !fp->varlen && d[0] != p->batch))
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor \"k\" has another batch or head_dim than \"q\"", f->path);
    long long said = kv;
    if ((st = meta_int(f, "kv_len", 1, UINT32_MAX, &said, err)))
        return st;
    if (!paged && !fp->varlen && said != kv)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'kv_len' is %lld, tensor \"k\" holds %lld keys",
                            f->path, said, kv);
    p->kv_len = (uint32_t)said == p->seq_len ? 0 : (uint32_t)said;
    if (fp->varlen && !paged)
        p->total_kv = d[0];
    if (fp->varlen && paged)
        p->total_kv = (uint32_t)fp->cu_kv[p->batch];
    if (!paged)
        return SAGERUN_OK;
    long long page_size = d[1];
    if ((st = meta_int(f, "page_size", 1, UINT32_MAX, &page_size, err)))
        return st;
    if (page_size != d[1])
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: __metadata__ 'page_size' is %lld, tensor \"k\" has pages of %u",
                            f->path, page_size, d[1]);
    if ((st = read_i32(f, "block_table", 2, "[B, pages_per_seq]", t, &fp->table, err)))
        return st;
    if (t[0] != p->batch)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor 'block_table' has %u rows, the file %u sequences", f->path,
                            t[0], p->batch);
    p->pages = d[0], p->page_size = d[1], p->pages_per_seq = t[1];
    return SAGERUN_OK;
}

sagerun_status sr_safetensors_problem(const sr_safetensors *f, int layout, sr_file_problem *fp,
                                      sagerun_error *err)
{
    memset(fp, 0, sizeof *fp);
    const sr_st_tensor *t[3];
    sagerun_status st = find_qkv(f, t, err);
    fp->varlen = sr_safetensors_find(f, "cu_seqlens_q") || sr_safetensors_find(f, "cu_seqlens_kv");
    fp->paged = sr_safetensors_find(f, "block_table") || meta(f, "page_size");
    fp->problem = sagerun_problem_make(1, 1, 1, 1, 1);
    uint32_t longest_kv = 0;
    if (st == SAGERUN_OK && (fp->varlen || fp->paged) && layout != SAGERUN_LAYOUT_NHD)
        st = sr_error_set(err, SAGERUN_FORMAT, "%s: a %s file is NHD only ([tokens, H, D])",
                          f->path, fp->varlen ? "varlen" : "paged");
    if (st == SAGERUN_OK)
        st = read_queries(f, t[0], layout, fp, &longest_kv, err);
    if (st == SAGERUN_OK)
        st = read_keys(f, t[1], layout, fp, longest_kv, err);
    if (st == SAGERUN_OK)
        st = read_masks(f, &fp->problem, err);
    fp->problem.layout = (uint32_t)layout;
    fp->problem.dtype = st == SAGERUN_OK ? (uint32_t)t[0]->dtype : 0;
    sagerun_sequences seq = sr_file_sequences(fp);
    if (st == SAGERUN_OK && (st = sagerun_problem_check(&fp->problem, err)) != SAGERUN_OK)
        sr_error_prefix(st, err, "%s", f->path);
    else if (st == SAGERUN_OK && (fp->varlen || fp->paged) &&
             (st = sagerun_sequences_check(&fp->problem, &seq, err)) != SAGERUN_OK)
        sr_error_prefix(st, err, "%s", f->path);
    if (st != SAGERUN_OK)
        sr_file_problem_free(fp);
    return st;
}

sagerun_sequences sr_file_sequences(const sr_file_problem *fp)
{
    sagerun_sequences s = {.struct_size = sizeof s, .count = fp->problem.batch,
                           .cu_seqlens_q = fp->cu_q, .cu_seqlens_kv = fp->cu_kv,
                           .block_table = fp->table};
    return s;
}

void sr_file_problem_free(sr_file_problem *fp)
{
    free(fp->cu_q);
    free(fp->cu_kv);
    free(fp->table);
    fp->cu_q = fp->cu_kv = fp->table = NULL;
}

/* Attaches the file's sage2 tensors (golden-file names, sm89 granularities, R = 448). */
static sagerun_status attach_sage2(const sr_safetensors *f, sagerun_inputs *in,
                                   sagerun_error *err)
{
    static const char *const names[] = {"q_int8", "q_scale", "k_int8", "k_scale",
                                        "v_fp8_f32acc", "v_scale_f32acc", "k_mean"};
    for (size_t i = 0; i < SR_ARRAY_LEN(names); i++)
        if (!sr_safetensors_find(f, names[i]))
            return SAGERUN_OK; /* not a file with quantized tensors: quantize as usual */
    sagerun_sage2_quant_params params = sr_sage2_params_sm89(448.0f);
    /* Each file tensor is read whole into a buffer sized for this problem: refuse any other size
     * (a larger one would overrun the buffer, a smaller one leave part of it unset). */
    sr_sage2_sizes s;
    sagerun_status st = sr_sage2_sizes_of(&in->problem, &params, &s, err);
    if (st != SAGERUN_OK)
        return st;
    const uint64_t want[] = {s.q_elements,     s.q_scale_count * 4, s.kv_elements,
                             s.k_scale_count * 4, s.v_fp8_bytes,   s.v_scale_count * 4,
                             s.k_mean_count * 2};
    for (size_t i = 0; i < SR_ARRAY_LEN(names); i++) {
        const sr_st_tensor *ft = sr_safetensors_find(f, names[i]);
        if (ft->bytes != want[i])
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: tensor '%s' has %llu bytes, the problem [%u, %u, %u, %u] "
                                "Hkv %u needs %llu (sm89 sage2 granularities)",
                                f->path, names[i], (unsigned long long)ft->bytes,
                                in->problem.batch, in->problem.seq_len, in->problem.heads_q,
                                in->problem.head_dim, in->problem.heads_kv,
                                (unsigned long long)want[i]);
    }
    sagerun_sage2_tensors t;
    st = sr_sage2_tensors_alloc(in->ctx, &in->problem, &params, &t, err);
    if (st != SAGERUN_OK)
        return st;
    const uint64_t dst[] = {t.q_int8, t.q_scale, t.k_int8, t.k_scale, t.v_fp8, t.v_scale,
                            t.k_mean};
    for (size_t i = 0; i < SR_ARRAY_LEN(names) && st == SAGERUN_OK; i++) {
        const sr_st_tensor *ft = sr_safetensors_find(f, names[i]);
        st = sr_safetensors_upload_tensor(f, ft, in->ctx, dst[i], err);
    }
    if (st != SAGERUN_OK) {
        sr_sage2_tensors_free(in->ctx, &t);
        return st;
    }
    in->sage2 = t;
    in->has_sage2 = true;
    return SAGERUN_OK;
}

/* Attaches the file's k_mean, when it has one: the dtype of q, k, v and the shape of a keepdim
 * mean over the sequence. */
static sagerun_status attach_k_mean(const sr_safetensors *f, int layout, sagerun_inputs *in,
                                    sagerun_error *err)
{
    const sr_st_tensor *t = sr_safetensors_find(f, "k_mean");
    if (!t)
        return SAGERUN_OK;
    const sagerun_problem *p = &in->problem;
    const uint64_t hnd = layout == SAGERUN_LAYOUT_HND;
    const uint64_t want[4] = {p->batch, hnd ? p->heads_kv : 1, hnd ? 1 : p->heads_kv,
                              p->head_dim};
    bool same = t->rank == 4 && t->dtype == (int)p->dtype;
    for (int i = 0; same && i < 4; i++)
        same = t->shape[i] == want[i];
    if (!same)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: tensor \"k_mean\" must be %s [%llu, %llu, %llu, %llu] (k's dtype, "
                            "its mean over the sequence with keepdim), not %s of rank %u",
                            f->path, p->dtype == SAGERUN_DTYPE_BF16 ? "BF16" : "F16",
                            (unsigned long long)want[0], (unsigned long long)want[1],
                            (unsigned long long)want[2], (unsigned long long)want[3],
                            t->dtype_name, t->rank);
    uint64_t addr = 0;
    sagerun_status st = sagerun_mem_alloc(in->ctx, t->bytes, &addr, err);
    if (st == SAGERUN_OK)
        st = sr_safetensors_upload_tensor(f, t, in->ctx, addr, err);
    if (st != SAGERUN_OK) {
        if (addr)
            sagerun_mem_free(in->ctx, addr);
        return st;
    }
    in->k_mean = addr;
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_create_from_safetensors(sagerun_context *ctx, const char *path,
                                                      int layout, sagerun_inputs **out,
                                                      sagerun_error *err)
{
    if (!ctx || !path || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs from file: NULL argument");
    *out = NULL;
    if (layout != SAGERUN_LAYOUT_NHD && layout != SAGERUN_LAYOUT_HND)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "unknown layout %d", layout);
    sr_safetensors *f;
    sagerun_status st = sr_safetensors_open(path, &f, err);
    if (st != SAGERUN_OK)
        return st;
    sr_file_problem fp;
    sagerun_inputs *in = NULL;
    st = sr_safetensors_problem(f, layout, &fp, err);
    if (st == SAGERUN_OK) {
        /* the tensors' problem: the masks are the computation's, the workload's to say */
        sagerun_problem p = fp.problem;
        p.causal = 0, p.sm_scale = 0.0f, p.align = SAGERUN_ALIGN_TOP_LEFT, p.softcap = 0.0f;
        p.window = 0, p.window_left = p.window_right = -1;
        sagerun_sequences seq = sr_file_sequences(&fp);
        st = sr_inputs_alloc(ctx, &p, fp.varlen || fp.paged ? &seq : NULL, 0, &in, err);
        sr_file_problem_free(&fp);
    }
    if (st == SAGERUN_OK)
        st = sr_safetensors_upload_tensor(f, sr_safetensors_find(f, "q"), ctx, in->q, err);
    if (st == SAGERUN_OK)
        st = sr_safetensors_upload_tensor(f, sr_safetensors_find(f, "k"), ctx, in->k, err);
    if (st == SAGERUN_OK)
        st = sr_safetensors_upload_tensor(f, sr_safetensors_find(f, "v"), ctx, in->v, err);
    if (st == SAGERUN_OK)
        st = attach_sage2(f, in, err);
    if (st == SAGERUN_OK)
        st = attach_k_mean(f, layout, in, err);
    sr_safetensors_close(f);
    if (st != SAGERUN_OK) {
        sagerun_inputs_destroy(in);
        return st;
    }
    *out = in;
    return SAGERUN_OK;
}

bool sr_inputs_has_file_quantization(const sagerun_inputs *in)
{
    return in && in->has_sage2 && !in->sage2_derived;
}

/* ---- writing: the tensors of a problem, as the reader above takes them back ---------------------- */

/* The shape a tensor of the problem is stored in: Q and O ([B, N, H, D], [B, H, N, D], varlen
 * [total_q, H, D]) or K and V (kv), dense, varlen ([total_kv, H, D]) or paged ([pages,
 * page_size, H, D]). */
static void stored_shape(const sagerun_problem *p, bool kv, uint32_t heads, sr_st_write_tensor *t)
{
    const bool hnd = p->layout == SAGERUN_LAYOUT_HND;
    const uint64_t n = kv ? sagerun_problem_kv_len(p) : p->seq_len;
    const uint64_t dims[][4] = {{p->pages, p->page_size, heads, p->head_dim},
                                {kv ? p->total_kv : p->total_q, heads, p->head_dim, 0},
                                {p->batch, hnd ? heads : n, hnd ? n : heads, p->head_dim}};
    int form = kv && p->page_size ? 0 : p->varlen ? 1 : 2;
    t->rank = form == 1 ? 3 : 4;
    memcpy(t->shape, dims[form], sizeof dims[form]);
}

/* The int32 tensors of a varlen or paged problem, after the count already in t. */
static size_t sequence_tensors(const sagerun_inputs *in, sr_st_write_tensor *t, size_t count)
{
    const sagerun_problem *p = &in->problem;
    const struct {
        const char *name;
        const int32_t *data;
        uint32_t rank;
        uint64_t rows, cols;
    } seq[] = {{"cu_seqlens_q", in->seq.cu_q, 1, p->batch + 1ull, 0},
               {"cu_seqlens_kv", in->seq.cu_kv, 1, p->batch + 1ull, 0},
               {"block_table", in->seq.table, 2, p->batch, p->pages_per_seq}};
    for (size_t i = 0; i < SR_ARRAY_LEN(seq); i++) {
        if (!seq[i].data)
            continue;
        sr_st_write_tensor *w = &t[count++];
        memset(w, 0, sizeof *w);
        w->name = seq[i].name;
        w->dtype = SAGERUN_DTYPE_I32;
        w->rank = seq[i].rank;
        w->shape[0] = seq[i].rows;
        w->shape[1] = seq[i].cols;
        w->data = seq[i].data;
    }
    return count;
}

/* The longest query sequence of a varlen problem (the reader's seq_len unless told). */
static uint32_t longest_queries(const sagerun_inputs *in)
{
    uint32_t longest = 0;
    for (uint32_t b = 0; in->seq.cu_q && b < in->problem.batch; b++)
        if ((uint32_t)(in->seq.cu_q[b + 1] - in->seq.cu_q[b]) > longest)
            longest = (uint32_t)(in->seq.cu_q[b + 1] - in->seq.cu_q[b]);
    return longest;
}

static int put_text(json_t *meta, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int put_text(json_t *meta, const char *key, const char *fmt, ...)
{
    char text[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return json_object_set_new(meta, key, json_string(text));
}

/* What the tensors alone do not say, each only where it is not the default, as the reader takes
 * it back: a file saved from a causal run replayed as a full one, its sm_scale as D^-0.5. */
static json_t *file_metadata(const sagerun_inputs *in)
{
    const sagerun_problem *p = &in->problem;
    json_t *meta = json_pack("{s:s}", "layout", p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD");
    int rc = !meta;
    if (!rc && p->causal)
        rc |= put_text(meta, "causal", "true");
    if (!rc && p->sm_scale > 0)
        rc |= put_text(meta, "sm_scale", "%.9g", (double)p->sm_scale);
    if (!rc && sagerun_problem_kv_len(p) != p->seq_len)
        rc |= put_text(meta, "kv_len", "%u", sagerun_problem_kv_len(p));
    if (!rc && p->varlen && p->seq_len != longest_queries(in))
        rc |= put_text(meta, "seq_len", "%u", p->seq_len);
    if (!rc && p->align == SAGERUN_ALIGN_BOTTOM_RIGHT)
        rc |= put_text(meta, "align", "bottom-right");
    if (!rc && p->window)
        rc |= put_text(meta, "window", "%d,%d", p->window_left, p->window_right);
    if (!rc && p->softcap > 0)
        rc |= put_text(meta, "softcap", "%.9g", (double)p->softcap);
    if (!rc && p->page_size)
        rc |= put_text(meta, "page_size", "%u", p->page_size);
    if (rc)
        json_decref(meta);
    return rc ? NULL : meta;
}

sagerun_status sr_inputs_write_tensors(const sagerun_inputs *in, const char *path,
                                       const char *const *names, const uint64_t *addrs,
                                       const uint32_t *heads, size_t count, sagerun_error *err)
{
    const sagerun_problem *p = &in->problem;
    sr_st_write_tensor t[6];
    memset(t, 0, sizeof t);
    count = count < 3 ? count : 3;
    for (size_t i = 0; i < count; i++) {
        t[i].name = names[i];
        t[i].dtype = (int)p->dtype;
        /* K and V are stored as keys (paged, varlen's total_kv); Q and O as queries */
        stored_shape(p, !strcmp(names[i], "k") || !strcmp(names[i], "v"), heads[i], &t[i]);
        t[i].ctx = in->ctx;
        t[i].addr = addrs[i];
    }
    count = sequence_tensors(in, t, count);
    json_t *meta = file_metadata(in);
    sagerun_status st = meta ? sr_safetensors_write(path, t, count, meta, err)
                             : sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    json_decref(meta);
    return st;
}

sagerun_status sagerun_inputs_write_safetensors(const sagerun_inputs *in, const char *path,
                                                sagerun_error *err)
{
    if (!in || !path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_write_safetensors: NULL argument");
    static const char *const names[3] = {"q", "k", "v"};
    const uint64_t addrs[3] = {in->q, in->k, in->v};
    const uint32_t heads[3] = {in->problem.heads_q, in->problem.heads_kv, in->problem.heads_kv};
    return sr_inputs_write_tensors(in, path, names, addrs, heads, 3, err);
}
