"""Python callables as variants, in the caller's process.

libsagerun runs Python variants through its bridge, which reads a .py file's declaration line. A
callable given to compare() gets such a file of its own (one per name and backend, written once
per process in a private folder): its functions look up the callable registered under that name
when they run, so the file, its declaration and the bridge's slot stay the same from one compare
to the next while the callable may change (a notebook cell run again). The bridge, inside a
Python process, runs them in that process's interpreter (embed.c: the package's sagerun._bridge).
"""

import os
import re
import tempfile
import threading

FEATURES = "kv_len,causal-top-left,causal-bottom-right,window,softcap,varlen,paged"

_current = {}
_folder = None
_lock = threading.Lock()


class Variant:
    """A Python variant for compare(): run(call) and optional create/prepare/destroy(call), as a
    variant file's functions (call.q, call.k, call.v, call.o, call.problem, call.state, ...).
    A plain callable fn(q, k, v, o) given to compare() becomes Variant(lambda call: fn(call.q,
    call.k, call.v, call.o), name=fn.__name__). name: the variant's name in the report
    ([a-z0-9._-], at most 63 characters; derived from the function's name when not given)."""

    def __init__(self, run, create=None, prepare=None, destroy=None, name=None):
        for key, fn in (("run", run), ("create", create), ("prepare", prepare),
                        ("destroy", destroy)):
            if fn is not None and not callable(fn):
                raise TypeError("sagerun.Variant: %s= must be callable, got %s"
                                % (key, type(fn).__name__))
        self.run, self.create, self.prepare, self.destroy = run, create, prepare, destroy
        self.name = variant_name(name if name is not None else getattr(run, "__name__", "fn"))

    def __repr__(self):
        return "sagerun.Variant(%s)" % self.name


def variant_name(text):
    """A variant name from a Python name: lower case, '_' as '-', other characters dropped."""
    name = re.sub(r"[^a-z0-9._-]", "", str(text).lower().replace("_", "-"))[:63]
    if not name or name == "lambda":
        name = "py-" + (name or "fn")
    return name


def of(fn):
    """A Variant for what compare() was given as a callable."""
    if isinstance(fn, Variant):
        return fn
    name = getattr(fn, "__name__", "fn")

    def run(call):
        return fn(call.q, call.k, call.v, call.o)
    return Variant(run, name=name)


def hook(name, key):
    """Called by the generated file: the registered variant's function key, or None."""
    variant = _current.get(name)
    if variant is None:
        raise RuntimeError("no Python callable is registered as variant %s in this process"
                           % name)
    return getattr(variant, key)


_TEMPLATE = '''# sagerun-variant: {name} run=run create=create prepare=prepare destroy=destroy \
backend={backend} features={features} description="a Python callable given to sagerun.compare"
# Written by the sagerun package (sagerun/_callables.py): the callable registered as {name}.
from sagerun import _callables


def run(call):
    return _callables.hook("{name}", "run")(call)


def create(call):
    fn = _callables.hook("{name}", "create")
    return fn(call) if fn is not None else None


def prepare(call):
    fn = _callables.hook("{name}", "prepare")
    if fn is not None:
        fn(call)


def destroy(call):
    fn = _callables.hook("{name}", "destroy")
    if fn is not None:
        fn(call)
'''


def register(variant, backend):
    """Registers the variant under its name and returns the path of its declaration file."""
    global _folder
    with _lock:
        if _folder is None:
            _folder = tempfile.mkdtemp(prefix="sagerun-callables-")  # mode 0700
        _current[variant.name] = variant
        path = os.path.join(_folder, "%s.%s.py" % (variant.name, backend))
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(_TEMPLATE.format(name=variant.name, backend=backend, features=FEATURES))
            os.chmod(path, 0o600)
    return path
