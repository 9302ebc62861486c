/* Parameters of libsagerun's comparison kernels (compare.cu), shared with their launcher
 * (compare.c). Passed by value, so plain fixed-width types only and the same layout on both sides.
 *
 * Rows: a "row" is one query position of one head, numbered in logical order whatever the storage:
 * dense, row = (b * heads_q + h) * seq_len + n; varlen, row = h * total_q + t for the packed query
 * row t (its sequence b is where cu_seqlens_q puts t, its position n = t - cu_seqlens_q[b]).
 * compare_rows.h decodes a row and finds its keys. */
#ifndef SAGERUN_KERNELS_COMPARE_PARAMS_H
#define SAGERUN_KERNELS_COMPARE_PARAMS_H

#include <stdint.h>

#define SR_COMPARE_THREADS 256     /* threads per block of every comparison kernel */
#define SR_COMPARE_MAX_HEAD_DIM 512 /* reference kernel: at most 2 output channels per thread */
#define SR_COMPARE_ACC_SLOTS 8      /* doubles per row written by the accuracy kernel */

/* Slots of the accuracy kernel's per-row partial sums (finite elements only, except NONFINITE). */
enum {
    SR_ACC_DOT = 0,       /* sum o*r */
    SR_ACC_OO = 1,        /* sum o*o */
    SR_ACC_RR = 2,        /* sum r*r */
    SR_ACC_ABS_DIFF = 3,  /* sum |o-r| */
    SR_ACC_ABS_REF = 4,   /* sum |r| */
    SR_ACC_SQ_DIFF = 5,   /* sum (o-r)^2 */
    SR_ACC_MAX_ABS = 6,   /* max |o-r| */
    SR_ACC_NONFINITE = 7  /* count of o that are NaN or Inf */
};

typedef struct sr_compare_problem {
    uint64_t q, k, v;           /* inputs (problem dtype and storage) */
    uint64_t cu_q, cu_kv;       /* varlen: int32 [batch + 1] prefix sums in the context's memory */
    uint64_t table;             /* paged: int32 [batch, pages_per_seq] block table, or 0 */
    uint32_t batch, seq_len, heads_q, heads_kv, head_dim;
    uint32_t layout;            /* 0 NHD, 1 HND (varlen and paged: NHD) */
    uint32_t dtype;             /* 0 F16, 1 BF16 */
    uint32_t causal;
    float sm_scale;
    uint32_t kv_len;            /* keys per sequence (varlen: the longest); never 0 here */
    uint32_t align;             /* of causal and the window: 0 top-left, 1 bottom-right */
    uint32_t window;            /* 1: window_left / window_right keys around the diagonal */
    int32_t window_left, window_right; /* -1: unbounded */
    float softcap;              /* > 0: x -> softcap * tanh(x / softcap), x = sm_scale * q.k */
    uint32_t varlen, total_q;   /* varlen: Q, K, V, O packed [tokens, H, D] */
    uint32_t page_size;         /* > 0: K, V paged [pages, page_size, heads_kv, D] */
    uint32_t pages_per_seq;     /* paged: columns of the block table */
    uint32_t reserved;
} sr_compare_problem;

/* sr_compare_reference_rows: one block per sampled row; out[i*head_dim + d] (fp32). */
typedef struct sr_compare_reference_params {
    sr_compare_problem p;
    uint64_t rows;      /* const uint64_t[nrows]: logical row numbers */
    uint64_t out;       /* float[nrows * head_dim] */
    uint32_t nrows;
    uint32_t reserved;
} sr_compare_reference_params;

/* sr_compare_accuracy_rows: one block per sampled row; partials[i*SR_COMPARE_ACC_SLOTS + slot]. */
typedef struct sr_compare_accuracy_params {
    sr_compare_problem p;
    uint64_t output;    /* the variant's output, problem dtype and layout */
    uint64_t rows;      /* the same rows as the reference */
    uint64_t reference; /* float[nrows * head_dim] */
    uint64_t partials;  /* double[nrows * SR_COMPARE_ACC_SLOTS] */
    uint32_t nrows;
    uint32_t reserved;
} sr_compare_accuracy_params;

/* sr_compare_byte_diff: grid-stride over 16-bit elements of a and b; accumulates into result. */
typedef struct sr_compare_diff_result {
    unsigned long long differing;   /* elements whose bits differ */
    unsigned long long first_index; /* smallest such index; ~0 when none */
    unsigned int max_ulp;           /* largest distance in representable values */
    unsigned int max_abs_bits;      /* fp32 bits of the largest |a-b| (non-negative: ordered as
                                     * unsigned); +Inf when a NaN meets anything else */
} sr_compare_diff_result;

typedef struct sr_compare_diff_params {
    uint64_t a, b;       /* two outputs of `elements` 16-bit values */
    uint64_t elements;
    uint64_t result;     /* sr_compare_diff_result, initialised by the caller */
    uint32_t dtype;      /* 0 F16, 1 BF16 */
    uint32_t reserved;
} sr_compare_diff_params;

#endif
