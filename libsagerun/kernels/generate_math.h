/* The synthetic input generator's arithmetic, shared by the host backend (generate.c) and the CUDA
 * kernel (generate.cu). Integer operations only, so both produce the same bytes.
 *
 * Every element of Q, K, V is a function of (seed, tensor, logical index), where the logical
 * index is the element's position in NHD order [B, N, H, D] whatever the storage layout, so a
 * workload holds the same values in NHD and HND:
 *
 *   bits   = splitmix64 output at counter (key(seed, tensor) + (index+1)·γ)
 *   z      = sum of the four 16-bit fields of bits − 131070          (Irwin–Hall, n = 4)
 *   n      = z · round(2^32 / σ)                                     (≈ N(0,1) in Q.32, |n| < 3.47)
 *   value  = n · std·scale + [K only] n_bias(hk, c) · k_bias         (fixed point Q.40)
 *   out    = value rounded to fp16/bf16, nearest-even, saturated to the largest finite value
 *
 * std, k_bias and outlier_scale are carried in units of 1/256 (Q.8). The K bias depends only on
 * (kv head, channel): the per-channel offset that sage2's K smoothing removes. Outlier channels
 * (same set for Q and K of a kv head group, as with rotary channels of real models) have their
 * std multiplied by outlier_scale. */
#ifndef SAGERUN_KERNELS_GENERATE_MATH_H
#define SAGERUN_KERNELS_GENERATE_MATH_H

#include <stdint.h>

#include "sr_hostdev.h"

/* Streams of the generator: one per tensor plus the per-channel tables. */
enum {
    SR_GEN_STREAM_Q = 0,
    SR_GEN_STREAM_K = 1,
    SR_GEN_STREAM_V = 2,
    SR_GEN_STREAM_K_BIAS = 3,
    SR_GEN_STREAM_OUTLIERS = 4
};

#define SR_GEN_GOLDEN_GAMMA 0x9E3779B97F4A7C15ull /* splitmix64's increment */
/* round(2^32 / sqrt((2^32 - 1) / 3)): 1/σ of the sum of four uniform 16-bit integers, Q.32 */
#define SR_GEN_INV_SIGMA_Q32 113512ll
#define SR_GEN_FRAC_BITS 40 /* Q.32 normal × Q.8 knob */
#define SR_GEN_VECTOR 8     /* elements per 16-byte store */

/* Parameters of one tensor's generation; passed by value to the kernel, so plain types only and
 * 8-byte fields first (the layout is identical in C and CUDA). */
typedef struct sr_gen_tensor_params {
    uint64_t out;          /* address of the tensor (device or host) */
    uint64_t key;          /* sr_gen_key(seed, tensor stream) */
    uint64_t key_bias;     /* sr_gen_key(seed, SR_GEN_STREAM_K_BIAS) */
    uint64_t key_outliers; /* sr_gen_key(seed, SR_GEN_STREAM_OUTLIERS) */
    uint64_t elements;     /* B*N*H*D */
    uint32_t batch, seq_len, heads, head_dim;
    uint32_t group;        /* query heads per kv head (1 for K and V) */
    uint32_t layout;       /* sagerun_layout */
    uint32_t bf16;         /* 1: bf16, 0: fp16 */
    int32_t std_q8;        /* std in 1/256 */
    int32_t bias_q8;       /* std of the per-channel bias in 1/256 (K only; 0 = none) */
    int32_t outlier_channels;
    int32_t outlier_scale_q8;
    uint32_t reserved;
} sr_gen_tensor_params;

typedef struct sr_gen_launch_params {
    sr_gen_tensor_params t[3]; /* Q, K, V */
} sr_gen_launch_params;

SR_HD uint64_t sr_gen_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

SR_HD uint64_t sr_gen_key(uint64_t seed, uint32_t stream)
{
    return sr_gen_mix64(seed ^ sr_gen_mix64(((uint64_t)stream + 1) * SR_GEN_GOLDEN_GAMMA));
}

SR_HD uint64_t sr_gen_bits(uint64_t key, uint64_t counter)
{
    return sr_gen_mix64(key + (counter + 1) * SR_GEN_GOLDEN_GAMMA);
}

