/* sagerun's sage2 extension: SageAttention2's quantized inputs (INT8 Q and K, FP8 V, their
 * scales, K's mean) as an input kind a variant asks for by id, and the sage2 quantizer.
 *
 * sagerun.h and plugin.h describe attention; everything that belongs to one kernel family lives
 * in an extension like this one, named by a versioned id (plugin.h section 10, as CLAP's
 * get_extension):
 *  - a variant whose kernel takes sage2 inputs names SAGERUN_SAGE2_EXTENSION_ID as its
 *    descriptor's input_id with a sagerun_sage2_quant_params as its input_params (ABI 1.2); the
 *    host quantizes Q, K and V with those granularities once per inputs and parameters, before
 *    the variant's first prepare;
 *  - services->get_extension(host, SAGERUN_SAGE2_EXTENSION_ID) gives the sagerun_sage2_extension
 *    below: the tensors the host quantized for the calling instance, and the quantizer itself for
 *    a variant that quantizes on its own;
 *  - a program using the library quantizes with sagerun_sage2_quantize (below).
 * The 1.0/1.1 spelling of the same extension (descriptor input_kind = SAGERUN_INPUT_SAGE2 with
 * `quant`, inputs->sage2, services->sage2_quantize and sage2_tensors_free) keeps working
 * (plugin.h section 10). A new version of the extension that changes what a field means takes a
 * new id ("sagerun.sage2/2"); growing a struct at its end under struct_size keeps this one. */
#ifndef SAGERUN_SAGE2_H
#define SAGERUN_SAGE2_H

#include <stddef.h>
#include <stdint.h>

#include "sagerun.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The id of this extension and of its input kind. */
#define SAGERUN_SAGE2_EXTENSION_ID "sagerun.sage2/1"

/* The granularities of the sage2 quantizer (per-group Q, per-block K, per-channel FP8 V), chosen
 * by the variant. Values after each field: the sm89 kernel (the Hopper kernel). */
typedef struct sagerun_sage2_quant_params {
    uint32_t struct_size;
    uint32_t q_group_rows;  /* rows per Q scale: 32 (16) */
    uint32_t q_block_rows;  /* rows per Q block the scale array is padded to: 128 (64) */
    uint32_t k_block_rows;  /* rows per K scale: 64 (128) */
    uint32_t v_pad_rows;    /* V8's sequence axis is padded to a multiple of this: 64 (128) */
    float v_range;          /* R: 448 for fp32+fp32 accumulation, 2.25 for fp32+fp16 */
} sagerun_sage2_quant_params;

/* sage2-quantized inputs in device (or host) memory; shapes in the comments (the whole contract).
 * N = seq_len (queries), KV = kv_len (sagerun_problem_kv_len: keys and values); dense only. */
typedef struct sagerun_sage2_tensors {
    uint32_t struct_size;
    sagerun_sage2_quant_params params;
    uint64_t q_int8, q_scale;  /* [B,N,Hq,D] (layout), [B,Hq,ceil(N/q_block_rows)*q_block_rows/q_group_rows] */
    uint64_t k_int8, k_scale;  /* [B,KV,Hkv,D] (layout), [B,Hkv,ceil(KV/k_block_rows)] */
    uint64_t v_fp8, v_scale;   /* [B,D,Hkv,L] NHD or [B,Hkv,D,L] HND (L: KV padded to
                                  v_pad_rows), [B,Hkv,D] */
    uint64_t k_mean;           /* [B,1,Hkv,D] in the input dtype: the mean over KV rows */
    uint32_t q_scale_per_head; /* entries of q_scale per (b, h) */
    uint32_t k_scale_per_head; /* entries of k_scale per (b, h) */
    uint32_t v_len;            /* L */
    uint32_t reserved;
} sagerun_sage2_tensors;

/* What services->get_extension(host, SAGERUN_SAGE2_EXTENSION_ID) returns: static, valid until the
 * process ends. Its functions take services->host first and follow the rules of the services
 * (plugin.h sections 5 and 8): [instance-thread], inside a call the host made into the instance,
 * 0 or a negative sagerun_status with a reason in err. Read only the fields struct_size covers. */
typedef struct sagerun_sage2_extension {
    uint32_t struct_size; /* sizeof as the host compiled it */
    uint32_t reserved;
    /* The sage2 quantizer on the context's backend, for a variant that quantizes itself (other
     * granularities, or inside its own timed run). Allocates every tensor of *out (the variant's:
     * free them with tensors_free). Synchronous. */
    int (*quantize)(void *host, const sagerun_problem *problem, uint64_t q, uint64_t k,
                    uint64_t v, const sagerun_sage2_quant_params *params,
                    sagerun_sage2_tensors *out, char *err, size_t errlen);
    /* Frees tensors quantize made for this variant (anything else is left alone and said). */
    void (*tensors_free)(void *host, sagerun_sage2_tensors *tensors);
    /* The tensors the host quantized for the calling instance (a variant of input kind
     * SAGERUN_SAGE2_EXTENSION_ID, by id or by the 1.0/1.1 SAGERUN_INPUT_SAGE2): zero during
     * create, filled before the first prepare, the host's and read-only (plugin.h section 7),
     * valid until destroy returns. NULL outside a call into an instance of this kind. */
    const sagerun_sage2_tensors *(*instance_tensors)(void *host);
} sagerun_sage2_extension;

/* ---- The library's quantizer (libsagerun) ------------------------------------------------------
 * The sage2 quantizer (SAGE2.md section 1) on the inputs' context: K mean, INT8 Q and K, FP8
 * e4m3 V (transposed, padded, permuted), with the granularities and R of params (32/128/64/64
 * and R 448 for SageAttention's sm89 kernel). CUDA matches SageAttention's quantizer bit for
 * bit; the host backend uses an IEEE reciprocal (one step off on ~1e-5 of the codes, scales
 * identical). Allocates every tensor of *out in the context (sagerun_sage2_tensors_free releases
 * them). Both structs' struct_size is this header's size or 0 (a smaller one is an error). */
SAGERUN_API sagerun_status sagerun_sage2_quantize(const sagerun_inputs *in,
                                                  const sagerun_sage2_quant_params *params,
                                                  sagerun_sage2_tensors *out,
                                                  sagerun_error *err);
SAGERUN_API void sagerun_sage2_tensors_free(sagerun_context *ctx, sagerun_sage2_tensors *tensors);

#ifdef __cplusplus
}
#endif
#endif
