# Python variants on the host backend: attention in numpy, two ways.
#
#   numpy-reference  exact attention in double precision in the `reference` variant's order of
#                    operations (each sum taken term by term, libm's exp, one rounding to fp16 at
#                    the end): byte-exact with `reference`.
#   numpy-f32        the textbook float32 version (matmuls, numpy's exp): not byte-exact, close;
#                    compare judges it with a tolerance (--min-cos, --max-rel-l1, --max-ulp).
#
#   sagerun compare --backend host --shape 1,128,2,64 --plugin examples/python/numpy_attention.py \
#       --baseline reference --variant numpy-reference --variant numpy-f32 --min-cos 0.9999
#
# The declarations (one line each; see the README's "Python variants"):
# sagerun-variant: numpy-reference run=reference backend=host description="numpy: exact attention in float64, the reference's order of operations"
# sagerun-variant: numpy-f32 run=attention_f32 backend=host description="numpy: attention in float32 (close, not byte-exact)"
import math

import numpy as np

import sagerun


def _bhnd(x, layout):
    """[B, H, N, D] view of a tensor of the problem's layout."""
    return x if layout == "HND" else x.transpose(0, 2, 1, 3)


def _inputs(call, dtype):
    p = call.problem
    if p.dtype != "fp16":
        raise sagerun.Unsupported("fp16 only (numpy has no bfloat16 arithmetic)")
    group = p.heads_q // p.heads_kv
    q = _bhnd(call.q, p.layout).astype(dtype)
    k = np.repeat(_bhnd(call.k, p.layout), group, axis=1).astype(dtype)
    v = np.repeat(_bhnd(call.v, p.layout), group, axis=1).astype(dtype)
    return p, q, k, v


def _causal_mask(n):
    return np.triu(np.ones((n, n), dtype=bool), 1)  # key j > query i is masked


def reference(call):
    p, q, k, v = _inputs(call, np.float64)
    n, d = p.seq_len, p.head_dim
    dot = np.zeros(q.shape[:3] + (n,))
    for c in range(d):  # dot += q[c] * k[c], c = 0, 1, ...: the reference's order
        dot += q[..., :, c, None] * k[..., None, :, c]
    scores = dot * p.sm_scale
    if p.causal:
        scores[..., _causal_mask(n)] = -math.inf
    shifted = scores - scores.max(axis=-1, keepdims=True)
    w = np.fromiter(map(math.exp, shifted.ravel()), float, shifted.size).reshape(shifted.shape)
    total = np.zeros(w.shape[:3])
    acc = np.zeros(q.shape)
    for j in range(n):  # keys in order, as the reference adds them
        total += w[..., j]
        acc += w[..., j, None] * v[..., j, None, :]
    out = (acc / total[..., None]).astype(np.float16)  # double -> fp16, rounded once
    _bhnd(call.o, p.layout)[...] = out


def attention_f32(call):
    p, q, k, v = _inputs(call, np.float32)
    scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(p.sm_scale)
    if p.causal:
        scores[..., _causal_mask(p.seq_len)] = -np.inf
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = (w @ v) / w.sum(axis=-1, keepdims=True)
    return np.ascontiguousarray(_bhnd(out.astype(np.float16), p.layout))
