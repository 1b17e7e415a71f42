"""PyTorch twin of the task `mlp_deit_tiny`.

DeiT-Tiny, blocks.0.mlp: timm Mlp(192, 768): fc1, GELU, fc2 (timm deit_tiny_patch16_224).
The transformer MLP of DeiT-Tiny over 197 tokens of a 224x224 image: Linear 192 -> 768, exact
GELU, Linear 768 -> 192. The input is the block's LayerNorm output.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(192, 768)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(768, 192)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.fc2(x)
        return x


def get_inputs():
    return [
        torch.empty(1, 197, 192).normal_(0, 1),
    ]


def get_init_inputs():
    return []
