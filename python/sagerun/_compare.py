"""compare() in the caller's process: a context, a registry, the inputs, the comparison engine
(sagerun_compare_run), the report; Ctrl-C stops it with the rounds measured so far."""

import contextlib
import ctypes
import os
import signal
import sys
import threading

from . import _callables, _inputs, _lib, report as _report

# keyword -> (options field, sagerun_compare_option_parse field or a converter)
_WORDS = {"schedule": "schedule", "order": "order", "timer": "timer", "cache": "cache"}
_NUMBERS = {"warmup": ("warmup", int), "rounds": ("rounds", int),
            "iterations": ("iterations", int), "batch": ("batch", int),
            "min_rounds": ("min_rounds", int), "max_rounds": ("max_rounds", int),
            "warmup_time": ("warmup_s", float), "max_time": ("max_time_s", float),
            "target_precision": ("target_precision_percent", float),
            "noise_threshold": ("noise_threshold_percent", float),
            "accuracy_rows": ("accuracy_rows", int)}
_TOLERANCES = {"max_ulp": 0, "min_cos": 1, "max_rel_l1": 2}
_BACKENDS = {"host": 0, "cuda": 1}


def options(measure):
    """sagerun_compare_options from the keywords (the CLI's options, spelled in Python). Giving
    warmup, rounds or iterations implies schedule "fixed", as on the command line."""
    opts = _lib.CompareOptions()
    _lib.lib().sagerun_compare_options_init(ctypes.byref(opts))
    if any(measure.get(k) is not None for k in ("warmup", "rounds", "iterations")) \
            and measure.get("schedule") is None:
        measure = dict(measure, schedule="fixed")
    for key, value in measure.items():
        if value is None:
            continue
        if key in _WORDS:
            code = _lib.lib().sagerun_compare_option_parse(_WORDS[key].encode(),
                                                           str(value).encode())
            if code < 0:
                raise ValueError("%s=%r: not a %s word" % (key, value, key))
            setattr(opts, key, code)
        elif key in _NUMBERS:
            field, kind = _NUMBERS[key]
            try:
                number = kind(value)
            except (TypeError, ValueError):
                raise TypeError("%s=%r: expected a number" % (key, value)) from None
            if number < 0:
                raise ValueError("%s=%r: must not be negative" % (key, value))
            setattr(opts, field, number)
        elif key == "expect_sha256":
            opts.expect_sha256 = str(value).encode()
        elif key in ("skip_accuracy", "no_clocks"):
            opts.flags |= (0x1 if key == "skip_accuracy" else 0x2) if value else 0
        else:
            raise TypeError("compare() got an unexpected keyword argument %r" % key)
    return opts


def tolerance(limits):
    """A sagerun_tolerance of max_ulp=, min_cos=, max_rel_l1= (a number for every variant, or
    {label: number}), or None."""
    handle = None
    for key, value in limits.items():
        if value is None:
            continue
        if handle is None:
            handle = ctypes.c_void_p()
            _lib.call("sagerun_tolerance_create", ctypes.byref(handle))
        specs = value.items() if isinstance(value, dict) else [(None, value)]
        for label, number in specs:
            spec = "%s=%s" % (label, number) if label else str(number)
            try:
                _lib.call("sagerun_tolerance_add", handle, _TOLERANCES[key], spec.encode())
            except _lib.SagerunError as exc:
                _lib.lib().sagerun_tolerance_destroy(handle)
                raise ValueError("%s=%r: %s" % (key, value, exc)) from None
    return handle


class _Stop:
    """Ctrl-C during a comparison: the engine is asked to stop (hooks.interrupted) and returns
    the rounds finished, marked incomplete. Python's own handler is put back afterwards."""

    def __init__(self):
        self.stopped = False
        self.fn = _lib.INTERRUPTED_FN(lambda user: 1 if self.stopped else 0)
        self.hooks = _lib.Hooks(struct_size=ctypes.sizeof(_lib.Hooks), interrupted=self.fn)

    @contextlib.contextmanager
    def installed(self):
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _on_sigint(self, signum, frame):
        self.stopped = True


