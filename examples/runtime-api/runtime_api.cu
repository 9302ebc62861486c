// A sagerun variant written with the CUDA runtime API: a CUDA C++ kernel launched with
// <<<grid, block, 0, stream>>> on the stream sagerun hands over (plugin ABI 1.1,
// services->cuda_stream). Plain fp16 attention, one thread per query row, online softmax in fp32;
// causal or not, NHD or HND, grouped-query heads.
//
// cudart is linked statically (Makefile: -cudart static): the plugin then needs no libcudart.so of
// a matching version on the machine that loads it, and its runtime is the one it was compiled
// with. That is safe because the runtime shares the driver's primary context, which is the context
// sagerun runs in (plugin.h section 9): the kernel runs in sagerun's context and stream order.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sagerun/plugin.h>

namespace {

constexpr int kMaxHeadDim = 128;
constexpr int kRowsPerCta = 128;

struct Strides {
    long long b, n, h; // elements
};

struct Args {
    const __half *q, *k, *v;
    __half *o;
    Strides qs, ks;
    int seq_len, heads_q, heads_kv, head_dim, causal;
    float sm_scale;
};

Strides strides_of(const sagerun_problem &p, long long heads)
{
    long long N = p.seq_len, D = p.head_dim;
    if (p.layout == SAGERUN_LAYOUT_HND)
        return Strides{heads * N * D, D, N * D};
    return Strides{N * heads * D, heads * D, D};
}

__global__ void attention_rows(const Args a)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int h = blockIdx.y, b = blockIdx.z;
    if (row >= a.seq_len)
        return;
    const int hk = h / (a.heads_q / a.heads_kv);
    const __half *q = a.q + b * a.qs.b + row * a.qs.n + h * a.qs.h;
    const __half *k = a.k + b * a.ks.b + hk * a.ks.h;
    const __half *v = a.v + b * a.ks.b + hk * a.ks.h;
    __half *o = a.o + b * a.qs.b + row * a.qs.n + h * a.qs.h;
    float qf[kMaxHeadDim], acc[kMaxHeadDim];
    for (int c = 0; c < a.head_dim; c++) {
        qf[c] = __half2float(q[c]) * a.sm_scale;
        acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    const int keys = a.causal ? row + 1 : a.seq_len;
    for (int j = 0; j < keys; j++) {
        const __half *kj = k + j * a.ks.n, *vj = v + j * a.ks.n;
        float s = 0.0f;
        for (int c = 0; c < a.head_dim; c++)
            s += qf[c] * __half2float(kj[c]);
        const float m_new = fmaxf(m, s), alpha = __expf(m - m_new), w = __expf(s - m_new);
        l = l * alpha + w;
        for (int c = 0; c < a.head_dim; c++)
            acc[c] = acc[c] * alpha + w * __half2float(vj[c]);
        m = m_new;
    }
    for (int c = 0; c < a.head_dim; c++) // every element of O (plugin.h section 7)
        o[c] = __float2half_rn(acc[c] / l);
}

struct State {
    cudaStream_t stream;
    Args args;
    dim3 grid;
};

int geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err, size_t errlen)
{
    if (p->head_dim > kMaxHeadDim || p->dtype != SAGERUN_DTYPE_F16) {
        snprintf(err, errlen, "needs head_dim <= %d and F16 (got head_dim %u)", kMaxHeadDim,
                 p->head_dim);
        return SAGERUN_UNSUPPORTED;
    }
    g->cta_q = g->warp_q = kRowsPerCta;
    g->cta_k = g->warp_k = 1;
    g->threads_per_cta = kRowsPerCta;
    g->dynamic_shared_memory_bytes = 0;
    g->grid_ctas = (uint64_t)((p->seq_len + kRowsPerCta - 1) / kRowsPerCta) * p->heads_q * p->batch;
    return 0;
}

int create(const sagerun_host_services *s, const sagerun_plugin_inputs *in, void **out, char *err,
           size_t errlen)
{
    void *stream = s->cuda_stream(s->host);
    if (!stream) {
        snprintf(err, errlen, "no CUDA stream: this variant runs on the CUDA backend only");
        return SAGERUN_UNSUPPORTED;
    }
    State *st = static_cast<State *>(calloc(1, sizeof(State)));
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return SAGERUN_OUT_OF_MEMORY;
    }
    const sagerun_problem &p = in->problem;
    st->stream = static_cast<cudaStream_t>(stream);
    Args &a = st->args;
    a.q = reinterpret_cast<const __half *>(in->q);
    a.k = reinterpret_cast<const __half *>(in->k);
    a.v = reinterpret_cast<const __half *>(in->v);
    a.o = reinterpret_cast<__half *>(in->o);
    a.qs = strides_of(p, p.heads_q);
    a.ks = strides_of(p, p.heads_kv);
    a.seq_len = (int)p.seq_len, a.heads_q = (int)p.heads_q, a.heads_kv = (int)p.heads_kv;
    a.head_dim = (int)p.head_dim, a.causal = (int)p.causal;
    a.sm_scale = p.sm_scale > 0 ? p.sm_scale : (float)(1.0 / sqrt((double)p.head_dim));
    st->grid = dim3((p.seq_len + kRowsPerCta - 1) / kRowsPerCta, p.heads_q, p.batch);
    *out = st;
    return 0;
}

// The timed call: one launch on sagerun's stream, nothing else (plugin.h section 6).
int run(void *state, char *err, size_t errlen)
{
    State *st = static_cast<State *>(state);
    attention_rows<<<st->grid, kRowsPerCta, 0, st->stream>>>(st->args);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(err, errlen, "launch: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        return SAGERUN_CUDA;
    }
    return 0;
}

void destroy(void *state) { free(state); }

sagerun_variant_descriptor make_descriptor()
{
    sagerun_variant_descriptor d = {};
    d.struct_size = sizeof d;
    d.abi_major = SAGERUN_PLUGIN_ABI_MAJOR;
    d.name = "runtime-api";
    d.version = "0.1.0";
    d.description = "example: CUDA C++ kernel launched with <<<>>> on sagerun's stream";
    d.backend = SAGERUN_BACKEND_CUDA;
    d.min_compute_capability = 80;
    d.input_kind = SAGERUN_INPUT_FP16;
    d.geometry = geometry;
    d.create = create;
    d.run = run;
    d.destroy = destroy;
    d.flags = SAGERUN_VARIANT_GRAPH_CAPTURABLE; // run is one launch on the given stream
    return d;
}

const sagerun_variant_descriptor descriptor = make_descriptor();

} // namespace

extern "C" {
SAGERUN_PLUGIN_DEFINE_ENTRY(descriptor)
}
