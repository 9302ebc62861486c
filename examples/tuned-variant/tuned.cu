// The GPU side of the tuned example: the template's kernel (one thread per query row, online
// softmax in fp32); its block size is the tuning axis, chosen at launch. Every value computes the
// same bytes, so the variants of one sweep are byte-exact with each other.
#include <cuda_fp16.h>
#include <stdint.h>

#include "tuned_params.h"

#define MAX_D 128

extern "C" __global__ void tuned_attention(const tuned_params p)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x; // query row n
    const int h = blockIdx.y, b = blockIdx.z;
    if (row >= p.seq_len)
        return;
    const int hk = h / (p.heads_q / p.heads_kv); // grouped-query attention
    const __half *q = (const __half *)p.q + b * p.q_stride_b + row * p.q_stride_n + h * p.q_stride_h;
    const __half *k = (const __half *)p.k + b * p.k_stride_b + hk * p.k_stride_h;
    const __half *v = (const __half *)p.v + b * p.k_stride_b + hk * p.k_stride_h;
    __half *o = (__half *)p.o + b * p.q_stride_b + row * p.q_stride_n + h * p.q_stride_h;

    float qf[MAX_D], acc[MAX_D];
    for (int c = 0; c < p.head_dim; c++) {
        qf[c] = __half2float(q[c]) * p.sm_scale;
        acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f; // running max and denominator
    for (int j = 0; j < p.seq_len; j++) {
        const __half *kj = k + j * p.k_stride_n, *vj = v + j * p.k_stride_n;
        float s = 0.0f;
        for (int c = 0; c < p.head_dim; c++)
            s += qf[c] * __half2float(kj[c]);
        float m_new = fmaxf(m, s);
        float alpha = __expf(m - m_new), w = __expf(s - m_new);
        l = l * alpha + w;
        for (int c = 0; c < p.head_dim; c++)
            acc[c] = acc[c] * alpha + w * __half2float(vj[c]);
        m = m_new;
    }
    for (int c = 0; c < p.head_dim; c++)
        o[c] = __float2half_rn(acc[c] / l);
}
