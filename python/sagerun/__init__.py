"""sagerun from Python: A/B comparisons of attention kernels from a script, a notebook or a test.

    import numpy as np, sagerun
    q = k = v = np.random.default_rng(0).standard_normal((1, 64, 2, 64)).astype(np.float16)
    def mine(q, k, v, o): ...                    # writes o, or returns an array of o's shape
    r = sagerun.compare("reference", mine, q=q, k=k, v=v, rounds=5)
    r["mine"].byte_exact, r["mine"].interval, r["mine"].verdict
    r.save("r.json")                             # `sagerun show r.json` reads it

The same engine as `sagerun compare` (libsagerun.so, through ctypes), in this process: a crash
in a variant takes the process with it (isolate=True runs named and file variants in the CLI's
contained child). The same module is what Python variant files import (sagerun.Unsupported).
"""

import os

from ._bridge import (Call, Problem, Sage2, Unsupported, bf16_to_float32,  # noqa: F401
                      float32_to_bf16)
from ._callables import Variant  # noqa: F401
from ._lib import SagerunError  # noqa: F401
from .report import Diff, Report, VariantResult, diff, load  # noqa: F401

__all__ = ["compare", "run", "variants", "load", "diff", "Variant", "Report", "VariantResult",
           "Diff", "Unsupported", "SagerunError", "bf16_to_float32", "float32_to_bf16",
           "library_version"]

_FEATURES = ("kv_len", "causal", "align", "window", "softcap")
_MEASURE = ("schedule", "order", "timer", "cache", "batch", "warmup", "rounds", "iterations",
            "min_rounds", "max_rounds", "warmup_time", "max_time", "target_precision",
            "noise_threshold", "expect_sha256", "accuracy_rows", "skip_accuracy", "no_clocks")
_LIMITS = ("max_ulp", "min_cos", "max_rel_l1")
_ENV = {"backend": "auto", "device": None, "plugins": (), "allow_unsafe_plugins": False,
        "progress": None}


def library_version():
    """(the loaded libsagerun's version string, its path)."""
    from . import _lib
    return _lib.text(_lib.lib().sagerun_version_string()), _lib.lib().path


def compare(baseline, *variants, q=None, k=None, v=None, shape=None, workload=None,
            inputs=None, isolate=False, **kw):
    """Compares variants against baseline, as `sagerun compare` does; returns a Report.

    baseline, variants: registered names ("reference", "tuned[block=64]"), .py variant files
    (every variant the file declares), or Python callables fn(q, k, v, o) / sagerun.Variant.
    What runs: q=, k=, v= (numpy float16 arrays, or uint16 bf16 bits, on the host backend: copied;
    torch float16/bfloat16 CUDA tensors: read where they are, no copy; varlen: packed
    [total, H, D] with cu_seqlens_q=, cu_seqlens_kv=;
    paged: k, v the cache [pages, page_size, Hkv, D] with block_table=), else shape=(B, N, H, D)
    (with heads_kv=, dtype=, layout=, seed=, varlen=, page_size=), workload= (a workload file),
    inputs= (a safetensors file), or the default workload. The problem: kv_len=, causal=
    (True, "top-left" or "bottom-right"), align=, window=(left, right), softcap=, sm_scale=.
    Measuring (the CLI's options): schedule=, order=, timer=, cache=, batch=, warmup=, rounds=,
    iterations= (any of these three: schedule "fixed"), min_rounds=, max_rounds=, warmup_time=,
    max_time=, target_precision=, noise_threshold=, expect_sha256=, accuracy_rows=,
    skip_accuracy=, no_clocks=; tolerance: max_ulp=, min_cos=, max_rel_l1= (a number, or
    {label: number}).
    Where: backend= ("auto", "host", "cuda"), device=, plugins= (files or folders to load),
    allow_unsafe_plugins=, progress= (None: a line on stderr when it is a terminal).
    isolate=True runs `sagerun compare` in a child process (named and file variants only).
    Ctrl-C stops the comparison and returns the rounds measured so far (report.complete False).
    """
    unknown = set(kw) - set(_FEATURES) - set(_MEASURE) - set(_LIMITS) - set(_ENV) - {
        "heads_kv", "dtype", "layout", "seed", "varlen", "page_size", "cu_seqlens_q",
        "cu_seqlens_kv", "block_table", "sm_scale"}
    if unknown:
        raise TypeError("compare() got an unexpected keyword argument %r" % sorted(unknown)[0])
    specs = (baseline,) + variants
    measure = {key: kw.pop(key) for key in _MEASURE if key in kw}
    limits = {key: kw.pop(key) for key in _LIMITS if key in kw}
    env = dict(_ENV, **{key: kw.pop(key) for key in _ENV if key in kw})
    env["plugins"] = _paths("plugins", env["plugins"])
    if isolate:
        from . import _isolate
        if q is None:
            _source(q, k, v, shape, workload, inputs, dict(kw))  # the same checks as in-process
        return _isolate.compare(specs, q, shape, workload, inputs, measure, limits, env, kw)
    from . import _compare
    return _compare.run_compare(specs, _source(q, k, v, shape, workload, inputs, kw), measure,
                                limits, env)


