#!/usr/bin/env python3
"""SageAttention parity of sagerun (issue 15), on a CUDA device with PyTorch.

1. k_mean: sagerun's k_mean (CUDA, and the host backend planned for this device) against
   torch's `k.mean(dim=seq_dim, keepdim=True)` bits, which is what SageAttention smooths K with,
   over shapes that take every branch of PyTorch's reduction plan.
2. End to end, when `sageattention` is importable (PYTHONPATH): the output of
   `sagerun run --variant V --inputs F --save-output O` (causal cases: `--workload W`, a workload
   file with "causal": true and F as its input) against SageAttention's Python pipeline
   `sageattn_qk_int8_pv_fp8_cuda(q, k, v, is_causal=..., qk_quant_gran="per_warp",
   pv_accum_dtype=A)` (k.mean, per_warp_int8, per_channel_fp8 with 448 or 2.25, the sm89 kernel)
   from the same q, k, v, fp16 or bf16; A = "fp32+fp32" for baseline, interleave-softmax and
   warp-specialized, "fp32+fp16" for baseline-fp16acc. Where they differ, again with torch's
   k_mean given in the inputs file (which tells a k_mean difference from a kernel one).
3. kv_len != q_len (KV_CASES: decode, prefill with a cache, odd lengths, more queries than keys,
   GQA, HND, bf16, D 64): q of q_len rows, k and v of kv_len rows in the inputs file (sagerun
   reads kv_len from k, as SageAttention takes qo_len from q and kv_len from k). A causal case
   with kv_len != q_len must be refused (the sage2 variants declare no CAUSAL_* feature):
   "refused" is its pass.

Prints one line per case and comparison with the count of differing elements (on a difference
also the first differing index and both values); exits 1 if any count is non-zero (or a step
fails), 0 otherwise. Cases sagerun refuses by design are listed as "unsupported", not failures.

Run from the repository root after `make` (build/ and plugins/ present):
    python3 test/gpu/parity/parity.py [--quick] [--set all|square|kv_len]
        [--variants baseline,interleave-softmax,warp-specialized,baseline-fp16acc]
Needs only torch (no numpy, no safetensors package). Writes its files under $OUT or a
temporary folder, and a summary JSON there (parity.json).
"""
import argparse
import ctypes
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SAGERUN = os.path.join(ROOT, "build", "bin", "sagerun")
KMEAN_DUMP = os.path.join(ROOT, "build", "test", "gpu", "parity", "kmean_dump")
DTYPES = {"F16": torch.float16, "BF16": torch.bfloat16}
NAMES = {v: k for k, v in DTYPES.items()}


