/* The keys query row i of a sequence attends, for the reference variants (reference_attention.h):
 * sagerun_problem_key_range's rule (sagerun.h, sagerun_mask_align), restated here because a
 * plugin links no library (it is loaded RTLD_LOCAL, linked with --no-undefined, and runs in
 * programs that load libsagerun privately, as Python's ctypes does). test/unit/test_reference.c
 * checks that the two agree on every row of a grid of problems, so there is still one rule.
 * Header-only, needs the plugin ABI 1.2 sagerun_problem (kv_len, align, window). */
#ifndef SAGERUN_REFERENCE_MASK_H
#define SAGERUN_REFERENCE_MASK_H

#include <stdint.h>

#include <sagerun/sagerun.h>

/* [*first, *end) for row i of q_len queries and kv_len keys; *first == *end where it attends
 * none. p is a whole problem (every field present; window_left/right read only with window). */
static inline void reference_key_range(const sagerun_problem *p, uint32_t q_len, uint32_t kv_len,
                                       uint32_t i, uint32_t *first, uint32_t *end)
{
    /* the diagonal key of row i: TOP_LEFT i, BOTTOM_RIGHT i + kv_len - q_len (may be < 0) */
    int64_t diag = (int64_t)i;
    if (p->align == SAGERUN_ALIGN_BOTTOM_RIGHT)
        diag += (int64_t)kv_len - (int64_t)q_len;
    int64_t lo = 0, hi = kv_len;
    if (p->causal && diag + 1 < hi)
        hi = diag + 1;
    if (p->window && p->window_right >= 0 && diag + p->window_right + 1 < hi)
        hi = diag + p->window_right + 1;
    if (p->window && p->window_left >= 0 && diag - p->window_left > lo)
        lo = diag - p->window_left;
    if (hi < 0)
        hi = 0;
    if (lo > hi)
        lo = hi;
    *first = (uint32_t)lo;
    *end = (uint32_t)hi;
}

#endif
