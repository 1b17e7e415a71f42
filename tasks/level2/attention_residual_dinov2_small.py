"""PyTorch twin of the task `attention_residual_dinov2_small`.

DINOv2 ViT-S/14, blocks.0 (x + ls1(attn(norm1(x)))): timm Block: LayerNorm(384, eps=1e-6),
Attention(384, num_heads=6, qkv_bias=True), LayerScale(384) (timm vit_small_patch14_dinov2).
The attention half of a DINOv2-small block over 257 tokens (16x16 patches of a 224x224 image and
the class token): LayerNorm, fused qkv projection 384 -> 1152, 6 heads of 64, softmax attention,
output projection, layer scale (drawn from [0.1, 1]) and the residual add.
"""

import torch
import torch.nn as nn


def attention(x, qkv, proj, num_heads):
    """timm Attention.forward, non-fused path."""
    B, N, C = x.shape
    head_dim = C // num_heads
    qkv = qkv(x).reshape(B, N, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    q = q * head_dim ** -0.5
    attn = q @ k.transpose(-2, -1)
    attn = attn.softmax(dim=-1)
    x = attn @ v
    x = x.transpose(1, 2).reshape(B, N, C)
    return proj(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls1_gamma = nn.Parameter(1e-5 * torch.ones(384))
        self.norm1 = nn.LayerNorm(384, eps=1e-06)
        self.attn_qkv = nn.Linear(384, 1152)
        self.attn_proj = nn.Linear(384, 384)

    def forward(self, x):
        return x + attention(self.norm1(x), self.attn_qkv, self.attn_proj, 6) * self.ls1_gamma


def get_inputs():
    return [
        torch.empty(1, 257, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
