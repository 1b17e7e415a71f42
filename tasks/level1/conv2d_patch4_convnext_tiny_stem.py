"""PyTorch twin of the task `conv2d_patch4_convnext_tiny_stem`.

ConvNeXt-Tiny, features.0.0: torch.nn.Conv2d(3, 96, 4, stride=4)
(torchvision.models.convnext_tiny).
The patchify stem: a 4x4 stride-4 convolution (3 -> 96 channels, with bias) of a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [3, 96, 4, 4, 0, 1, 1, True]