def run(variant, **kw):
    """Runs one variant alone (its timing, output hash and accuracy): compare(variant) with no
    other variant. Takes compare()'s keywords; returns a Report of one entry."""
    from . import _compare
    env = dict(_ENV, **{key: kw.pop(key) for key in _ENV if key in kw})
    env["plugins"] = _paths("plugins", env["plugins"])
    measure = {key: kw.pop(key) for key in _MEASURE if key in kw}
    limits = {key: kw.pop(key) for key in _LIMITS if key in kw}
    arrays = {key: kw.pop(key, None) for key in ("q", "k", "v", "shape", "workload", "inputs")}
    source = _source(arrays["q"], arrays["k"], arrays["v"], arrays["shape"], arrays["workload"],
                     arrays["inputs"], kw)
    return _compare.run_compare((variant,), source, measure, limits, env)


def _paths(name, value):
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    out = list(value)
    for p in out:
        if not os.path.exists(p):
            raise FileNotFoundError("%s: %s: no such file or folder" % (name, p))
    return out


def _source(q, k, v, shape, workload, inputs, kw):
    from . import _compare, _inputs
    given = [n for n, x in (("q", q), ("shape", shape), ("workload", workload),
                            ("inputs", inputs)) if x is not None]
    if len(given) > 1:
        raise ValueError("%s: give one of q/k/v, shape, workload, inputs" % " and ".join(given))
    if q is not None or k is not None or v is not None:
        if q is None or k is None or v is None:
            raise ValueError("q, k, v: give all three arrays")
        kv_len = kw.pop("kv_len", None)
        for key in ("heads_kv", "dtype", "seed", "varlen", "page_size"):
            if kw.get(key) is not None:
                raise ValueError("%s=: the arrays say it (give it with shape=)" % key)
        src = _compare.ArraySource((q, k, v), {key: kw[key] for key in kw if key in (
            "layout", "cu_seqlens_q", "cu_seqlens_kv", "block_table", "causal", "align",
            "window", "softcap", "sm_scale")})
        if kv_len is not None:
            src.problem.kv_len = int(kv_len)
        return src
    if workload is not None or inputs is not None:
        path = os.fspath(workload if workload is not None else inputs)
        if not os.path.isfile(path):
            raise FileNotFoundError("%s: %s: no such file"
                                    % ("workload" if workload is not None else "inputs", path))
        if any(kw.get(key) for key in _FEATURES):
            raise ValueError("%s: the file gives the problem; kv_len/causal/window/softcap are "
                             "for shape=" % path)
        return _compare.WorkloadSource(path=path)
    if shape is None:
        return _default_source(kw)
    return _compare.WorkloadSource(json_text=_inputs.workload_from_shape(shape, **kw))


def _default_source(kw):
    """No inputs given: the CLI's default on a GPU is the seed workload; here a small host
    workload is the default, as the CLI's without a GPU."""
    from . import _compare, _inputs
    return _compare.WorkloadSource(json_text=_inputs.workload_from_shape((1, 256, 2, 128), **kw))


def variants(plugins=(), backend="host", allow_unsafe_plugins=False):
    """The registry as `sagerun list` shows it: (a list of dicts, one per variant: name, version,
    description, backend, path, sha256, features (words), flags; a list of (path, reason) of the
    files rejected)."""
    from . import _compare, _lib
    session = _compare.Session(backend, 0, _paths("plugins", plugins), allow_unsafe_plugins)
    try:
        lib, out = _lib.lib(), []
        for info in _compare.registry_infos(session.reg):
            bits = [1 << b for b in range(32) if info.features & (1 << b)]
            out.append({"name": _lib.text(info.name), "version": _lib.text(info.version),
                        "description": _lib.text(info.description),
                        "backend": "cuda" if info.backend == 1 else "host",
                        "path": _lib.text(info.path), "sha256": info.sha256.decode(),
                        "features": [_lib.text(lib.sagerun_feature_name(b)) for b in bits],
                        "flags": info.flags})
        return out, list(_compare.rejections(session.reg))
    finally:
        session.close()