class _Progress:
    """A progress line on stderr where it is a terminal (progress=None), always (True) or never
    (False)."""

    def __init__(self, wanted):
        self.on = sys.stderr.isatty() if wanted is None else bool(wanted)
        self.fn = _lib.PROGRESS_FN(self._show)
        self.shown = False

    def _show(self, user, phase, variant, step, steps):
        what = "%s %s" % (phase.decode(), variant.decode() if variant else "")
        sys.stderr.write("\r\x1b[Ksagerun: %s %d/%d" % (what.strip(), step, steps))
        sys.stderr.flush()
        self.shown = True

    def done(self):
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


class Session:
    """The handles of one comparison, released in order on close."""

    def __init__(self, backend, device, plugins, allow_unsafe):
        self.ctx, self.reg = ctypes.c_void_p(), ctypes.c_void_p()
        self.inputs, self.result, self.workload, self.tol = None, None, None, None
        self.backend = self._context(backend, device)
        try:
            _lib.call("sagerun_registry_create", self.ctx, ctypes.byref(self.reg))
            _lib.lib().sagerun_registry_allow_unsafe(self.reg, 1 if allow_unsafe else 0)
            _lib.call("sagerun_registry_add_default_paths", self.reg)
            for path in plugins:
                self.add_path(path)
        except BaseException:
            self.close()
            raise

    def _context(self, backend, device):
        if backend not in ("auto", "host", "cuda"):
            raise ValueError("backend=%r: expected 'auto', 'host' or 'cuda'" % (backend,))
        for word in (("cuda", "host") if backend == "auto" else (backend,)):
            try:
                _lib.call("sagerun_context_create", _BACKENDS[word], int(device),
                          ctypes.byref(self.ctx))
                return word
            except _lib.SagerunError as exc:
                if backend != "auto" or word == "host":
                    raise
                sys.stderr.write("sagerun: no CUDA (%s): the host backend\n" % exc)
        raise AssertionError("unreachable")

    def add_path(self, path):
        _lib.call("sagerun_registry_add_path", self.reg, os.fsencode(os.fspath(path)))

    def labels_of_file(self, path):
        """The variants a .py (or .so) file declares, by its real path."""
        real, out = os.path.realpath(path), []
        for info in registry_infos(self.reg):
            if info.path and os.path.realpath(_lib.text(info.path)) == real:
                out.append(_lib.text(info.name))
        if not out:
            reasons = [r for p, r in rejections(self.reg) if os.path.realpath(p) == real]
            raise ValueError("%s: no variant loaded from it%s" % (
                path, ": " + "; ".join(reasons) if reasons else ""))
        return out

    def bind(self, spec):
        index = ctypes.c_long(-1)
        try:
            _lib.call("sagerun_registry_bind", self.reg, spec.encode(), ctypes.byref(index))
        except _lib.SagerunError as exc:
            raise ValueError("variant %r: %s" % (spec, exc)) from None
        return spec

    def close(self):
        lib = _lib.lib()
        if self.tol:
            lib.sagerun_tolerance_destroy(self.tol)
        if self.result:
            lib.sagerun_compare_result_destroy(self.result)
        if self.inputs:
            lib.sagerun_inputs_destroy(self.inputs)
        if self.workload:
            self.workload.close()
        if self.reg:
            lib.sagerun_registry_destroy(self.reg)
        if self.ctx:
            lib.sagerun_context_destroy(self.ctx)
        self.tol = self.result = self.inputs = self.workload = None
        self.reg = self.ctx = None


def registry_infos(reg):
    lib = _lib.lib()
    for i in range(lib.sagerun_registry_variant_count(reg)):
        info = _lib.VariantInfo(struct_size=ctypes.sizeof(_lib.VariantInfo))
        _lib.call("sagerun_registry_variant_info", reg, i, ctypes.byref(info))
        yield info


def rejections(reg):
    lib = _lib.lib()
    for i in range(lib.sagerun_registry_rejection_count(reg)):
        r = _lib.Rejection(struct_size=ctypes.sizeof(_lib.Rejection))
        _lib.call("sagerun_registry_rejection", reg, i, ctypes.byref(r))
        yield _lib.text(r.path), _lib.text(r.reason)


