"""PyTorch twin of the task `attention_deit_tiny`.

DeiT-Tiny, blocks.0.attn: timm Attention(192, num_heads=3, qkv_bias=True) (non-fused path) (timm
deit_tiny_patch16_224).
Multi-head self-attention of DeiT-Tiny over 197 tokens (196 patches of a 224x224 image and the
class token): fused qkv projection 192 -> 576, 3 heads of 64, scaled scores, softmax, weighted
values, output projection. The input is the block's LayerNorm output.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_heads = 3
        self.head_dim = 64
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(192, 576)
        self.proj = nn.Linear(192, 192)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return x


def get_inputs():
    return [
        torch.empty(1, 197, 192).normal_(0, 1),
    ]


def get_init_inputs():
    return []
