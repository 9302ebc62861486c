/* Inputs made from a workload description. */
#ifndef SAGERUN_INPUTS_H
#define SAGERUN_INPUTS_H

#include "workload.h"

/* Q, K, V for the workload in ctx: generated (synthetic, with the workload's knobs) or read from
 * its safetensors file (whose quantized tensors, if any, come along). Synchronous. */
sagerun_status sr_inputs_create_for_workload(sagerun_context *ctx, const sr_workload *w,
                                             sagerun_inputs **out, sagerun_error *err);

#endif
