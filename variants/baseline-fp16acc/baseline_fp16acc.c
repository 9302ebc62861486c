/* The `baseline-fp16acc` variant: SageAttention2's INT8 Q·Kᵀ / FP8 P·V attention with the
 * "fp32+fp16" accumulation (each 64-key P·V product accumulated in f16 by the FP8 MMA, then added
 * to the fp32 O; V quantized with R = 2.25): SageAttention's default kernel on Ada
 * (qk_int8_sv_f8_accum_f16_fuse_v_scale_attn_inst_buf), bit-exact with the golden files'
 * o_sm89_f16acc. Kernel: baseline_fp16acc_kernel.cu; host glue: ../common/sage2_plugin.h. */
#define SAGE2_VARIANT_NAME "baseline-fp16acc"
#define SAGE2_VARIANT_DESCRIPTION "SageAttention2 INT8 QK / FP8 PV (fp32+fp16 accumulation), bit-exact"
#define SAGE2_KERNEL_NAME "sage2_attn_baseline_fp16acc"
#define SAGE2_V_RANGE 2.25f /* SageAttention's quant_v_scale_max for pv_accum_dtype "fp32+fp16" */
#include "../common/sage2_plugin.h"