# ---- safetensors without the safetensors package -----------------------------------------
def tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    n = t.numel() * t.element_size()
    buf = bytearray(n)
    if n:
        ctypes.memmove((ctypes.c_char * n).from_buffer(buf), t.data_ptr(), n)
    return bytes(buf)


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = tensor_bytes(t)
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header).encode()
    hj += b" " * (-len(hj) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        data = bytearray(raw[8 + n + b:8 + n + e])
        out[name] = torch.frombuffer(data, dtype=DTYPES[t["dtype"]]).reshape(t["shape"]) \
            if data else torch.empty(t["shape"], dtype=DTYPES[t["dtype"]])
    return out


def bits(t):
    return t.detach().contiguous().view(torch.int16).cpu()


def differing(a, b):
    a, b = bits(a).flatten(), bits(b).flatten()
    if a.numel() != b.numel():
        return None
    return int((a != b).sum())


def first_difference(a, b):
    """Where a and b (same shape) first differ: the index in their shape and both values."""
    if a.shape != b.shape:
        return "shapes differ: %s and %s" % (list(a.shape), list(b.shape))
    ba, bb = bits(a).flatten(), bits(b).flatten()
    where = (ba != bb).nonzero()
    if where.numel() == 0:
        return ""
    flat = int(where[0])
    idx, rest = [], flat
    for size in reversed(a.shape):
        idx.append(rest % size)
        rest //= size
    idx = list(reversed(idx))
    va, vb = a.detach().cpu().flatten()[flat], b.detach().cpu().flatten()[flat]
    return "first at %s (flat %d): sagerun %r (0x%04x), sage %r (0x%04x)" % (
        idx, flat, float(va), int(ba[flat]) & 0xffff, float(vb), int(bb[flat]) & 0xffff)


# ---- cases -------------------------------------------------------------------------------
# (name, B, N, Hq, Hkv, D, layout, dtype[, causal]); "seed" takes sagerun's own seed inputs.
CASES = [
    ("seed", 1, 37810, 56, 56, 128, "nhd", "F16"),
    ("seed-bf16", 1, 37810, 56, 56, 128, "nhd", "BF16"),
    ("seed-shape-hnd", 1, 37810, 56, 56, 128, "hnd", "F16"),
    ("b2", 2, 5003, 8, 8, 128, "nhd", "F16"),
    ("b4-d64-bf16", 4, 2111, 16, 16, 64, "nhd", "BF16"),
    ("gqa-32to8", 1, 4096, 32, 8, 128, "nhd", "F16"),
    ("gqa-hnd", 2, 1200, 4, 2, 128, "hnd", "F16"),
    ("n1", 1, 1, 8, 8, 128, "nhd", "F16"),
    ("n64", 1, 64, 1, 1, 128, "nhd", "F16"),
    ("n129-hnd", 1, 129, 4, 4, 128, "hnd", "F16"),
    ("n1000", 1, 1000, 2, 2, 128, "nhd", "F16"),
    ("d64-hnd-bf16", 3, 333, 3, 3, 64, "hnd", "BF16"),
    ("n131072-h2", 1, 131072, 2, 2, 128, "nhd", "F16"),
    ("n131072-hnd-bf16", 1, 131072, 2, 2, 128, "hnd", "BF16"),
    ("n65536-h8-d64", 1, 65536, 8, 8, 64, "nhd", "F16"),
    ("seed-causal", 1, 37810, 56, 56, 128, "nhd", "F16", True),
    ("causal-n1", 1, 1, 8, 8, 128, "nhd", "F16", True),
    ("causal-n65", 1, 65, 2, 2, 128, "nhd", "F16", True),
    ("causal-n1000", 1, 1000, 2, 2, 128, "nhd", "F16", True),
    ("causal-b2-gqa-hnd", 2, 1200, 8, 2, 128, "hnd", "F16", True),
    ("causal-d64-bf16", 2, 200, 4, 4, 64, "nhd", "BF16", True),
    ("causal-n4097-hnd-bf16", 1, 4097, 4, 4, 128, "hnd", "BF16", True),
    ("causal-n131072-h2", 1, 131072, 2, 2, 128, "nhd", "F16", True),
    ("causal-b3-d64-gqa", 3, 2111, 6, 3, 64, "nhd", "F16", True),
]
QUICK = {"seed", "b2", "gqa-32to8", "n1", "n131072-h2", "d64-hnd-bf16", "b4-d64-bf16",
         "seed-causal", "causal-n1", "causal-n65", "causal-b2-gqa-hnd", "causal-d64-bf16",
         "causal-n4097-hnd-bf16"}
# kv_len != q_len: (name, B, q_len, Hq, Hkv, D, layout, dtype, causal, kv_len). SageAttention
# takes qo_len from q and kv_len from k (per_warp_int8 quantizes each over its own rows,
# per_channel_fp8 pads V from kv_len, k.mean runs over kv_len).
KV_CASES = [
    ("kv-decode-q1-kv4096-gqa", 1, 1, 32, 8, 128, "nhd", "F16", False, 4096),
    ("kv-decode-q16-kv32768-gqa", 1, 16, 32, 8, 128, "nhd", "F16", False, 32768),
    ("kv-decode-q1-kv32768-hnd-bf16", 2, 1, 32, 8, 128, "hnd", "BF16", False, 32768),
    ("kv-decode-q16-kv4096-hnd", 1, 16, 32, 8, 128, "hnd", "F16", False, 4096),
    ("kv-prefill-q1024-kv8192", 1, 1024, 32, 8, 128, "nhd", "F16", False, 8192),
    ("kv-prefill-q1024-kv8192-hnd-bf16", 1, 1024, 16, 4, 128, "hnd", "BF16", False, 8192),
    ("kv-odd-q333-kv1000", 2, 333, 4, 2, 128, "nhd", "F16", False, 1000),
    ("kv-odd-q333-kv1000-d64-hnd-bf16", 1, 333, 6, 3, 64, "hnd", "BF16", False, 1000),
    ("kv-more-q-q1000-kv333", 1, 1000, 4, 4, 128, "nhd", "F16", False, 333),
    ("kv-q200-kv37-hnd-bf16", 2, 200, 4, 2, 128, "hnd", "BF16", False, 37),
    ("kv-q64-kv65-d64", 1, 64, 2, 2, 64, "nhd", "F16", False, 65),
    ("kv-q5-kv1", 1, 5, 4, 2, 128, "nhd", "F16", False, 1),
    ("kv-q129-kv128-d64-bf16", 3, 129, 2, 1, 64, "nhd", "BF16", False, 128),
    # causal with kv_len != q_len: refused before create (no CAUSAL_* feature declared)
    ("kv-causal-q16-kv4096-refused", 1, 16, 8, 8, 128, "nhd", "F16", True, 4096),
]
# SageAttention's P·V accumulation for each sagerun variant (sageattn_qk_int8_pv_fp8_cuda)
PV_ACCUM = {"baseline": "fp32+fp32", "interleave-softmax": "fp32+fp32",
            "warp-specialized": "fp32+fp32", "baseline-fp16acc": "fp32+fp16"}


def is_causal(case):
    return len(case) > 8 and case[8]


def kv_len_of(case):
    """Keys of a case: its own kv_len (KV_CASES), else q_len."""
    return case[9] if len(case) > 9 else case[2]


def expects_refusal(case):
    """Causal with kv_len != q_len: the sage2 variants declare no CAUSAL_* feature."""
    return is_causal(case) and kv_len_of(case) != case[2]


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       cwd=ROOT)
    return p.returncode, p.stdout


