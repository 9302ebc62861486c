# Third-party attention kernels as sagerun variants for the problems beyond one length (plugin
# ABI 1.2: kv_len, causal/window alignments, softcap, varlen). Each declares exactly what it does;
# the host refuses any other problem before create, naming the feature.
#
#   torch-varlen     torch.nn.attention.varlen.varlen_attn (FlashAttention's varlen kernel): packed
#                    sequences, dense ones as equal lengths (NHD), causal and window aligned
#                    bottom-right as FlashAttention aligns them. What this torch's varlen_attn
#                    takes is read from its signature at create (it changed between releases: 2.10
#                    took is_causal, later ones take window_size, where causal is (-1, 0); see
#                    torch/nn/attention/varlen.py in github.com/pytorch/pytorch, read for this file
#                    at commit 000459dc039a); a problem needing an argument it lacks is
#                    sagerun.Unsupported, naming the argument. A paged cache goes in place with
#                    its block table where this torch's varlen_attn takes block_table.
#   torch-flex       torch.nn.attention.flex_attention (compiled at create, param compile=0 runs it
#                    eagerly) with a block mask built at create from the problem: kv_len, causal
#                    and window in either alignment, softcap as a score_mod, varlen as a document
#                    mask over the packed tensors. A paged cache is read in place: its
#                    pages * page_size slots are one packed key sequence, each slot's sequence
#                    and position taken from the block table at create, so the document mask
#                    does the paging (a page read by two sequences is refused).
#   torch-sdpa-mask  F.scaled_dot_product_attention with an explicit boolean attn_mask built at
#                    create: kv_len, causal and window in either alignment. SDPA has no soft-cap:
#                    not declared.
#
# The masks are sagerun.h's one rule (sagerun_problem_key_range): row i of q_len queries and
# kv_len keys has its diagonal at i (top-left) or i + kv_len - q_len (bottom-right); causal keeps
# keys j <= diagonal, a window (left, right) keys diagonal - left <= j <= diagonal + right (-1:
# unbounded). A row attending no key writes 0. q, k, v are sagerun's buffers as torch tensors (no
# copy; NHD [B, N, H, D] is viewed as [B, H, N, D] by a transpose); each copies its result into o.
#
#   SAGERUN_PYTHON=/opt/torch/.venv/bin/python3 sagerun compare \
#       --plugin examples/python/torch_features.py --shape 2,1024,16,4,128 --kv-len 4096 \
#       --causal=bottom-right --variant torch-varlen --variant torch-flex \
#       --variant torch-sdpa-mask --min-cos 0.999
#
# sagerun-variant: torch-varlen run=run_varlen create=create_varlen backend=cuda min_cc=80 dtypes=fp16,bf16 features=kv_len,causal-bottom-right,window,varlen,paged description="torch varlen_attn (FlashAttention varlen)"
# sagerun-variant: torch-flex run=run_flex create=create_flex backend=cuda min_cc=80 dtypes=fp16,bf16 features=kv_len,causal-top-left,causal-bottom-right,window,softcap,varlen,paged param="compile:bool:1:torch.compile flex_attention at create" description="torch flex_attention with a block mask"
# sagerun-variant: torch-sdpa-mask run=run_sdpa_mask create=create_sdpa_mask backend=cuda min_cc=80 dtypes=fp16,bf16 features=kv_len,causal-top-left,causal-bottom-right,window description="torch SDPA with a boolean attn_mask"
import inspect
import math

import torch
import torch.nn.functional as F

import sagerun


# ---- the mask rule, on index tensors (torch or numpy: operators only) ----------------------------

def diagonal_offset(p, q_len, kv_len):
    """What row i's diagonal key adds to i: kv_len - q_len bottom-right, 0 top-left."""
    return kv_len - q_len if p.align == "bottom-right" else 0


def allowed(p, q_idx, kv_idx, offset):
    """Whether query q_idx attends key kv_idx (broadcasting), the diagonal at q_idx + offset;
    None where every pair is attended (no causal, no window)."""
    diag = q_idx + offset
    keep = None
    bounds = []
    if p.causal:
        bounds.append(kv_idx <= diag)
    if p.window is not None:
        left, right = p.window
        if right >= 0:
            bounds.append(kv_idx <= diag + right)
        if left >= 0:
            bounds.append(kv_idx >= diag - left)
    for b in bounds:
        keep = b if keep is None else keep & b
    return keep


def token_tables(p, q_lens, kv_lens):
    """Per packed token (lists): q_doc, q_pos, q_offset (its sequence, its row in it, its
    diagonal's offset) and kv_doc, kv_pos: the document mask's tables for sequences of q_lens
    query rows and kv_lens keys, packed one after the other."""
    t = {"q_doc": [], "q_pos": [], "q_offset": [], "kv_doc": [], "kv_pos": []}
    for b, (n, m) in enumerate(zip(q_lens, kv_lens)):
        t["q_doc"] += [b] * n
        t["q_pos"] += list(range(n))
        t["q_offset"] += [diagonal_offset(p, n, m)] * n
        t["kv_doc"] += [b] * m
        t["kv_pos"] += list(range(m))
    return t


