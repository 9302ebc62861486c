"""compare(isolate=True): `sagerun compare` in a child process, with its containment (a variant
that crashes or hangs is reported failed, the others measured). What travels is what the command
line can name: registered variants, .py/.so variant files, a shape, a workload or inputs file;
a Python callable or arrays of this process cannot."""

import json
import os
import shutil
import subprocess
import tempfile

from . import _callables, _lib, report as _report

_OPTIONS = {"schedule": "--schedule", "order": "--order", "timer": "--timer", "cache": "--cache",
            "batch": "--batch", "warmup": "--warmup", "rounds": "--rounds",
            "iterations": "--iterations", "min_rounds": "--min-rounds",
            "max_rounds": "--max-rounds", "warmup_time": "--warmup-time",
            "max_time": "--max-time", "target_precision": "--target-precision",
            "noise_threshold": "--noise-threshold", "expect_sha256": "--expect-sha256",
            "accuracy_rows": "--accuracy-rows", "max_ulp": "--max-ulp", "min_cos": "--min-cos",
            "max_rel_l1": "--max-rel-l1", "kv_len": "--kv-len", "window": "--window",
            "align": "--align", "softcap": "--softcap", "varlen": "--varlen",
            "page_size": "--page-size", "layout": "--layout", "dtype": "--dtype",
            "seed": "--seed", "backend": "--backend", "device": "--device"}
_FLAGS = {"skip_accuracy": "--no-accuracy", "no_clocks": "--no-clocks",
          "allow_unsafe_plugins": "--allow-unsafe-plugins"}


def cli():
    """The sagerun command beside the library (<prefix>/bin/sagerun for <prefix>/lib), else
    SAGERUN_CLI, else sagerun on PATH."""
    lib_dir = os.path.dirname(os.path.realpath(_lib.lib().path)) if "/" in _lib.lib().path \
        else None
    for path in (lib_dir and os.path.join(lib_dir, "..", "bin", "sagerun"),
                 os.environ.get("SAGERUN_CLI"), shutil.which("sagerun")):
        if path and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("isolate=True needs the sagerun command: not beside %s, SAGERUN_CLI "
                            "is not set and none is on PATH" % _lib.lib().path)


def _variant_args(specs, plugins):
    from . import variants
    args = []
    for i, spec in enumerate(specs):
        where = "baseline" if i == 0 else "variants[%d]" % (i - 1)
        if isinstance(spec, _callables.Variant) or callable(spec):
            raise TypeError("%s: a Python callable (%s) cannot travel to compare's child "
                            "process (isolate=True): declare it in a .py variant file and give "
                            "the file" % (where, getattr(spec, "__name__", spec)))
        option = "--baseline" if i == 0 else "--variant"
        if isinstance(spec, os.PathLike) or str(spec).endswith((".py", ".so")):
            real = os.path.realpath(spec)
            names = [v["name"] for v in variants(plugins=[spec], allow_unsafe_plugins=True)[0]
                     if os.path.realpath(v["path"]) == real]
            args += ["--plugin", os.fspath(spec)]
            for j, name in enumerate(names):
                args += [option if j == 0 else "--variant", name]
        else:
            args += [option, str(spec)]
    return args


def _value(key, value):
    if key == "window":
        return "%d,%d" % tuple(value)
    return str(value)


def _problem_args(shape, workload, inputs, kw):
    args = []
    if shape is not None:
        args += ["--shape", shape if isinstance(shape, str) else ",".join(map(str, shape))]
    if kw.get("heads_kv") is not None and shape is not None:
        b, n, h, d = (shape.split(",") if isinstance(shape, str) else shape)
        args[-1] = "%s,%s,%s,%d,%s" % (b, n, h, int(kw["heads_kv"]), d)
    if workload is not None:
        args += ["--workload", os.fspath(workload)]
    if inputs is not None:
        args += ["--inputs", os.fspath(inputs)]
    causal = kw.get("causal")
    if causal:
        args.append("--causal" if causal is True else "--causal=%s" % causal)
    return args


def _option_args(measure, limits, env, kw):
    args = []
    for key, value in list(measure.items()) + list(env.items()) + list(kw.items()):
        if value is None or value is False:
            continue
        if key in _FLAGS:
            args.append(_FLAGS[key])
        elif key in _OPTIONS:
            args += [_OPTIONS[key], _value(key, value)]
    for key, value in limits.items():
        specs = value.items() if isinstance(value, dict) else [(None, value)]
        args += [x for label, v in specs if v is not None
                 for x in (_OPTIONS[key], ("%s=%s" % (label, v)) if label else str(v))]
    for path in env.get("plugins", ()):
        args += ["--plugin", os.fspath(path)]
    return args


def compare(specs, q, shape, workload, inputs, measure, limits, env, kw):
    if q is not None:
        raise ValueError("isolate=True: arrays of this process cannot travel to compare's child "
                         "process; give shape=, workload= or inputs= (a safetensors file)")
    env = dict(env, progress=None)
    args = _variant_args(specs, env["plugins"]) + _problem_args(shape, workload, inputs, kw) \
        + _option_args(measure, limits, env, kw)
    with tempfile.TemporaryDirectory(prefix="sagerun-") as folder:
        path = os.path.join(folder, "report.json")
        run = subprocess.run([cli(), "compare", "--quiet", "--json", path] + args,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode not in (0, 3, 5, 130, 143) or not os.path.exists(path):
            raise _lib.SagerunError("exit %d" % run.returncode, "sagerun compare (isolated) "
                                    "failed: %s" % run.stderr.strip())
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return _report.Report(data, _report.show_text(path))
