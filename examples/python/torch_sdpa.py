# torch's scaled_dot_product_attention as two sagerun variants, one per backend (CUDA, torch >= 2.3):
#
#   torch-sdpa-cudnn  SDPBackend.CUDNN_ATTENTION only
#   torch-sdpa-flash  SDPBackend.FLASH_ATTENTION only
#
# Each is restricted to its one backend, so a problem that backend cannot do fails with torch's
# reason instead of silently running another kernel. q, k, v are sagerun's buffers seen as torch
# tensors (no copy; NHD is viewed as [B, H, N, D] by a transpose); SDPA has no out= argument, so
# run copies its result into sagerun's o: one device copy of the output is in the timing. The
# output is not byte-exact with the sage2 kernels: judge it by tolerance, e.g.
#
#   SAGERUN_PYTHON=/opt/torch/.venv/bin/python3 sagerun compare --plugin examples/python/torch_sdpa.py \
#       --variant torch-sdpa-cudnn --variant torch-sdpa-flash --min-cos 0.9999
#
# sagerun-variant: torch-sdpa-cudnn run=cudnn create=create backend=cuda min_cc=80 description="torch SDPA, cuDNN backend (fp16/bf16)"
# sagerun-variant: torch-sdpa-flash run=flash create=create backend=cuda min_cc=80 description="torch SDPA, flash backend (fp16/bf16)"
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def _bhnd(x, layout):
    """The [B, H, N, D] view SDPA wants of a tensor in sagerun's layout."""
    return x if layout == "HND" else x.transpose(1, 2)


def create(call):
    p = call.problem
    state = {"q": _bhnd(call.q, p.layout), "k": _bhnd(call.k, p.layout),
             "v": _bhnd(call.v, p.layout), "o": _bhnd(call.o, p.layout),
             "args": {"is_causal": p.causal, "scale": p.sm_scale}}
    if p.heads_q != p.heads_kv:
        state["args"]["enable_gqa"] = True  # torch >= 2.5
    return state


def _sdpa(call, backend):
    s = call.state
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(s["q"], s["k"], s["v"], **s["args"])
    s["o"].copy_(out)


def cudnn(call):
    _sdpa(call, SDPBackend.CUDNN_ATTENTION)


def flash(call):
    _sdpa(call, SDPBackend.FLASH_ATTENTION)
