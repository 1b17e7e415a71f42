"""PyTorch twin of the task `layer_norm_convnext_tiny_channels_last`.

ConvNeXt-Tiny, features.1.0.block.2: torch.nn.LayerNorm(96, eps=1e-6)
(torchvision.models.convnext_tiny).
LayerNorm over the 96 channels of the channels-last 56x56 map after the 7x7 depthwise
convolution of the first block (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(96, eps=1e-6)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [
        torch.empty(1, 56, 56, 96).normal_(0.0, 2.0),
    ]


def get_init_inputs():
    return []
