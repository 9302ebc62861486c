"""The CUDA side of Python variants without a GPU or torch: sagerun's Python module
(python/sagerun/_bridge.py) and the CUDA examples (examples/python/torch_sdpa.py,
sageattention_ext.py) driven as the bridge drives them (embed_call.c's dicts), against a stand-in
torch (test/python/fake_torch) that records every call. What it proves: the views are torch tensors
on sagerun's memory with the right shapes and dtypes, run runs on sagerun's stream, SDPA is called
with the problem's layout, scale and causality under the one backend asked for, and SageAttention's
kernel gets the sage2 tensors in its argument order, ordered against the default stream.
Run: python3 test/python/test_cuda_paths.py (exit 0 = every check held)."""
import importlib.util
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "fake_torch"))
import torch  # noqa: E402  (the stand-in)

spec = importlib.util.spec_from_file_location("sagerun", os.path.join(ROOT, "python", "sagerun",
                                                                      "_bridge.py"))
sagerun = importlib.util.module_from_spec(spec)
sys.modules["sagerun"] = sagerun
spec.loader.exec_module(sagerun)

STREAM = 0x5A5A00
ADDR = {"q": 0x10000000, "k": 0x20000000, "v": 0x30000000, "o": 0x40000000}


SEQ = {"cu_seqlens_q": 0x60000000, "cu_seqlens_kv": 0x61000000, "block_table": 0x62000000}


def make_spec(script, run, create="", prepare="", layout="NHD", dtype="fp16", causal=False,
              heads=(8, 8), inputs="fp16", extension=None, sequences=(), **problem):
    """embed_call.c's dict; problem: the ABI 1.2 fields that differ from the 1.1 problem's, and
    sequences: which of cu_seqlens_q, cu_seqlens_kv, block_table the buffers have."""
    p = {"batch": 2, "seq_len": 300, "heads_q": heads[0], "heads_kv": heads[1], "head_dim": 128,
         "layout": layout, "dtype": dtype, "causal": causal, "sm_scale": 1 / math.sqrt(128),
         "kv_len": 300, "align": "top-left", "window": None, "softcap": 0.0, "varlen": False,
         "total_q": 0, "total_kv": 0, "page_size": 0, "pages": 0, "pages_per_seq": 0}
    p.update(problem)
    buffers = dict(ADDR)
    buffers.update((key, SEQ[key] if key in sequences else None) for key in SEQ)
    return {"name": "probe", "script": script, "line": 1, "backend": "cuda", "input": inputs,
            "functions": {"run": run, "create": create, "prepare": prepare, "destroy": ""},
            "problem": p, "params": {}, "extension": extension, "buffers": buffers,
            "stream": STREAM,
            "device": {"name": "stand-in", "compute_capability": 90, "sm_count": 132,
                       "shared_memory_per_block": 49152, "shared_memory_per_block_optin": 232448,
                       "shared_memory_per_sm": 233472, "l2_bytes": 52428800}}


def check_views():
    call = sagerun._create(make_spec(os.path.join(ROOT, "examples/python/torch_sdpa.py"),
                                     "cudnn", "create", dtype="bf16", layout="HND",
                                     heads=(8, 2)))
    assert call.q.data_ptr() == ADDR["q"] and call.o.data_ptr() == ADDR["o"]
    assert call.q.shape == (2, 8, 300, 128) and call.k.shape == (2, 2, 300, 128), call.k.shape
    assert call.q.dtype is torch.bfloat16 and call.o.dtype is torch.bfloat16
    assert call.stream.cuda_stream == STREAM and isinstance(call.stream, torch.cuda.ExternalStream)
    assert ("set_device", call.o.device) in torch.LOG
    assert call.state["args"] == {"is_causal": False, "scale": 1 / math.sqrt(128),
                                  "enable_gqa": True}, call.state["args"]
    print("ok   views: torch tensors on sagerun's buffers (bf16 through int16), its stream")


