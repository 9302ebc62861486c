/* TEMPORARY: placeholders until the quantizer and harness land. */
#include "internal.h"
sagerun_status sr_sage2_quantize_inputs(sagerun_context *ctx, const sagerun_problem *problem,
                                        uint64_t q, uint64_t k, uint64_t v,
                                        const sagerun_sage2_quant_params *params,
                                        sagerun_sage2_tensors *out, sagerun_error *err)
{ (void)ctx;(void)problem;(void)q;(void)k;(void)v;(void)params;(void)out;
  return sr_error_set(err, SAGERUN_UNSUPPORTED, "quantizer pending"); }
void sr_sage2_tensors_free(sagerun_context *ctx, sagerun_sage2_tensors *t) { (void)ctx;(void)t; }
