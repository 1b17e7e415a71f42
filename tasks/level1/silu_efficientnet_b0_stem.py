"""PyTorch twin of the task `silu_efficientnet_b0_stem`.

EfficientNet-B0, features.0.2: torch.nn.SiLU (torchvision.models.efficientnet_b0).
SiLU of the stem (3x3 stride-2 conv to 32 channels) on a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 32, 112, 112).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
