/* The kernel's parameters: filled by tuned.c, passed by value to tuned.cu. Plain C
 * types only, so both compilers lay it out the same way. Strides are in elements. */
#ifndef TUNED_PARAMS_H
#define TUNED_PARAMS_H
#include <stdint.h>

typedef struct tuned_params {
    uint64_t q, k, v, o; /* device addresses */
    int64_t q_stride_b, q_stride_n, q_stride_h; /* Q and O */
    int64_t k_stride_b, k_stride_n, k_stride_h; /* K and V */
    int32_t seq_len, heads_q, heads_kv, head_dim;
    float sm_scale;
    int32_t reserved;
} tuned_params;

#endif
