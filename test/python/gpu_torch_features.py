"""examples/python/torch_features.py on a GPU with the real torch, without sagerun's binaries:
each variant is driven as the bridge drives it (sagerun._create with embed_call.c's dict, the
buffers torch tensors' addresses, sagerun._run on a stream of its own) on the problems it
declares, and its o compared with attention computed here in float64 from sagerun.h's rule,
written row by row. Run on a machine with torch and a GPU: python3 test/python/gpu_torch_features.py
(exit 0 = every output within 2e-2 of the float64 one; prints the max error of each)."""
import importlib.util
import inspect
import math
import os
import sys
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("sagerun", os.path.join(ROOT, "python", "sagerun",
                                                                      "_bridge.py"))
sagerun = importlib.util.module_from_spec(spec)
sys.modules["sagerun"] = sagerun
spec.loader.exec_module(sagerun)
SCRIPT = os.path.join(ROOT, "examples", "python", "torch_features.py")
DEV = torch.device("cuda", 0)


def key_range(causal, align, window, n, m, i):
    d = i + (m - n if align == "bottom-right" else 0)
    lo, hi = 0, m
    if causal:
        hi = min(hi, d + 1)
    if window is not None and window[1] >= 0:
        hi = min(hi, d + window[1] + 1)
    if window is not None and window[0] >= 0:
        lo = max(lo, d - window[0])
    return max(lo, 0), max(hi, 0)


def exact(p, q, k, v):
    """q [n, Hq, D], k, v [m, Hkv, D] -> [n, Hq, D] float64; a row without keys is 0."""
    n, m = q.shape[0], k.shape[0]
    group = p["heads_q"] // p["heads_kv"]
    q, k, v = (x.double().transpose(0, 1) for x in (q, k, v))
    k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    s = (q @ k.transpose(1, 2)) * p["sm_scale"]
    if p["softcap"] > 0:
        s = p["softcap"] * torch.tanh(s / p["softcap"])
    keep = torch.zeros(n, m, dtype=torch.bool, device=q.device)
    for i in range(n):
        lo, hi = key_range(p["causal"], p["align"], p["window"], n, m, i)
        keep[i, lo:hi] = True
    s = s.masked_fill(~keep, -math.inf)
    w = torch.softmax(s, -1).nan_to_num(0.0)
    return (w @ v).transpose(0, 1)


