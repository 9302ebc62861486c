"""The sagerun package (python/) on the host backend: numpy callables, registered and file
variants against `reference`, byte-exact and by tolerance, failures with their messages, the
report (saved and read back by the CLI's `show`), bad use as Python exceptions, Ctrl-C, the
pytest helpers. Run by test/cli/test_python_package.sh (SAGERUN_LIBRARY: the build's library)."""

import importlib.util
import json
import os
import signal
import subprocess

import numpy as np
import pytest

import sagerun
import sagerun.testing
from sagerun import _bridge, _lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
EXAMPLE = os.path.join(ROOT, "examples", "python", "numpy_attention.py")
QUICK = dict(backend="host", rounds=3, iterations=1, warmup=0, progress=False)
SHAPE = (1, 64, 2, 64)


def _example():
    spec = importlib.util.spec_from_file_location("numpy_attention_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _example()


def qkv(shape=SHAPE, kv_shape=None, seed=0):
    rng = np.random.default_rng(seed)
    kv_shape = kv_shape or shape
    return tuple(rng.standard_normal(s).astype(np.float16) for s in (shape, kv_shape, kv_shape))


def softmax_f32(q, k, v, o):
    """The textbook float32 attention: close to reference, not byte-exact."""
    s = np.einsum("bnhd,bmhd->bhnm", q.astype(np.float32), k.astype(np.float32))
    s *= np.float32(q.shape[-1] ** -0.5)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o[...] = np.einsum("bhnm,bmhd->bnhd", p, v.astype(np.float32)).astype(np.float16)


# ---- callables against reference -----------------------------------------------------------------

def test_callable_byte_exact_with_reference():
    q, k, v = qkv()
    exact = sagerun.Variant(EX.reference, name="exact")  # run(call): the example's float64 order
    r = sagerun.compare("reference", exact, q=q, k=k, v=v, **QUICK)
    assert r["exact"].byte_exact and r["exact"].accepted_by == "bytes"
    assert r["exact"].failure is None and r.complete
    assert r["exact"].interval is not None and r["exact"].verdict is not None
    sagerun.testing.assert_byte_exact(r)


def test_callable_by_tolerance():
    q, k, v = qkv()
    r = sagerun.compare("reference", softmax_f32, q=q, k=k, v=v, min_cos=0.999, **QUICK)
    f = r["softmax-f32"]
    assert not f.byte_exact and f.accepted_by == "tolerance" and f.cosine > 0.999
    sagerun.testing.assert_accepted(r)
    with pytest.raises(AssertionError, match="softmax-f32 is not byte-exact"):
        sagerun.testing.assert_byte_exact(r)
    strict = sagerun.compare("reference", softmax_f32, q=q, k=k, v=v, max_ulp=0, **QUICK)
    assert strict["softmax-f32"].accepted_by is None
    with pytest.raises(AssertionError, match="neither byte-exact nor within its tolerance"):
        sagerun.testing.assert_accepted(strict)


def test_raising_callable_fails_with_its_message():
    def broken(q, k, v, o):
        raise ValueError("boom at row 3")
    r = sagerun.compare("reference", broken, q=qkv()[0], k=qkv()[1], v=qkv()[2], **QUICK)
    b = r["broken"]
    assert "ValueError: boom at row 3" in b.failure and "test_package.py" in b.failure
    assert r["reference"].failure is None  # the others are measured
    with pytest.raises(AssertionError, match="broken failed in .*boom at row 3"):
        sagerun.testing.assert_accepted(r)


def test_wrong_shape_returned_is_named():
    def short(q, k, v, o):
        return np.zeros((1, 2), dtype=np.float16)
    r = sagerun.compare("reference", short, q=qkv()[0], k=qkv()[1], v=qkv()[2], **QUICK)
    assert "run returned shape (1, 2), o has shape (1, 64, 2, 64)" in r["short"].failure


def test_unsupported_is_one_class():
    assert sagerun.Unsupported is _bridge.Unsupported

    def create(call):
        raise sagerun.Unsupported("not this head_dim")
    r = sagerun.compare("reference", sagerun.Variant(lambda c: None, create=create, name="picky"),
                        shape=SHAPE, **QUICK)
    assert "not this head_dim" in r["picky"].failure


# ---- names, files, problems ----------------------------------------------------------------------

def test_registered_and_file_variants():
    r = sagerun.compare("reference", "reference-mt", EXAMPLE, shape=SHAPE, min_cos="0.999",
                        **QUICK)
    assert [v.label for v in r.variants] == ["reference", "reference-mt", "numpy-f32",
                                             "numpy-reference"]  # a file's: the registry's order
    assert r["reference-mt"].byte_exact and r["numpy-reference"].byte_exact
    assert r["numpy-f32"].accepted_by == "tolerance"


def test_decode_problem_with_kv_len_bottom_right():
    r = sagerun.compare("reference", EXAMPLE, shape=(2, 1, 4, 64), heads_kv=2, kv_len=96,
                        causal="bottom-right", window=(32, 0), softcap=20.0,
                        max_ulp={"numpy-f32": 1000}, **QUICK)
    p = r.data["problem"]
    assert p["kv_len"] == 96 and p["align"] == "bottom-right" and p["softcap"] == 20.0
    assert r["numpy-reference"].byte_exact


def test_varlen_arrays():
    cu_q = np.array([0, 5, 17], dtype=np.int32)
    cu_kv = np.array([0, 9, 30], dtype=np.int32)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((17, 2, 64)).astype(np.float16)
    k, v = (rng.standard_normal((30, 2, 64)).astype(np.float16) for _ in range(2))
    exact = sagerun.Variant(EX.reference, name="exact")
    r = sagerun.compare("reference", exact, q=q, k=k, v=v, cu_seqlens_q=cu_q,
                        cu_seqlens_kv=cu_kv, causal="bottom-right", **QUICK)
    assert r.data["problem"]["varlen"] and r["exact"].byte_exact


def test_run_one_variant_and_registry():
    r = sagerun.run("reference", shape=SHAPE, **QUICK)
    assert [v.label for v in r.variants] == ["reference"] and r["reference"].p50_s > 0
    found, rejected = sagerun.variants(plugins=[EXAMPLE])
    by_name = {v["name"]: v for v in found}
    assert "varlen" in " ".join(by_name["numpy-reference"]["features"])
    assert by_name["reference"]["backend"] == "host" and isinstance(rejected, list)


def test_isolated_compare_runs_the_cli():
    r = sagerun.compare("reference", "reference-mt", shape=(2, 1, 4, 64), heads_kv=2, kv_len=50,
                        causal="bottom-right", window=(4, 0), isolate=True, **QUICK)
    assert r["reference-mt"].byte_exact
    p = r.data["problem"]
    assert (p["heads_kv"], p["kv_len"], p["align"], p["window"]) == (2, 50, "bottom-right", [4, 0])
    with pytest.raises(TypeError, match="cannot travel to compare's child process"):
        sagerun.compare("reference", softmax_f32, shape=SHAPE, isolate=True, **QUICK)


# ---- the report ---------------------------------------------------------------------------------

def test_report_saved_and_read_by_show(tmp_path):
    r = sagerun.compare("reference", "reference-mt", shape=SHAPE, **QUICK)
    path = r.save(str(tmp_path / "r.json"))
    cli = os.environ.get("SAGERUN", os.path.join(ROOT, "build", "bin", "sagerun"))
    shown = subprocess.run([cli, "show", path], stdout=subprocess.PIPE, text=True, check=True)
    assert "reference-mt" in shown.stdout and "speedup [95% CI]" in shown.stdout
    assert "reference-mt" in str(r) and "speedup [95% CI]" in str(r)
    back = sagerun.load(path)
    assert back.to_dict() == r.to_dict() and back["reference-mt"].interval == \
        r["reference-mt"].interval
    html = r._repr_html_()
    assert html.count("<tr>") == 3 and "reference-mt" in html
    d = sagerun.diff(r, back)
    assert not d.regression and "reference-mt" in str(d)


def test_pandas_and_plot_where_installed():
    r = sagerun.compare("reference", "reference-mt", shape=SHAPE, **QUICK)
    pandas = pytest.importorskip("pandas")
    frame = r.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame["variant"]) == ["reference",
                                                                               "reference-mt"]
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    assert r.plot().get_xlabel().startswith("speedup vs reference")


