"""PyTorch twin of the task `conv2d_dilated_enet`.

ENet, dilated2_2.ext_conv2.0: torch.nn.Conv2d(32, 32, 3, padding=2, dilation=2, bias=False)
(davidtvs/PyTorch-ENet models/enet.py).
Dilated (rate 2) 3x3 convolution inside a stage-2 bottleneck (internal 32 channels) at 64x64 for
a 512x512 input.
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
        torch.empty(1, 32, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [32, 32, 3, 1, 2, 2, 1, False]
