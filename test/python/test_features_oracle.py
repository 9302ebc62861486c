#!/usr/bin/env python3
"""The host reference variants against an oracle written here, on every problem of plugin ABI 1.2.

libsagerun is driven directly through ctypes (its structs restated below, checked against the
library where it can tell): a host context, a registry with the build's reference plugins,
inputs from numpy arrays (cu_seqlens and shuffled block tables built here), and `reference` and
`reference-mt` run on each case. The oracle is dense masked softmax in float64 over the full
[q, k] score matrix of each sequence and head, its mask taken from sagerun.h's text on
sagerun_mask_align (the library's key range is not called). The reference rounds its double
result to the output dtype once, so it must equal the oracle rounded (all but a tiny fraction of
elements, where the two orders of summation straddle a rounding midpoint) and lie within one ulp
of it everywhere; reference-mt must be byte-identical to reference.

Usage: test_features_oracle.py LIBSAGERUN PLUGIN_FOLDER (test/cli/test_features_oracle.sh finds
both from $SAGERUN). Exit status 0 when every case passes."""
import ctypes as C
import sys

import numpy as np

HOST, NHD, HND, F16, BF16 = 0, 0, 1, 0, 1
TOP_LEFT, BOTTOM_RIGHT = 0, 1


class Problem(C.Structure):
    """sagerun_problem of ABI 0.2 (sagerun.h)."""
    _fields_ = [(n, C.c_uint32) for n in ("struct_size", "batch", "seq_len", "heads_q",
                                          "heads_kv", "head_dim", "layout", "dtype", "causal")]
    _fields_ += [("sm_scale", C.c_float), ("kv_len", C.c_uint32), ("align", C.c_uint32),
                 ("window", C.c_uint32), ("window_left", C.c_int32),
                 ("window_right", C.c_int32), ("softcap", C.c_float)]
    _fields_ += [(n, C.c_uint32) for n in ("varlen", "total_q", "total_kv", "page_size",
                                          "pages", "pages_per_seq")]


class Sequences(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("count", C.c_uint32),
                ("cu_seqlens_q", C.c_void_p), ("cu_seqlens_kv", C.c_void_p),
                ("block_table", C.c_void_p)]


class Error(C.Structure):
    _fields_ = [("status", C.c_int), ("message", C.c_char * 512)]


class Geometry(C.Structure):
    """sagerun_launch_geometry (plugin.h)."""
    _fields_ = [(n, C.c_uint32) for n in ("struct_size", "cta_q", "cta_k", "warp_q", "warp_k",
                                          "threads_per_cta", "dynamic_shared_memory_bytes")]
    _fields_ += [("grid_ctas", C.c_uint64)]


P = C.c_void_p
PP = C.POINTER(C.c_void_p)
ERR = C.POINTER(Error)


