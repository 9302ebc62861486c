/* The attention mask as plain arithmetic, compiled by the host C compiler and by nvcc: the keys a
 * query row attends under causal, a sliding window and their alignment. It is
 * sagerun_problem_key_range's rule (sagerun.h, problem.c) on plain fields, so that the accuracy
 * reference of the device (compare.cu) and of the host (verify.c) mask as every variant must;
 * test_accuracy checks it against sagerun_problem_key_range over every small case. */
#ifndef SAGERUN_KERNELS_MASK_MATH_H
#define SAGERUN_KERNELS_MASK_MATH_H

#include <stdint.h>

#include "sr_hostdev.h"

/* Keys [*first, *end) that query row i of a sequence of q_len queries and kv_len keys attends
 * (*first == *end: none). align 1 is bottom-right (the diagonal at i + kv_len - q_len), 0
 * top-left (at i); left/right are the window's sides in keys, -1 unbounded, read only where
 * window is set. */
SR_HD void sr_mask_key_range(uint32_t causal, uint32_t align, uint32_t window, int32_t left,
                             int32_t right, uint32_t q_len, uint32_t kv_len, uint32_t i,
                             uint32_t *first, uint32_t *end)
{
    int64_t diag = (int64_t)i + (align == 1 ? (int64_t)kv_len - (int64_t)q_len : 0);
    int64_t lo = 0, hi = kv_len; /* [lo, hi) */
    if (causal && diag + 1 < hi)
        hi = diag + 1;
    if (window && right >= 0 && diag + right + 1 < hi)
        hi = diag + right + 1;
    if (window && left >= 0 && diag - left > lo)
        lo = diag - left;
    if (hi < 0)
        hi = 0;
    if (lo > hi)
        lo = hi;
    *first = (uint32_t)lo;
    *end = (uint32_t)hi;
}

#endif
