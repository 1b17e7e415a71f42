"""PyTorch twin of the task `matmul_scores_deit_base`.

DeiT-Base, blocks.0.attn (attn = q @ k.transpose(-2, -1)): torch.matmul (timm vision_transformer.py
Attention (deit_base_patch16_224)).
Attention scores of 12 heads over 197 tokens (224x224 image), head size 64: a batched product with
the second operand transposed; q is already scaled.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k):
        return q @ k.transpose(-2, -1)


def get_inputs():
    return [
        torch.empty(1, 12, 197, 64).uniform_(-1, 1),
        torch.empty(1, 12, 197, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