def labels(session, specs):
    """The labels of what compare() was given: names (bound where they carry [key=value]),
    the variants of .py/.so files, callables (registered as Python variants of this process)."""
    out = []
    for i, spec in enumerate(specs):
        where = "baseline" if i == 0 else "variants[%d]" % (i - 1)
        if isinstance(spec, (_callables.Variant,)) or callable(spec):
            variant = _callables.of(spec)
            session.add_path(_callables.register(variant, session.backend))
            out.append(variant.name)
        elif isinstance(spec, os.PathLike) or (isinstance(spec, str) and
                                               spec.endswith((".py", ".so"))):
            if not os.path.isfile(spec):
                raise FileNotFoundError("%s: %s: no such variant file" % (where, spec))
            session.add_path(spec)
            out.extend(session.labels_of_file(spec))
        elif isinstance(spec, str):
            out.append(session.bind(spec))
        else:
            raise TypeError("%s: expected a variant name, a .py file or a callable, got %s"
                            % (where, type(spec).__name__))
    if len(set(out)) != len(out):
        raise ValueError("variants: a variant is named twice (%s)" % ", ".join(out))
    return out


class ArraySource:
    """q, k, v the caller holds: copied into sagerun's inputs (sagerun_compare_run)."""

    def __init__(self, arrays, problem_kw):
        self.problem, self.seq, self.hosts, self.backend, self.kept = _inputs.problem_of(
            *arrays, **problem_kw)

    @property
    def device(self):
        return (self.hosts[0].device.index or 0) if self.backend == "cuda" else 0

    def run(self, session, opts, result):
        """Copies numpy arrays into sagerun's inputs; reads CUDA tensors where they are."""
        session.inputs = ctypes.c_void_p()
        seq = ctypes.byref(self.seq) if self.seq is not None else None
        if self.backend == "cuda":
            if session.backend != "cuda":
                raise ValueError("q, k, v: CUDA tensors, backend=%r" % session.backend)
            import torch
            torch.cuda.synchronize(self.hosts[0].device)  # their writers, on torch's streams
            _lib.call("sagerun_inputs_create_from_device_seq", session.ctx,
                      ctypes.byref(self.problem), seq, *[t.data_ptr() for t in self.hosts],
                      ctypes.byref(session.inputs))
        else:
            _lib.call("sagerun_inputs_create_from_host_seq", session.ctx,
                      ctypes.byref(self.problem), seq, *[a.ctypes.data for a in self.hosts],
                      ctypes.byref(session.inputs))
        _lib.call("sagerun_compare_run", session.reg, session.ctx, session.inputs,
                  ctypes.byref(opts), ctypes.byref(result))


class WorkloadSource:
    """A shape with the problem's features, a workload file or an inputs file
    (sagerun_compare_run_workload: the memory check comes before the inputs exist)."""
    backend = "auto"

    def __init__(self, json_text=None, path=None):
        self.json_text, self.path = json_text, path

    def run(self, session, opts, result):
        session.workload = _inputs.Workload(self.json_text, self.path)
        _lib.call("sagerun_compare_run_workload", session.reg, session.ctx,
                  session.workload.handle, ctypes.byref(opts), ctypes.byref(result))


def run_compare(specs, source, measure, limits, env):
    """One comparison in this process; env: backend, device, plugins, allow_unsafe_plugins,
    progress."""
    backend = env["backend"] if env["backend"] != "auto" else source.backend
    device = env["device"] if env["device"] is not None else getattr(source, "device", 0)
    session = Session(backend, device, env["plugins"], env["allow_unsafe_plugins"])
    try:
        names = labels(session, specs)
        opts = options(measure)
        rest = [n.encode() for n in names[1:]]
        array = (ctypes.c_char_p * max(1, len(rest)))(*rest)
        opts.baseline, opts.variants, opts.variant_count = names[0].encode(), array, len(rest)
        stop, progress = _Stop(), _Progress(env["progress"])
        opts.hooks = ctypes.pointer(stop.hooks)
        if progress.on:
            opts.progress = progress.fn
        session.tol = tolerance(limits)
        result = ctypes.c_void_p()
        with stop.installed():
            try:
                source.run(session, opts, result)
            finally:
                progress.done()
        session.result = result
        _lib.lib().sagerun_compare_result_apply_tolerance(result, session.tol)
        return _report.from_result(result)
    finally:
        session.close()
