/* The `interleave-softmax` variant: baseline's numerics (bit-exact, SAGE2.md §3), with the softmax
 * free to overlap the tensor-core work. Kernel: interleave_softmax_kernel.cu. */
#define SAGE2_VARIANT_NAME "interleave-softmax"
#define SAGE2_VARIANT_DESCRIPTION "sage2 bit-exact with baseline; on Hopper wgmma, softmax overlapping the tensor work"
#define SAGE2_KERNEL_NAME "sage2_attn_interleave_softmax"
#define SAGE2_SMEM_BYTES 65536          /* sm_90a: Q 16K + K 2x8K + V8 2x8K + V as f16 16K */
#define SAGE2_SMEM_BYTES_NOT_SM90 49152 /* the mma.sync path: Q 16K + K 2x8K + V 2x8K */
/* 4 warps of 32 rows: the sage2_plugin.h defaults for SAGE2_THREADS and SAGE2_WARP_Q. */
#include "../common/sage2_plugin.h"
