"""PyTorch twin of the task `conv2d_grouped_regnetx_400mf`.

RegNetX-400MF, trunk_output.block2.block2-1.f.b.0: torch.nn.Conv2d(64, 64, 3, padding=1,
groups=4, bias=False) (torchvision.models.regnet_x_400mf).
Grouped 3x3 convolution (group width 16, 4 groups) of the second stage-2 block: 64 channels at
28x28 (224x224 image).
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
        torch.empty(1, 64, 28, 28).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64, 64, 3, 1, 1, 1, 4, False]
