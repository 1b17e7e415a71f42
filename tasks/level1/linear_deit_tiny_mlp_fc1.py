"""PyTorch twin of the task `linear_deit_tiny_mlp_fc1`.

DeiT-Tiny, blocks.0.mlp.fc1: torch.nn.Linear(192, 768) (timm deit_tiny_patch16_224).
The MLP's first linear (192 -> 768) over 197 tokens of a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [
        torch.empty(1, 197, 192).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [192, 768, True]