def check_sdpa(backend_fn, backend):
    del torch.LOG[:]
    call = sagerun._create(make_spec(os.path.join(ROOT, "examples/python/torch_sdpa.py"),
                                     backend_fn, "create", causal=True))
    sagerun._prepare(call, None)
    sagerun._run(call)
    sdpa = [e for e in torch.LOG if e[0] == "sdpa"]
    copies = [e for e in torch.LOG if e[0] == "copy_"]
    assert len(sdpa) == 1 and len(copies) == 1, torch.LOG
    _, used, q, k, v, causal, scale, gqa, stream, mask = sdpa[0]
    assert mask is None, mask
    assert used is backend, used
    assert q.shape == (2, 8, 300, 128) and q.data_ptr() == ADDR["q"], q.shape  # NHD -> BHND view
    assert q.strides == (300 * 8 * 128, 128, 8 * 128, 1), q.strides
    assert causal is True and scale == 1 / math.sqrt(128) and gqa is False
    assert stream.cuda_stream == STREAM, "SDPA ran on another stream than sagerun's"
    dst, src = copies[0][1], copies[0][2]
    assert dst.data_ptr() == ADDR["o"] and dst.shape == (2, 8, 300, 128) and src.ptr == 0xDEAD0000
    print("ok   %s: SDPA under %s on sagerun's stream, output copied into o" % (backend_fn, backend))


class FakeExtension:
    """What SageAttention's _qattn_sm89 offers, recording its calls."""

    def qk_int8_sv_f8_accum_f32_fuse_v_scale_attn_inst_buf(self, *args):
        torch.LOG.append(("kernel",) + args)
        return torch.Tensor(0, (0,), torch.float32)


SAGE2 = {"q_int8": 0x50000000, "q_scale": 0x51000000, "k_int8": 0x52000000,
         "k_scale": 0x53000000, "v_fp8": 0x54000000, "v_scale": 0x55000000,
         "k_mean": 0x56000000, "q_scale_per_head": 12, "k_scale_per_head": 5, "v_len": 320,
         "q_group_rows": 32, "q_block_rows": 128, "k_block_rows": 64, "v_pad_rows": 64,
         "v_range": 448.0}


def check_sageattention(layout):
    script = os.path.join(ROOT, "examples/python/sageattention_ext.py")
    module = sagerun._load(script)
    module._builds["/builds/a/_qattn_sm89.so"] = FakeExtension()
    del torch.LOG[:]
    call = sagerun._create(make_spec(script, "run", "create", "prepare", layout=layout,
                                     inputs="sage2", extension="/builds/a/_qattn_sm89.so"))
    sagerun._prepare(call, SAGE2)
    t = call.sage2
    v_shape = (2, 8, 128, 320) if layout == "HND" else (2, 128, 8, 320)
    assert t.v_fp8.shape == v_shape and t.v_fp8.dtype is torch.float8_e4m3fn, t.v_fp8.shape
    assert t.q_scale.shape == (2, 8, 12) and t.k_scale.shape == (2, 8, 5)
    assert t.q_int8.dtype is torch.int8 and t.q_int8.data_ptr() == SAGE2["q_int8"]
    del torch.LOG[:]
    sagerun._run(call)
    kinds = [e[0] for e in torch.LOG]
    assert kinds == ["record", "wait_event", "kernel", "record", "wait_event"], kinds
    (_, ev1, s1), (_, s2, w1), k, (_, ev2, s3), (_, s4, w2) = torch.LOG
    assert s1.cuda_stream == STREAM and s2.cuda_stream == 0 and w1 is ev1, "before the kernel"
    assert s3.cuda_stream == 0 and s4.cuda_stream == STREAM and w2 is ev2, "after the kernel"
    args = k[1:]
    assert [a.data_ptr() for a in args[:7]] == [SAGE2["q_int8"], SAGE2["k_int8"], SAGE2["v_fp8"],
                                               ADDR["o"], SAGE2["q_scale"], SAGE2["k_scale"],
                                               SAGE2["v_scale"]], args
    assert args[7:] == (1 if layout == "HND" else 0, 0, 2, 1 / math.sqrt(128), 0), args[7:]
    bad = dict(SAGE2, v_range=2.25)
    other = sagerun._create(make_spec(script, "run", "create", "prepare", inputs="sage2",
                                      extension="/builds/a/_qattn_sm89.so"))
    try:
        sagerun._prepare(other, bad)
        raise AssertionError("prepare took the fp32+fp16 granularities")
    except ValueError:
        pass
    print("ok   sageattention-ext (%s): the sage2 tensors in the kernel's argument order, "
          "ordered against the default stream" % layout)


def check_store():
    call = sagerun._create(make_spec(os.path.join(ROOT, "examples/python/torch_sdpa.py"),
                                     "cudnn", "create"))
    for bad, want in ((torch.Tensor(1, (2, 300, 8, 64), torch.float16), "shape"),
                      (torch.Tensor(1, call.o.shape, torch.float32), "sagerun does not convert"),
                      (torch.Tensor(1, call.o.shape, torch.float16, dev="cuda:1"), "cuda:1")):
        try:
            sagerun._store(call, bad)
            raise AssertionError("took " + want)
        except (TypeError, ValueError) as e:
            assert want in str(e), e
    del torch.LOG[:]
    sagerun._store(call, call.o)  # o itself: nothing to copy
    assert not torch.LOG, torch.LOG
    print("ok   a returned tensor: shape, dtype and device checked; o itself not copied")


