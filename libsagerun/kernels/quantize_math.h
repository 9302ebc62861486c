/* The sage2 quantizer (SAGE2.md section 1): constants, kernel parameter structs and the scalar
 * conversions, shared by the host implementation (quantize.c) and the CUDA kernels
 * (quantize.cu). Plain C types only; the structs are passed by value to the kernels, so their
 * layout must be the same in C and CUDA (8-byte fields first). */
#ifndef SAGERUN_KERNELS_QUANTIZE_MATH_H
#define SAGERUN_KERNELS_QUANTIZE_MATH_H

#include <stdint.h>

#include "sr_hostdev.h"

/* V's column maxima are reduced over slices of this many tokens, then across slices. (K's mean
 * is torch_mean_math.h's.) */
#define SR_QUANT_MEAN_SLICE 128u
/* max(eps, amax) keeps an all-zero Q or K group finite (SAGE2.md 1.2). */
#define SR_QUANT_INT8_EPS 1e-7f
#define SR_QUANT_INT8_MAX 127.0f
/* V8 tiles: tokens per tile (a multiple of the 16-token permutation group) and channels. */
#define SR_QUANT_V_TILE_TOKENS 128u
#define SR_QUANT_V_TILE_CHANNELS 64u
#define SR_QUANT_PERM_GROUP 16u
/* Threads of the row-group (Q, K) kernel and the largest number of 16-byte chunks per thread it
 * keeps in registers between the max and the quantization passes (more are loaded twice). */
#define SR_QUANT_ROWS_THREADS 128u
#define SR_QUANT_ROWS_CACHE_MAX 16u

/* Storage slot p of each 16-token group of V8 holds token sr_quant_perm[p] of the group: the
 * order in which a thread's P values land in the FP8 MMA's A operand (SAGE2.md 1.4). */
#define SR_QUANT_PERM_INIT {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15}
/* Its inverse: token t of a group goes to slot sr_quant_perm_slot(t). */
SR_HD uint32_t sr_quant_perm_slot(uint32_t t)
{
    return t < 8 ? (t >> 1) * 4 + (t & 1) : ((t - 8) >> 1) * 4 + 2 + (t & 1);
}

/* Column maxima of |V| over the sequence: partial results per slice. */
typedef struct sr_quant_colreduce_params {
    uint64_t v;                /* input */
    uint64_t partial_max;      /* f32 [slices, B, Hkv, D] */
    int64_t stride_b, stride_n, stride_h; /* element strides of V */
    uint32_t batch, seq_len, heads, head_dim; /* seq_len: V's rows, the problem's kv_len */
    uint32_t slices, bf16;
} sr_quant_colreduce_params;

/* Turns the partial maxima into v_scale and V's multipliers; copies a given k_mean. */
typedef struct sr_quant_finalize_params {
    uint64_t partial_max;
    uint64_t given_k_mean;     /* 0: k_mean is computed elsewhere (torch_mean.cu) */
    uint64_t k_mean;           /* out: [B, Hkv, D] in the input dtype */
    uint64_t v_scale;          /* out: f32 [B, Hkv, D] */
    uint64_t v_inv;            /* out: f32 [B, Hkv, D], R * rcp(amax) */
    uint32_t columns;          /* B * Hkv * D */
    uint32_t slices;
    float v_range;             /* R */
    float v_range_inv;         /* fl(1/R) */
} sr_quant_finalize_params;

/* INT8 quantization of Q or K by groups of rows, one scale per (b, h, group). */
typedef struct sr_quant_rows_params {
    uint64_t src;              /* Q or K */
    uint64_t dst;              /* int8, same shape and layout */
    uint64_t scale;            /* f32 [B, H, groups_per_head] */
    uint64_t mean;             /* K only: k_mean [B, Hkv, D]; 0 for Q */
    int64_t stride_b, stride_n, stride_h;
    uint32_t batch, seq_len, heads, head_dim; /* seq_len: the tensor's rows (Q: N, K: kv_len) */
    uint32_t group_rows, groups_per_head;
    uint32_t bf16, reserved;
} sr_quant_rows_params;

/* FP8 e4m3 V: transposed, padded, permuted. */
typedef struct sr_quant_v_params {
    uint64_t v;                /* input */
    uint64_t dst;              /* e4m3 [B, D, Hkv, L] (NHD) or [B, Hkv, D, L] (HND) */
    uint64_t v_inv;            /* f32 [B, Hkv, D] */
    int64_t stride_b, stride_n, stride_h;     /* of V */
    int64_t out_stride_b, out_stride_h, out_stride_d; /* of V8, in bytes; tokens contiguous */
    uint32_t batch, seq_len, heads, head_dim; /* seq_len: V's rows, the problem's kv_len */
    uint32_t v_len, bf16;
} sr_quant_v_params;

