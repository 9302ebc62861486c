"""sagerun's side of a Python variant.

The Python bridge (variants/python/) embeds this module, as `sagerun`, in the interpreter it starts;
in a Python program that imported the sagerun package it is that package's `sagerun._bridge`, whose
names the package re-exports (one Unsupported, whichever way a variant file imports it).
It loads a variant's .py file, gives the variant's functions a Call, makes the views of sagerun's
buffers (numpy arrays on the host backend, torch tensors on CUDA: no copies) and checks what run
returns. A variant's file may `import sagerun` for Unsupported and the bf16 helpers.

The functions bridge/embed.c calls start with an underscore; what a variant author uses does not.
"""

import importlib.util
import os
import sys
import traceback


class Unsupported(Exception):
    """Raise it from create for a problem the variant does not do (a head_dim, a dtype): sagerun
    then reports the variant as not supporting the problem (SAGERUN_UNSUPPORTED)."""


class Problem:
    """The attention call: batch, seq_len, heads_q, heads_kv, head_dim (ints), layout ("NHD":
    [B, N, H, D] or "HND": [B, H, N, D]), dtype ("fp16" or "bf16"), causal (bool), sm_scale (the
    problem's softmax scale, or D**-0.5 computed as 1/sqrt(D) in double precision).

    Beyond one length (plugin ABI 1.2; a variant declares in features= which of these it does):
    kv_len (keys per sequence, = seq_len unless set; varlen: the longest), align ("top-left" or
    "bottom-right": where the causal diagonal and the window sit when a sequence has more or
    fewer keys than queries; sagerun.h's sagerun_mask_align), window (None, or (left, right):
    keys before/after the diagonal, -1 unbounded), softcap (0.0: none, else each logit x becomes
    softcap * tanh(x / softcap)), varlen (bool: Q, K, V, O packed [total, H, D], sequence b's rows
    cu_seqlens[b] .. cu_seqlens[b + 1] - 1), total_q, total_kv (varlen: the packed rows),
    page_size, pages, pages_per_seq (page_size > 0: K and V are a page cache [pages, page_size,
    Hkv, D], sequence b's key j in page block_table[b, j // page_size], row j % page_size)."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def shape(self, heads):
        """A dense [B, N, H, D] (or HND) tensor of seq_len rows: q/o (heads_q), or k/v (heads_kv)
        where kv_len = seq_len."""
        return self._dense(heads, self.seq_len)

    def _dense(self, heads, rows):
        if self.layout == "HND":
            return (self.batch, heads, rows, self.head_dim)
        return (self.batch, rows, heads, self.head_dim)

    def q_shape(self):
        """q and o as stored: [total_q, Hq, D] varlen, else [B, seq_len, Hq, D] (or HND)."""
        if getattr(self, "varlen", False):
            return (self.total_q, self.heads_q, self.head_dim)
        return self._dense(self.heads_q, self.seq_len)

    def kv_shape(self):
        """k and v as stored: [pages, page_size, Hkv, D] paged, [total_kv, Hkv, D] varlen, else
        [B, kv_len, Hkv, D] (or HND)."""
        if getattr(self, "page_size", 0):
            return (self.pages, self.page_size, self.heads_kv, self.head_dim)
        if getattr(self, "varlen", False):
            return (self.total_kv, self.heads_kv, self.head_dim)
        return self._dense(self.heads_kv, getattr(self, "kv_len", self.seq_len))

    def __repr__(self):
        return "Problem(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.__dict__.items()))


class Sage2:
    """The sage2 quantizer's tensors (input=sage2), set before prepare: q_int8 and k_int8 (int8,
    the layout of q and k), q_scale [B, Hq, q_scale_per_head] and k_scale [B, Hkv,
    k_scale_per_head] (float32), v_fp8 ([B, D, Hkv, v_len] for NHD, [B, Hkv, D, v_len] for HND;
    float8_e4m3fn on CUDA, its bytes as uint8 on the host), v_scale [B, Hkv, D] (float32), k_mean
    ([B, 1, Hkv, D] or [B, Hkv, 1, D], the problem's dtype), and the granularities q_group_rows,
    q_block_rows, k_block_rows, v_pad_rows, v_range."""

    def __init__(self, fields):
        self.__dict__.update(fields)


class Call:
    """What every function of a variant receives.

    q, k, v, o   the problem's tensors in its dtype and layout: numpy arrays on the host backend
                 (bf16 as uint16 bit patterns: see bf16_to_float32), torch tensors on CUDA; views
                 of sagerun's memory. q, k, v must not be written. run writes every element of o,
                 or returns an array/tensor of o's shape and dtype that sagerun copies into o.
                 Their shapes are as stored (Problem.q_shape, kv_shape): dense k and v have
                 kv_len rows, varlen tensors are packed [total, H, D], paged k and v the cache.
    cu_seqlens_q, cu_seqlens_kv   varlen: int32 [B + 1] prefix sums (numpy on the host, torch
                 on CUDA, views of sagerun's memory like q); None otherwise
    block_table  paged: int32 [B, pages_per_seq]; None otherwise
    problem      a Problem; params: the declared parameters' values by key
    sage2        a Sage2 (input=sage2; from prepare on), else None
    stream       CUDA: sagerun's stream as a torch.cuda.ExternalStream, current while run runs
    device       dict: name, compute_capability, sm_count, ... (zeros on the host)
    extension    the declared extension module's path, or None
    state        what create returned (None without create)
    name, backend
    """

    def __init__(self, spec):
        self.name = spec["name"]
        self.backend = spec["backend"]
        self.problem = Problem(spec["problem"])
        self.params = dict(spec["params"])
        self.device = dict(spec["device"])
        self.extension = spec["extension"]
        self.sage2 = None
        self.stream = None
        self.state = None
        self.cu_seqlens_q = self.cu_seqlens_kv = self.block_table = None
        self._torch = None

    def __repr__(self):
        return "sagerun.Call(%s, %s, %r)" % (self.name, self.backend, self.problem)


# ---- bf16 on the host (numpy has no bfloat16) ----------------------------------------------------

def bf16_to_float32(bits):
    """uint16 bf16 bit patterns -> float32 array (exact)."""
    import numpy as np
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bf16(values):
    """float32 -> uint16 bf16 bit patterns, rounded to nearest even (NaN stays NaN)."""
    import numpy as np
    x = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded)


# ---- views of sagerun's buffers --------------------------------------------------------------------

# element kind -> (numpy dtype name, CUDA array interface typestr, torch dtype name)
_KINDS = {
    "fp16": ("float16", "<f2", "float16"),
    "bf16": ("uint16", "<i2", "bfloat16"),
    "i8": ("int8", "|i1", "int8"),
    "fp8": ("uint8", "|u1", "float8_e4m3fn"),
    "f32": ("float32", "<f4", "float32"),
    "i32": ("int32", "<i4", "int32"),
}


class _CudaBuffer:
    """Device memory as the CUDA array interface (version 2: no stream, no synchronisation)."""

    def __init__(self, addr, shape, typestr):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (addr, False), "version": 2, "strides": None}


def _view(call, buf, shape, kind):
    np_name, typestr, torch_name = _KINDS[kind]
    if call._torch is None:
        import numpy as np
        return np.frombuffer(buf, dtype=np_name).reshape(shape)
    torch = call._torch
    t = torch.as_tensor(_CudaBuffer(buf, shape, typestr))
    if t.data_ptr() != buf:
        raise RuntimeError("torch copied sagerun's buffer instead of viewing it")
    return t if torch_name in ("float16", "int8", "float32", "int32") \
        else t.view(getattr(torch, torch_name))


# ---- the variant's module ----------------------------------------------------------------------

_modules = {}


def _load(script):
    module = _modules.get(script)
    if module is not None:
        return module
    folder = os.path.dirname(script)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python script.py` would: its neighbours import
    stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(script))[0])
    name = "sagerun_variant_%d_%s" % (len(_modules), stem)
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    _modules[script] = module
    return module


def _function(module, spec, key):
    name = spec["functions"][key]
    if not name:
        return None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise AttributeError("%s has no function %s() (declared by %s=%s on line %d)"
                             % (spec["script"], name, key, name, spec["line"]))
    return fn


# ---- the calls bridge/embed.c makes ----------------------------------------------------------------

def _create(spec):
    module = _load(spec["script"])
    call = Call(spec)
    call._run = _function(module, spec, "run")
    call._prepare = _function(module, spec, "prepare")
    call._destroy = _function(module, spec, "destroy")
    create = _function(module, spec, "create")
    p, b = call.problem, spec["buffers"]
    if spec["backend"] == "cuda":
        import torch
        call._torch = torch
    call.q = _view(call, b["q"], p.q_shape(), p.dtype)
    call.k = _view(call, b["k"], p.kv_shape(), p.dtype)
    call.v = _view(call, b["v"], p.kv_shape(), p.dtype)
    call.o = _view(call, b["o"], p.q_shape(), p.dtype)
    _sequences(call, b)
    if call._torch is not None:
        call._torch.cuda.set_device(call.o.device)
        call.stream = call._torch.cuda.ExternalStream(spec["stream"], device=call.o.device)
    if create is not None:
        call.state = _in_stream(call, create)
    return call


def _sequences(call, b):
    """cu_seqlens_q / _kv and block_table: int32 views where the problem has them, else None."""
    p = call.problem
    shapes = {"cu_seqlens_q": (p.batch + 1,), "cu_seqlens_kv": (p.batch + 1,),
              "block_table": (p.batch, getattr(p, "pages_per_seq", 0))}
    for key, shape in shapes.items():
        addr = b.get(key)
        setattr(call, key, None if addr is None else _view(call, addr, shape, "i32"))


def _sage2(call, t):
    p = call.problem
    B, Hq, Hkv, D, L = p.batch, p.heads_q, p.heads_kv, p.head_dim, t["v_len"]
    v_shape = (B, Hkv, D, L) if p.layout == "HND" else (B, D, Hkv, L)
    mean_shape = (B, Hkv, 1, D) if p.layout == "HND" else (B, 1, Hkv, D)
    fields = {k: t[k] for k in ("q_scale_per_head", "k_scale_per_head", "v_len", "q_group_rows",
                                "q_block_rows", "k_block_rows", "v_pad_rows", "v_range")}
    fields.update(
        q_int8=_view(call, t["q_int8"], p.shape(Hq), "i8"),
        k_int8=_view(call, t["k_int8"], p.kv_shape(), "i8"),
        q_scale=_view(call, t["q_scale"], (B, Hq, t["q_scale_per_head"]), "f32"),
        k_scale=_view(call, t["k_scale"], (B, Hkv, t["k_scale_per_head"]), "f32"),
        v_fp8=_view(call, t["v_fp8"], v_shape, "fp8"),
        v_scale=_view(call, t["v_scale"], (B, Hkv, D), "f32"),
        k_mean=_view(call, t["k_mean"], mean_shape, p.dtype))
    return Sage2(fields)


def _prepare(call, sage2):
    if sage2 is not None and call.sage2 is None:
        call.sage2 = _sage2(call, sage2)
    if call._prepare is not None:
        _in_stream(call, call._prepare)


def _in_stream(call, fn):
    if call._torch is None:
        return fn(call)
    with call._torch.cuda.stream(call.stream):
        return fn(call)


def _store(call, result):
    o = call.o
    shape, dtype = getattr(result, "shape", None), getattr(result, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError("run returned %s: expected None (o written in place) or an array of o's "
                        "shape and dtype" % type(result).__name__)
    if tuple(shape) != tuple(o.shape):
        raise ValueError("run returned shape %s, o has shape %s" % (tuple(shape), tuple(o.shape)))
    if dtype != o.dtype:
        raise TypeError("run returned %s, o is %s (sagerun does not convert)" % (dtype, o.dtype))
    if call._torch is None:
        if result is not o:
            import numpy as np
            np.copyto(o, result)
    elif result.data_ptr() != o.data_ptr():
        if result.device != o.device:
            raise ValueError("run returned a tensor on %s, o is on %s" % (result.device, o.device))
        o.copy_(result)


def _run(call):
    if call._torch is None:
        result = call._run(call)
        if result is not None:
            _store(call, result)
        return
    with call._torch.cuda.stream(call.stream):
        result = call._run(call)
        if result is not None:
            _store(call, result)


def _destroy(call):
    if call._destroy is not None:
        _in_stream(call, call._destroy)


def _describe(exc):
    """(one line: "Type: message (at FILE:LINE, in FUNCTION)", the traceback, whether it is
    Unsupported). The place is the innermost frame outside this module: the variant's own code
    (the line named neither the file nor the line, but a syntax error's)."""
    line = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
    own = globals().get("__file__", "<sagerun>/sagerun.py")  # embed.c compiles it by that name
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename != own and not f.filename.startswith("<frozen ")]
    if frames and not isinstance(exc, SyntaxError):
        line += " (at %s:%d, in %s)" % (frames[-1].filename, frames[-1].lineno, frames[-1].name)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return line, text, isinstance(exc, Unsupported)


def _start(path):
    """The interpreter's setup: the path of the interpreter sagerun was asked for, prints to
    stderr (sagerun's stdout carries its results), and os._exit refused in sagerun's process."""
    sys.path[:] = [p for p in path if p]
    sys.stdout = sys.stderr
    os._exit = _exit_guard(os._exit, os.getpid())


def _exit_guard(real_exit, pid):
    """os._exit from a variant ended sagerun's process with the variant's status: `sagerun run`
    then exited 0 with no output. In sagerun's process it raises instead (the call fails with
    the reason); a process the variant forked (multiprocessing's children) still exits."""
    def _exit(status):
        if os.getpid() != pid:
            real_exit(status)
        raise RuntimeError("os._exit(%r) in a variant: a variant returns or raises; it does not "
                           "end sagerun's process" % (status,))
    return _exit