def check_readonly_refused():
    try:
        torch.as_tensor(sagerun._CudaBuffer(ADDR["q"], (1,), "<f2"))
    except TypeError:
        raise AssertionError("sagerun's views must not set the read-only flag torch refuses")
    print("ok   views do not set the read-only flag (torch refuses it)")


SDPA_PY = os.path.join(ROOT, "examples/python/torch_sdpa.py")
FEATURES_PY = os.path.join(ROOT, "examples/python/torch_features.py")
VARLEN = {"varlen": True, "total_q": 700, "total_kv": 900, "seq_len": 400, "kv_len": 500}


def check_stored_shapes():
    """q, k, v, o as stored and the sequences' int32 arrays, for each kind of problem."""
    cases = [({"kv_len": 1000}, "NHD", (), (2, 300, 8, 128), (2, 1000, 2, 128)),
             ({"kv_len": 1000}, "HND", (), (2, 8, 300, 128), (2, 2, 1000, 128)),
             (VARLEN, "NHD", ("cu_seqlens_q", "cu_seqlens_kv"), (700, 8, 128), (900, 2, 128)),
             ({"page_size": 16, "pages": 70, "pages_per_seq": 63, "kv_len": 1000}, "NHD",
              ("block_table",), (2, 300, 8, 128), (70, 16, 2, 128)),
             (dict(VARLEN, page_size=16, pages=70, pages_per_seq=32), "NHD",
              ("cu_seqlens_q", "cu_seqlens_kv", "block_table"), (700, 8, 128), (70, 16, 2, 128))]
    for problem, layout, sequences, q_shape, kv_shape in cases:
        call = sagerun._create(make_spec(SDPA_PY, "cudnn", layout=layout, heads=(8, 2),
                                         sequences=sequences, **problem))
        assert call.q.shape == q_shape and call.o.shape == q_shape, (problem, call.q.shape)
        assert call.k.shape == kv_shape and call.v.shape == kv_shape, (problem, call.k.shape)
        assert call.k.data_ptr() == ADDR["k"] and call.o.data_ptr() == ADDR["o"]
        want = {"cu_seqlens_q": (3,), "cu_seqlens_kv": (3,),
                "block_table": (2, problem.get("pages_per_seq", 0))}
        for key, shape in want.items():
            t = getattr(call, key)
            if key not in sequences:
                assert t is None, (key, problem)
                continue
            assert t.shape == shape and t.dtype is torch.int32, (key, t.shape, t.dtype)
            assert t.data_ptr() == SEQ[key], "%s is not a view of sagerun's memory" % key
    print("ok   stored shapes: kv_len rows (NHD, HND), packed varlen, the page cache; "
          "cu_seqlens and block_table int32 views, None where absent")


