"""libsagerun.so through ctypes: finding the library, its version, the C structs the package uses.

ctypes rather than cffi or an extension module: it is in every CPython, so the package has no build
step and installs offline (`pip install ./python`), and one install works with any libsagerun of
the same ABI. The structs below mirror include/sagerun/*.h; each starts with struct_size, so the
library reads only what this mirror covers.
"""

import ctypes
import os

from . import _build_info

c_u32, c_i32, c_f32, c_f64, c_size = (ctypes.c_uint32, ctypes.c_int32, ctypes.c_float,
                                      ctypes.c_double, ctypes.c_size_t)
c_str, c_void = ctypes.c_char_p, ctypes.c_void_p


class SagerunError(RuntimeError):
    """A libsagerun call failed: status (the sagerun_status name) and the library's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class Problem(ctypes.Structure):
    _fields_ = [(n, c_u32) for n in ("struct_size", "batch", "seq_len", "heads_q", "heads_kv",
                                     "head_dim", "layout", "dtype", "causal")] + [
        ("sm_scale", c_f32), ("kv_len", c_u32), ("align", c_u32), ("window", c_u32),
        ("window_left", c_i32), ("window_right", c_i32), ("softcap", c_f32)] + [
        (n, c_u32) for n in ("varlen", "total_q", "total_kv", "page_size", "pages",
                             "pages_per_seq")]


class Sequences(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("count", c_u32), ("cu_seqlens_q", c_void),
                ("cu_seqlens_kv", c_void), ("block_table", c_void)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void, c_str, c_str, c_u32, c_u32)
INTERRUPTED_FN = ctypes.CFUNCTYPE(ctypes.c_int, c_void)


class Hooks(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("reserved", c_u32), ("call", c_void),
                ("call_user", c_void), ("interrupted", INTERRUPTED_FN),
                ("interrupted_user", c_void), ("skip_labels", c_void), ("skip_phases", c_void),
                ("skip_reasons", c_void), ("skip_count", c_size)]


class CompareOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("warmup", c_u32), ("rounds", c_u32),
                ("iterations", c_u32), ("noise_threshold_percent", c_f64), ("baseline", c_str),
                ("variants", ctypes.POINTER(c_str)), ("variant_count", c_size),
                ("expect_sha256", c_str), ("accuracy_rows", c_u32), ("flags", c_u32),
                ("progress", PROGRESS_FN), ("progress_user", c_void),
                ("hooks", ctypes.POINTER(Hooks))] + [
        (n, c_u32) for n in ("schedule", "order", "timer", "cache", "batch", "min_rounds",
                             "max_rounds", "reserved0")] + [
        ("warmup_s", c_f64), ("max_time_s", c_f64), ("target_precision_percent", c_f64)]


class VariantInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("name", c_str), ("version", c_str),
                ("description", c_str), ("backend", ctypes.c_int),
                ("min_compute_capability", ctypes.c_int), ("input_kind", ctypes.c_int),
                ("path", c_str), ("sha256", ctypes.c_char * 65), ("base_name", c_str),
                ("n_params", c_u32), ("flags", c_u32), ("extension_path", c_str),
                ("extension_sha256", ctypes.c_char * 65), ("features", c_u32), ("dtypes", c_u32),
                ("n_head_dims", c_u32), ("head_dims", ctypes.POINTER(c_u32))]


class DiffOptions(ctypes.Structure):
    """sagerun_report_diff_options as library 0.3 has it (compare.h): the whole struct, since the
    init this package calls (the default version, @@SAGERUN_0.3) writes all of it."""
    _fields_ = [("struct_size", c_u32), ("threshold_percent", c_f64), ("relative", ctypes.c_int),
                ("between_run_sd_percent", c_f64), ("fail_if_slower_percent", c_f64),
                ("require_faster_percent", c_f64)]


class Rejection(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("path", c_str), ("reason", c_str)]


P = ctypes.POINTER
_PROTOTYPES = {
    # name: (restype, argtypes)
    "sagerun_version": (ctypes.c_int, []),
    "sagerun_version_string": (c_str, []),
    "sagerun_status_name": (c_str, [ctypes.c_int]),
    "sagerun_problem_make": (Problem, [c_u32] * 5),
    "sagerun_problem_check": (ctypes.c_int, [P(Problem), P(Error)]),
    "sagerun_context_create": (ctypes.c_int, [ctypes.c_int, ctypes.c_int, P(c_void), P(Error)]),
    "sagerun_context_destroy": (None, [c_void]),
    "sagerun_registry_create": (ctypes.c_int, [c_void, P(c_void), P(Error)]),
    "sagerun_registry_destroy": (None, [c_void]),
    "sagerun_registry_add_path": (ctypes.c_int, [c_void, c_str, P(Error)]),
    "sagerun_registry_add_default_paths": (ctypes.c_int, [c_void, P(Error)]),
    "sagerun_registry_allow_unsafe": (None, [c_void, ctypes.c_int]),
    "sagerun_registry_variant_count": (c_size, [c_void]),
    "sagerun_registry_variant_info": (ctypes.c_int, [c_void, c_size, P(VariantInfo), P(Error)]),
    "sagerun_registry_rejection_count": (c_size, [c_void]),
    "sagerun_registry_rejection": (ctypes.c_int, [c_void, c_size, P(Rejection), P(Error)]),
    "sagerun_registry_bind": (ctypes.c_int, [c_void, c_str, P(ctypes.c_long), P(Error)]),
    "sagerun_feature_name": (c_str, [c_u32]),
    "sagerun_inputs_create_from_host_seq": (ctypes.c_int, [c_void, P(Problem), P(Sequences),
                                                           c_void, c_void, c_void, P(c_void),
                                                           P(Error)]),
    "sagerun_inputs_create_from_device_seq": (ctypes.c_int, [c_void, P(Problem), P(Sequences),
                                                             ctypes.c_uint64, ctypes.c_uint64,
                                                             ctypes.c_uint64, P(c_void),
                                                             P(Error)]),
    "sagerun_inputs_destroy": (None, [c_void]),
    "sagerun_workload_load": (ctypes.c_int, [c_str, P(c_void), P(Error)]),
    "sagerun_workload_parse": (ctypes.c_int, [c_str, c_str, c_str, P(c_void), P(Error)]),
    "sagerun_workload_destroy": (None, [c_void]),
    "sagerun_compare_options_init": (None, [P(CompareOptions)]),
    "sagerun_compare_option_parse": (ctypes.c_int, [c_str, c_str]),
    "sagerun_compare_run": (ctypes.c_int, [c_void, c_void, c_void, P(CompareOptions), P(c_void),
                                           P(Error)]),
    "sagerun_compare_run_workload": (ctypes.c_int, [c_void, c_void, c_void, P(CompareOptions),
                                                    P(c_void), P(Error)]),
    "sagerun_compare_result_destroy": (None, [c_void]),
    "sagerun_compare_result_write_json": (ctypes.c_int, [c_void, c_str, c_str, P(Error)]),
    "sagerun_compare_result_read": (ctypes.c_int, [c_str, P(c_void), P(Error)]),
    "sagerun_compare_result_derive": (None, [c_void]),
    "sagerun_compare_result_apply_tolerance": (None, [c_void, c_void]),
    "sagerun_tolerance_create": (ctypes.c_int, [P(c_void), P(Error)]),
    "sagerun_tolerance_destroy": (None, [c_void]),
    "sagerun_tolerance_add": (ctypes.c_int, [c_void, ctypes.c_int, c_str, P(Error)]),
    "sagerun_report_show": (ctypes.c_int, [c_str, ctypes.c_int, c_void, P(Error)]),
    "sagerun_report_diff_options_init": (None, [P(DiffOptions)]),
    "sagerun_report_diff": (ctypes.c_int, [c_str, c_str, P(DiffOptions), c_void,
                                           P(ctypes.c_uint), P(Error)]),
}


def _candidates():
    """Where the library is looked for, in order: the one this package was built with, then
    SAGERUN_LIBRARY, then the dynamic loader's search (libsagerun.so.0)."""
    out = []
    if os.environ.get("SAGERUN_LIBRARY"):
        out.append(("SAGERUN_LIBRARY", os.environ["SAGERUN_LIBRARY"]))
    if _build_info.LIBRARY:
        out.insert(0, ("the build", _build_info.LIBRARY))
    out.append(("the loader", "libsagerun.so.%d" % _build_info.VERSION[0]))
    return out