def make_inputs(case, folder):
    name, B, N, Hq, Hkv, D, layout, dt = case[:8]
    path = os.path.join(folder, name + ".safetensors")
    if name.startswith("seed") and layout == "nhd":
        seed_file = os.path.join(folder, "seed-sagerun.safetensors")
        if not os.path.exists(seed_file):  # the seed workload, as sagerun generates it
            rc, out = run([SAGERUN, "run", "--variant", "baseline", "--iterations", "1",
                           "--warmup", "0", "--save-inputs", seed_file])
            if rc != 0:
                raise RuntimeError("sagerun run --save-inputs failed:\n" + out)
        t = read_safetensors(seed_file)
        q, k, v = (t[x].to("cuda", DTYPES[dt]) for x in ("q", "k", "v"))
    else:
        g = torch.Generator(device="cuda").manual_seed(zlib.crc32(name.encode()))
        KV = kv_len_of(case)
        shape_q = (B, N, Hq, D) if layout == "nhd" else (B, Hq, N, D)
        shape_kv = (B, KV, Hkv, D) if layout == "nhd" else (B, Hkv, KV, D)
        kw = dict(device="cuda", generator=g)
        q = (torch.randn(shape_q, **kw) * 2).to(DTYPES[dt])
        bias = torch.randn(D, **kw) * 4  # per-channel K bias: what smoothing is for
        k = (torch.randn(shape_kv, **kw) * 2 + bias).to(DTYPES[dt])
        v = torch.randn(shape_kv, **kw).to(DTYPES[dt])
    write_safetensors(path, {"q": q, "k": k, "v": v})
    return path, q, k, v


def check_k_mean(case, path, k, env_host, results):
    name, layout = case[0], case[6]
    seq_dim = 1 if layout == "nhd" else 2
    km = k.mean(dim=seq_dim, keepdim=True)
    for backend, env in (("cuda", None), ("host", env_host)):
        out = path + "." + backend + ".kmean"
        rc, log = run([KMEAN_DUMP, path, layout, backend, out], env=env)
        if rc != 0:
            results.append((name, "k_mean " + backend, "error", log.strip()))
            continue
        with open(out, "rb") as f:
            got = torch.frombuffer(bytearray(f.read()), dtype=km.dtype)
        d = differing(got, km)
        note = "of %d" % km.numel()
        if d:
            note += "; " + first_difference(got.reshape(km.shape), km)
        results.append((name, "k_mean " + backend, d, note))


def sage_pipeline(q, k, v, layout, causal, pv_accum):
    from sageattention.core import sageattn_qk_int8_pv_fp8_cuda
    return sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout=layout.upper(), is_causal=causal,
                                        qk_quant_gran="per_warp", pv_accum_dtype=pv_accum,
                                        smooth_k=True, smooth_v=False)


