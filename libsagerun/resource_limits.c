/* Resource limits: the device memory a comparison needs, checked before anything is allocated. */
#include <stdio.h>
#include <string.h>

#include "kernels/compare_params.h"
#include "resource_limits.h"
#include "quantize.h"

/* Modules of libsagerun's kernels, events, the byte-diff result and allocation granularity: a
 * margin, not measured (tens of MiB on sm_89/sm_90 drivers). */
#define SR_SCRATCH_MARGIN (64ull << 20)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s;
    return sr_add_u64(a, b, &s) ? s : UINT64_MAX;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t s;
    return sr_mul_u64(a, b, &s) ? s : UINT64_MAX;
}


static uint64_t sage2_bytes(const sagerun_problem *p, const sagerun_sage2_quant_params *q)
{
    sr_sage2_sizes s;
    if (sr_sage2_sizes_of(p, q, &s, NULL) != SAGERUN_OK)
        return 0; /* the quantizer refuses such params itself, before allocating */
    uint64_t b = sat_add(s.q_elements, s.kv_elements);
    b = sat_add(b, sat_mul(sat_add(sat_add(s.q_scale_count, s.k_scale_count), s.v_scale_count), 4));
    b = sat_add(b, s.v_fp8_bytes);
    return sat_add(b, sat_mul(s.k_mean_count, 2));
}

void sr_memory_estimate_compare(const sagerun_problem *p,
                                const sagerun_variant_descriptor *const *variants, size_t n,
                                bool include_inputs, uint32_t accuracy_rows,
                                sr_memory_estimate *e)
{
    memset(e, 0, sizeof(*e));
    uint64_t es = sagerun_dtype_size((int)p->dtype);
    /* as stored: K and V of kv_len rows, packed (varlen) or a page cache (paged) */
    uint64_t q_bytes = sat_mul(sagerun_problem_q_elements(p), es);
    uint64_t kv_bytes = sat_mul(sagerun_problem_kv_elements(p), es);
    if (include_inputs)
        e->inputs = sat_add(q_bytes, sat_mul(kv_bytes, 2));
    for (size_t i = 0; i < n; i++) {
        if (!variants[i])
            continue;
        e->variants++;
        e->outputs = sat_add(e->outputs, q_bytes);
        const sagerun_sage2_quant_params *q = sr_descriptor_sage2_params(variants[i]);
        if (q) {
            e->sage2_variants++;
            e->quantized = sat_add(e->quantized, sage2_bytes(p, q));
        }
    }
    if (e->sage2_variants) {
        /* the quantizer's workspace: partial sums and maxima per 128-token slice, V multipliers */
        uint64_t columns = sat_mul(sat_mul(p->batch, p->heads_kv), p->head_dim);
        uint64_t slices = (sagerun_problem_kv_len(p) + 127u) / 128u; /* K and V's */
        e->scratch = sat_mul(sat_add(sat_mul(sat_mul(columns, slices), 2), columns), 4);
    }
    /* the accuracy reference: rows, fp32 reference rows, partial sums */
    uint64_t per_row = sat_add(8 + SR_COMPARE_ACC_SLOTS * 8, sat_mul(p->head_dim, 4));
    e->scratch = sat_add(e->scratch, sat_mul(accuracy_rows, per_row));
    e->scratch = sat_add(e->scratch, SR_SCRATCH_MARGIN);
    e->total = sat_add(sat_add(sat_add(e->inputs, e->outputs), e->quantized), e->scratch);
}

/* "1.50 GiB", "12.0 MiB" */
static void human(uint64_t b, char *buf, size_t len)
{
    if (b == UINT64_MAX)
        snprintf(buf, len, "more than 16 EiB");
    else if (b >= (1ull << 30))
        snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
    else
        snprintf(buf, len, "%.1f MiB", (double)b / (double)(1ull << 20));
}

sagerun_status sr_memory_check(const sr_memory_estimate *e, uint64_t free_bytes,
                               sagerun_error *err)
{
    if (e->total <= free_bytes)
        return SAGERUN_OK;
    char need[32], fr[32], in[32], out[32], qz[32], sc[32];
    human(e->total, need, sizeof need);
    human(free_bytes, fr, sizeof fr);
    human(e->inputs, in, sizeof in);
    human(e->outputs, out, sizeof out);
    human(e->quantized, qz, sizeof qz);
    human(e->scratch, sc, sizeof sc);
    return sr_error_set(err, SAGERUN_OUT_OF_MEMORY,
                        "the workload does not fit in device memory: needed about %s (%llu "
                        "bytes: inputs %s, %zu output%s %s, sage2 tensors of %zu variant%s %s, "
                        "scratch %s), free %s (%llu bytes): refused before allocating",
                        need, (unsigned long long)e->total, in, e->variants,
                        e->variants == 1 ? "" : "s", out, e->sage2_variants,
                        e->sage2_variants == 1 ? "" : "s", qz, sc, fr,
                        (unsigned long long)free_bytes);
}
