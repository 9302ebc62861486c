/* Inputs from a safetensors file: q, k, v (F16 or BF16, rank 4), plus — where the file carries
 * them, as the golden files do — the sage2-quantized tensors, used instead of quantizing. */
#include <string.h>

#include "quantize.h"
#include "safetensors.h"

/* Shape [B, N, H, D] (NHD) or [B, H, N, D] (HND) of a rank-4 tensor, into problem fields. */
static sagerun_status read_shape(const sr_safetensors *f, const sr_st_tensor *t, int layout,
                                 uint32_t *b, uint32_t *n, uint32_t *h, uint32_t *d,
                                 sagerun_error *err)
{
    if (t->rank != 4)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor \"%s\" has rank %u, expected 4 (%s)",
                            f->path, t->name, t->rank,
                            layout == SAGERUN_LAYOUT_HND ? "[B, H, N, D]" : "[B, N, H, D]");
    for (int i = 0; i < 4; i++)
        if (t->shape[i] == 0 || t->shape[i] > UINT32_MAX)
            return sr_error_set(err, SAGERUN_FORMAT, "%s: tensor \"%s\" dimension %d is %llu",
                                f->path, t->name, i, (unsigned long long)t->shape[i]);
    *b = (uint32_t)t->shape[0];
    *n = (uint32_t)t->shape[layout == SAGERUN_LAYOUT_HND ? 2 : 1];
    *h = (uint32_t)t->shape[layout == SAGERUN_LAYOUT_HND ? 1 : 2];
    *d = (uint32_t)t->shape[3];
    return SAGERUN_OK;
}

static sagerun_status problem_from_file(const sr_safetensors *f, int layout,
                                        sagerun_problem *p, sagerun_error *err)
{
    const sr_st_tensor *q = NULL, *k = NULL, *v = NULL;
    sagerun_status st;
    if ((st = sr_safetensors_expect(f, "q", -1, 0, NULL, &q, err)) != SAGERUN_OK ||
        (st = sr_safetensors_expect(f, "k", -1, 0, NULL, &k, err)) != SAGERUN_OK ||
        (st = sr_safetensors_expect(f, "v", -1, 0, NULL, &v, err)) != SAGERUN_OK)
        return st;
    const sr_st_tensor *all[3] = {q, k, v};
    for (int i = 0; i < 3; i++)
        if (all[i]->dtype != SAGERUN_DTYPE_F16 && all[i]->dtype != SAGERUN_DTYPE_BF16)
            return sr_error_set(err, SAGERUN_FORMAT,
                                "%s: tensor \"%s\" has dtype %s, expected F16 or BF16", f->path,
                                all[i]->name, all[i]->dtype_name);
    if (k->dtype != q->dtype || v->dtype != q->dtype)
        return sr_error_set(err, SAGERUN_FORMAT, "%s: q, k and v must share one dtype (%s, %s, %s)",
                            f->path, q->dtype_name, k->dtype_name, v->dtype_name);
    uint32_t qb, qn, qh, qd, kb, kn, kh, kd, vb, vn, vh, vd;
    if ((st = read_shape(f, q, layout, &qb, &qn, &qh, &qd, err)) != SAGERUN_OK ||
        (st = read_shape(f, k, layout, &kb, &kn, &kh, &kd, err)) != SAGERUN_OK ||
        (st = read_shape(f, v, layout, &vb, &vn, &vh, &vd, err)) != SAGERUN_OK)
        return st;
    if (kb != qb || kn != qn || kd != qd || vb != kb || vn != kn || vh != kh || vd != kd)
        return sr_error_set(err, SAGERUN_FORMAT,
                            "%s: shapes do not match: q [%u,%u,%u,%u], k [%u,%u,%u,%u], "
                            "v [%u,%u,%u,%u] (as B, N, H, D)",
                            f->path, qb, qn, qh, qd, kb, kn, kh, kd, vb, vn, vh, vd);
    *p = sagerun_problem_make(qb, qn, qh, kh, qd);
    p->layout = (uint32_t)layout;
    p->dtype = (uint32_t)q->dtype;
    return sagerun_problem_check(p, err);
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
    sagerun_problem p;
    sagerun_inputs *in = NULL;
    st = problem_from_file(f, layout, &p, err);
    if (st == SAGERUN_OK)
        st = sr_inputs_alloc(ctx, &p, NULL, 0, &in, err);
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

sagerun_status sr_inputs_write_tensors(const sagerun_inputs *in, const char *path,
                                       const char *const *names, const uint64_t *addrs,
                                       const uint32_t *heads, size_t count, sagerun_error *err)
{
    const sagerun_problem *p = &in->problem;
    const bool hnd = p->layout == SAGERUN_LAYOUT_HND;
    sr_st_write_tensor t[3];
    memset(t, 0, sizeof t);
    for (size_t i = 0; i < count && i < SR_ARRAY_LEN(t); i++) {
        t[i].name = names[i];
        t[i].dtype = (int)p->dtype;
        t[i].rank = 4;
        t[i].shape[0] = p->batch;
        t[i].shape[1] = hnd ? heads[i] : p->seq_len;
        t[i].shape[2] = hnd ? p->seq_len : heads[i];
        t[i].shape[3] = p->head_dim;
        t[i].ctx = in->ctx;
        t[i].addr = addrs[i];
    }
    /* what the tensors alone do not say, as the reader takes it back (workload.c): a file saved
     * from a causal run replayed as a full one, its sm_scale as D^-0.5 */
    json_t *meta = json_pack("{s:s}", "layout", hnd ? "HND" : "NHD");
    char scale[32];
    snprintf(scale, sizeof scale, "%.9g", (double)p->sm_scale);
    if (meta && p->causal && json_object_set_new(meta, "causal", json_string("true")) != 0)
        json_decref(meta), meta = NULL;
    if (meta && p->sm_scale > 0 && json_object_set_new(meta, "sm_scale", json_string(scale)) != 0)
        json_decref(meta), meta = NULL;
    sagerun_status st = meta ? sr_safetensors_write(path, t, count < 3 ? count : 3, meta, err)
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
