# Python variants on the host backend: attention in numpy, two ways.
#
#   numpy-reference  exact attention in double precision in the `reference` variant's order of
#                    operations (each sum taken term by term, libm's exp and tanh, one rounding
#                    to fp16 at the end): byte-exact with `reference`, on every problem sagerun
#                    states: kv_len != seq_len, causal and a sliding window in either alignment
#                    (sagerun.h's sagerun_problem_key_range), softcap, varlen, a paged K/V cache.
#   numpy-f32        the textbook float32 version (matmuls, numpy's exp): not byte-exact, close;
#                    compare judges it with a tolerance (--min-cos, --max-rel-l1, --max-ulp). It
#                    declares no feature: the host gives it the 1.1 problem only.
#
#   sagerun compare --backend host --shape 1,128,2,64 --plugin examples/python/numpy_attention.py \
#       --baseline reference --variant numpy-reference --variant numpy-f32 --min-cos 0.9999
#
# The declarations (one line each; see the README's "Python variants"):
# sagerun-variant: numpy-reference run=reference backend=host dtypes=fp16 features=kv_len,causal-top-left,causal-bottom-right,window,softcap,varlen,paged description="numpy: exact attention in float64, the reference's order of operations"
# sagerun-variant: numpy-f32 run=attention_f32 backend=host dtypes=fp16 description="numpy: attention in float32 (close, not byte-exact)"
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


def key_mask(p, q_len, kv_len):
    """[q_len, kv_len] bool, True where query i does NOT attend key j: sagerun.h's
    sagerun_problem_key_range (the diagonal of row i at i, or at i + kv_len - q_len bottom-right;
    causal keeps keys up to it, a window (left, right) keys within left before and right after
    it, -1 unbounded)."""
    i = np.arange(q_len)[:, None]
    j = np.arange(kv_len)[None, :]
    diag = i + (kv_len - q_len if p.align == "bottom-right" else 0)
    masked = np.zeros((q_len, kv_len), dtype=bool)
    if p.causal:
        masked |= j > diag
    if p.window is not None:
        left, right = p.window
        if right >= 0:
            masked |= j > diag + right
        if left >= 0:
            masked |= j < diag - left
    return masked


def _span(cu, b):
    return slice(int(cu[b]), int(cu[b + 1]))


def _sequences(call):
    """Each sequence as (q [Hq, n, D], k and v [Hkv, m, D], o's [Hq, n, D] view), whatever its
    storage: dense (NHD or HND), packed (varlen), a page cache (paged)."""
    p = call.problem
    for b in range(p.batch):
        if p.varlen:
            q, o = call.q[_span(call.cu_seqlens_q, b)], call.o[_span(call.cu_seqlens_q, b)]
            keys = int(call.cu_seqlens_kv[b + 1] - call.cu_seqlens_kv[b])
        else:
            q, o = _nhd(call.q[b], p.layout), _nhd(call.o[b], p.layout)
            keys = p.kv_len
        if p.page_size:
            j = np.arange(keys)
            pages = call.block_table[b, j // p.page_size]
            k, v = call.k[pages, j % p.page_size], call.v[pages, j % p.page_size]
        elif p.varlen:
            k, v = call.k[_span(call.cu_seqlens_kv, b)], call.v[_span(call.cu_seqlens_kv, b)]
        else:
            k, v = _nhd(call.k[b], p.layout), _nhd(call.v[b], p.layout)
        yield (q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2),
               o.transpose(1, 0, 2))


def _nhd(x, layout):
    """[N, H, D] view of one sequence of a dense tensor."""
    return x.transpose(1, 0, 2) if layout == "HND" else x


def _exact(values, fn):
    """fn (libm's, as the reference calls it) of each element, in double precision."""
    return np.fromiter(map(fn, values.ravel()), float, values.size).reshape(values.shape)


def _attend(p, q, k, v):
    """One sequence: q [Hq, n, D], k, v [Hkv, m, D] (fp16) -> [Hq, n, D] fp16, in the reference's
    order of operations; a row attending no key is 0."""
    group = p.heads_q // p.heads_kv
    if k.shape[1] == 0:  # a sequence without keys
        return np.zeros(q.shape, dtype=np.float16)
    q = q.astype(np.float64)
    k = np.repeat(k, group, axis=0).astype(np.float64)
    v = np.repeat(v, group, axis=0).astype(np.float64)
    n, m = q.shape[1], k.shape[1]
    dot = np.zeros((q.shape[0], n, m))
    for c in range(p.head_dim):  # dot += q[c] * k[c], c = 0, 1, ...: the reference's order
        dot += q[:, :, c, None] * k[:, None, :, c]
    scores = dot * p.sm_scale
    if p.softcap > 0:
        cap = float(np.float32(p.softcap))
        scores = cap * _exact(scores / cap, math.tanh)
    masked = key_mask(p, n, m)
    scores[:, masked] = -math.inf
    empty = masked.all(axis=1)  # rows attending no key (or a sequence without keys)
    scores[:, empty] = 0
    shifted = scores - scores.max(axis=-1, keepdims=True)
    w = _exact(shifted, math.exp)
    w[:, masked] = 0
    total = np.zeros(w.shape[:2])
    acc = np.zeros(q.shape)
    for j in range(m):  # keys in order, as the reference adds them
        total += w[:, :, j]
        acc += w[:, :, j, None] * v[:, j, None, :]
    total[:, empty] = 1
    return (acc / total[..., None]).astype(np.float16)  # double -> fp16, rounded once


def reference(call):
    p = call.problem
    if p.dtype != "fp16":
        raise sagerun.Unsupported("fp16 only (numpy has no bfloat16 arithmetic)")
    for q, k, v, o in _sequences(call):
        if q.shape[1]:
            o[...] = _attend(p, q, k, v)


def attention_f32(call):
    p, q, k, v = _inputs(call, np.float32)
    scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(p.sm_scale)
    if p.causal:
        scores[..., _causal_mask(p.seq_len)] = -np.inf
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = (w @ v) / w.sum(axis=-1, keepdims=True)
    return np.ascontiguousarray(_bhnd(out.astype(np.float16), p.layout))
