# Hooks, parameters and the sage2 tensors of Python variants, for test/cli/test_python.sh.
# sagerun-variant: py-lifecycle run=run create=create prepare=prepare destroy=destroy backend=host version=2.5 description="hooks in order"
# sagerun-variant: py-params run=params backend=host param=block:int:64:16:256:"rows per block" param=scale:float:1.0:0.5:2.0 param=exact:bool:1
# sagerun-variant: py-sage2 run=sage2 backend=host input=sage2
# sagerun-variant: py-graph run=copy_q backend=cuda graph=yes min_cc=80
import numpy as np

events = []


def create(call):
    events.append("create")
    assert call.state is None and call.sage2 is None
    return {"created": call.name}


def prepare(call):
    events.append("prepare")
    call.state["prepared"] = True


def run(call):
    if events[:2] != ["create", "prepare"] or not call.state.get("prepared"):
        raise AssertionError("hooks out of order: %s, state %s" % (events, call.state))
    call.o[...] = call.q  # not attention: a copy


def destroy(call):
    events.append("destroy")


def params(call):
    want = {"block": 128, "scale": 1.5, "exact": False}
    if call.params != want or type(call.params["block"]) is not int:
        raise ValueError("params %r, expected %r" % (call.params, want))
    call.o[...] = call.q


def sage2(call):
    p, t = call.problem, call.sage2
    B, N, Hq, Hkv, D = p.batch, p.seq_len, p.heads_q, p.heads_kv, p.head_dim
    expect = {
        "q_int8": ((B, N, Hq, D), np.int8), "k_int8": ((B, N, Hkv, D), np.int8),
        "q_scale": ((B, Hq, -(-N // 128) * 4), np.float32),
        "k_scale": ((B, Hkv, -(-N // 64)), np.float32),
        "v_fp8": ((B, D, Hkv, t.v_len), np.uint8), "v_scale": ((B, Hkv, D), np.float32),
        "k_mean": ((B, 1, Hkv, D), np.float16)}
    for name, (shape, dtype) in expect.items():
        a = getattr(t, name)
        if a.shape != shape or a.dtype != dtype:
            raise ValueError("%s is %s %s, expected %s %s" % (name, a.shape, a.dtype, shape, dtype))
    if t.v_len % 64 or t.v_len < N or t.q_group_rows != 32 or t.v_range != 448:
        raise ValueError("v_len %d, q_group_rows %d, v_range %g" % (t.v_len, t.q_group_rows,
                                                                   t.v_range))
    if not np.all(np.abs(t.q_int8) <= 127) or not np.all(t.q_scale > 0):
        raise ValueError("not quantized")
    call.o[...] = call.q


def copy_q(call):
    call.o.copy_(call.q)