def document_allowed(p, t, q_idx, kv_idx):
    """The varlen mask: same sequence, and the rule within it (t: token_tables as arrays)."""
    same = t["q_doc"][q_idx] == t["kv_doc"][kv_idx]
    keep = allowed(p, t["q_pos"][q_idx], t["kv_pos"][kv_idx], t["q_offset"][q_idx])
    return same if keep is None else same & keep


def page_slot_tables(p, block_table, kv_lens):
    """The key tables of a paged cache read in place, [pages * page_size, Hkv, D] as one row per
    slot: kv_doc (the sequence whose key the slot holds, -1 for a slot no sequence reads) and
    kv_pos (that key's index in its sequence). block_table: B lists of pages_per_seq page
    numbers; kv_lens: each sequence's keys. A page read by two sequences has no single owner:
    Unsupported (a shared prefix needs a mask over logical keys)."""
    ps = p.page_size
    doc, pos = [-1] * (p.pages * ps), [0] * (p.pages * ps)
    for b, pages in enumerate(block_table):
        for j in range(kv_lens[b]):
            slot = pages[j // ps] * ps + j % ps
            if doc[slot] != -1:
                raise sagerun.Unsupported("page %d is read by sequences %d and %d: a mask over "
                                          "physical slots needs one owner per page"
                                          % (slot // ps, doc[slot], b))
            doc[slot], pos[slot] = b, j
    return {"kv_doc": doc, "kv_pos": pos}


# ---- shared ------------------------------------------------------------------------------------

def _bhnd(x, layout):
    """The [B, H, N, D] view of a dense tensor in sagerun's layout."""
    return x if layout == "HND" else x.transpose(1, 2)


def _packed_bhnd(x):
    """A packed [total, H, D] tensor as one sequence [1, H, total, D]."""
    return x.unsqueeze(0).transpose(1, 2)


def _no_paged(p):
    if p.page_size:
        raise sagerun.Unsupported("paged K/V is not done by this variant")


def _lengths(p, call):
    """Each sequence's (query rows, keys) from the host's cu_seqlens, or the dense lengths."""
    if not p.varlen:
        return [p.seq_len] * p.batch, [p.kv_len] * p.batch
    cu_q, cu_kv = call.cu_seqlens_q.tolist(), call.cu_seqlens_kv.tolist()
    return ([cu_q[b + 1] - cu_q[b] for b in range(p.batch)],
            [cu_kv[b + 1] - cu_kv[b] for b in range(p.batch)])


# ---- torch-varlen --------------------------------------------------------------------------------

def _varlen_window(p):
    """varlen_attn's window_size (left, right) for the problem: causal is (-1, 0), a window its
    (left, right), right capped at 0 under causal; None for full attention."""
    if p.window is None:
        return (-1, 0) if p.causal else None
    left, right = p.window
    if p.causal:
        right = 0 if right < 0 else min(right, 0)
    return (left, right)


def create_varlen(call):
    from torch.nn.attention.varlen import varlen_attn
    p = call.problem
    takes = inspect.signature(varlen_attn).parameters
    if p.page_size and "block_table" not in takes:
        raise sagerun.Unsupported("this torch's varlen_attn has no block_table argument (a paged "
                                  "problem needs it)")
    kwargs = {}
    window = _varlen_window(p)
    if window is not None and "window_size" in takes:
        kwargs["window_size"] = window  # causal: (-1, 0), which varlen_attn reads as is_causal
    elif window is not None and p.window is None and "is_causal" in takes:
        kwargs["is_causal"] = True
    elif window is not None:
        raise sagerun.Unsupported("this torch's varlen_attn has no window_size argument (a %s "
                                  "problem needs it)" % ("window" if p.window else "causal"))
    if "scale" in takes:
        kwargs["scale"] = p.sm_scale
    elif abs(p.sm_scale - 1 / math.sqrt(p.head_dim)) > 1e-12:
        raise sagerun.Unsupported("this torch's varlen_attn has no scale argument (the problem's "
                                  "sm_scale is not D**-0.5)")
    if p.varlen:
        q, k, v, o = call.q, call.k, call.v, call.o
        cu_q, cu_kv = call.cu_seqlens_q, call.cu_seqlens_kv
    else:
        if p.layout != "NHD":
            raise sagerun.Unsupported("varlen_attn takes packed [total, H, D]: NHD only")
        q, o = (x.reshape(p.batch * p.seq_len, p.heads_q, p.head_dim) for x in (call.q, call.o))
        if not p.page_size:
            k, v = (x.reshape(p.batch * p.kv_len, p.heads_kv, p.head_dim)
                    for x in (call.k, call.v))
        cu_q = torch.arange(0, (p.batch + 1) * p.seq_len, p.seq_len, dtype=torch.int32,
                            device=call.o.device)
        cu_kv = torch.arange(0, (p.batch + 1) * p.kv_len, p.kv_len, dtype=torch.int32,
                             device=call.o.device)
    if p.page_size:  # the cache in place, [pages, page_size, Hkv, D], with its table
        k, v = call.k, call.v
        kwargs["block_table"] = call.block_table.view(p.batch, p.pages_per_seq)
    args = (q, k, v, cu_q, cu_kv, p.seq_len, p.kv_len)
    return {"fn": varlen_attn, "args": args, "kwargs": kwargs, "o": o}


def run_varlen(call):
    s = call.state
    s["o"].copy_(s["fn"](*s["args"], **s["kwargs"]))


# ---- torch-flex ----------------------------------------------------------------------------------

def _flex_mask_mod(call):
    """The mask_mod of the problem, or None (full attention of dense sequences). Varlen and paged
    problems are one packed sequence of queries against one of keys (a paged cache's slots in
    place), masked by a document mask."""
    p = call.problem
    if p.varlen or p.page_size:
        q_lens, kv_lens = _lengths(p, call)
        tables = token_tables(p, q_lens, kv_lens)
        if p.page_size:
            rows = call.block_table.view(p.batch, p.pages_per_seq).tolist()
            tables.update(page_slot_tables(p, rows, kv_lens))
        t = {key: torch.tensor(value, dtype=torch.int32, device=call.o.device)
             for key, value in tables.items()}
        return lambda b, h, q_idx, kv_idx: document_allowed(p, t, q_idx, kv_idx)
    offset = diagonal_offset(p, p.seq_len, p.kv_len)
    if allowed(p, 0, 0, 0) is None:
        return None
    return lambda b, h, q_idx, kv_idx: allowed(p, q_idx, kv_idx, offset)


def _flex_tensors(call):
    """q, k, v, o as flex takes them, [B, H, N, D] views (no copy): dense as they are; varlen and
    paged as one packed sequence (a dense Q of a paged problem: NHD only, whose [B, N] rows pack
    without a copy); a paged K/V as its pages * page_size slots."""
    p = call.problem
    if not (p.varlen or p.page_size):
        return tuple(_bhnd(x, p.layout) for x in (call.q, call.k, call.v, call.o))
    if not p.varlen and p.layout != "NHD":
        raise sagerun.Unsupported("a paged cache with dense HND queries: the queries would need "
                                  "a copy to pack (NHD packs in place)")
    rows = p.total_q if p.varlen else p.batch * p.seq_len
    q, o = (_packed_bhnd(x.reshape(rows, p.heads_q, p.head_dim)) for x in (call.q, call.o))
    slots = p.pages * p.page_size if p.page_size else p.total_kv
    k, v = (_packed_bhnd(x.reshape(slots, p.heads_kv, p.head_dim)) for x in (call.k, call.v))
    return q, k, v, o


def create_flex(call):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    p = call.problem
    q, k, v, o = _flex_tensors(call)
    mask_mod = _flex_mask_mod(call)
    kwargs = {"scale": p.sm_scale, "enable_gqa": p.heads_q != p.heads_kv}
    if mask_mod is not None:
        kwargs["block_mask"] = create_block_mask(mask_mod, None, None, q.shape[2], k.shape[2],
                                                 device=call.o.device)
    if p.softcap > 0:
        cap = p.softcap
        kwargs["score_mod"] = lambda score, b, h, q_idx, kv_idx: cap * torch.tanh(score / cap)
    fn = torch.compile(flex_attention) if call.params.get("compile", True) else flex_attention
    state = {"fn": fn, "args": (q, k, v), "kwargs": kwargs, "o": o}
    run_flex(call, state)  # compiles outside the timing
    return state


def run_flex(call, state=None):
    s = state or call.state
    s["o"].copy_(s["fn"](*s["args"], **s["kwargs"]))


# ---- torch-sdpa-mask -----------------------------------------------------------------------------

def create_sdpa_mask(call):
    p = call.problem
    _no_paged(p)
    if p.varlen or p.softcap > 0:
        raise sagerun.Unsupported("SDPA with a mask does dense problems without softcap")
    dev = call.o.device
    q_idx = torch.arange(p.seq_len, device=dev).view(-1, 1)
    kv_idx = torch.arange(p.kv_len, device=dev).view(1, -1)
    mask = allowed(p, q_idx, kv_idx, diagonal_offset(p, p.seq_len, p.kv_len))
    kwargs = {"scale": p.sm_scale, "attn_mask": mask}
    if p.heads_q != p.heads_kv:
        kwargs["enable_gqa"] = True  # torch >= 2.5
    empty = None
    if mask is not None and not bool(mask.any(dim=1).all()):
        empty = ~mask.any(dim=1).view(-1, 1)  # rows attending no key: written 0
    return {"args": tuple(_bhnd(x, p.layout) for x in (call.q, call.k, call.v)),
            "kwargs": kwargs, "o": _bhnd(call.o, p.layout), "empty": empty}


def run_sdpa_mask(call):
    s = call.state
    out = F.scaled_dot_product_attention(*s["args"], **s["kwargs"])
    if s["empty"] is not None:
        out = out.masked_fill(s["empty"], 0)
    s["o"].copy_(out)
