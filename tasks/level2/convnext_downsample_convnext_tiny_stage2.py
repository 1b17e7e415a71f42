"""PyTorch twin of the task `convnext_downsample_convnext_tiny_stage2`.

ConvNeXt-Tiny, features.2: torchvision LayerNorm2d(96, eps=1e-6) + Conv2d(96, 192, 2, stride=2)
(torchvision.models.convnext_tiny).
The downsampling layer between ConvNeXt-Tiny's first two stages (224x224 image): LayerNorm over
the 96 channels of the 56x56 map (permute, normalise, permute back), then a 2x2 stride-2
convolution 96 -> 192 with bias (-> 28x28).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(96, eps=1e-06)
        self.conv = nn.Conv2d(96, 192, 2, stride=2)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.norm.normalized_shape, self.norm.weight, self.norm.bias, self.norm.eps)
        x = x.permute(0, 3, 1, 2)
        return self.conv(x)


def get_inputs():
    return [
        torch.empty(1, 96, 56, 56).normal_(0, 2),
    ]


def get_init_inputs():
    return []
