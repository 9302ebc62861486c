/* Inputs: Q, K, V of a problem in a context's memory. */
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "internal.h"

/* Inputs of a checked problem and its sequences, without Q, K, V (0). */
static sagerun_status inputs_new(sagerun_context *ctx, const sagerun_problem *problem,
                                 const sagerun_sequences *seq, uint64_t seed,
                                 sagerun_inputs **out, sagerun_error *err)
{
    if (!ctx || !problem || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs: NULL argument");
    *out = NULL;
    sagerun_status st = sagerun_problem_check(problem, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_inputs *in = calloc(1, sizeof *in);
    if (!in)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    in->ctx = ctx;
    sr_problem_load(problem, &in->problem);
    size_t es = sagerun_dtype_size((int)in->problem.dtype);
    in->q_bytes = sagerun_problem_q_elements(&in->problem) * es;
    in->kv_bytes = sagerun_problem_kv_elements(&in->problem) * es;
    if ((st = sr_sequences_make(ctx, &in->problem, seq, seed, &in->seq, err)) != SAGERUN_OK) {
        free(in);
        return st;
    }
    *out = in;
    return SAGERUN_OK;
}

sagerun_status sr_inputs_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                               const sagerun_sequences *seq, uint64_t seed, sagerun_inputs **out,
                               sagerun_error *err)
{
    sagerun_inputs *in;
    sagerun_status st = inputs_new(ctx, problem, seq, seed, &in, err);
    if (st != SAGERUN_OK)
        return st;
    if ((st = sagerun_mem_alloc(ctx, in->q_bytes, &in->q, err)) != SAGERUN_OK ||
        (st = sagerun_mem_alloc(ctx, in->kv_bytes, &in->k, err)) != SAGERUN_OK ||
        (st = sagerun_mem_alloc(ctx, in->kv_bytes, &in->v, err)) != SAGERUN_OK) {
        sr_error_prefix(st, err, "allocating Q/K/V for shape [%u, %u, %u, %u] (kv_len %u)",
                        problem->batch, problem->seq_len, problem->heads_q, problem->head_dim,
                        sagerun_problem_kv_len(&in->problem));
        sagerun_inputs_destroy(in);
        return st;
    }
    *out = in;
    return SAGERUN_OK;
}

/* Q, K, V of a checked problem, filled by the generator with the given knobs. */
static sagerun_status create_generated(sagerun_context *ctx, const sagerun_problem *problem,
                                       const sagerun_sequences *seq, const sr_synthetic *syn,
                                       sagerun_inputs **out, sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_create_synthetic: NULL out");
    *out = NULL;
    sagerun_inputs *in;
    sagerun_status st = sr_inputs_alloc(ctx, problem, seq, syn->seed, &in, err);
    if (st != SAGERUN_OK)
        return st;
    st = sr_generate_inputs(ctx, &in->problem, syn, in->q, in->k, in->v, err);
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(ctx, err);
    if (st != SAGERUN_OK) {
        sagerun_inputs_destroy(in);
        return st;
    }
    *out = in;
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_create_synthetic_seq(sagerun_context *ctx,
                                                   const sagerun_problem *problem,
                                                   const sagerun_sequences *sequences,
                                                   uint64_t seed, sagerun_inputs **out,
                                                   sagerun_error *err)
{
    sr_synthetic syn;
    sr_synthetic_default(&syn, seed);
    return create_generated(ctx, problem, sequences, &syn, out, err);
}

sagerun_status sagerun_inputs_create_synthetic(sagerun_context *ctx,
                                               const sagerun_problem *problem, uint64_t seed,
                                               sagerun_inputs **out, sagerun_error *err)
{
    return sagerun_inputs_create_synthetic_seq(ctx, problem, NULL, seed, out, err);
}

/* A paged problem's K/V are a cache only its block table reads: the caller's tensors need it. */
static sagerun_status need_block_table(const char *fn, const sagerun_problem *problem,
                                       const sagerun_sequences *seq, sagerun_error *err)
{
    if (problem && problem->struct_size >= sizeof *problem && problem->page_size &&
        (!seq || !seq->block_table))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "%s: a paged problem's K/V need their block table", fn);
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_create_from_host_seq(sagerun_context *ctx,
                                                   const sagerun_problem *problem,
                                                   const sagerun_sequences *sequences,
                                                   const void *q, const void *k, const void *v,
                                                   sagerun_inputs **out, sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_create_from_host: NULL out");
    *out = NULL;
    if (!q || !k || !v)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_create_from_host: NULL tensor");
    sagerun_status st = need_block_table("inputs_create_from_host", problem, sequences, err);
    if (st != SAGERUN_OK)
        return st;
    sagerun_inputs *in;
    if ((st = sr_inputs_alloc(ctx, problem, sequences, 0, &in, err)) != SAGERUN_OK)
        return st;
    if ((st = sagerun_mem_upload(ctx, in->q, q, in->q_bytes, err)) != SAGERUN_OK ||
        (st = sagerun_mem_upload(ctx, in->k, k, in->kv_bytes, err)) != SAGERUN_OK ||
        (st = sagerun_mem_upload(ctx, in->v, v, in->kv_bytes, err)) != SAGERUN_OK) {
        sagerun_inputs_destroy(in);
        return st;
    }
    *out = in;
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_create_from_device_seq(sagerun_context *ctx,
                                                     const sagerun_problem *problem,
                                                     const sagerun_sequences *sequences,
                                                     uint64_t q, uint64_t k, uint64_t v,
                                                     sagerun_inputs **out, sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_create_from_device: NULL out");
    *out = NULL;
    if (!q || !k || !v)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "inputs_create_from_device: a tensor at address 0");
    sagerun_status st = need_block_table("inputs_create_from_device", problem, sequences, err);
    if (st != SAGERUN_OK)
        return st;
    if (ctx && sagerun_context_backend(ctx) != SAGERUN_BACKEND_CUDA)
        return sr_error_set(err, SAGERUN_UNSUPPORTED,
                            "inputs_create_from_device: the host backend takes Q, K, V by copy "
                            "(sagerun_inputs_create_from_host_seq): its memory is blocks of its "
                            "own, between guard pages");
    sagerun_inputs *in;
    if ((st = inputs_new(ctx, problem, sequences, 0, &in, err)) != SAGERUN_OK)
        return st;
    in->q = q, in->k = k, in->v = v;
    in->borrowed = true;
    *out = in;
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_create_from_host(sagerun_context *ctx,
                                               const sagerun_problem *problem, const void *q,
                                               const void *k, const void *v,
                                               sagerun_inputs **out, sagerun_error *err)
{
    return sagerun_inputs_create_from_host_seq(ctx, problem, NULL, q, k, v, out, err);
}

sagerun_status sagerun_inputs_sequences(const sagerun_inputs *in, sagerun_sequences *out,
                                        sagerun_error *err)
{
    if (!in || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_sequences: NULL argument");
    sagerun_sequences view;
    sr_sequences_view(&in->seq, &in->problem, &view);
    uint32_t size = out->struct_size && out->struct_size < sizeof view ? out->struct_size
                                                                        : sizeof view;
    memcpy(out, &view, size);
    out->struct_size = size;
    return SAGERUN_OK;
}

void sagerun_inputs_destroy(sagerun_inputs *in)
{
    if (!in)
        return;
    if (!in->borrowed) {
        sagerun_mem_free(in->ctx, in->q);
        sagerun_mem_free(in->ctx, in->k);
        sagerun_mem_free(in->ctx, in->v);
    }
    if (in->has_sage2)
        sr_sage2_tensors_free(in->ctx, &in->sage2);
    if (in->k_mean)
        sagerun_mem_free(in->ctx, in->k_mean);
    sr_sequences_free(in->ctx, &in->seq);
    free(in);
}

const sagerun_problem *sagerun_inputs_problem(const sagerun_inputs *in)
{
    return in ? &in->problem : NULL;
}

sagerun_status sr_inputs_create_for_workload(sagerun_context *ctx, const sr_workload *w,
                                             sagerun_inputs **out, sagerun_error *err)
{
    if (!w)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "workload is NULL");
    if (w->source == SR_WORKLOAD_SAFETENSORS) {
        sagerun_status st = sagerun_inputs_create_from_safetensors(ctx, w->input_path,
                                                                   (int)w->problem.layout, out,
                                                                   err);
        if (st != SAGERUN_OK)
            return st;
        /* The file decides the shape; a workload that declares another one is an error, not a
         * silent switch to what the file holds. */
        const sagerun_problem *f = &(*out)->problem, *d = &w->problem;
        if (f->batch != d->batch || f->seq_len != d->seq_len || f->heads_q != d->heads_q ||
            f->heads_kv != d->heads_kv || f->head_dim != d->head_dim || f->dtype != d->dtype) {
            st = sr_error_set(err, SAGERUN_FORMAT,
                              "workload %s declares [B=%u, N=%u, Hq=%u, D=%u] Hkv=%u %s, but its "
                              "input file %s holds [B=%u, N=%u, Hq=%u, D=%u] Hkv=%u %s (read as "
                              "%s)",
                              w->name ? w->name : "?", d->batch, d->seq_len, d->heads_q,
                              d->head_dim, d->heads_kv, sagerun_dtype_word((int)d->dtype),
                              w->input_path, f->batch, f->seq_len, f->heads_q, f->head_dim,
                              f->heads_kv, sagerun_dtype_word((int)f->dtype),
                              f->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD");
            sagerun_inputs_destroy(*out);
            *out = NULL;
            return st;
        }
        (*out)->problem.sm_scale = d->sm_scale;
        (*out)->problem.causal = d->causal;
        (*out)->problem.align = d->align; /* the masks are the computation's, as causal is */
        (*out)->problem.window = d->window;
        (*out)->problem.window_left = d->window_left;
        (*out)->problem.window_right = d->window_right;
        (*out)->problem.softcap = d->softcap;
        return SAGERUN_OK;
    }
    sagerun_sequences seq;
    return create_generated(ctx, &w->problem, sr_workload_sequences(w, &seq), &w->synthetic, out,
                            err);
}
