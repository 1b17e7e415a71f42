"""PyTorch twin of the task `conv2d_dw7x7_convnext_tiny`.

ConvNeXt-Tiny, features.1.0.block.0: torch.nn.Conv2d(96, 96, 7, padding=3, groups=96)
(torchvision.models.convnext_tiny).
The 7x7 depthwise convolution (with bias) of the first ConvNeXt block: 96 channels at 56x56.
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
        torch.empty(1, 96, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [96, 96, 7, 1, 3, 1, 96, True]
