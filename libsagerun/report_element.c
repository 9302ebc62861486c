/* Where an element of a variant's output lies, in the terms of its layout: the byte difference
 * counts elements of O flat, and "first at 123456789" told nobody which query, head or channel. */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

/* The sequence of packed token t (cu: [count + 1] prefix sums), count when past the last. */
static uint32_t sequence_of(const int32_t *cu, uint32_t count, uint64_t t)
{
    uint32_t lo = 0, hi = count;
    while (lo < hi) { /* the last sequence whose start is at or before t */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if ((uint64_t)cu[mid] <= t && mid < count)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void sr_report_format_element(const sr_report *r, uint64_t index, char *buf, size_t len)
{
    const sagerun_problem *p = &r->problem;
    bool problem = r->has_problem && p->head_dim && p->heads_q && p->seq_len;
    if (!problem && r->q_shape_len != 4) {
        snprintf(buf, len, "element %" PRIu64, index);
        return;
    }
    uint64_t D = problem ? p->head_dim : r->q_shape[3], H = problem ? p->heads_q : r->q_shape[2],
             N = problem ? p->seq_len : r->q_shape[1];
    uint64_t d = index % D, row = index / D;
    if (problem && p->varlen) { /* packed [tokens, Hq, D] */
        uint64_t t = row / H, h = row % H;
        if (!r->cu_seqlens_q) {
            snprintf(buf, len, "token %" PRIu64 ", h %" PRIu64 ", d %" PRIu64, t, h, d);
            return;
        }
        uint32_t s = sequence_of(r->cu_seqlens_q, p->batch, t);
        snprintf(buf, len, "token %" PRIu64 " (sequence %u, its query %" PRIu64 "), h %" PRIu64
                 ", d %" PRIu64, t, s, t - (uint64_t)r->cu_seqlens_q[s], h, d);
    } else if (problem && p->layout == SAGERUN_LAYOUT_HND) { /* [B, Hq, N, D] */
        snprintf(buf, len, "b %" PRIu64 ", h %" PRIu64 ", n %" PRIu64 ", d %" PRIu64,
                 row / N / H, row / N % H, row % N, d);
    } else { /* [B, N, Hq, D] */
        snprintf(buf, len, "b %" PRIu64 ", n %" PRIu64 ", h %" PRIu64 ", d %" PRIu64,
                 row / H / N, row / H % N, row % H, d);
    }
}