def test_bad_tolerance_names_the_keyword():
    with pytest.raises(ValueError, match="min_cos=2: --min-cos"):
        sagerun.compare("reference", "reference-mt", shape=SHAPE, min_cos=2, **QUICK)


def test_ctrl_c_returns_rounds_so_far():
    calls = []
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN where the suite runs in the background

    def interrupting(q, k, v, o):
        calls.append(1)
        if len(calls) == 12:  # in the rounds: after the checked call and each instance's first
            os.kill(os.getpid(), signal.SIGINT)
        o[...] = 0
    r = sagerun.compare("reference", interrupting, shape=SHAPE, backend="host", rounds=50,
                        iterations=1, warmup=0, progress=False)
    assert not r.complete and r.data["rounds_completed"] < 50
    assert "incomplete" in r._repr_html_()
    assert signal.getsignal(signal.SIGINT) is before  # put back


def test_progress_line(capsys):
    sagerun.compare("reference", "reference-mt", shape=SHAPE, backend="host", rounds=2,
                    iterations=1, warmup=0, progress=True)
    assert "sagerun: round" in capsys.readouterr().err


# ---- bad use: an exception naming the argument ---------------------------------------------------

@pytest.mark.parametrize("kwargs, error, words", [
    (dict(q=np.zeros(SHAPE, np.float32)), TypeError, "q: dtype float32"),
    (dict(k=np.zeros((1, 2, 64, 64), np.float16)[:, :, ::2]), ValueError, "k: the array is not"),
    (dict(v=np.zeros((1, 32, 2, 64), np.float16)), ValueError, "v: shape"),
    (dict(q=[1, 2]), TypeError, "q: expected a numpy array"),
    (dict(schedule="fast"), ValueError, "schedule='fast'"),
    (dict(rounds="many"), TypeError, "rounds='many'"),
    (dict(colour=1), TypeError, "unexpected keyword argument 'colour'"),
    (dict(window=(1,)), ValueError, "window="),
    (dict(layout="NDH"), ValueError, "layout='NDH'"),
])
def test_bad_use_names_the_argument(kwargs, error, words):
    q, k, v = qkv()
    args = dict(q=q, k=k, v=v, **QUICK)
    args.update(kwargs)
    with pytest.raises(error, match=words.replace("(", r"\(").replace("[", r"\[")):
        sagerun.compare("reference", softmax_f32, **args)