/* An approximately standard normal sample in Q.32 from 64 random bits. */
SR_HD int64_t sr_gen_normal_q32(uint64_t bits)
{
    int64_t z = (int64_t)(bits & 0xFFFFu) + (int64_t)((bits >> 16) & 0xFFFFu) +
                (int64_t)((bits >> 32) & 0xFFFFu) + (int64_t)(bits >> 48) - 131070;
    return z * SR_GEN_INV_SIGMA_Q32;
}

/* Rounds a fixed-point value (frac_bits fractional bits) to a binary16 (mant_bits = 10) or
 * bfloat16 (mant_bits = 7) bit pattern: nearest, ties to even, saturated at the largest finite
 * value; zero gives +0. */
SR_HD uint16_t sr_gen_fixed_to_bits16(int64_t value, int frac_bits, int mant_bits, int exp_bias)
{
    const int emin = 1 - exp_bias, emax = exp_bias;
    uint16_t sign = value < 0 ? 0x8000u : 0;
    uint64_t m = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    if (m == 0)
        return 0;
    int e = (63 - sr_clz64(m)) - frac_bits; /* exponent of the leading bit */
    int quantum = (e < emin ? emin : e) - mant_bits;
    int shift = quantum + frac_bits; /* bits of m below the quantum */
    uint64_t r;
    if (shift <= 0) {
        r = m << -shift;
    } else {
        r = m >> shift;
        uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
    }
    if (e < emin) /* subnormal; r == 2^mant_bits is the smallest normal's encoding */
        return (uint16_t)(sign | r);
    if (r >> (mant_bits + 1)) {
        r >>= 1;
        e++;
    }
    if (e > emax)
        return (uint16_t)(sign | (((uint32_t)(2 * exp_bias) << mant_bits) |
                                  ((1u << mant_bits) - 1)));
    return (uint16_t)(sign | ((uint32_t)(e + exp_bias) << mant_bits) |
                      (uint32_t)(r - (1ull << mant_bits)));
}

/* Whether channel c of kv head hk is an outlier channel: `count` channels per head, spread
 * evenly from an offset drawn per head. */
SR_HD int sr_gen_is_outlier(const sr_gen_tensor_params *p, uint32_t hk, uint32_t c)
{
    uint32_t d = p->head_dim, count = (uint32_t)p->outlier_channels;
    if (count == 0)
        return 0;
    if (count >= d)
        return 1;
    uint32_t step = d / count;
    uint32_t offset = (uint32_t)(sr_gen_bits(p->key_outliers, hk) % d);
    uint32_t rel = (c + d - offset) % d;
    return rel % step == 0 && rel / step < count;
}

/* The bits of one element given its logical coordinates. */
SR_HD uint16_t sr_gen_element(const sr_gen_tensor_params *p, uint64_t logical_index, uint32_t h,
                              uint32_t c)
{
    uint32_t hk = h / p->group;
    int64_t scale_q8 = p->std_q8;
    if (p->outlier_channels > 0 && sr_gen_is_outlier(p, hk, c))
        scale_q8 = (scale_q8 * p->outlier_scale_q8) >> 8;
    int64_t v = sr_gen_normal_q32(sr_gen_bits(p->key, logical_index)) * scale_q8;
    if (p->bias_q8 != 0)
        v += sr_gen_normal_q32(sr_gen_bits(p->key_bias, (uint64_t)hk * p->head_dim + c)) *
             p->bias_q8;
    return p->bf16 ? sr_gen_fixed_to_bits16(v, SR_GEN_FRAC_BITS, 7, 127)
                   : sr_gen_fixed_to_bits16(v, SR_GEN_FRAC_BITS, 10, 15);
}

/* Logical coordinates of storage row `row` (a row is D contiguous elements):
 * NHD rows are (b, n, h), HND rows are (b, h, n). Returns the logical index of the row's first
 * element. */
SR_HD uint64_t sr_gen_row_coords(const sr_gen_tensor_params *p, uint64_t row, uint32_t *h_out)
{
    uint64_t b, n, h;
    if (p->layout == 0) {
        h = row % p->heads;
        uint64_t bn = row / p->heads;
        n = bn % p->seq_len;
        b = bn / p->seq_len;
    } else {
        n = row % p->seq_len;
        uint64_t bh = row / p->seq_len;
        h = bh % p->heads;
        b = bh / p->heads;
    }
    *h_out = (uint32_t)h;
    return ((b * p->seq_len + n) * p->heads + h) * p->head_dim;
}

#endif