def problem(B=2, N=96, Hq=8, Hkv=2, D=64, kv_len=None, causal=False, align="top-left",
            window=None, softcap=0.0, lengths=None, dtype="fp16", page_size=0):
    p = {"batch": B, "seq_len": N, "heads_q": Hq, "heads_kv": Hkv, "head_dim": D,
         "layout": "NHD", "dtype": dtype, "causal": causal, "sm_scale": 1 / math.sqrt(D),
         "kv_len": kv_len or N, "align": align, "window": window, "softcap": softcap,
         "varlen": lengths is not None, "total_q": 0, "total_kv": 0, "page_size": 0,
         "pages": 0, "pages_per_seq": 0}
    if page_size:
        kv_lens = [b for _, b in lengths] if lengths else [p["kv_len"]] * B
        p["page_size"] = page_size
        p["pages_per_seq"] = max(-(-m // page_size) for m in kv_lens)
        p["pages"] = sum(-(-m // page_size) for m in kv_lens) + 3  # 3 pages nobody reads
    if lengths:
        p["batch"] = len(lengths)
        p["total_q"] = sum(a for a, _ in lengths)
        p["total_kv"] = sum(b for _, b in lengths)
        p["seq_len"] = max(a for a, _ in lengths)
        p["kv_len"] = max(b for _, b in lengths)
    return p


def page_cache(p, k, v):
    """k, v (dense [B, kv_len, ...] or packed [total_kv, ...]) moved into a page cache
    [pages, page_size, Hkv, D] whose pages lie in a shuffled order, and the block table
    [B * pages_per_seq] (unused entries 0)."""
    ps, pps = p["page_size"], p["pages_per_seq"]
    order = torch.randperm(p["pages"], generator=torch.Generator().manual_seed(7)).tolist()
    kc = torch.zeros(p["pages"], ps, *k.shape[-2:], dtype=k.dtype, device=DEV)
    vc = torch.zeros_like(kc)
    table = [0] * (p["batch"] * pps)
    rows = sequences_of(p, k)
    for b, (kb, vb) in enumerate(zip(rows, sequences_of(p, v))):
        for j in range(-(-kb.shape[0] // ps)):
            page = order.pop()
            table[b * pps + j] = page
            n = min(ps, kb.shape[0] - j * ps)
            kc[page, :n], vc[page, :n] = kb[j * ps:j * ps + n], vb[j * ps:j * ps + n]
    return kc, vc, torch.tensor(table, dtype=torch.int32, device=DEV)


def sequences_of(p, x):
    """The per-sequence key rows of a dense [B, m, ...] or packed (p["_kv_lens"]) tensor."""
    if x.dim() == 4:
        return [x[b] for b in range(x.shape[0])]
    out, at = [], 0
    for m in p["_kv_lens"]:
        out.append(x[at:at + m])
        at += m
    return out


def logical_keys(p, cache, table, keep):
    """The page cache read back through the table: dense [B, kv_len, ...] or packed rows."""
    ps, pps, t = p["page_size"], p["pages_per_seq"], table.tolist()
    seqs = []
    for b, m in enumerate(p.get("_kv_lens") or [p["kv_len"]] * p["batch"]):
        pages = [cache[t[b * pps + j]] for j in range(-(-m // ps))]
        seqs.append(torch.cat(pages)[:m])
    return torch.cat(seqs) if p["varlen"] else torch.stack(seqs)


def drive(name, run, create, p, params):
    tdt = torch.float16 if p["dtype"] == "fp16" else torch.bfloat16
    g = torch.Generator(device=DEV).manual_seed(1)
    H, Hkv, D = p["heads_q"], p["heads_kv"], p["head_dim"]
    if p["varlen"]:
        q = torch.randn(p["total_q"], H, D, device=DEV, generator=g).to(tdt)
        k = torch.randn(p["total_kv"], Hkv, D, device=DEV, generator=g).to(tdt)
    else:
        q = torch.randn(p["batch"], p["seq_len"], H, D, device=DEV, generator=g).to(tdt)
        k = torch.randn(p["batch"], p["kv_len"], Hkv, D, device=DEV, generator=g).to(tdt)
    v = torch.randn(k.shape, device=DEV, generator=g).to(tdt)
    if p["page_size"]:
        k, v, table = page_cache(p, k, v)
    o = torch.full(q.shape, float("nan"), device=DEV).to(tdt)
    buffers = {"q": q.data_ptr(), "k": k.data_ptr(), "v": v.data_ptr(), "o": o.data_ptr(),
               "cu_seqlens_q": None, "cu_seqlens_kv": None, "block_table": None}
    keep = []
    if p["varlen"]:
        lens = p["_lengths"]
        cq = torch.tensor([0] + [sum(a for a, _ in lens[:i + 1]) for i in range(len(lens))],
                          dtype=torch.int32, device=DEV)
        ck = torch.tensor([0] + [sum(b for _, b in lens[:i + 1]) for i in range(len(lens))],
                          dtype=torch.int32, device=DEV)
        keep += [cq, ck]
        buffers["cu_seqlens_q"], buffers["cu_seqlens_kv"] = cq.data_ptr(), ck.data_ptr()
    if p["page_size"]:
        keep.append(table)
        buffers["block_table"] = table.data_ptr()
    stream = torch.cuda.Stream(device=DEV)
    spec_ = {"name": name, "script": SCRIPT, "line": 1, "backend": "cuda", "input": "fp16",
             "functions": {"run": run, "create": create, "prepare": "", "destroy": ""},
             "problem": {key: val for key, val in p.items() if not key.startswith("_")},
             "params": params, "extension": None, "buffers": buffers,
             "stream": stream.cuda_stream, "device": {}}
    call = sagerun._create(spec_)
    sagerun._prepare(call, None)
    sagerun._run(call)
    torch.cuda.synchronize()
    if p["page_size"]:
        k, v = logical_keys(p, k, table, keep), logical_keys(p, v, table, keep)
    want = torch.empty(q.shape, dtype=torch.float64, device=DEV)
    if p["varlen"]:
        cq, ck = (x.tolist() for x in keep[:2])
        for b in range(p["batch"]):
            want[cq[b]:cq[b + 1]] = exact(p, q[cq[b]:cq[b + 1]], k[ck[b]:ck[b + 1]],
                                          v[ck[b]:ck[b + 1]])
    else:
        for b in range(p["batch"]):
            want[b] = exact(p, q[b], k[b], v[b])
    return (o.double() - want).abs().max().item()


def cases():
    dense = [("kv_len", dict(kv_len=160)),
             ("kv_len causal bottom-right", dict(kv_len=160, causal=True, align="bottom-right")),
             ("q > kv bottom-right (empty rows)", dict(kv_len=40, causal=True,
                                                       align="bottom-right")),
             ("causal top-left kv_len", dict(kv_len=160, causal=True)),
             ("window (16, 4)", dict(window=(16, 4))),
             ("causal + window bottom-right", dict(kv_len=160, causal=True, align="bottom-right",
                                                   window=(32, -1))),
             ("softcap 5, causal", dict(causal=True, softcap=5.0)),
             ("bf16 causal", dict(causal=True, dtype="bf16"))]
    varlen = [("varlen", dict(lengths=[(17, 17), (90, 90), (1, 1)])),
              ("varlen causal bottom-right", dict(lengths=[(5, 60), (70, 33), (64, 64)],
                                                  causal=True, align="bottom-right")),
              ("varlen window", dict(lengths=[(40, 40), (90, 90)], window=(8, 8)))]
    paged = [("paged 16, GQA", dict(kv_len=100, page_size=16)),
             ("paged 16 causal bottom-right", dict(N=20, kv_len=130, causal=True,
                                                   align="bottom-right", page_size=16)),
             ("paged varlen window", dict(lengths=[(30, 70), (5, 200)], window=(20, 0),
                                          page_size=16))]
    sdpa = [c for c in dense if "softcap" not in c[0]]
    flex = dense + varlen + paged + [("varlen softcap top-left", dict(
        lengths=[(20, 50), (33, 10)], causal=True, softcap=3.0))]
    vlen = [c for c in dense + varlen + paged
            if "top-left" not in c[0] and "softcap" not in c[0]]
    return [("torch-sdpa-mask", "run_sdpa_mask", "create_sdpa_mask", sdpa, {}),
            ("torch-varlen", "run_varlen", "create_varlen", vlen, {}),
            ("torch-flex", "run_flex", "create_flex", flex, {"compile": False}),
            ("torch-flex", "run_flex", "create_flex", flex[1:2] + varlen[1:2] + paged[1:3],
             {"compile": True})]


def main():
    from torch.nn.attention.varlen import varlen_attn
    print("torch", torch.__version__, "varlen_attn", inspect.signature(varlen_attn))
    bad = 0
    for name, run, create, problems, params in cases():
        for label, kw in problems:
            lengths = kw.get("lengths")
            p = problem(**kw)
            if lengths:
                p["_lengths"] = lengths
                p["_kv_lens"] = [b for _, b in lengths]
            try:
                err = drive(name, run, create, p, params)
            except sagerun.Unsupported as e:
                print("UNSUPPORTED %-16s %-34s %s" % (name, label, e))
                continue
            except Exception as e:  # noqa: BLE001 (a report of every case)
                bad += 1
                print("ERROR %-16s %-34s %s: %s" % (name, label, type(e).__name__, e))
                print("".join(traceback.format_exc().splitlines(True)[-12:]))
                continue
            ok = err <= 2e-2
            bad += not ok
            print("%s %-16s %-34s max abs error %.3g%s" % ("ok  " if ok else "FAIL", name, label,
                                                           err, " (compiled)" * bool(params.get("compile"))))
    print("%d failure(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
