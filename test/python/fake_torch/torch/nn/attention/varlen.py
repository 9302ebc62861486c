"""torch.nn.attention.varlen of the stand-in torch: varlen_attn with the signature of torch 2.11's
(torch/nn/attention/varlen.py of pytorch/pytorch), recorded, returning a new [total_q, H, D]
tensor."""
import torch


def varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, *, return_aux=None,
                scale=None, window_size=(-1, -1), k_cache=None, v_cache=None, cache_seqlens=None,
                cache_batch_idx=None, page_table=None, seqused_k=None):
    torch.LOG.append(("varlen_attn", query, key, value, cu_seq_q, cu_seq_k, max_q, max_k,
                      {"scale": scale, "window_size": window_size},
                      torch.cuda.current_stream()))
    return torch.Tensor(0xBEEF0000, query.shape, query.dtype)
