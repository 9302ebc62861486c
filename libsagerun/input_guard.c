/* The inputs a comparison's variants share are read-only to them (plugin.h): Q, K, V, the
 * sequences' cu_seqlens and block table, the sage2 tensors quantized once for every variant of
 * the same parameters, k_mean. A variant that writes into them changes what every variant after
 * it computes: the baseline's output too, so that a broken variant could pass as byte-exact. The
 * guard (engine.h) keeps a copy of each tensor taken once all are made (or its SHA-256 where
 * memory is short), compares them after each checked call and stage, and puts the copy back. On
 * the host the copy is read-only: a variant's stray write into it would otherwise be put back
 * over the real inputs. */
#include <string.h>

#include "engine.h"
#include "quantize.h"

static void guard_add(sr_input_guard *g, const char *name, uint64_t addr, uint64_t bytes)
{
    if (addr && bytes && g->count < SR_ARRAY_LEN(g->t))
        g->t[g->count++] = (sr_guarded){.name = name, .addr = addr, .bytes = bytes};
}

/* The shared tensors of in: Q, K, V, the sequences' arrays (a variant that moved a length or a
 * page would change what every later one reads), k_mean, and the sage2 tensors the inputs
 * hold. */
static sagerun_status guard_list(const sagerun_inputs *in, sr_input_guard *g, sagerun_error *err)
{
    const sagerun_problem *p = &in->problem;
    guard_add(g, "q", in->q, in->q_bytes);
    guard_add(g, "k", in->k, in->kv_bytes);
    guard_add(g, "v", in->v, in->kv_bytes);
    uint64_t lengths = ((uint64_t)p->batch + 1) * sizeof(int32_t);
    guard_add(g, "cu_seqlens_q", in->seq.d_cu_q, lengths);
    guard_add(g, "cu_seqlens_kv", in->seq.d_cu_kv, lengths);
    guard_add(g, "block_table", in->seq.d_table,
              (uint64_t)p->batch * p->pages_per_seq * sizeof(int32_t));
    guard_add(g, "k_mean", in->k_mean, (uint64_t)p->batch * p->heads_kv * p->head_dim * 2);
    if (!in->has_sage2)
        return SAGERUN_OK;
    sr_sage2_sizes s;
    sagerun_status st = sr_sage2_sizes_of(p, &in->sage2.params, &s, err);
    if (st != SAGERUN_OK)
        return st;
    const sagerun_sage2_tensors *t = &in->sage2;
    guard_add(g, "sage2 q_int8", t->q_int8, s.q_elements);
    guard_add(g, "sage2 q_scale", t->q_scale, s.q_scale_count * 4);
    guard_add(g, "sage2 k_int8", t->k_int8, s.kv_elements);
    guard_add(g, "sage2 k_scale", t->k_scale, s.k_scale_count * 4);
    guard_add(g, "sage2 v_fp8", t->v_fp8, s.v_fp8_bytes);
    guard_add(g, "sage2 v_scale", t->v_scale, s.v_scale_count * 4);
    guard_add(g, "sage2 k_mean", t->k_mean, s.k_mean_count * 2);
    return SAGERUN_OK;
}

sagerun_status sagerun_inputs_sha256(const sagerun_inputs *in, const char *tensor, char hex[65],
                                     sagerun_error *err)
{
    static const char *const names[] = {"q", "k", "v", "cu_seqlens_q", "cu_seqlens_kv",
                                        "block_table", "k_mean"};
    bool known = false;
    for (size_t i = 0; tensor && i < SR_ARRAY_LEN(names); i++)
        known = known || strcmp(tensor, names[i]) == 0;
    if (!in || !hex || !known)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "inputs_sha256: %s",
                            !in || !hex ? "NULL argument" : "no such tensor (q, k, v, "
                            "cu_seqlens_q, cu_seqlens_kv, block_table, k_mean)");
    sr_input_guard g = {0};
    sagerun_status st = guard_list(in, &g, err);
    for (size_t i = 0; st == SAGERUN_OK && i < g.count; i++)
        if (strcmp(g.t[i].name, tensor) == 0)
            return sr_sha256_memory(in->ctx, g.t[i].addr, g.t[i].bytes, hex, err);
    return st != SAGERUN_OK ? st : sr_error_set(err, SAGERUN_NOT_FOUND, "inputs_sha256: the "
                                                "inputs have no %s", tensor);
}

sagerun_status sr_input_guard_take(sagerun_context *ctx, const sagerun_inputs *in,
                                   sr_input_guard *g, sagerun_error *err)
{
    memset(g, 0, sizeof(*g));
    sagerun_status st = guard_list(in, g, err);
    for (size_t i = 0; st == SAGERUN_OK && i < g->count; i++) {
        sr_guarded *t = &g->t[i];
        /* a copy where there is room (compared on the device, and put back); else the hash */
        if (t->bytes % 2 == 0 && sagerun_mem_alloc(ctx, t->bytes, &t->copy, NULL) == SAGERUN_OK &&
            sr_mem_copy(ctx, t->copy, t->addr, t->bytes, err) == SAGERUN_OK) {
            sr_mem_seal(ctx, t->copy, t->bytes); /* a stray write into it faults (host) */
            continue;
        }
        if (t->copy)
            sagerun_mem_free(ctx, t->copy);
        t->copy = 0;
        st = sr_sha256_memory(ctx, t->addr, t->bytes, t->sha, err);
    }
    if (st == SAGERUN_OK)
        st = sagerun_context_synchronize(ctx, err);
    if (st != SAGERUN_OK) {
        sr_input_guard_release(ctx, g);
        return sr_error_prefix(st, err, "keeping a copy of the inputs");
    }
    return SAGERUN_OK;
}

/* Whether tensor t still holds what it held; *same false when not. */
static sagerun_status unchanged(sagerun_context *ctx, const sr_guarded *t, bool *same,
                                sagerun_error *err)
{
    if (t->copy)
        return sr_buffers_equal(ctx, t->addr, t->copy, t->bytes, same, err);
    char hex[65];
    sagerun_status st = sr_sha256_memory(ctx, t->addr, t->bytes, hex, err);
    *same = st != SAGERUN_OK || strcmp(hex, t->sha) == 0;
    return st;
}

sagerun_status sr_input_guard_check(sagerun_context *ctx, sr_input_guard *g, const char **changed,
                                    sagerun_error *err)
{
    *changed = NULL;
    for (size_t i = 0; i < g->count; i++) {
        sr_guarded *t = &g->t[i];
        bool same = true;
        sagerun_status st = unchanged(ctx, t, &same, err);
        if (st != SAGERUN_OK)
            return sr_error_prefix(st, err, "checking the inputs (%s)", t->name);
        if (same)
            continue;
        if (!*changed)
            *changed = t->name;
        if (!t->copy)
            return sr_error_set(err, SAGERUN_VARIANT,
                                "the inputs changed (%s), and without memory for a copy they "
                                "cannot be put back: the comparison stops here",
                                t->name);
        if ((st = sr_mem_copy(ctx, t->addr, t->copy, t->bytes, err)) != SAGERUN_OK ||
            (st = sagerun_context_synchronize(ctx, err)) != SAGERUN_OK)
            return sr_error_prefix(st, err, "putting the inputs back (%s)", t->name);
    }
    return SAGERUN_OK;
}

void sr_input_guard_release(sagerun_context *ctx, sr_input_guard *g)
{
    for (size_t i = 0; i < g->count; i++)
        if (g->t[i].copy)
            sagerun_mem_free(ctx, g->t[i].copy);
    memset(g, 0, sizeof(*g));
}