def version_text(encoded):
    """SAGERUN_VERSION's encoding (major * 10000 + minor * 100 + patch) as "M.m.p"."""
    return "%d.%d.%d" % (encoded // 10000, encoded // 100 % 100, encoded % 100)


def check_version(found, path):
    """The library's version against the one this package was built for: the same major, at
    least the minor (the functions the package calls); else ImportError naming both."""
    want = _build_info.VERSION
    major, minor = found // 10000, found // 100 % 100
    if major != want[0] or minor < want[1]:
        raise ImportError("libsagerun at %s is version %s; this sagerun package was built for "
                          "%d.%d (another ABI: install the package of that library, or set "
                          "SAGERUN_LIBRARY)" % (path, version_text(found), want[0], want[1]))


def _load():
    tried = []
    for origin, path in _candidates():
        if origin == "the build" and not os.path.exists(path):
            tried.append("%s (%s): no such file" % (path, origin))
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            tried.append("%s (%s): %s" % (path, origin, exc))
            continue
        lib.sagerun_version.restype = ctypes.c_int
        check_version(lib.sagerun_version(), path)
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        lib.path = path
        return lib
    raise ImportError("libsagerun not found; tried: " + "; ".join(tried))


_lib = None


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def call(fn_name, *args):
    """Calls a libsagerun function that takes a trailing sagerun_error*: SagerunError on a
    non-zero status, with the library's message."""
    err = Error()
    status = getattr(lib(), fn_name)(*args, ctypes.byref(err))
    if status != 0:
        name = lib().sagerun_status_name(status)
        raise SagerunError(name.decode() if name else str(status),
                           err.message.decode(errors="replace") or fn_name + " failed")
    return status


def capture(fn):
    """What fn(FILE *) writes, as text: the library prints tables to a C stream."""
    import tempfile
    libc = ctypes.CDLL(None)
    libc.fopen.restype, libc.fopen.argtypes = c_void, [c_str, c_str]
    libc.fclose.argtypes = [c_void]
    with tempfile.NamedTemporaryFile(prefix="sagerun-", suffix=".txt") as tmp:
        stream = libc.fopen(os.fsencode(tmp.name), b"w")
        if not stream:
            raise OSError("cannot open %s" % tmp.name)
        try:
            fn(stream)
        finally:
            libc.fclose(stream)
        return open(tmp.name, encoding="utf-8", errors="replace").read()


def text(value):
    return None if value is None else value.decode(errors="replace")
