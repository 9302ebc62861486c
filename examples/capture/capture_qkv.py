#!/usr/bin/env python3
"""Capture q, k, v of an attention layer with a PyTorch forward hook into a safetensors file that
`sagerun run/compare --inputs FILE` accepts.

    python3 capture_qkv.py --out qkv.safetensors [--tokens 4096 --heads 8 --dim 128]
    sagerun compare --inputs qkv.safetensors --json report.json

In your own model: register the same hook on the module that receives q, k, v (the "attention
core" that calls scaled_dot_product_attention), run one forward pass, save. The file holds fp16
tensors named q, k, v in NHD layout [B, N, H, D] and a "layout" entry in its metadata.
"""
import argparse
import json
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionCore(nn.Module):
    """softmax(q·kᵀ/√d)·v on [B, H, N, D] tensors: the module the hook watches."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


class Block(nn.Module):
    """A small self-attention block, standing in for a layer of a real model."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.core = AttentionCore()
        self.out = nn.Linear(width, width)

    def forward(self, x):
        b, n, w = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        y = self.core(q, k, v)  # [B, H, N, D]
        return self.out(y.transpose(1, 2).reshape(b, n, w))


def save_safetensors(path, tensors, metadata):
    """Writes a safetensors file (uses the safetensors package when installed)."""
    try:
        from safetensors.torch import save_file
        save_file(tensors, path, metadata=metadata)
        return
    except ImportError:
        pass
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        data = t.contiguous().cpu().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": {torch.float16: "F16", torch.bfloat16: "BF16"}[t.dtype],
                        "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    block = Block(args.heads * args.dim, args.heads).to(device).half()
    captured = {}

    def hook(module, inputs, output):
        # inputs are [B, H, N, D]; sagerun's default layout is NHD [B, N, H, D]
        for name, t in zip("qkv", inputs):
            captured[name] = t.detach().transpose(1, 2).contiguous()
        captured["o_torch"] = output.detach().transpose(1, 2).contiguous()

    handle = block.core.register_forward_hook(hook)
    with torch.no_grad():
        block(torch.randn(1, args.tokens, args.heads * args.dim, device=device, dtype=torch.half))
    handle.remove()
    save_safetensors(args.out, captured, {"layout": "NHD", "source": "capture_qkv.py",
                                          "model": f"Block(width={args.heads * args.dim}, "
                                                   f"heads={args.heads})"})
    print(f"wrote {args.out}: q, k, v {tuple(captured['q'].shape)} fp16 NHD "
          f"(+ o_torch, PyTorch's output for comparison)")


if __name__ == "__main__":
    main()