def check_torch_varlen():
    """torch-varlen on a varlen problem: the packed views, sagerun's cu_seqlens, the longest
    lengths, the problem's scale and window_size (-1, 0) for causal; an older signature without
    window_size refuses a window problem, naming the argument."""
    module = sagerun._load(FEATURES_PY)
    for causal, window, want in ((True, None, (-1, 0)), (False, None, None),
                                 (True, (64, -1), (64, 0)), (False, (64, 8), (64, 8))):
        del torch.LOG[:]
        call = sagerun._create(make_spec(FEATURES_PY, "run_varlen", "create_varlen", heads=(8, 2),
                                         causal=causal, window=window, align="bottom-right",
                                         sequences=("cu_seqlens_q", "cu_seqlens_kv"), **VARLEN))
        sagerun._run(call)
        calls = [e for e in torch.LOG if e[0] == "varlen_attn"]
        copies = [e for e in torch.LOG if e[0] == "copy_"]
        assert len(calls) == 1 and len(copies) == 1, torch.LOG
        _, q, k, v, cu_q, cu_kv, max_q, max_k, kwargs, stream = calls[0]
        assert q.shape == (700, 8, 128) and k.shape == (900, 2, 128) and v.data_ptr() == ADDR["v"]
        assert cu_q.data_ptr() == SEQ["cu_seqlens_q"] and cu_kv.data_ptr() == SEQ["cu_seqlens_kv"]
        assert (max_q, max_k) == (400, 500) and kwargs["scale"] == 1 / math.sqrt(128), kwargs
        assert kwargs["window_size"] == (want if want else (-1, -1)), (causal, window, kwargs)
        assert stream.cuda_stream == STREAM
        assert copies[0][1].data_ptr() == ADDR["o"] and copies[0][2].ptr == 0xBEEF0000
    real = module.__dict__.get("varlen_attn")
    import torch.nn.attention.varlen as varlen

    def older(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, is_causal=False,
              return_aux=None):
        raise AssertionError("not to be called")
    kept, varlen.varlen_attn = varlen.varlen_attn, older
    try:
        sagerun._create(make_spec(FEATURES_PY, "run_varlen", "create_varlen", window=(8, 8),
                                  sequences=("cu_seqlens_q", "cu_seqlens_kv"), **VARLEN))
        raise AssertionError("an older varlen_attn took a window")
    except sagerun.Unsupported as e:
        assert "window_size" in str(e), e
    try:
        sagerun._create(make_spec(FEATURES_PY, "run_varlen", "create_varlen", sm_scale=0.5,
                                  sequences=("cu_seqlens_q", "cu_seqlens_kv"), **VARLEN))
        raise AssertionError("an older varlen_attn took a scale it has no argument for")
    except sagerun.Unsupported as e:
        assert "scale" in str(e), e
    finally:
        varlen.varlen_attn = kept
    assert real is None
    print("ok   torch-varlen: packed views, sagerun's cu_seqlens, window_size per problem; an "
          "older varlen_attn refused naming the argument it lacks")


def key_rule(causal, align, window, q_len, kv_len):
    """The mask as sagerun.h words it, row by row: [q_len, kv_len] bool, True where attended."""
    import numpy as np
    out = np.zeros((q_len, kv_len), dtype=bool)
    for i in range(q_len):
        d = i + (kv_len - q_len if align == "bottom-right" else 0)
        lo, hi = 0, kv_len
        if causal:
            hi = min(hi, d + 1)
        if window is not None and window[1] >= 0:
            hi = min(hi, d + window[1] + 1)
        if window is not None and window[0] >= 0:
            lo = max(lo, d - window[0])
        for j in range(max(lo, 0), max(hi, 0)):
            out[i, j] = True
    return out


def check_masks():
    """torch_features' mask functions on numpy index arrays against key_rule: dense shapes of
    both alignments, and the varlen document mask sequence by sequence."""
    import numpy as np
    module = sagerun._load(FEATURES_PY)
    P = sagerun.Problem
    cases = [(True, "top-left", None), (True, "bottom-right", None), (False, "top-left", (2, 1)),
             (False, "bottom-right", (3, -1)), (True, "bottom-right", (2, -1)),
             (True, "top-left", (-1, 4)), (False, "top-left", None)]
    for causal, align, window in cases:
        p = P({"causal": causal, "align": align, "window": window})
        for n, m in ((5, 5), (3, 7), (7, 3), (1, 4)):
            keep = module.allowed(p, np.arange(n)[:, None], np.arange(m)[None, :],
                                  module.diagonal_offset(p, n, m))
            got = np.ones((n, m), dtype=bool) if keep is None else np.broadcast_to(keep, (n, m))
            want = key_rule(causal, align, window, n, m)
            assert (got == want).all(), (causal, align, window, n, m, got, want)
        cu_q, cu_kv = [0, 3, 3, 8], [0, 6, 8, 10]
        q_lens = [cu_q[b + 1] - cu_q[b] for b in range(3)]
        kv_lens = [cu_kv[b + 1] - cu_kv[b] for b in range(3)]
        t = {k: np.array(v) for k, v in module.token_tables(p, q_lens, kv_lens).items()}
        got = module.document_allowed(p, t, np.arange(8)[:, None], np.arange(10)[None, :])
        want = np.zeros((8, 10), dtype=bool)
        for b in range(3):
            want[cu_q[b]:cu_q[b + 1], cu_kv[b]:cu_kv[b + 1]] = key_rule(
                causal, align, window, q_lens[b], kv_lens[b])
        assert (got == want).all(), (causal, align, window, got, want)
        check_paged_mask(module, p, causal, align, window)
    print("ok   torch_features masks: the rule of sagerun.h, both alignments, windows, varlen "
          "documents, a paged cache's slots in a shuffled order")


