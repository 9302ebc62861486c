"""What a comparison runs on: arrays the caller holds (q=, k=, v=), a shape, a workload file or an
inputs file. Arrays become the problem they describe and are copied into sagerun's inputs; the
others become a workload (workload.h), whose JSON keys are the problem's features."""

import ctypes
import json
import os

from . import _lib

_DTYPES = {"fp16": 0, "bf16": 1}
_LAYOUTS = {"NHD": 0, "HND": 1}


def features_json(kv_len=None, causal=False, align=None, window=None, softcap=None,
                  varlen=None, page_size=None):
    """The problem's features as workload keys (README "Workloads and inputs")."""
    out = {}
    if kv_len is not None:
        out["kv_len"] = int(kv_len)
    if causal:
        out["causal"] = causal if isinstance(causal, str) else True
    if align is not None:
        out["align"] = align
    if window is not None:
        out["window"] = [int(w) for w in window]
    if softcap:
        out["softcap"] = float(softcap)
    if varlen is not None:
        out["varlen"] = varlen
    if page_size:
        out["page_size"] = int(page_size)
    return out


def workload_from_shape(shape, heads_kv=None, dtype="fp16", layout="NHD", seed=None,
                        **features):
    """A synthetic workload (JSON text) of shape (B, N, H, D) or "B,N,H,D"."""
    if isinstance(shape, str):
        shape = shape.split(",")
    try:
        shape = [int(x) for x in shape]
    except (TypeError, ValueError):
        raise ValueError("shape=%r: expected (B, N, H, D) or 'B,N,H,D'" % (shape,)) from None
    if len(shape) != 4:
        raise ValueError("shape=%r: expected 4 numbers (B, N, H, D)" % (shape,))
    doc = {"name": "python", "shape": shape, "dtype": dtype, "layout": layout}
    if heads_kv is not None:
        doc["heads_kv"] = int(heads_kv)
    if seed is not None:
        doc["input"] = {"source": "synthetic", "seed": int(seed)}
    doc.update(features_json(**features))
    return json.dumps(doc)


class Workload:
    """A workload handle (workload.h), destroyed with the object."""

    def __init__(self, json_text=None, path=None):
        self.handle = ctypes.c_void_p()
        if path is not None:
            _lib.call("sagerun_workload_load", os.fsencode(path), ctypes.byref(self.handle))
        else:
            _lib.call("sagerun_workload_parse", json_text.encode(), b"sagerun.compare", None,
                      ctypes.byref(self.handle))

    def close(self):
        if self.handle:
            _lib.lib().sagerun_workload_destroy(self.handle)
            self.handle = ctypes.c_void_p()


# ---- arrays -------------------------------------------------------------------------------------

def _host_array(name, x):
    """(array, dtype word, on CUDA) of a numpy array or a torch tensor: a CUDA tensor as it is
    (sagerun reads its memory: no copy), a CPU tensor as numpy; TypeError naming the argument
    for anything else or a dtype sagerun does not take."""
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "is_cuda"):  # torch
        word = {"torch.float16": "fp16", "torch.bfloat16": "bf16"}.get(str(x.dtype))
        if word is None:
            raise TypeError("%s: dtype %s; sagerun takes float16 or bfloat16" % (name, x.dtype))
        if not x.is_contiguous():
            raise ValueError("%s: the tensor is not contiguous (call .contiguous())" % name)
        if x.is_cuda:
            return x.detach(), word, True
        t = x.detach()
        if word == "bf16":
            import torch
            t = t.view(torch.int16)
        return t.numpy().view(np.uint16 if word == "bf16" else np.float16), word, False
    if not isinstance(x, np.ndarray):
        raise TypeError("%s: expected a numpy array or a torch tensor, got %s"
                        % (name, type(x).__name__))
    word = {"float16": "fp16", "uint16": "bf16"}.get(x.dtype.name)
    if word is None:
        raise TypeError("%s: dtype %s; sagerun takes float16, or uint16 holding bfloat16 bit "
                        "patterns (sagerun.float32_to_bf16)" % (name, x.dtype))
    if not x.flags.c_contiguous:
        raise ValueError("%s: the array is not C-contiguous (numpy.ascontiguousarray)" % name)
    return x, word, False


def _int32(name, x):
    import numpy as np
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    a = np.ascontiguousarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError("%s: expected integers, got %s" % (name, a.dtype))
    return np.ascontiguousarray(a, dtype=np.int32)


def _shape_error(name, got, want):
    raise ValueError("%s: shape %s, expected %s" % (name, tuple(got), want))


