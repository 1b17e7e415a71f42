"""PyTorch twin of the task `mlp_deit_small`.

DeiT-Small, blocks.0.mlp: timm Mlp(384, 1536): fc1, GELU, fc2 (timm deit_small_patch16_224).
The MLP of a DeiT-Small block over 197 tokens (224x224 image, 16x16 patches, class token):
Linear 384 -> 1536, exact GELU, Linear 1536 -> 384.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(384, 1536)
        self.fc2 = nn.Linear(1536, 384)

    def forward(self, x):
        fc1 = self.fc1(x)
        gelu = F.gelu(fc1)
        fc2 = self.fc2(gelu)
        return fc2


def get_inputs():
    return [
        torch.empty(1, 197, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
