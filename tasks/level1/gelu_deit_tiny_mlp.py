"""PyTorch twin of the task `gelu_deit_tiny_mlp`.

DeiT-Tiny, blocks.0.mlp.act: torch.nn.GELU (timm deit_tiny_patch16_224).
Exact (erf) GELU between the MLP's two linears: 197 tokens (196 patches and the class token),
hidden size 768.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 197, 768).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