def problem_of(q, k, v, layout="NHD", cu_seqlens_q=None, cu_seqlens_kv=None, block_table=None,
               causal=False, align=None, window=None, softcap=None, sm_scale=None):
    """(Problem, Sequences or None, [q, k, v as host arrays], backend word, kept arrays)."""
    arrays = [_host_array(n, x) for n, x in (("q", q), ("k", k), ("v", v))]
    (qa, word, cuda), (ka, kword, kcuda), (va, vword, vcuda) = arrays
    if kword != word or vword != word:
        raise TypeError("k, v: dtypes %s, %s differ from q's %s" % (kword, vword, word))
    if cuda and not (kcuda and vcuda and ka.device == qa.device == va.device):
        raise ValueError("k, v: on %s and %s; q is on %s (one CUDA device for all three)"
                         % (getattr(ka, "device", "the host"), getattr(va, "device", "the host"),
                            qa.device))
    if not cuda and (kcuda or vcuda):
        raise ValueError("q: on the host, k or v on CUDA (one device for all three)")
    if layout not in _LAYOUTS:
        raise ValueError("layout=%r: expected 'NHD' or 'HND'" % (layout,))
    if va.shape != ka.shape:
        _shape_error("v", va.shape, "k's %s" % (tuple(ka.shape),))
    varlen = cu_seqlens_q is not None or cu_seqlens_kv is not None
    kept, seq = [], None
    if varlen:
        p, seq = _varlen_problem(qa, ka, cu_seqlens_q, cu_seqlens_kv, block_table, kept)
    else:
        p, seq = _dense_problem(qa, ka, layout, block_table, kept)
    p.dtype = _DTYPES[word]
    _masks(p, causal, align, window, softcap, sm_scale)
    err = _lib.Error()
    if _lib.lib().sagerun_problem_check(ctypes.byref(p), ctypes.byref(err)) != 0:
        raise ValueError("q, k, v: " + err.message.decode(errors="replace"))
    return p, seq, [qa, ka, va], ("cuda" if cuda else "host"), kept


def _dense_problem(qa, ka, layout, block_table, kept):
    if qa.ndim != 4:
        _shape_error("q", qa.shape, "[B, N, H, D] (layout %s), or [total, H, D] with "
                     "cu_seqlens_q=" % layout)
    B, N, H, D = qa.shape if layout == "NHD" else (qa.shape[0], qa.shape[2], qa.shape[1],
                                                   qa.shape[3])
    if block_table is not None:
        return _paged_problem(qa, ka, block_table, kept)
    if ka.ndim != 4:
        _shape_error("k", ka.shape, "[B, kv_len, Hkv, D]")
    KV, Hkv = (ka.shape[1], ka.shape[2]) if layout == "NHD" else (ka.shape[2], ka.shape[1])
    if ka.shape[0] != B or ka.shape[3] != D:
        _shape_error("k", ka.shape, "batch %d and head_dim %d as q" % (B, D))
    p = _lib.lib().sagerun_problem_make(B, N, H, Hkv, D)
    p.layout, p.kv_len = _LAYOUTS[layout], KV
    return p, None


def _paged_problem(qa, ka, block_table, kept):
    B, N, H, D = qa.shape
    if ka.ndim != 4:
        _shape_error("k", ka.shape, "the page cache [pages, page_size, Hkv, D]")
    table = _int32("block_table", block_table)
    if table.ndim != 2 or table.shape[0] != B:
        _shape_error("block_table", table.shape, "[B=%d, pages_per_seq]" % B)
    pages, page_size, Hkv, _ = ka.shape
    p = _lib.lib().sagerun_problem_make(B, N, H, Hkv, D)
    p.page_size, p.pages, p.pages_per_seq = page_size, pages, table.shape[1]
    p.kv_len = min(N, page_size * table.shape[1]) if N else page_size * table.shape[1]
    kept.append(table)
    seq = _lib.Sequences(ctypes.sizeof(_lib.Sequences), B, None, None, table.ctypes.data)
    return p, seq


def _varlen_problem(qa, ka, cu_q, cu_kv, block_table, kept):
    if cu_q is None or cu_kv is None:
        raise ValueError("cu_seqlens_q, cu_seqlens_kv: a varlen problem needs both")
    if block_table is not None:
        raise ValueError("block_table: give either varlen lengths or a paged cache here")
    cq, ck = _int32("cu_seqlens_q", cu_q), _int32("cu_seqlens_kv", cu_kv)
    if cq.ndim != 1 or cq.shape != ck.shape or cq.shape[0] < 2:
        _shape_error("cu_seqlens_kv", ck.shape, "[B + 1] as cu_seqlens_q %s" % (cq.shape,))
    if qa.ndim != 3 or ka.ndim != 3:
        _shape_error("q" if qa.ndim != 3 else "k", (qa if qa.ndim != 3 else ka).shape,
                     "packed [total, H, D] with cu_seqlens")
    B = cq.shape[0] - 1
    N, KV = int((cq[1:] - cq[:-1]).max()), int((ck[1:] - ck[:-1]).max())
    p = _lib.lib().sagerun_problem_make(B, N, qa.shape[1], ka.shape[1], qa.shape[2])
    p.kv_len, p.varlen, p.total_q, p.total_kv = KV, 1, qa.shape[0], ka.shape[0]
    kept += [cq, ck]
    return p, _lib.Sequences(ctypes.sizeof(_lib.Sequences), B, cq.ctypes.data, ck.ctypes.data,
                             None)


def _masks(p, causal, align, window, softcap, sm_scale):
    aligns = {"top-left": 0, "bottom-right": 1}
    word = causal if isinstance(causal, str) else align
    if word is not None and word not in aligns:
        raise ValueError("causal/align=%r: expected 'top-left' or 'bottom-right'" % (word,))
    p.causal = 1 if causal else 0
    p.align = aligns.get(word, 0)
    if window is not None:
        try:
            p.window, (p.window_left, p.window_right) = 1, (int(w) for w in window)
        except (TypeError, ValueError):
            raise ValueError("window=%r: expected (left, right), -1 unbounded" % (window,)) \
                from None
    p.softcap = float(softcap or 0.0)
    if sm_scale is not None:
        p.sm_scale = float(sm_scale)
