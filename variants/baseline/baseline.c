/* The `baseline` variant: SageAttention2's INT8 Q·Kᵀ / FP8 P·V attention, bit-exact with the
 * reference kernel (SAGE2.md). Kernel: baseline_kernel.cu; host glue: ../common/sage2_plugin.h. */
#define SAGE2_VARIANT_NAME "baseline"
#define SAGE2_VARIANT_DESCRIPTION "SageAttention2 INT8 QK / FP8 PV (fp32+fp32), bit-exact"
#define SAGE2_KERNEL_NAME "sage2_attn_baseline"
#include "../common/sage2_plugin.h"
