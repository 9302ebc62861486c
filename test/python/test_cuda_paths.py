"""The CUDA side of Python variants without a GPU or torch: sagerun's Python module
(variants/python/sagerun.py) and the CUDA examples (examples/python/torch_sdpa.py,
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

spec = importlib.util.spec_from_file_location("sagerun", os.path.join(ROOT, "variants", "python",
                                                                      "sagerun.py"))
sagerun = importlib.util.module_from_spec(spec)
sys.modules["sagerun"] = sagerun
spec.loader.exec_module(sagerun)

STREAM = 0x5A5A00
ADDR = {"q": 0x10000000, "k": 0x20000000, "v": 0x30000000, "o": 0x40000000}


def make_spec(script, run, create="", prepare="", layout="NHD", dtype="fp16", causal=False,
              heads=(8, 8), inputs="fp16", extension=None):
    p = {"batch": 2, "seq_len": 300, "heads_q": heads[0], "heads_kv": heads[1], "head_dim": 128,
         "layout": layout, "dtype": dtype, "causal": causal, "sm_scale": 1 / math.sqrt(128)}
    return {"name": "probe", "script": script, "line": 1, "backend": "cuda", "input": inputs,
            "functions": {"run": run, "create": create, "prepare": prepare, "destroy": ""},
            "problem": p, "params": {}, "extension": extension, "buffers": dict(ADDR),
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
    _, used, q, k, v, causal, scale, gqa, stream = sdpa[0]
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


if __name__ == "__main__":
    check_views()
    from torch.nn.attention import SDPBackend
    check_sdpa("cudnn", SDPBackend.CUDNN_ATTENTION)
    check_sdpa("flash", SDPBackend.FLASH_ATTENTION)
    check_sageattention("NHD")
    check_sageattention("HND")
    check_store()
    check_readonly_refused()