def sagerun_output(variant, path, case, folder, tag):
    name, B, N, Hq, Hkv, D, layout, dt = case[:8]
    out = os.path.join(folder, "%s.%s.out.safetensors" % (tag, variant))
    if is_causal(case):  # --inputs files do not say causal: a workload file does
        # (kv_len comes from the file's k, as SageAttention's from k: a workload with an input
        # file does not say it)
        wl = os.path.join(folder, "%s.workload.json" % tag)
        with open(wl, "w") as f:
            json.dump({"name": tag, "shape": [B, N, Hq, D], "heads_kv": Hkv,
                       "layout": layout.upper(), "dtype": "bf16" if dt == "BF16" else "fp16",
                       "causal": True, "input": {"source": "safetensors", "path": path}}, f)
        src = ["--workload", wl]
    else:
        src = ["--inputs", path, "--layout", layout]
    rc, log = run([SAGERUN, "run", "--variant", variant] + src +
                  ["--iterations", "1", "--warmup", "0", "--save-output", out])
    if rc != 0:
        return None, log
    return read_safetensors(out)["o"], log


def check_refused(case, path, variants, folder, results):
    """A problem the sage2 variants must refuse by name: "refused" passes, an output fails."""
    for var in variants:
        o, log = sagerun_output(var, path, case, folder, case[0])
        last = log.strip().splitlines()[-1] if log.strip() else ""
        if o is None and "does not declare" in log:
            results.append((case[0], "refused " + var, 0, last))
        else:
            results.append((case[0], "refused " + var, "not refused", last))


def check_end_to_end(case, path, q, k, v, variants, folder, results):
    name, layout, dt = case[0], case[6], case[7]
    if expects_refusal(case):
        return check_refused(case, path, variants, folder, results)
    refs = {}
    for var in variants:
        acc = PV_ACCUM.get(var, "fp32+fp32")
        if acc not in refs:
            refs[acc] = sage_pipeline(q, k, v, layout, is_causal(case), acc)
            torch.cuda.synchronize()
        ref = refs[acc]
        o, log = sagerun_output(var, path, case, folder, name)
        if o is None:
            kind = "unsupported" if "not supported" in log else "error"
            results.append((name, "e2e " + var, kind, log.strip().splitlines()[-1] if log else ""))
            continue
        d = differing(o, ref)
        note = "of %d" % ref.numel()
        if d or d is None:
            note += "; " + first_difference(o, ref)
        if name == "seed":
            note += "; sha256 sagerun %s sage %s" % (hashlib.sha256(tensor_bytes(o)).hexdigest(),
                                                     hashlib.sha256(tensor_bytes(ref)).hexdigest())
        results.append((name, "e2e " + var + " (" + acc + ")", d, note))
        if d:  # with torch's k_mean in the file: is what remains the kernel's?
            seq_dim = 1 if layout == "nhd" else 2
            km_path = path + ".with-kmean.safetensors"
            write_safetensors(km_path, {"q": q, "k": k, "v": v,
                                        "k_mean": k.mean(dim=seq_dim, keepdim=True)})
            o2, log2 = sagerun_output(var, km_path, case, folder, name + "-km")
            d2 = differing(o2, ref) if o2 is not None else "error"
            note2 = first_difference(o2, ref) if o2 is not None and d2 else ""
            results.append((name, "e2e " + var + " with torch's k_mean", d2, note2))


# Small files for test/gpu/golden15 (`--write-golden DIR`): q, k, v and SageAttention's outputs
# of both sm89 kernels, so that `make test-gpu` checks causal, bf16 and HND without
# SageAttention. The name says the case: test_sage2_golden.c reads "causal" and "hnd" from it.
GOLDEN_CASES = [
    ("causal-nhd-f16-b2-n333-h2-kv1", 2, 333, 2, 1, 128, "nhd", "F16", True),
    ("full-hnd-bf16-b1-n700-h2", 1, 700, 2, 2, 128, "hnd", "BF16", False),
    ("causal-hnd-bf16-b2-n200-h3-d64", 2, 200, 3, 3, 64, "hnd", "BF16", True),
    ("causal-nhd-f16-b1-n1-h2", 1, 1, 2, 2, 128, "nhd", "F16", True),
]


