"""torch.nn.functional of the stand-in torch: scaled_dot_product_attention, recorded with the
backend sdpa_kernel enabled, returning a new [B, H, N, D] tensor."""
import torch
from torch.nn import attention


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    backend = attention.ENABLED[-1] if attention.ENABLED else None
    torch.LOG.append(("sdpa", backend, q, k, v, is_causal, scale, enable_gqa,
                      torch.cuda.current_stream(), attn_mask))
    return torch.Tensor(0xDEAD0000, q.shape, q.dtype)