def load_library(path):
    lib = C.CDLL(path)
    sigs = {
        "sagerun_problem_make": (Problem, [C.c_uint32] * 5),
        "sagerun_context_create": (C.c_int, [C.c_int, C.c_int, PP, ERR]),
        "sagerun_context_destroy": (None, [P]),
        "sagerun_registry_create": (C.c_int, [P, PP, ERR]),
        "sagerun_registry_add_path": (C.c_int, [P, C.c_char_p, ERR]),
        "sagerun_registry_find": (C.c_long, [P, C.c_char_p]),
        "sagerun_registry_destroy": (None, [P]),
        "sagerun_inputs_create_from_host_seq": (C.c_int, [P, C.POINTER(Problem),
                                                          C.POINTER(Sequences), P, P, P, PP,
                                                          ERR]),
        "sagerun_inputs_destroy": (None, [P]),
        "sagerun_instance_create": (C.c_int, [P, C.c_size_t, P, P, PP, ERR]),
        "sagerun_instance_prepare": (C.c_int, [P, C.POINTER(C.c_double), ERR]),
        "sagerun_instance_run": (C.c_int, [P, C.POINTER(C.c_double), ERR]),
        "sagerun_instance_output": (C.c_uint64, [P, C.POINTER(C.c_uint64)]),
        "sagerun_instance_geometry": (C.c_int, [P, C.POINTER(Geometry), ERR]),
        "sagerun_instance_destroy": (None, [P]),
        "sagerun_mem_fill": (C.c_int, [P, C.c_uint64, C.c_uint8, C.c_uint64, ERR]),
        "sagerun_mem_download": (C.c_int, [P, P, C.c_uint64, C.c_uint64, ERR]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def ok(status, err, what):
    if status != 0:
        raise RuntimeError("%s: status %d: %s" % (what, status, err.message.decode()))


# ---- the cases ----------------------------------------------------------------------------------
def case(name, B=2, N=24, Hq=2, Hkv=2, D=16, **kw):
    c = dict(name=name, B=B, N=N, Hq=Hq, Hkv=Hkv, D=D, kv=N, layout=NHD, dtype=F16, causal=0,
             align=TOP_LEFT, window=None, softcap=0.0, lens=None, page=0, scale=0.0)
    c.update(kw)
    return c


CASES = [
    case("dense (the 1.1 problem)"),
    case("causal, q_len = kv_len", causal=1),
    case("kv_len > q_len", kv=40),
    case("kv_len < q_len", N=40, kv=17, D=32),
    case("causal top-left, q_len = kv_len, an explicit scale", causal=1, scale=0.3125),
    case("window (5, 3)", N=32, window=(5, 3)),
    case("window left only (4, -1)", window=(4, -1)),
    case("window right only (-1, 2)", window=(-1, 2)),
    case("causal window (6, 0)", causal=1, window=(6, 0)),
    case("softcap 1.5", softcap=1.5),
    case("varlen", B=3, N=30, lens=[(7, 7), (30, 30), (12, 12)]),
    case("paged", kv=40, page=8),
    case("GQA (Hq 4, Hkv 2)", Hq=4, Hkv=2),
    case("HND", layout=HND, D=32),
    case("varlen + window", B=3, N=40, kv=50, lens=[(17, 23), (40, 50), (5, 9)], window=(6, 2)),
    case("paged + GQA (Hq 4, Hkv 2)", Hq=4, Hkv=2, kv=37, page=8),
    case("causal bottom-right + kv_len > q_len", N=20, kv=45, causal=1, align=BOTTOM_RIGHT),
    case("causal top-left + kv_len > q_len", N=20, kv=45, causal=1, align=TOP_LEFT),
    case("causal bottom-right, q_len > kv_len: empty rows", N=30, kv=12, causal=1,
         align=BOTTOM_RIGHT),
    case("causal top-left, q_len > kv_len", N=30, kv=12, causal=1),
    case("window bottom-right, decode-like (q 4, kv 50)", N=4, kv=50, window=(9, 0),
         causal=1, align=BOTTOM_RIGHT),
    case("softcap + window", N=32, softcap=1.5, window=(7, 7)),
    case("varlen + paged + causal bottom-right", B=3, N=20, kv=44, page=8, causal=1,
         align=BOTTOM_RIGHT, lens=[(20, 44), (1, 9), (13, 8), ]),
    case("varlen with an empty sequence and one without keys", B=4, N=16, kv=20, causal=1,
         align=BOTTOM_RIGHT, lens=[(5, 9), (0, 4), (6, 0), (16, 20)]),
    case("HND + kv_len", layout=HND, N=18, kv=33, Hq=4, Hkv=1),
    case("bf16: GQA, paged, causal bottom-right, softcap", dtype=BF16, Hq=4, Hkv=2, N=16, kv=40,
         page=16, causal=1, align=BOTTOM_RIGHT, softcap=2.0, D=32),
]


# ---- numbers: fp16 / bf16 bits, rounding, ulps --------------------------------------------------
def bf16_bits_to_f64(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def round_to(x, dtype):
    """x (float64) rounded once to nearest even in the dtype, as float64."""
    if dtype == F16:
        return x.astype(np.float16).astype(np.float64)  # numpy rounds from double directly
    m, e = np.frexp(x)
    quantum = np.ldexp(1.0, e - 8)  # bf16 keeps 8 significant bits (normal range only here)
    return np.where(x == 0, 0.0, np.round(x / quantum) * quantum)


def ulp(x, dtype):
    m, e = np.frexp(np.abs(x))
    bits, tiny = (11, 2.0 ** -24) if dtype == F16 else (8, 2.0 ** -133)
    return np.maximum(np.ldexp(1.0, e - bits), tiny)


def random_bits(rng, shape, dtype, mean=0.0):
    x = rng.standard_normal(shape) + mean
    if dtype == F16:
        return x.astype(np.float16).view(np.uint16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact: truncated


def to_f64(bits, dtype):
    return bits.view(np.float16).astype(np.float64) if dtype == F16 else bf16_bits_to_f64(bits)


# ---- the oracle ---------------------------------------------------------------------------------
def mask(c, q_len, kv_len):
    """[q_len, kv_len] booleans from sagerun.h: query i's diagonal key is d(i) = i (top-left) or
    i + kv_len - q_len (bottom-right); causal attends j <= d(i); a window (L, R) attends
    d(i) - L <= j <= d(i) + R, -1 leaving that side open."""
    i = np.arange(q_len)[:, None]
    j = np.arange(kv_len)[None, :]
    d = i + (kv_len - q_len if c["align"] == BOTTOM_RIGHT else 0)
    m = np.ones((q_len, kv_len), dtype=bool)
    if c["causal"]:
        m &= j <= d
    if c["window"] is not None:
        left, right = c["window"]
        if left >= 0:
            m &= j >= d - left
        if right >= 0:
            m &= j <= d + right
    return m


def oracle_sequence(c, q, k, v):
    """q [q_len, Hq, D], k and v [kv_len, Hkv, D] in float64 -> o [q_len, Hq, D]."""
    q_len, kv_len = q.shape[0], k.shape[0]
    scale = float(np.float32(c["scale"])) if c["scale"] > 0 else 1.0 / np.sqrt(c["D"])
    allowed = mask(c, q_len, kv_len)
    o = np.zeros(q.shape)
    group = c["Hq"] // c["Hkv"]
    for h in range(c["Hq"]):
        s = scale * (q[:, h, :] @ k[:, h // group, :].T)
        if c["softcap"] > 0:
            cap = float(np.float32(c["softcap"]))
            s = cap * np.tanh(s / cap)
        s = np.where(allowed, s, -np.inf)
        rows = allowed.any(axis=1)
        top = np.where(rows, s.max(axis=1, initial=-np.inf), 0.0)
        w = np.where(allowed, np.exp(s - top[:, None]), 0.0)
        total = np.where(rows, w.sum(axis=1), 1.0)
        o[:, h, :] = np.where(rows[:, None], (w / total[:, None]) @ v[:, h // group, :], 0.0)
    return o


# ---- one case: logical tensors, their storage, the problem --------------------------------------
def lengths(c):
    if c["lens"] is not None:
        return c["lens"]
    return [(c["N"], c["kv"])] * c["B"]


def build(c, rng):
    """The logical per-sequence tensors, the problem, the stored arrays and sequences."""
    B, Hq, Hkv, D, dt = c["B"], c["Hq"], c["Hkv"], c["D"], c["dtype"]
    lens = lengths(c)
    seqs = [(random_bits(rng, (ql, Hq, D), dt), random_bits(rng, (kl, Hkv, D), dt),
             random_bits(rng, (kl, Hkv, D), dt)) for ql, kl in lens]
    p = Problem(struct_size=C.sizeof(Problem), batch=B, seq_len=c["N"], heads_q=Hq, heads_kv=Hkv,
                head_dim=D, layout=c["layout"], dtype=dt, causal=c["causal"],
                sm_scale=c["scale"], kv_len=c["kv"], align=c["align"],
                window=int(c["window"] is not None), window_left=-1, window_right=-1,
                softcap=c["softcap"])
    if c["window"] is not None:
        p.window_left, p.window_right = c["window"]
    keep = {}
    if c["lens"] is not None:
        p.varlen, p.total_q, p.total_kv = 1, sum(a for a, _ in lens), sum(b for _, b in lens)
        keep["cu_q"] = np.concatenate([[0], np.cumsum([a for a, _ in lens])]).astype(np.int32)
        keep["cu_kv"] = np.concatenate([[0], np.cumsum([b for _, b in lens])]).astype(np.int32)
        q = np.concatenate([s[0] for s in seqs])
    elif c["layout"] == HND:
        q = np.stack([s[0].transpose(1, 0, 2) for s in seqs])
    else:
        q = np.stack([s[0] for s in seqs])
    if c["page"]:
        k, v = paged(c, p, seqs, lens, rng, keep)
    elif c["lens"] is not None:
        k, v = (np.concatenate([s[i] for s in seqs]) for i in (1, 2))
    elif c["layout"] == HND:
        k, v = (np.stack([s[i].transpose(1, 0, 2) for s in seqs]) for i in (1, 2))
    else:
        k, v = (np.stack([s[i] for s in seqs]) for i in (1, 2))
    keep.update(q=np.ascontiguousarray(q), k=np.ascontiguousarray(k), v=np.ascontiguousarray(v))
    return seqs, p, keep


def paged(c, p, seqs, lens, rng, keep):
    """K and V as [pages, page_size, Hkv, D]: each sequence's pages drawn from a shuffled order,
    two spare pages of noise, columns past a sequence's last page -1."""
    ps, Hkv, D = c["page"], c["Hkv"], c["D"]
    per_seq = -(-c["kv"] // ps)
    used = [-(-kl // ps) for _, kl in lens]
    pages = sum(used) + 2
    order = rng.permutation(pages)
    k = random_bits(rng, (pages, ps, Hkv, D), c["dtype"], 8.0)  # noise where no key is
    v = random_bits(rng, (pages, ps, Hkv, D), c["dtype"], 8.0)
    table = np.full((c["B"], per_seq), -1, dtype=np.int32)
    nxt = 0
    for b, (_, kl) in enumerate(lens):
        for col in range(used[b]):
            page = order[nxt]
            nxt += 1
            table[b, col] = page
            rows = slice(col * ps, min(kl, (col + 1) * ps))
            n = rows.stop - rows.start
            k[page, :n] = seqs[b][1][rows]
            v[page, :n] = seqs[b][2][rows]
    p.page_size, p.pages, p.pages_per_seq = ps, pages, per_seq
    keep["table"] = table
    return k, v


def oracle(c, seqs):
    """The expected output in O's storage layout, float64."""
    dt = c["dtype"]
    outs = [oracle_sequence(c, to_f64(q, dt), to_f64(k, dt), to_f64(v, dt)) for q, k, v in seqs]
    if c["lens"] is not None:
        return np.concatenate(outs)
    if c["layout"] == HND:
        return np.stack([o.transpose(1, 0, 2) for o in outs])
    return np.stack(outs)


def expected_rows(c):
    return c["Hq"] * sum(a for a, _ in lengths(c))


# ---- running a variant --------------------------------------------------------------------------
class Session:
    def __init__(self, lib, plugins):
        self.lib, self.err = lib, Error()
        self.ctx, self.reg = P(), P()
        ok(lib.sagerun_context_create(HOST, 0, C.byref(self.ctx), self.err), self.err,
           "context_create")
        ok(lib.sagerun_registry_create(self.ctx, C.byref(self.reg), self.err), self.err,
           "registry_create")
        ok(lib.sagerun_registry_add_path(self.reg, plugins.encode(), self.err), self.err,
           "registry_add_path " + plugins)

    def index(self, name):
        i = self.lib.sagerun_registry_find(self.reg, name.encode())
        if i < 0:
            raise RuntimeError("variant %s not found in the plugin folder" % name)
        return i

    def run(self, name, p, keep):
        """The variant's output bits (uint16) and its geometry's grid_ctas."""
        lib, err = self.lib, self.err
        seq = None
        if p.varlen or p.page_size:
            seq = Sequences(struct_size=C.sizeof(Sequences), count=p.batch)
            for field, key in (("cu_seqlens_q", "cu_q"), ("cu_seqlens_kv", "cu_kv"),
                               ("block_table", "table")):
                if key in keep:
                    setattr(seq, field, keep[key].ctypes.data)
        inputs, inst = P(), P()
        ok(lib.sagerun_inputs_create_from_host_seq(
            self.ctx, C.byref(p), C.byref(seq) if seq else None, keep["q"].ctypes.data,
            keep["k"].ctypes.data, keep["v"].ctypes.data, C.byref(inputs), err), err, "inputs")
        try:
            ok(lib.sagerun_instance_create(self.reg, self.index(name), self.ctx, inputs,
                                           C.byref(inst), err), err, name + " create")
            return self.finish(inst)
        finally:
            lib.sagerun_instance_destroy(inst)
            lib.sagerun_inputs_destroy(inputs)

    def finish(self, inst):
        lib, err = self.lib, self.err
        ok(lib.sagerun_instance_prepare(inst, None, err), err, "prepare")
        nbytes = C.c_uint64()
        o = lib.sagerun_instance_output(inst, C.byref(nbytes))
        # NaN everywhere first: an element the variant does not write shows
        ok(lib.sagerun_mem_fill(self.ctx, o, 0xFF, nbytes.value, err), err, "fill")
        ok(lib.sagerun_instance_run(inst, None, err), err, "run")
        out = np.empty(nbytes.value // 2, dtype=np.uint16)
        ok(lib.sagerun_mem_download(self.ctx, out.ctypes.data, o, nbytes.value, err), err,
           "download")
        g = Geometry(struct_size=C.sizeof(Geometry))
        ok(lib.sagerun_instance_geometry(inst, C.byref(g), err), err, "geometry")
        return out, g.grid_ctas


# ---- the checks ---------------------------------------------------------------------------------
def compare(c, bits, want):
    """Problems with the output bits against the oracle (empty list when it matches)."""
    dt = c["dtype"]
    got, want = to_f64(bits, dt), want.reshape(-1)
    problems = []
    if got.shape != want.shape:
        return ["%d elements, the oracle has %d" % (got.size, want.size)]
    if not np.isfinite(got).all():
        problems.append("%d elements not finite (not written?)" % (~np.isfinite(got)).sum())
        return problems
    rounded = round_to(want, dt)
    off = np.abs(got - want) / ulp(want, dt)
    differ = got != rounded
    if off.max() > 1.0:
        i = int(off.argmax())
        problems.append("element %d: %r, the oracle %r: %.3f ulp away"
                        % (i, got[i], want[i], off[i]))
    if differ.sum() > max(1, want.size // 1000):
        i = int(np.flatnonzero(differ)[0])
        problems.append("%d of %d elements differ from the oracle rounded (first %d: %r, %r)"
                        % (differ.sum(), want.size, i, got[i], rounded[i]))
    empty = want == 0
    if (bits[empty] & 0x7FFF).any():
        problems.append("an element whose oracle is 0 (a row attending no key) is not 0")
    return problems


def check_struct_sizes(lib):
    """The Problem struct above is the library's: sagerun_problem_make fills every field."""
    p = lib.sagerun_problem_make(1, 2, 3, 1, 4)
    assert p.struct_size == C.sizeof(Problem), (p.struct_size, C.sizeof(Problem))
    assert (p.batch, p.seq_len, p.heads_q, p.head_dim) == (1, 2, 3, 4)
    assert (p.window_left, p.window_right) == (-1, -1)


def run_case(s, c, rng):
    seqs, p, keep = build(c, rng)
    want = oracle(c, seqs)
    out = {}
    problems = []
    for name in ("reference", "reference-mt"):
        out[name], grid = s.run(name, p, keep)
        problems += ["%s: %s" % (name, m) for m in compare(c, out[name], want)]
        if grid != expected_rows(c):
            problems.append("%s: grid_ctas %d, %d query rows" % (name, grid, expected_rows(c)))
    if not np.array_equal(out["reference"], out["reference-mt"]):
        problems.append("reference-mt is not byte-identical to reference")
    return problems


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    lib = load_library(argv[1])
    check_struct_sizes(lib)
    s = Session(lib, argv[2])
    rng = np.random.default_rng(20261207)
    failed = 0
    for c in CASES:
        problems = run_case(s, c, rng)
        print("%s %s" % ("ok  " if not problems else "FAIL", c["name"]), flush=True)
        for m in problems:
            print("  | " + m)
        failed += bool(problems)
    print("---- %d of %d cases failed" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