def check_paged_mask(module, p, causal, align, window):
    """torch-flex's paged mask: a cache of 12 pages of 4 slots in a shuffled order (two pages
    nobody reads), each slot's sequence and position from the block table; the mask over
    (packed query, slot) must be the rule over (query, logical key), and a page read by two
    sequences is refused."""
    import numpy as np
    p.page_size, p.pages, p.pages_per_seq = 4, 12, 4
    q_lens, kv_lens = [3, 7, 1], [10, 5, 13]
    order = [9, 2, 11, 0, 5, 7, 3, 10, 1, 6, 8, 4]
    table = [order[0:3] + [0], order[3:5] + [0, 0], order[5:9] + [0]]
    t = module.token_tables(p, q_lens, kv_lens)
    t.update(module.page_slot_tables(p, table, kv_lens))
    t = {k: np.array(v) for k, v in t.items()}
    got = module.document_allowed(p, t, np.arange(11)[:, None], np.arange(48)[None, :])
    want = np.zeros((11, 48), dtype=bool)
    row = 0
    for b in range(3):
        rule = key_rule(causal, align, window, q_lens[b], kv_lens[b])
        for j in range(kv_lens[b]):
            want[row:row + q_lens[b], table[b][j // 4] * 4 + j % 4] = rule[:, j]
        row += q_lens[b]
    assert (got == want).all(), ("paged", causal, align, window, got, want)
    table[1][0] = table[0][0]
    try:
        module.page_slot_tables(p, table, kv_lens)
        raise AssertionError("a page read by two sequences was taken")
    except sagerun.Unsupported as e:
        assert "page 9 is read by sequences 0 and 1" in str(e), e
    p.page_size = 0


def check_sdpa_mask():
    """torch-sdpa-mask: SDPA on the [B, H, N, D] views (K and V of kv_len rows), the problem's
    scale, GQA, the boolean mask of sagerun.h's rule, rows without a key filled with 0."""
    import numpy as np
    for problem, empty_rows in (({"kv_len": 500, "causal": True, "align": "bottom-right"}, 0),
                                ({"kv_len": 200, "causal": True, "align": "bottom-right"}, 100),
                                ({"kv_len": 500, "window": (16, 4), "align": "top-left"}, 0),
                                ({"kv_len": 500, "align": "top-left"}, 0)):
        del torch.LOG[:]
        call = sagerun._create(make_spec(FEATURES_PY, "run_sdpa_mask", "create_sdpa_mask",
                                         heads=(8, 2), **problem))
        sagerun._run(call)
        sdpa = [e for e in torch.LOG if e[0] == "sdpa"]
        fills = [e for e in torch.LOG if e[0] == "masked_fill"]
        copies = [e for e in torch.LOG if e[0] == "copy_"]
        assert len(sdpa) == 1 and len(copies) == 1, torch.LOG
        _, used, q, k, v, causal, scale, gqa, stream, mask = sdpa[0]
        assert q.shape == (2, 8, 300, 128) and k.shape == v.shape == (2, 2, problem["kv_len"], 128)
        assert k.strides == (problem["kv_len"] * 2 * 128, 128, 2 * 128, 1), k.strides
        assert causal is False and scale == 1 / math.sqrt(128) and gqa is True
        assert stream.cuda_stream == STREAM
        want = key_rule(problem.get("causal", False), problem["align"], problem.get("window"),
                        300, problem["kv_len"])
        if want.all():
            assert mask is None, "full attention needs no mask"
        else:
            assert mask.shape == want.shape and (mask.a == want).all(), problem
        assert len(fills) == (1 if empty_rows else 0), fills
        if empty_rows:
            rows = fills[0][2].a.ravel()
            assert rows.sum() == empty_rows and rows[:empty_rows].all() and fills[0][3] == 0
        assert copies[0][1].data_ptr() == ADDR["o"] and copies[0][1].shape == (2, 8, 300, 128)
    print("ok   torch-sdpa-mask: [B, H, N, D] views with kv_len keys, the rule's boolean mask, "
          "rows without a key written 0")


if __name__ == "__main__":
    check_views()
    from torch.nn.attention import SDPBackend
    check_sdpa("cudnn", SDPBackend.CUDNN_ATTENTION)
    check_sdpa("flash", SDPBackend.FLASH_ATTENTION)
    check_sageattention("NHD")
    check_sageattention("HND")
    check_store()
    check_readonly_refused()
    check_stored_shapes()
    check_torch_varlen()
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("SKIP torch_features masks: no numpy")
    else:
        check_masks()
        check_sdpa_mask()
