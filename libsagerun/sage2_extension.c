/* The sage2 extension (sage2.h, "sagerun.sage2/1") as plugins reach it: the table
 * services->get_extension returns, whose quantize and tensors_free are also the services'
 * sage2_quantize and sage2_tensors_free (their 1.0/1.1 place, plugin.h section 10). What the
 * host quantizes for a variant of the sage2 input kind is input_kinds.c's provider. */
#include "internal.h"

static int copy_error(const sagerun_error *e, char *err, size_t errlen)
{
    return sr_errbuf_set(err, errlen, e->status, "%s", e->message);
}

int sr_sage2_service_quantize(void *host, const sagerun_problem *problem, uint64_t q, uint64_t k,
                              uint64_t v, const sagerun_sage2_quant_params *params,
                              sagerun_sage2_tensors *out, char *err, size_t errlen)
{
    sagerun_error e = {0};
    if (!problem || !params || !out)
        return sr_errbuf_set(err, errlen, SAGERUN_INVALID_ARGUMENT, "sage2_quantize: NULL argument");
    if (sr_sage2_quantize_inputs(host, problem, q, k, v, params, out, &e) != SAGERUN_OK)
        return copy_error(&e, err, errlen);
    /* the variant's: it may free them (by their first tensor) */
    sr_plugin_memory_add(((sagerun_context *)host)->plugin_memory, out->q_int8, 0);
    return SAGERUN_OK;
}

void sr_sage2_service_tensors_free(void *host, sagerun_sage2_tensors *tensors)
{
    sagerun_context *ctx = host;
    if (!tensors)
        return;
    if (sr_plugin_memory_remove(ctx->plugin_memory, tensors->q_int8)) {
        sr_sage2_tensors_free(ctx, tensors);
        return;
    }
    ctx->services.log(host, SAGERUN_LOG_ERROR,
                      "sage2_tensors_free: not tensors this variant made with sage2_quantize; "
                      "left alone (the inputs' sage2 tensors are the host's)");
}

const sagerun_sage2_extension sr_sage2_extension = {
    .struct_size = sizeof(sagerun_sage2_extension),
    .quantize = sr_sage2_service_quantize,
    .tensors_free = sr_sage2_service_tensors_free,
    .instance_tensors = sr_instance_sage2_tensors,
};
