"""PyTorch twin of the task `layernorm_qkv_deit_small`.

DeiT-Small, blocks.0 (norm1, attn.qkv): timm LayerNorm(384, eps=1e-6) + Linear(384, 1152) (timm
deit_small_patch16_224).
The pre-attention LayerNorm (eps 1e-6) of a DeiT-Small block and the fused query/key/value
projection 384 -> 1152 over 197 tokens (224x224 image, 16x16 patches and the class token).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(384, eps=1e-06)
        self.qkv = nn.Linear(384, 1152)

    def forward(self, x):
        return self.qkv(self.norm1(x))


def get_inputs():
    return [
        torch.empty(1, 197, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
