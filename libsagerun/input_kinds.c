/* Extensions and input kinds (plugin.h section 10): what a variant's inputs are besides Q, K, V,
 * and what services->get_extension gives. The generic core knows kinds only through this table;
 * each row is one extension: its id, its 1.0/1.1 input_kind number where it has one, the table
 * of functions get_extension returns, and the provider that makes its inputs for an instance
 * before the variant's prepare. The core (FP16) needs nothing; sage2 (sage2.h) is the sage2
 * quantizer (quantize.c) with the variant's granularities. A new kind is a new row and a new
 * provider: nothing in plugin.h, instance.c or the loader. */
#include <string.h>

#include "internal.h"
#include "quantize.h"

static const char *sage2_params_problem(const void *params, char *buf, size_t len)
{
    sagerun_error e = {0};
    if (sr_sage2_quant_check(params, &e) == SAGERUN_OK)
        return NULL;
    snprintf(buf, len, "%s", e.message);
    return buf;
}

static bool same_quant_params(const void *pa, const void *pb)
{
    const sagerun_sage2_quant_params *a = pa, *b = pb;
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
                                    const void *params, sagerun_error *err)
{
    const sagerun_sage2_quant_params *quant = params;
    if (p->sage2.q_int8)
        return SAGERUN_OK;
    if (in->has_sage2 && same_quant_params(&in->sage2.params, quant)) {
        p->sage2 = in->sage2; /* quantized tensors that came with the inputs */
        return SAGERUN_OK;
    }
    uint64_t zero_v = 0;
    sagerun_status st = sr_sage2_quantize(ctx, &in->problem, in->q, in->k, in->v, quant,
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
    {SAGERUN_INPUT_FP16, NULL, "fp16", NULL, 0, NULL, NULL, NULL, NULL},
    {SAGERUN_INPUT_SAGE2, SAGERUN_SAGE2_EXTENSION_ID, "sage2", &sr_sage2_extension,
     sizeof(sagerun_sage2_quant_params), sage2_params_problem, same_quant_params, sage2_provide,
     sage2_release},
};

static const sr_input_provider *provider_of_kind(int kind)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(providers); i++)
        if (providers[i].kind == kind)
            return &providers[i];
    return NULL;
}

static const sr_input_provider *provider_of_id(const char *id)
{
    for (size_t i = 0; id && i < SR_ARRAY_LEN(providers); i++)
        if (providers[i].id && strcmp(providers[i].id, id) == 0)
            return &providers[i];
    return NULL;
}

const void *sr_extension_get(void *host, const char *id)
{
    (void)host;
    const sr_input_provider *p = provider_of_id(id);
    return p ? p->extension : NULL;
}

/* The descriptor's 1.2 input_id and input_params, NULL where its struct_size does not cover
 * them (a descriptor of a 1.0, 1.1 or early 1.2 header). */
static const char *input_id_of(const sagerun_variant_descriptor *d)
{
    size_t end = offsetof(sagerun_variant_descriptor, input_params) + sizeof d->input_params;
    return d->struct_size >= end ? d->input_id : NULL;
}

sr_input_kind sr_descriptor_input_kind(const sagerun_variant_descriptor *d)
{
    const char *id = input_id_of(d);
    if (id)
        return (sr_input_kind){provider_of_id(id), d->input_params};
    const sr_input_provider *p = provider_of_kind(d->input_kind);
    return (sr_input_kind){p, p && p->kind == SAGERUN_INPUT_SAGE2 ? &d->quant : NULL};
}

const sagerun_sage2_quant_params *sr_descriptor_sage2_params(const sagerun_variant_descriptor *d)
{
    sr_input_kind k = sr_descriptor_input_kind(d);
    return k.provider && k.provider->kind == SAGERUN_INPUT_SAGE2 ? k.params : NULL;
}

/* Why input_kind (the 1.0/1.1 spelling) contradicts input_id, the kind k names; NULL when they
 * agree or input_kind says nothing (FP16). */
static const char *spellings_problem(const sagerun_variant_descriptor *d, sr_input_kind k,
                                     const char *id, char *buf, size_t len)
{
    if (d->input_kind == SAGERUN_INPUT_FP16)
        return NULL;
    const sr_input_provider *old = provider_of_kind(d->input_kind);
    if (old != k.provider)
        snprintf(buf, len, "variant %s: input_kind %d (%s) and input_id \"%s\" name different "
                 "input kinds (plugin.h section 10: set input_id alone, or both alike)", d->name,
                 d->input_kind, old ? old->name : "unknown", id);
    else if (old->params_equal && !old->params_equal(&d->quant, k.params))
        snprintf(buf, len, "variant %s: input_kind %d (%s) with its quant and input_id \"%s\" "
                 "with input_params name different parameters (plugin.h section 10: set "
                 "input_id alone, or both alike)", d->name, d->input_kind, old->name, id);
    else
        return NULL;
    return buf;
}

/* Why the parameters k names are unusable; NULL when they are (or the kind takes none). By id
 * they are a struct of their own, which starts with its struct_size (plugin.h section 10); the
 * 1.0/1.1 quant is a field of the descriptor. */
static const char *params_problem(const sagerun_variant_descriptor *d, sr_input_kind k,
                                  const char *id, char *buf, size_t len)
{
    const sr_input_provider *p = k.provider;
    char why[SAGERUN_ERROR_MESSAGE_SIZE];
    if (!p->params_problem)
        return NULL;
    if (id && !k.params)
        snprintf(buf, len, "variant %s: input kind \"%s\" needs its parameters (input_params is "
                 "NULL)", d->name, p->id);
    else if (id && *(const uint32_t *)k.params < p->params_size)
        snprintf(buf, len, "variant %s: the input_params of input kind \"%s\" have struct_size "
                 "%u, its parameters need %zu", d->name, p->id, *(const uint32_t *)k.params,
                 p->params_size);
    else if (!p->params_problem(k.params, why, sizeof why))
        return NULL;
    else if (id)
        snprintf(buf, len, "variant %s: the input_params of input kind \"%s\" are unusable: %s",
                 d->name, p->id, why);
    else
        snprintf(buf, len, "variant %s: its quant (read for SAGERUN_INPUT_SAGE2) is unusable: %s",
                 d->name, why);
    return buf;
}

/* The ids this library knows, for a message: "a, b". */
static const char *known_ids(void)
{
    static _Thread_local char ids[160];
    size_t n = 0;
    ids[0] = '\0';
    for (size_t i = 0; i < SR_ARRAY_LEN(providers) && n < sizeof ids; i++)
        if (providers[i].id)
            n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%s", n ? ", " : "", providers[i].id);
    return ids;
}

const char *sr_input_kind_problem(const sagerun_variant_descriptor *d, char *buf, size_t len)
{
    sr_input_kind k = sr_descriptor_input_kind(d);
    const char *id = input_id_of(d);
    char shown[80];
    sr_text_copy(shown, sizeof shown, id ? id : "");
    if (!k.provider && id)
        snprintf(buf, len, "variant %s: unknown input kind id \"%s\" (this sagerun knows %s)",
                 d->name, shown, known_ids());
    else if (!k.provider)
        snprintf(buf, len, "variant %s: unknown input kind %d", d->name, d->input_kind);
    else if (params_problem(d, k, id, buf, len))
        return buf;
    else
        return id ? spellings_problem(d, k, shown, buf, len) : NULL;
    return buf;
}
