/* Input kinds (plugin.h sagerun_input_kind): what a variant's inputs are besides Q, K, V. The
 * generic core knows kinds only through this table; each kind has one provider that makes its
 * inputs for an instance before the variant's prepare. FP16 needs nothing; SAGE2 is the sage2
 * extension, whose provider is the sage2 quantizer (quantize.c) with the descriptor's `quant`
 * parameters. A new kind is a new row here and a new provider, nothing in instance.c. */
#include "internal.h"
#include "quantize.h"

static bool same_quant_params(const sagerun_sage2_quant_params *a,
                              const sagerun_sage2_quant_params *b)
{
    return a->q_group_rows == b->q_group_rows && a->q_block_rows == b->q_block_rows &&
           a->k_block_rows == b->k_block_rows && a->v_pad_rows == b->v_pad_rows &&
           a->v_range == b->v_range;
}

/* Quantize once per inputs and parameters: the first variant to quantize leaves its tensors
 * with the inputs for the others of the same parameters (its prepare time holds the
 * quantization, theirs does not); every later variant of these parameters reads the same tensors
 * at the same addresses (an A/A compares the kernel, not placement). A provide that failed after
 * quantizing is retried with the tensors it already has. */
static sagerun_status sage2_provide(sr_provided_inputs *p, sagerun_context *ctx,
                                    sagerun_inputs *in, const sagerun_variant_descriptor *d,
                                    sagerun_error *err)
{
    if (p->sage2.q_int8)
        return SAGERUN_OK;
    if (in->has_sage2 && same_quant_params(&in->sage2.params, &d->quant)) {
        p->sage2 = in->sage2; /* quantized tensors that came with the inputs */
        return SAGERUN_OK;
    }
    uint64_t zero_v = 0;
    sagerun_status st = sr_sage2_quantize(ctx, &in->problem, in->q, in->k, in->v, &d->quant,
                                          in->k_mean, &p->sage2, &zero_v, err);
    if (st != SAGERUN_OK)
        return sr_error_prefix(st, err, "variant %s: quantizing the inputs", d->name);
    sr_sage2_warn_zero_v(in, zero_v);
    if (!in->has_sage2) {
        in->sage2 = p->sage2;
        in->has_sage2 = in->sage2_derived = true;
    } else {
        p->own = true;
    }
    return SAGERUN_OK;
}

static void sage2_release(sr_provided_inputs *p, sagerun_context *ctx)
{
    if (p->own)
        sr_sage2_tensors_free(ctx, &p->sage2);
}

static const sr_input_provider providers[] = {
    {SAGERUN_INPUT_FP16, "fp16", NULL, NULL},
    {SAGERUN_INPUT_SAGE2, "sage2", sage2_provide, sage2_release},
};

const sr_input_provider *sr_input_provider_for(int kind)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(providers); i++)
        if (providers[i].kind == kind)
            return &providers[i];
    return NULL;
}