def test_bad_variants_and_sources():
    with pytest.raises(ValueError, match="variant 'no-such'"):
        sagerun.compare("reference", "no-such", shape=SHAPE, **QUICK)
    with pytest.raises(TypeError, match=r"variants\[0\]: expected a variant name"):
        sagerun.compare("reference", 42, shape=SHAPE, **QUICK)
    with pytest.raises(ValueError, match="q and shape: give one of"):
        sagerun.compare("reference", q=qkv()[0], k=qkv()[1], v=qkv()[2], shape=SHAPE, **QUICK)
    with pytest.raises(FileNotFoundError, match="workload: /nonexistent.json"):
        sagerun.compare("reference", workload="/nonexistent.json", **QUICK)
    with pytest.raises(ValueError, match="shape=.*expected 4 numbers"):
        sagerun.compare("reference", shape=(1, 2), **QUICK)


def test_another_abi_is_refused_with_both_versions(monkeypatch):
    monkeypatch.setattr(_lib._build_info, "VERSION", (1, 0))
    with pytest.raises(ImportError, match=r"libsagerun at /x/libsagerun.so.0 is version 0\.1\.0; "
                                          r"this sagerun package was built for 1\.0"):
        _lib.check_version(100, "/x/libsagerun.so.0")
    monkeypatch.setattr(_lib._build_info, "VERSION", (0, 3))
    with pytest.raises(ImportError, match="built for 0.3"):
        _lib.check_version(201, "/x")


def test_build_info_matches_the_header():
    text = open(os.path.join(ROOT, "include", "sagerun", "sagerun.h")).read()
    for part, value in zip(("MAJOR", "MINOR"), _lib._build_info.VERSION):
        assert "#define SAGERUN_VERSION_%s %d\n" % (part, value) in text


# ---- the pytest helpers on their own ------------------------------------------------------------

def _report(low, high):
    return sagerun.Report({"noise_threshold_percent": 1.0, "variants": [
        {"name": "b", "is_baseline": True, "byte_exact": True, "accepted_by": "bytes"},
        {"name": "x", "byte_exact": True, "accepted_by": "bytes", "verdict": "slower",
         "speedup_interval_percent": {"estimate": (low + high) / 2, "low": low, "high": high}}]})


def test_helpers_give_the_interval():
    with pytest.raises(AssertionError, match=r"x is slower than the baseline by more than 5%: "
                                             r"speedup -9\.00% \[-12\.00, -6\.00\]"):
        sagerun.testing.assert_not_slower(_report(-12, -6), margin=5)
    sagerun.testing.assert_not_slower(_report(-12, -4), margin=5)
    with pytest.raises(AssertionError, match=r"not shown faster .* \+1\.00% \[-1\.00, \+3\.00\]"):
        sagerun.testing.assert_faster(_report(-1, 3))
    sagerun.testing.assert_faster(_report(2, 3), "x", margin=1)
    assert json.loads(json.dumps(_report(1, 2).to_dict()))["variants"][1]["name"] == "x"


# ---- torch CUDA tensors: read where they are (a stand-in: this machine has no GPU) --------------

class _Device:
    type, index = "cuda", 0

    def __eq__(self, other):
        return isinstance(other, _Device)

    def __str__(self):
        return "cuda:0"


class _CudaTensor:
    """What compare() reads of a torch CUDA tensor: dtype, shape, contiguity, device, data_ptr."""
    is_cuda, dtype, device = True, "torch.float16", _Device()

    def __init__(self, shape, ptr=0x7F0000000000):
        self.shape, self.ndim, self.ptr = tuple(shape), len(shape), ptr

    def detach(self):
        return self

    def is_contiguous(self):
        return True

    def data_ptr(self):
        return self.ptr


def test_cuda_tensors_take_the_borrowing_path():
    q, k, v = (_CudaTensor(SHAPE) for _ in range(3))
    # host backend asked for: refused before any copy is tried
    with pytest.raises(ValueError, match="q, k, v: CUDA tensors, backend='host'"):
        sagerun.compare("reference", softmax_f32, q=q, k=k, v=v, **QUICK)
    # auto: a CUDA context for them (this build has none: the library says so)
    auto = dict(QUICK, backend="auto")
    with pytest.raises(sagerun.SagerunError, match="CUDA|NVIDIA driver"):
        sagerun.compare("reference", softmax_f32, q=q, k=k, v=v, **auto)
    with pytest.raises(ValueError, match="one CUDA device for all three"):
        sagerun.compare("reference", softmax_f32, q=q, k=qkv()[1], v=v, **QUICK)