def write_golden(folder, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for case in GOLDEN_CASES:
        name, layout = case[0], case[6]
        _, q, k, v = make_inputs(case, folder)
        t = {"q": q, "k": k, "v": v}
        for acc, key in (("fp32+fp32", "o_sm89_f32acc"), ("fp32+fp16", "o_sm89_f16acc")):
            t[key] = sage_pipeline(q, k, v, layout, is_causal(case), acc)
            t[key + "_again"] = sage_pipeline(q, k, v, layout, is_causal(case), acc)
        torch.cuda.synchronize()
        for key in ("o_sm89_f32acc", "o_sm89_f16acc"):  # deterministic, or not a golden file
            again = t.pop(key + "_again")
            if differing(t[key], again) != 0:
                raise RuntimeError("%s: SageAttention's %s differs between two runs" % (name, key))
        path = os.path.join(out_dir, name + ".safetensors")
        write_safetensors(path, t)
        print("golden: wrote %s (%d bytes)" % (path, os.path.getsize(path)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a subset of the cases")
    ap.add_argument("--variants",
                    default="baseline,interleave-softmax,warp-specialized,baseline-fp16acc")
    ap.add_argument("--set", choices=("all", "square", "kv_len"), default="all",
                    help="the q_len = kv_len cases, the kv_len != q_len ones, or both")
    ap.add_argument("--only", default="", help="comma-separated case names (overrides --quick)")
    ap.add_argument("--no-e2e", action="store_true", help="k_mean only")
    ap.add_argument("--write-golden", metavar="DIR", help="write the small golden files (needs "
                    "sageattention) into DIR and exit")
    args = ap.parse_args()
    for f in (SAGERUN, KMEAN_DUMP):
        if not os.access(f, os.X_OK):
            sys.exit("parity: %s is missing: run make first" % f)
    if not torch.cuda.is_available():
        sys.exit("parity: no CUDA device for torch")
    props = torch.cuda.get_device_properties(0)
    tdev = "%dx%d" % (props.multi_processor_count, props.max_threads_per_multi_processor)
    env_host = dict(os.environ, SAGERUN_TORCH_DEVICE=tdev)
    e2e = not args.no_e2e
    if e2e:
        try:
            import sageattention.core  # noqa: F401
        except Exception as exc:  # not built here: k_mean only
            print("parity: sageattention is not importable (%s): end-to-end skipped" % exc)
            e2e = False
    folder = os.environ.get("OUT") or tempfile.mkdtemp(prefix="sagerun-parity-")
    os.makedirs(folder, exist_ok=True)
    if args.write_golden:
        if not e2e:
            sys.exit("parity: --write-golden needs sageattention")
        write_golden(folder, args.write_golden)
        return 0
    print("parity: %s (%s), torch %s, files in %s" % (props.name, tdev, torch.__version__, folder))
    results = []
    cases = (CASES if args.set != "kv_len" else []) + (KV_CASES if args.set != "square" else [])
    for case in cases:
        if args.only and case[0] not in args.only.split(","):
            continue
        if not args.only and args.quick and case[0] not in QUICK and case not in KV_CASES:
            continue
        try:
            path, q, k, v = make_inputs(case, folder)
            if not is_causal(case):  # k_mean does not depend on the mask (KV rows of k)
                check_k_mean(case, path, k, env_host, results)
            if e2e:
                check_end_to_end(case, path, q, k, v, args.variants.split(","), folder, results)
        except Exception as exc:
            results.append((case[0], "setup", "error", repr(exc)))
        done = [r for r in results if r[0] == case[0]]
        for r in done:
            status = "ok  " if r[2] == 0 else ("skip" if r[2] == "unsupported" else "FAIL")
            print("%s %-18s %-40s %s %s" % (status, r[0], r[1], r[2], r[3]), flush=True)
        # free the case's tensors before the next one
        torch.cuda.empty_cache()
    failed = [r for r in results if r[2] != 0 and r[2] != "unsupported"
              and "with torch's k_mean" not in r[1]]
    with open(os.path.join(folder, "parity.json"), "w") as f:
        json.dump({"device": props.name, "torch_device": tdev, "torch": torch.__version__,
                   "results": [list(r) for r in results], "failed": len(failed)}, f, indent=1)
    print("parity: %d comparisons, %d failed" % (len(results), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
