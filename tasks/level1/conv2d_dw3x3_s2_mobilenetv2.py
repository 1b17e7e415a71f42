"""PyTorch twin of the task `conv2d_dw3x3_s2_mobilenetv2`.

MobileNetV2, features.2.conv.1.0: torch.nn.Conv2d(96, 96, 3, stride=2, padding=1, groups=96,
bias=False) (torchvision.models.mobilenet_v2).
Depthwise 3x3 stride-2 convolution of the first downsampling inverted residual: 96 expanded
channels, 112x112 -> 56x56.
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
        torch.empty(1, 96, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [96, 96, 3, 2, 1, 1, 96, False]