/* ---- scalar conversions (host reference; the kernels use the hardware instructions) ---- */

/* fp16 / bf16 bits to fp32 (exact). */
SR_HD float sr_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F)
        return sr_bits_float(sign | 0x7F800000u | (m << 13));
    if (e == 0) {
        if (m == 0)
            return sr_bits_float(sign);
        /* subnormal: m · 2^-24, normalise */
        int shift = sr_clz64(m) - (64 - 11); /* bring the leading bit to bit 10 */
        m <<= shift;
        return sr_bits_float(sign | ((uint32_t)(127 - 15 + 1 - shift) << 23) |
                             ((m & 0x3FFu) << 13));
    }
    return sr_bits_float(sign | ((e + 127 - 15) << 23) | (m << 13));
}

SR_HD float sr_bf16_to_float(uint16_t h)
{
    return sr_bits_float((uint32_t)h << 16);
}

/* Rounds a 24-bit significand right by `shift` bits, nearest-even. */
SR_HD uint32_t sr_round_shift(uint32_t m, int shift)
{
    if (shift <= 0)
        return m << -shift;
    if (shift > 31)
        return 0;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return r + (rem > half || (rem == half && (r & 1)));
}

/* fp32 to fp16 bits, round to nearest even, overflow to infinity (as __float2half_rn). */
SR_HD uint16_t sr_float_to_half(float f)
{
    uint32_t u = sr_float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
    if (e == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (m ? 0x200u | (m >> 13) : 0));
    if (e == 0) /* fp32 zero or subnormal: far below fp16's smallest subnormal */
        return sign;
    int exp = (int)e - 127;
    uint32_t sig = m | 0x800000u;
    if (exp < -14) { /* fp16 subnormal: units of 2^-24 */
        uint32_t r = sr_round_shift(sig, 23 - 24 - exp);
        return (uint16_t)(sign | r); /* r == 0x400 encodes the smallest normal */
    }
    uint32_t r = sr_round_shift(sig, 13);
    if (r >> 11) {
        r >>= 1;
        exp++;
    }
    if (exp > 15)
        return (uint16_t)(sign | 0x7C00u);
    return (uint16_t)(sign | ((uint32_t)(exp + 15) << 10) | (r & 0x3FFu));
}

/* fp32 to bf16 bits, round to nearest even (NaN stays a quiet NaN). */
SR_HD uint16_t sr_float_to_bf16(float f)
{
    uint32_t u = sr_float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* fp32 to FP8 e4m3 (bias 7, no infinities, 0x7F = NaN), as cvt.rn.satfinite.e4m3x2.f32:
 * round to nearest even, magnitudes above 448 (and infinities) saturate to 448, NaN gives 0x7F. */
SR_HD uint8_t sr_float_to_e4m3(float f)
{
    uint32_t u = sr_float_bits(f);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return 0x7F;
    if (a > 0x43E00000u) /* > 448.0f (including infinity) */
        return (uint8_t)(sign | 0x7Eu);
    uint32_t e = a >> 23;
    if (e == 0) /* zero or fp32 subnormal */
        return sign;
    int exp = (int)e - 127;
    uint32_t sig = (a & 0x7FFFFFu) | 0x800000u;
    if (exp < -6) { /* e4m3 subnormal: units of 2^-9 */
        uint32_t r = sr_round_shift(sig, 23 - 9 - exp);
        return (uint8_t)(sign | r); /* r == 8 encodes the smallest normal */
    }
    uint32_t r = sr_round_shift(sig, 20);
    if (r >> 4) {
        r >>= 1;
        exp++;
    }
    return (uint8_t)(sign | ((uint32_t)(exp + 7) << 3) | (r & 7u));
}

/* e4m3 bits to fp32 (exact); 0x7F / 0xFF are NaN. */
SR_HD float sr_e4m3_to_float(uint8_t b)
{
    uint32_t sign = (uint32_t)(b & 0x80u) << 24, e = (b >> 3) & 0xFu, m = b & 7u;
    if (e == 0xF && m == 7)
        return sr_bits_float(0x7FC00000u | sign);
    if (e == 0) { /* m · 2^-9 */
        float v = (float)m * (1.0f / 512.0f);
        return sign ? -v : v;
    }
    return sr_bits_float(sign | ((e + 127 - 7) << 23) | (m << 20));
}

/* Flush-to-zero of an fp32 value, as the .ftz instructions do (sign kept). */
SR_HD float sr_ftz(float f)
{
    uint32_t u = sr_float_bits(f);
    return (u & 0x7F800000u) == 0 ? sr_bits_float(u & 0x80000000u) : f;
}

#endif
