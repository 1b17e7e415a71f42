"""PyTorch twin of the task `conv2d_3x3_squeezenet11_expand`.

SqueezeNet 1.1, features.3.expand3x3: torch.nn.Conv2d(16, 64, 3, padding=1)
(torchvision.models.squeezenet1_1).
The 3x3 expand convolution (with bias) of the first Fire module: 16 -> 64 channels at 55x55.
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
        torch.empty(1, 16, 55, 55).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [16, 64, 3, 1, 1, 1, 1, True]
